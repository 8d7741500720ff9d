/* gputest.h -- the fixture every GPU test program shares: open the device once, pick a seed
 * (fresh each run, printed, or PTXQ_TEST_SEED to replay), and say visibly why a test skips. */
#ifndef PTXQ_GPUTEST_H
#define PTXQ_GPUTEST_H

#include <stdint.h>

#include "devbuf.h"

typedef struct gputest {
    ptxq_dev dev;
    int have_gpu;
    char why[512];
    uint64_t seed;
} gputest;

/* 0 with or without a GPU (have_gpu tells); -1 when a present device failed to open. */
int gputest_open(gputest *g);
void gputest_close(gputest *g);
/* 1 (after printing the reason) when there is no GPU: the caller then calls cmocka's skip(). */
int gputest_no_gpu(const gputest *g);

#endif
