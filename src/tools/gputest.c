/* gputest.c -- see gputest.h. */
#include "gputest.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int gputest_open(gputest *g) {
    int rc = dev_open(&g->dev, g->why, sizeof g->why);
    g->have_gpu = rc == 0;
    if (rc < 0) {
        fprintf(stderr, "device open failed: %s\n", g->why);
        return -1;
    }
    g->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    if (getenv("PTXQ_TEST_SEED")) g->seed = strtoull(getenv("PTXQ_TEST_SEED"), NULL, 0);
    if (g->have_gpu)
        printf("[ INFO     ] %s sm_%d%d (%s), seed %llu (PTXQ_TEST_SEED replays)\n",
               g->dev.info.name, g->dev.info.cc_major, g->dev.info.cc_minor, g->dev.info.target,
               (unsigned long long)g->seed);
    return 0;
}

void gputest_close(gputest *g) {
    if (g->have_gpu) dev_close(&g->dev);
}

int gputest_no_gpu(const gputest *g) {
    if (!g->have_gpu) printf("[ SKIP     ] no GPU: %s\n", g->why);
    return !g->have_gpu;
}

int gputest_graph_begin(ptxq_dev *d, const char *what) {
    if (d->drv->cuStreamBeginCapture(d->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS)
        return 0;
    printf("[  ERROR   ] %s: cuStreamBeginCapture failed\n", what);
    return 1;
}

int gputest_graph_end_launch(ptxq_dev *d, int launch) {
    CUgraph g = NULL;
    CUgraphExec ge = NULL;
    int ok = d->drv->cuStreamEndCapture(d->stream, &g) == CUDA_SUCCESS && launch &&
             d->drv->cuGraphInstantiateWithFlags(&ge, g, 0) == CUDA_SUCCESS &&
             d->drv->cuGraphLaunch(ge, d->stream) == CUDA_SUCCESS;
    if (ge) d->drv->cuGraphExecDestroy(ge);
    if (g) d->drv->cuGraphDestroy(g);
    return ok;
}

int gputest_thread_dev(ptxq_dev *out, const ptxq_dev *base, ptxq_context *ctx) {
    *out = *base;
    out->ctx = ctx;
    out->stream = NULL;
    if (ptxq_context_make_current(ctx) != PTXQ_OK) return -1;
    return out->drv->cuStreamCreate(&out->stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS ? 0 : -1;
}

void gputest_thread_dev_close(ptxq_dev *d) {
    if (d->stream) d->drv->cuStreamDestroy(d->stream);
    d->stream = NULL;
}

static int random_cases(int dflt) {
    const char *e = getenv("PTXQ_TEST_RANDOM");
    if (!e || !*e) return dflt;
    char *end;
    long n = strtol(e, &end, 10);
    if (end == e || *end) {
        printf("[ INFO     ] PTXQ_TEST_RANDOM=%s is not a number: %d cases\n", e, dflt);
        return dflt;
    }
    return n < 0 ? 0 : n > 100000 ? 100000 : (int)n;
}

int gputest_random_run(const gputest *g, int dflt, int (*one)(rng64 *r, int i), int *n) {
    *n = random_cases(dflt);
    if (*n == 0) {
        printf("[ SKIP     ] test_random_configs: PTXQ_TEST_RANDOM=0\n");
        return 0;
    }
    const uint64_t seed0 = g->seed;
    rng64 r = {seed0 ^ 0x5DEECE66Dull};
    int fails = 0;
    for (int i = 0; i < *n; ++i) fails += one(&r, i) != 0;
    printf("[ INFO     ] %d random configurations, %d failed (drawn from seed %llu)\n", *n, fails,
           (unsigned long long)seed0);
    return fails;
}
