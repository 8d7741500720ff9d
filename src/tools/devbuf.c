/* devbuf.c -- device plumbing for tools and tests (see devbuf.h). */
#include "devbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const ptxq_dev *d, CUresult r, const char *what) {
    const char *name = "?";
    if (d && d->drv) d->drv->cuGetErrorName(r, &name);
    fprintf(stderr, "fatal: %s failed: %s\n", what, name);
    exit(3);
}

int dev_open(ptxq_dev *d, char *why, size_t whyn) {
    memset(d, 0, sizeof *d);
    ptxq_status st = ptxq_context_create(0, &d->ctx);
    if (st != PTXQ_OK) {
        snprintf(why, whyn, "%s: %s", ptxq_status_name(st), ptxq_last_error());
        return st == PTXQ_ERR_NO_DRIVER || st == PTXQ_ERR_NO_DEVICE ? 1 : -1;
    }
    d->drv = ptxq_cudrv_get(NULL);
    ptxq_context_info(d->ctx, &d->info);
    ptxq_context_make_current(d->ctx);
    CUresult r = d->drv->cuStreamCreate(&d->stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
        snprintf(why, whyn, "cuStreamCreate failed (%d)", (int)r);
        ptxq_context_destroy(d->ctx);
        return -1;
    }
    return 0;
}

void dev_close(ptxq_dev *d) {
    if (!d->ctx) return;
    ptxq_context_make_current(d->ctx);
    d->drv->cuStreamDestroy(d->stream);
    ptxq_context_destroy(d->ctx);
    memset(d, 0, sizeof *d);
}

uint64_t dev_alloc(ptxq_dev *d, size_t bytes) {
    CUdeviceptr p = 0;
    ptxq_context_make_current(d->ctx);
    CUresult r = d->drv->cuMemAlloc(&p, bytes ? bytes : 1);
    if (r != CUDA_SUCCESS) die(d, r, "cuMemAlloc");
    return (uint64_t)p;
}

void dev_free(ptxq_dev *d, uint64_t p) {
    if (p) d->drv->cuMemFree((CUdeviceptr)p);
}

void dev_upload(ptxq_dev *d, uint64_t dst, const void *src, size_t bytes) {
    dev_sync(d);
    CUresult r = d->drv->cuMemcpyHtoD((CUdeviceptr)dst, src, bytes);
    if (r != CUDA_SUCCESS) die(d, r, "cuMemcpyHtoD");
}

void dev_download(ptxq_dev *d, void *dst, uint64_t src, size_t bytes) {
    dev_sync(d);
    CUresult r = d->drv->cuMemcpyDtoH(dst, (CUdeviceptr)src, bytes);
    if (r != CUDA_SUCCESS) die(d, r, "cuMemcpyDtoH");
}

void dev_fill(ptxq_dev *d, uint64_t dst, unsigned char byte, size_t bytes) {
    dev_sync(d);
    CUresult r = d->drv->cuMemsetD8((CUdeviceptr)dst, byte, bytes);
    if (r != CUDA_SUCCESS) die(d, r, "cuMemsetD8");
    dev_sync(d);
}

void dev_sync(ptxq_dev *d) {
    CUresult r = d->drv->cuStreamSynchronize(d->stream);
    if (r != CUDA_SUCCESS) die(d, r, "cuStreamSynchronize");
    r = d->drv->cuCtxSynchronize();
    if (r != CUDA_SUCCESS) die(d, r, "cuCtxSynchronize");
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double dev_time_ms(ptxq_dev *d, int (*fn)(void *), void *arg, int warmup, int reps) {
    return dev_time_flushed_ms(d, fn, arg, warmup, reps, 0, 0);
}

double dev_time_flushed_ms(ptxq_dev *d, int (*fn)(void *), void *arg, int warmup, int reps,
                           uint64_t flush, size_t flush_words) {
    CUevent e0, e1;
    const ptxq_cudrv *D = d->drv;
    if (reps < 1) reps = 1;
    if (D->cuEventCreate(&e0, CU_EVENT_DEFAULT)) return -1;
    if (D->cuEventCreate(&e1, CU_EVENT_DEFAULT)) {
        D->cuEventDestroy(e0);
        return -1;
    }
    double *t = malloc(sizeof *t * (size_t)reps);
    double med = -1;
    int bad = t == NULL;
    for (int i = 0; i < warmup && !bad; ++i) bad = fn(arg) != 0;
    if (!bad) dev_sync(d);
    for (int i = 0; i < reps && !bad; ++i) {
        float ms = 0;
        if (flush_words && D->cuMemsetD32Async((CUdeviceptr)flush, 0, flush_words, d->stream)) {
            bad = 1;
            break;
        }
        D->cuEventRecord(e0, d->stream);
        if (fn(arg)) {
            bad = 1;
            break;
        }
        D->cuEventRecord(e1, d->stream);
        D->cuEventSynchronize(e1);
        D->cuEventElapsedTime(&ms, e0, e1);
        t[i] = ms;
    }
    if (!bad) {
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        med = t[reps / 2];
    }
    free(t);
    D->cuEventDestroy(e0);
    D->cuEventDestroy(e1);
    return med;
}

uint64_t rng_next(rng64 *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

double rng_uniform(rng64 *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

double rng_normal(rng64 *r) {
    double u = rng_uniform(r), v = rng_uniform(r);
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}
