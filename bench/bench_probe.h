/* bench_probe.h -- the SM clock the GPU really ran at while a bench timed something.
 *
 * NVML's clock is the clock the driver asks for: on an H100 it read 1980 MHz through FP8 GEMMs that
 * ncu measured at 1.50-1.54 GHz (SM cycles over duration), so a TFLOPS figure read against NVML's
 * clock understates how close a kernel is to the tensor peak at the clock it really had. This
 * probe measures it: the hand-written kernel ptx/clock_stamp.ptx runs in stream order right before
 * and right after the timed work and stamps each SM's %clock64 with the GPU's %globaltimer; per SM,
 * cycles over nanoseconds is its mean clock over the window. The result is the mean over the SMs
 * stamped both times (the window includes the host's gaps between timed launches). */
#ifndef PTXQ_BENCH_PROBE_H
#define PTXQ_BENCH_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "devbuf.h"

#define BENCH_PROBE_MAX_SM 512

typedef struct bench_probe {
    ptxq_dev *d;
    CUmodule mod;
    CUfunction fn;
    uint64_t buf; /* u64 [BENCH_PROBE_MAX_SM][2][2] */
    int running;
} bench_probe;

typedef struct bench_probe_result {
    int ok;           /* 1: a clock was measured */
    double mhz;       /* mean SM clock over the window, over the SMs stamped twice */
    double mhz_min, mhz_max;
    int sms;          /* SMs stamped before and after */
    double window_ms; /* mean window (after - before) */
    const char *why;  /* when !ok: why not */
} bench_probe_result;

/* Loads the stamp kernel for d's target; 0, or -1 with the reason in why. */
int bench_probe_open(ptxq_dev *d, bench_probe *p, char *why, size_t whyn);
void bench_probe_close(bench_probe *p);

/* Enqueues the "before" stamps on d->stream; 0, or -1. */
int bench_probe_start(bench_probe *p);

/* Enqueues the "after" stamps on d->stream, waits for the stream, reads the clock. */
void bench_probe_stop(bench_probe *p, bench_probe_result *r);

/* From the stamps u64 [n][2 slots][clock, ns] (zero where an SM was not stamped). */
void bench_probe_reduce(const uint64_t *stamps, int n, bench_probe_result *r);

#endif
