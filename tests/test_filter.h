/* test_filter.h -- choose which tests of a cmocka program run, from the environment:
 * PTXQ_TEST_FILTER and PTXQ_TEST_SKIP take cmocka's patterns ('*' and '?' wildcards) naming the
 * tests to run and to skip, e.g. PTXQ_TEST_FILTER='test_split*' for part of test_gemm under
 * compute-sanitizer (bench/device.sh SANITIZE=...). Include after cmocka.h. */
#ifndef PTXQ_TEST_FILTER_H
#define PTXQ_TEST_FILTER_H

#include <stdlib.h>

static void test_filter_from_env(void) {
    const char *f = getenv("PTXQ_TEST_FILTER"), *s = getenv("PTXQ_TEST_SKIP");
    if (f && *f) cmocka_set_test_filter(f);
    if (s && *s) cmocka_set_skip_filter(s);
}

#endif
