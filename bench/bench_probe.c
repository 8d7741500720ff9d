/* bench_probe.c -- the SM clock measured from inside the GPU (see bench_probe.h). */
#include "bench_probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STAMP_BYTES = BENCH_PROBE_MAX_SM * 2 * 2 * 8 };

void bench_probe_reduce(const uint64_t *s, int n, bench_probe_result *r) {
    memset(r, 0, sizeof *r);
    double sum = 0, win = 0;
    for (int i = 0; i < n; ++i) {
        const uint64_t *b = s + 4 * i, *a = b + 2; /* before {clock, ns}, after {clock, ns} */
        if (!b[1] || !a[1] || a[1] <= b[1] || a[0] <= b[0]) continue;
        double mhz = 1e3 * (double)(a[0] - b[0]) / (double)(a[1] - b[1]);
        if (!r->sms || mhz < r->mhz_min) r->mhz_min = mhz;
        if (!r->sms || mhz > r->mhz_max) r->mhz_max = mhz;
        sum += mhz;
        win += (double)(a[1] - b[1]) * 1e-6;
        r->sms++;
    }
    if (!r->sms) {
        r->why = "no SM stamped before and after";
        return;
    }
    r->mhz = sum / r->sms;
    r->window_ms = win / r->sms;
    r->ok = 1;
    r->why = "";
}

int bench_probe_open(ptxq_dev *d, bench_probe *p, char *why, size_t whyn) {
    memset(p, 0, sizeof *p);
    ptxq_kernel_info k;
    if (ptxq_kernel_find("clock_stamp", d->info.target, &k) != PTXQ_OK) {
        snprintf(why, whyn, "no clock_stamp cubin for %s", d->info.target);
        return -1;
    }
    const ptxq_cudrv *D = d->drv;
    if (D->cuModuleLoadData(&p->mod, k.cubin) != CUDA_SUCCESS ||
        D->cuModuleGetFunction(&p->fn, p->mod, "clock_stamp") != CUDA_SUCCESS) {
        snprintf(why, whyn, "cannot load clock_stamp");
        if (p->mod) D->cuModuleUnload(p->mod);
        p->mod = NULL;
        return -1;
    }
    p->buf = dev_alloc(d, STAMP_BYTES);
    p->d = d;
    return 0;
}

void bench_probe_close(bench_probe *p) {
    if (!p->d) return;
    p->d->drv->cuModuleUnload(p->mod);
    dev_free(p->d, p->buf);
    memset(p, 0, sizeof *p);
}

/* 4 one-warp CTAs per SM: the block scheduler spreads them, so every SM is stamped */
static int stamp(bench_probe *p, unsigned slot) {
    uint64_t out = p->buf;
    unsigned max_sm = BENCH_PROBE_MAX_SM;
    void *params[] = {&out, &slot, &max_sm};
    unsigned grid = 4u * (unsigned)(p->d->info.sm_count > 0 ? p->d->info.sm_count : 1);
    return p->d->drv->cuLaunchKernel(p->fn, grid, 1, 1, 32, 1, 1, 0, p->d->stream, params, NULL) ==
                   CUDA_SUCCESS ? 0 : -1;
}

int bench_probe_start(bench_probe *p) {
    if (!p->d || p->running) return -1;
    if (p->d->drv->cuMemsetD8Async(p->buf, 0, STAMP_BYTES, p->d->stream) != CUDA_SUCCESS || stamp(p, 0))
        return -1;
    p->running = 1;
    return 0;
}

void bench_probe_stop(bench_probe *p, bench_probe_result *r) {
    memset(r, 0, sizeof *r);
    r->why = "no probe";
    if (!p->d || !p->running) return;
    p->running = 0;
    uint64_t *s = malloc(STAMP_BYTES);
    if (!s || stamp(p, 1) || p->d->drv->cuStreamSynchronize(p->d->stream) != CUDA_SUCCESS ||
        p->d->drv->cuMemcpyDtoH(s, p->buf, STAMP_BYTES) != CUDA_SUCCESS) {
        r->why = "probe failed";
        free(s);
        return;
    }
    bench_probe_reduce(s, BENCH_PROBE_MAX_SM, r);
    free(s);
}
