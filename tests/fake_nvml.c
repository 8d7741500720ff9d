/* fake_nvml.c -- a stand-in for libnvidia-ml.so.1 that test_nvml loads through PTXQ_NVML: one
 * device at PCI address 00000000:01:00.0 (or index 0) whose SM clock alternates 1980 / 1500 MHz
 * from one clock query to the next (the first is 1980), with the software power cap (0x4) reported
 * while it reads 1500, and 650 W throughout. */
#include <string.h>

static int g_dev, g_calls, g_last;

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }

int nvmlDeviceGetHandleByPciBusId_v2(const char *pci, void **dev) {
    if (strcmp(pci, "00000000:01:00.0")) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *dev = &g_dev;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **dev) {
    if (index) return 2;
    *dev = &g_dev;
    return 0;
}

int nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz) {
    if (dev != &g_dev || type != 1) return 2;
    g_last = g_calls++ % 2 ? 1500 : 1980;
    *mhz = (unsigned)g_last;
    return 0;
}

int nvmlDeviceGetPowerUsage(void *dev, unsigned *mw) {
    if (dev != &g_dev) return 2;
    *mw = 650000;
    return 0;
}

int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *mask) {
    if (dev != &g_dev) return 2;
    *mask = g_last == 1500 ? 0x4 : 0;
    return 0;
}
