/* devbuf.h -- device plumbing for the CLI, the benches and the tests (not part of libptxq):
 * open a context or learn why there is none, allocate, copy, poison, time. */
#ifndef PTXQ_DEVBUF_H
#define PTXQ_DEVBUF_H

#include <stddef.h>
#include <stdint.h>

#include "cudrv.h"
#include "ptxq.h"

typedef struct ptxq_dev {
    ptxq_context *ctx;
    const ptxq_cudrv *drv;
    ptxq_device_info info;
    CUstream stream;
} ptxq_dev;

/* 0: opened; 1: no driver / no device (callers skip, visibly); -1: any other failure.
 * why receives the reason in both non-zero cases. */
int dev_open(ptxq_dev *d, char *why, size_t whyn);
void dev_close(ptxq_dev *d);
/* Each aborts the process with a message on a driver error: tools and tests only. */
uint64_t dev_alloc(ptxq_dev *d, size_t bytes);
/* dev_alloc with at least `align` bytes of alignment (a power of two, at most 256) in guard mode
 * too: the GEMM's split-K workspace wants 256 */
uint64_t dev_alloc_aligned(ptxq_dev *d, size_t bytes, size_t align);
void dev_free(ptxq_dev *d, uint64_t p);
/* PTXQ_TEST_GUARD=1 (or =A, an alignment): dev_alloc places every buffer so that it ends where an
 * unmapped granule begins, aligned to A (16 by default): a kernel running past the end of any
 * buffer faults. 1 if that mode is on (see devbuf.c). */
int dev_guarded(void);
void dev_upload(ptxq_dev *d, uint64_t dst, const void *src, size_t bytes);
void dev_download(ptxq_dev *d, void *dst, uint64_t src, size_t bytes);
void dev_fill(ptxq_dev *d, uint64_t dst, unsigned char byte, size_t bytes);
void dev_sync(ptxq_dev *d);

/* Times fn(arg) on d->stream: warmup calls, then reps timed one by one with events; returns the
 * median in milliseconds. fn returns nonzero to abort (reported, returns -1). */
double dev_time_ms(ptxq_dev *d, int (*fn)(void *), void *arg, int warmup, int reps);

/* dev_time_ms with `flush_words` 32-bit words of flush (device memory) zeroed on the stream before
 * each timed call, outside its events: the GPU streams a large memset between two calls, as
 * DeepGEMM's benchmark does (an 8 GB memset that flushes L2 and leaves the SMs idle between
 * GEMMs; measured on an H100, our GEMMs gain 0-1% from it, DeepGEMM's 3-13%). flush_words 0:
 * dev_time_ms. */
double dev_time_flushed_ms(ptxq_dev *d, int (*fn)(void *), void *arg, int warmup, int reps,
                           uint64_t flush, size_t flush_words);

/* dev_time_ms with lead(lead_arg) enqueued before each timed call's start event, outside the
 * events (a memset for the flush above; the bench's spin kernel, so that a single call is
 * enqueued before its start event runs and its host time stays out). lead NULL: dev_time_ms. */
double dev_time_lead_ms(ptxq_dev *d, int (*fn)(void *), void *arg, int warmup, int reps,
                        int (*lead)(void *), void *lead_arg);

/* xorshift64* generator: reproducible data for a seed. */
typedef struct rng64 { uint64_t s; } rng64;
uint64_t rng_next(rng64 *r);
double rng_uniform(rng64 *r); /* [0, 1) */
double rng_normal(rng64 *r);
int rng_pick(rng64 *r, int n);                      /* 0 .. n-1 */
int rng_chance(rng64 *r, int one_in);               /* 1 with probability 1 / one_in */
int64_t rng_span(rng64 *r, int64_t lo, int64_t hi); /* lo .. hi */

#endif
