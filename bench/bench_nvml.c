/* bench_nvml.c -- see bench_nvml.h. */
#include "bench_nvml.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The few NVML entry points used, with their C types spelled out (nvml.h is not needed):
 * every call returns nvmlReturn_t, 0 = NVML_SUCCESS; a device is an opaque pointer. */
typedef int (*nvml_init_fn)(void);
typedef int (*nvml_shutdown_fn)(void);
typedef int (*nvml_by_pci_fn)(const char *pci_bus_id, void **dev);
typedef int (*nvml_by_index_fn)(unsigned index, void **dev);
typedef int (*nvml_clock_fn)(void *dev, int type, unsigned *mhz);
typedef int (*nvml_power_fn)(void *dev, unsigned *milliwatts);
typedef int (*nvml_reasons_fn)(void *dev, unsigned long long *mask);

enum { NVML_CLOCK_SM = 1 };

struct bench_nvml {
    void *lib;
    void *dev;
    nvml_shutdown_fn shutdown;
    nvml_clock_fn clock;
    nvml_power_fn power;     /* may be NULL */
    nvml_reasons_fn reasons; /* may be NULL */
    pthread_t thread;
    int running, period_us;
    atomic_int stop;
    bench_clocks seen; /* written by the thread, read after the join */
};

static void say(char *why, size_t whyn, const char *msg, const char *arg) {
    if (why && whyn) snprintf(why, whyn, "%s%s", msg, arg ? arg : "");
}

bench_nvml *bench_nvml_open(const char *pci_bus_id, char *why, size_t whyn) {
    const char *lib = getenv("PTXQ_NVML");
    if (lib && !strcmp(lib, "none")) {
        say(why, whyn, "PTXQ_NVML=none", NULL);
        return NULL;
    }
    if (!lib || !*lib) lib = "libnvidia-ml.so.1";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        say(why, whyn, "cannot load ", e ? e : lib);
        return NULL;
    }
    nvml_init_fn init = (nvml_init_fn)dlsym(h, "nvmlInit_v2");
    nvml_by_pci_fn by_pci = (nvml_by_pci_fn)dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
    nvml_by_index_fn by_index = (nvml_by_index_fn)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    bench_nvml *n = calloc(1, sizeof *n);
    if (!n) {
        dlclose(h);
        say(why, whyn, "out of memory", NULL);
        return NULL;
    }
    n->lib = h;
    n->shutdown = (nvml_shutdown_fn)dlsym(h, "nvmlShutdown");
    n->clock = (nvml_clock_fn)dlsym(h, "nvmlDeviceGetClockInfo");
    n->power = (nvml_power_fn)dlsym(h, "nvmlDeviceGetPowerUsage");
    n->reasons = (nvml_reasons_fn)dlsym(h, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!n->reasons) /* the name before driver 535 */
        n->reasons = (nvml_reasons_fn)dlsym(h, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!init || !n->shutdown || !n->clock || !(pci_bus_id ? (void *)by_pci : (void *)by_index)) {
        say(why, whyn, "NVML entry points missing in ", lib);
        dlclose(h);
        free(n);
        return NULL;
    }
    if (init() != 0) {
        say(why, whyn, "nvmlInit failed", NULL);
        dlclose(h);
        free(n);
        return NULL;
    }
    int rc = pci_bus_id ? by_pci(pci_bus_id, &n->dev) : by_index(0, &n->dev);
    if (rc != 0) {
        say(why, whyn, "NVML has no device at ", pci_bus_id ? pci_bus_id : "index 0");
        bench_nvml_close(n);
        return NULL;
    }
    unsigned mhz = 0;
    if (n->clock(n->dev, NVML_CLOCK_SM, &mhz) != 0) {
        say(why, whyn, "NVML gives no SM clock for ", pci_bus_id ? pci_bus_id : "index 0");
        bench_nvml_close(n);
        return NULL;
    }
    return n;
}

void bench_nvml_close(bench_nvml *n) {
    if (!n) return;
    if (n->running) {
        bench_clocks ignored;
        bench_nvml_stop(n, &ignored);
    }
    n->shutdown();
    dlclose(n->lib);
    free(n);
}

static void *sampler(void *p) {
    bench_nvml *n = p;
    bench_clocks c;
    memset(&c, 0, sizeof c);
    double mhz_sum = 0, w_sum = 0;
    int w_n = 0;
    struct timespec gap = {n->period_us / 1000000, (long)(n->period_us % 1000000) * 1000};
    for (;;) { /* sample first, then look at the flag: a short timing still gets one sample */
        unsigned mhz = 0, mw = 0;
        unsigned long long mask = 0;
        if (n->clock(n->dev, NVML_CLOCK_SM, &mhz) == 0) {
            if (c.samples == 0 || mhz < c.mhz_min) c.mhz_min = mhz;
            if (mhz > c.mhz_max) c.mhz_max = mhz;
            mhz_sum += mhz;
            ++c.samples;
            if (n->power && n->power(n->dev, &mw) == 0) {
                double w = mw / 1000.0;
                w_sum += w;
                ++w_n;
                if (w > c.watts_max) c.watts_max = w;
            }
            if (n->reasons && n->reasons(n->dev, &mask) == 0) {
                c.reasons |= mask;
                c.capped += (mask & BENCH_NVML_CAPPED) != 0;
            }
        }
        if (atomic_load(&n->stop)) break;
        nanosleep(&gap, NULL);
    }
    c.mhz_avg = c.samples ? mhz_sum / c.samples : 0;
    c.watts_avg = w_n ? w_sum / w_n : 0;
    n->seen = c;
    return NULL;
}

int bench_nvml_start(bench_nvml *n, int period_us) {
    if (!n || n->running) return -1;
    n->period_us = period_us < 200 ? 200 : period_us;
    atomic_store(&n->stop, 0);
    memset(&n->seen, 0, sizeof n->seen);
    if (pthread_create(&n->thread, NULL, sampler, n) != 0) return -1;
    n->running = 1;
    return 0;
}

void bench_nvml_stop(bench_nvml *n, bench_clocks *out) {
    memset(out, 0, sizeof *out);
    if (!n || !n->running) return;
    atomic_store(&n->stop, 1);
    pthread_join(n->thread, NULL);
    n->running = 0;
    *out = n->seen;
}

void bench_clocks_format(const bench_clocks *c, char *buf, size_t n) {
    if (!n) return;
    buf[0] = 0;
    if (!c->samples) return;
    int k = snprintf(buf, n, " [NVML %.0f MHz %u-%u", c->mhz_avg, c->mhz_min, c->mhz_max);
    if (k > 0 && (size_t)k < n && c->watts_avg > 0)
        k += snprintf(buf + k, n - (size_t)k, ", %.0f W", c->watts_avg);
    if (k > 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, ", capped %d/%d]", c->capped, c->samples);
}
