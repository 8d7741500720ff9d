/* test_nvml.c -- the benches' clock sampler (bench/bench_nvml.c) against a fake NVML library
 * (tests/fake_nvml.c): loading, device lookup, the sampling thread's statistics, the summary text.
 * Runs everywhere: no GPU and no driver needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "bench_nvml.h"

static void test_refused(void **state) {
    (void)state;
    char why[256];
    setenv("PTXQ_NVML", "none", 1);
    assert_null(bench_nvml_open(NULL, why, sizeof why));
    assert_string_equal(why, "PTXQ_NVML=none");
    setenv("PTXQ_NVML", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_null(bench_nvml_open(NULL, why, sizeof why));
    assert_non_null(strstr(why, "cannot load"));
    setenv("PTXQ_NVML", FAKE_NVML, 1);
    assert_null(bench_nvml_open("00000000:02:00.0", why, sizeof why)); /* no such device */
    assert_non_null(strstr(why, "no device at 00000000:02:00.0"));
    bench_clocks c;
    bench_nvml_stop(NULL, &c); /* harmless */
    assert_int_equal(c.samples, 0);
    bench_nvml_close(NULL);
}

static void test_sampling(void **state) {
    (void)state;
    char why[256] = "";
    setenv("PTXQ_NVML", FAKE_NVML, 1);
    bench_nvml *n = bench_nvml_open("00000000:01:00.0", why, sizeof why);
    assert_non_null(n);
    bench_clocks c;
    memset(&c, 0, sizeof c);
    /* sample until there are a few samples (a starved thread only makes this take longer) */
    for (int tries = 0; tries < 50 && c.samples < 4; ++tries) {
        assert_int_equal(bench_nvml_start(n, 200), 0);
        assert_int_equal(bench_nvml_start(n, 200), -1); /* already running */
        struct timespec t = {0, 20 * 1000 * 1000};
        nanosleep(&t, NULL);
        bench_nvml_stop(n, &c);
        assert_true(c.samples >= 1); /* the thread samples before it looks at the stop flag */
    }
    assert_true(c.samples >= 4);
    /* the fake alternates 1500 (capped) and 1980: every other sample is capped */
    assert_int_equal(c.mhz_min, 1500);
    assert_int_equal(c.mhz_max, 1980);
    assert_true(c.capped == c.samples / 2 || c.capped == (c.samples + 1) / 2);
    assert_true(c.reasons == 0x4);
    double want = (1500.0 * c.capped + 1980.0 * (c.samples - c.capped)) / c.samples;
    assert_true(c.mhz_avg > want - 1e-9 && c.mhz_avg < want + 1e-9);
    assert_true(c.watts_avg > 649.999 && c.watts_avg < 650.001);
    char buf[160];
    bench_clocks_format(&c, buf, sizeof buf);
    char expect[160];
    snprintf(expect, sizeof expect, " [%.0f MHz 1500-1980, 650 W, capped %d/%d]", want, c.capped,
             c.samples);
    assert_string_equal(buf, expect);
    /* a second run starts from zero: a stop right after the start has one or two samples */
    assert_int_equal(bench_nvml_start(n, 200), 0);
    bench_nvml_stop(n, &c);
    assert_true(c.samples >= 1 && c.samples <= 3);
    /* closing while running stops the thread */
    assert_int_equal(bench_nvml_start(n, 200), 0);
    bench_nvml_close(n);
    bench_clocks none;
    memset(&none, 0, sizeof none);
    bench_clocks_format(&none, buf, sizeof buf);
    assert_string_equal(buf, "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_sampling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
