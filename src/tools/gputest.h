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
/* Begins a capture on d's stream (thread-local mode): 0 on success, else prints "<what>: ..."
 * and returns 1. */
int gputest_graph_begin(ptxq_dev *d, const char *what);
/* Ends the capture on d's stream; if launch, instantiates the graph and launches it once on the
 * stream. 1 if everything asked for succeeded. */
int gputest_graph_end_launch(ptxq_dev *d, int launch);
/* For a test thread: *out is base with context ctx (made current on this thread) and a new
 * non-blocking stream. 0 on success; gputest_thread_dev_close destroys the stream. */
int gputest_thread_dev(ptxq_dev *out, const ptxq_dev *base, ptxq_context *ctx);
void gputest_thread_dev_close(ptxq_dev *d);
/* A random-configuration test: draws PTXQ_TEST_RANDOM configurations (0 skips them; unset or
 * not a number: dflt) with one(r, i)
 * (which draws case i from r, runs and checks it, and returns nonzero if it failed), r seeded from
 * the program's seed as it stands, and prints a summary. Returns the failures; *n the cases run
 * (0 after printing why: the caller skips). */
int gputest_random_run(const gputest *g, int dflt, int (*one)(rng64 *r, int i), int *n);

#endif
