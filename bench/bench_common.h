/* bench_common.h -- what every bench entry shares: the copy-bandwidth peer, option parsing. */
#ifndef PTXQ_BENCH_COMMON_H
#define PTXQ_BENCH_COMMON_H

#include <stddef.h>

#include "devbuf.h"

/* Device-to-device copy of `bytes` (cuMemcpyDtoDAsync), median of reps; GB/s counts the bytes
 * read plus the bytes written (2 * bytes), the convention every bandwidth figure here uses. */
typedef struct bench_copy {
    size_t bytes;
    double ms, gbps;
} bench_copy;
int bench_copy_run(ptxq_dev *d, size_t bytes, int reps, bench_copy *out);

/* `batch` copies of `bytes` each, back to back on the stream, rotating through buffers so that the
 * data between two uses of one buffer exceeds 4 x L2 (batch is rounded up to whole rotations);
 * out->ms is per copy (median of reps batches). -1 where the buffers would exceed a third of the
 * device memory (or bytes is 0).
 * The peer of a kernel that moves 2 * bytes per call: the same traffic, launch and ramp included. */
int bench_copy_chain(ptxq_dev *d, size_t bytes, int batch, int reps, bench_copy *out);

/* The read-only floor: `batch` launches of the hand-written ptx/read_stream.ptx, each reading
 * `bytes` (16-byte loads, nothing written), rotated past 4 x L2 like bench_copy_chain, launched
 * with programmatic dependent launch (each waits before its first load, as the GEMV does) on
 * `ctas` CTAs of 256 threads (0: 12 per SM, three waves of 4), `loads` 16-byte loads in flight
 * per thread (1 to 8; others mean 8). On an H100 three waves or more beat one wave by 5-9 points
 * of the large copy on 30-600 MB (1 trip a thread instead of 2; RESULTS.md, eleventh session),
 * so 0 takes them. out->ms per launch, out->gbps = bytes read
 * per second. -1 with the reason in why (no cubin for this target, too large, launch failed).
 * A reference for the GEMV's small shapes, not a bound: with its fixed grid a kernel that walks
 * rows can beat it on large ones (H100, 16384 x 16384 x 4: GEMV 106%, floor 102% of the copy). */
int bench_read_chain(ptxq_dev *d, size_t bytes, int batch, int reps, unsigned ctas, unsigned loads,
                     unsigned threads, bench_copy *out, char *why, size_t whyn);

/* The spin lead (ptx/spin_ns.ptx): one warp that keeps the stream busy for ns nanoseconds, so a
 * call timed right after it is enqueued before its start event runs (dev_time_lead_ms). */
typedef struct bench_spin {
    ptxq_dev *d;
    CUmodule mod;
    CUfunction fn;
    unsigned long long ns;
} bench_spin;
/* 0 when loaded; -1 (s->fn NULL) without a spin_ns cubin for the device. */
int bench_spin_open(ptxq_dev *d, bench_spin *s, unsigned long long ns);
void bench_spin_close(bench_spin *s);
/* The lead for dev_time_lead_ms: launches the spin on s->d's stream (nonzero if that failed). */
int bench_spin_lead(void *s);

/* The device's PCI address as NVML spells it ("00000000:1b:00.0"); 0, or -1 if the driver
 * does not say. */
int bench_pci_bus_id(ptxq_dev *d, char *out, size_t n);

/* The vendor datasheet DRAM bandwidth for known device names (GB/s), 0 if unknown. */
double bench_datasheet_gbps(const char *device_name);

/* --name value lookups in argv (return def if absent). */
const char *bench_opt(int argc, char **argv, const char *name, const char *def);
long long bench_opt_int(int argc, char **argv, const char *name, long long def);
int bench_flag(int argc, char **argv, const char *name);

/* Opens the device or prints why not; returns 0 when opened. */
int bench_open(ptxq_dev *d);

#endif
