/* test_nodriver.c -- a machine without the NVIDIA driver: context creation fails cleanly.
 * PTXQ_LIBCUDA points the loader at a file that does not exist, so this runs the same on a GPU
 * machine (it must run in its own process: the driver is loaded once per process). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ptxq.h"

static void test_no_driver(void **state) {
    (void)state;
    ptxq_context *ctx = (ptxq_context *)0x1;
    ptxq_status st = ptxq_context_create(0, &ctx);
    assert_int_equal(st, PTXQ_ERR_NO_DRIVER);
    assert_null(ctx);
    assert_non_null(strstr(ptxq_last_error(), "libcuda"));
    /* asking again gives the same answer, not a crash */
    assert_int_equal(ptxq_context_create(0, &ctx), PTXQ_ERR_NO_DRIVER);
    assert_int_equal(ptxq_context_create(0, NULL), PTXQ_ERR_INVALID_ARGUMENT);
}

static void test_registry_without_driver(void **state) {
    (void)state;
    /* tools can list kernels with no GPU at all */
    assert_true(ptxq_kernel_count() > 0);
    ptxq_kernel_info k;
    assert_int_equal(ptxq_kernel_get(0, &k), PTXQ_OK);
    assert_true(k.cubin_size > 4 && !memcmp(k.cubin, "\x7f" "ELF", 4));
}

int main(void) {
    setenv("PTXQ_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_driver),
        cmocka_unit_test(test_registry_without_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
