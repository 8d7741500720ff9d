/* test_nvml.c -- the benches' clock instruments. The NVML sampler (bench/bench_nvml.c) against a
 * fake NVML library (tests/fake_nvml.c): loading, device lookup, the sampling thread's statistics,
 * the summary text; runs everywhere, no GPU and no driver needed. The clock probe
 * (bench/bench_probe.c, ptx/clock_stamp.ptx): its arithmetic everywhere, and on a GPU a measured
 * clock over work on the bench's stream, and a stop without a start. */
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
#include "bench_probe.h"
#include "gputest.h"

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
    snprintf(expect, sizeof expect, " [NVML %.0f MHz 1500-1980, 650 W, capped %d/%d]", want, c.capped,
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

static void test_probe_math(void **state) {
    (void)state;
    /* SM 0: 1.5e6 cycles in 1 ms = 1500 MHz; SM 1 not stamped after; SM 2: 2.0e6 in 1 ms */
    uint64_t s[3 * 4] = {1000, 5000000, 1501000, 6000000, 7, 5000000, 0, 0,
                         50, 5000100, 2000050, 6000100};
    bench_probe_result r;
    bench_probe_reduce(s, 3, &r);
    assert_int_equal(r.ok, 1);
    assert_int_equal(r.sms, 2);
    assert_true(r.mhz > 1749.999 && r.mhz < 1750.001);
    assert_true(r.mhz_min > 1499.999 && r.mhz_max < 2000.001 && r.mhz_max > 1999.999);
    assert_true(r.window_ms > 0.999 && r.window_ms < 1.001);
    uint64_t none[4] = {0};
    bench_probe_reduce(none, 1, &r);
    assert_int_equal(r.ok, 0);
    assert_string_equal(r.why, "no SM stamped before and after");
}

static gputest g_gpu;

static void test_probe_gpu(void **state) {
    (void)state;
    if (gputest_no_gpu(&g_gpu)) skip();
    ptxq_dev *d = &g_gpu.dev;
    bench_probe p;
    char why[128] = "";
    assert_int_equal(bench_probe_open(d, &p, why, sizeof why), 0);
    bench_probe_result r;
    bench_probe_stop(&p, &r); /* no start: nothing measured */
    assert_int_equal(r.ok, 0);
    /* work on the stream between the stamps: 40 memsets of 256 MiB (a few ms) */
    size_t bytes = (size_t)256 << 20;
    uint64_t buf = dev_alloc(d, bytes);
    assert_int_equal(bench_probe_start(&p), 0);
    assert_int_equal(bench_probe_start(&p), -1); /* already started */
    for (int i = 0; i < 40; ++i)
        assert_int_equal(d->drv->cuMemsetD8Async(buf, (unsigned char)i, bytes, d->stream), 0);
    bench_probe_stop(&p, &r);
    print_message("probe: %.0f MHz (%.0f-%.0f) on %d SMs over %.2f ms\n", r.mhz, r.mhz_min,
                  r.mhz_max, r.sms, r.window_ms);
    assert_int_equal(r.ok, 1);
    assert_true(r.sms >= d->info.sm_count / 2); /* 4 CTAs an SM: most SMs get both stamps */
    assert_true(r.window_ms > 0.5 && r.window_ms < 10000.0);
    assert_true(r.mhz_min > 100.0 && r.mhz_max < 4000.0); /* any SM clock a GPU runs at */
    dev_free(d, buf);
    bench_probe_close(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_sampling),
        cmocka_unit_test(test_probe_math),
        cmocka_unit_test(test_probe_gpu),
    };
    if (gputest_open(&g_gpu)) return 1;
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    gputest_close(&g_gpu);
    return rc;
}
