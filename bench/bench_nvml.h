/* bench_nvml.h -- what the GPU's clock did while a bench timed something.
 *
 * An FP8 GEMM on an H100 can draw the board to its power limit within milliseconds, and the driver
 * then lowers the SM clock: two kernels timed a second apart may run at different clocks, and a
 * TFLOPS figure alone cannot say whether a kernel was slower or only clocked lower. NVML (the
 * driver's libnvidia-ml.so.1, dlopen'd: never a build dependency) is sampled from a thread while a
 * bench times one thing: the SM clock, the board power, and the driver's clock-event reasons
 * (software power cap, hardware slowdown, thermal).
 *
 * NVML's SM clock is the clock the driver requests, not the one the SMs ran at: on an H100 it read
 * 1980 MHz through FP8 GEMMs that ran at 1.50-1.54 GHz (ncu: cycles over duration; bench_probe.h
 * measures it in the bench). Read the clock-event reasons and power as the board's state, and
 * bench_probe's clock as the kernel's.
 *
 * Power is NVML's nvmlDeviceGetPowerUsage, which drivers may average over up to a second: read its
 * figure as the level the board sat at, not the kernel's own draw. PTXQ_NVML names another
 * library (tests use a fake one); PTXQ_NVML=none turns sampling off. */
#ifndef PTXQ_BENCH_NVML_H
#define PTXQ_BENCH_NVML_H

#include <stddef.h>

/* The clock-event reason bits that mean "held below the requested clock by power or heat". */
#define BENCH_NVML_CAPPED 0xECull /* SwPowerCap 0x4, HwSlowdown 0x8, Sw/HwThermal 0x20/0x40,
                                     HwPowerBrake 0x80 */

typedef struct bench_clocks {
    int samples;
    double mhz_avg;
    unsigned mhz_min, mhz_max;
    double watts_avg, watts_max; /* 0 where the driver reports no power */
    int capped;                  /* samples with any BENCH_NVML_CAPPED reason active */
    unsigned long long reasons;  /* OR of every reason mask seen (0 where none are reported) */
} bench_clocks;

typedef struct bench_nvml bench_nvml; /* opaque: a loaded library, a device and a sampler thread */

/* Loads NVML and finds the device by its PCI address ("00000000:1b:00.0"; NULL: NVML's device 0,
 * which on a host with several GPUs need not be CUDA's device 0: tests only).
 * Returns a sampler, or NULL with the reason in why (no library, no such device, PTXQ_NVML=none). */
bench_nvml *bench_nvml_open(const char *pci_bus_id, char *why, size_t whyn);
void bench_nvml_close(bench_nvml *n);

/* Starts sampling every period_us microseconds (at least 200) from a thread; 0 on success. */
int bench_nvml_start(bench_nvml *n, int period_us);

/* Stops the thread and returns what it saw: at least one sample when the clock query works
 * (the thread samples before it looks at the stop flag); out->samples is 0 otherwise. */
void bench_nvml_stop(bench_nvml *n, bench_clocks *out);

/* " [NVML 1755 MHz 1650-1980, 690 W, capped 12/16]" into buf: mean SM clock as NVML reports it
 * (the requested clock: bench_probe.h measures the real one), min-max, mean power,
 * samples with a BENCH_NVML_CAPPED reason of all samples (empty when there are no samples). */
void bench_clocks_format(const bench_clocks *c, char *buf, size_t n);

#endif
