/* test_gemm.c -- FP8 GEMM: argument checks without a device; on a GPU, every scaling mode on
 * ragged shapes against a float64 reference from the same FP8 codes and scales (gemm_ref.h says
 * what the tolerance is and why), D poisoned first and every element checked, refused calls leave
 * D untouched; the SASS of every gemm cubin has QGMMA and UTMALDG and no local memory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_ref.h"
#include "gputest.h"
#include "ptxq.h"
#include "sass.h"

static gputest g_gpu;

/* ---- validation (no device) -------------------------------------------------------------- */

typedef struct vcase {
    ptxq_tensor a, b, d, sa, sb;
    ptxq_gemm_desc desc;
} vcase;

static void vcase_make(vcase *v, ptxq_gemm_scaling s, int64_t M, int64_t N, int64_t K) {
    memset(v, 0, sizeof *v);
    v->a = ptxq_tensor_make(PTXQ_E4M3, 2, (int64_t[]){M, K}, 0x10000);
    v->b = ptxq_tensor_make(PTXQ_E4M3, 2, (int64_t[]){N, K}, 0x20000);
    v->d = ptxq_tensor_make(PTXQ_BF16, 2, (int64_t[]){M, N}, 0x30000);
    if (s == PTXQ_GEMM_SCALE_BLOCK) {
        v->sa = ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){M, K / 128}, 0x40000);
        v->sb = ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){(N + 127) / 128, K / 128}, 0x50000);
    } else if (s == PTXQ_GEMM_SCALE_ROW) {
        v->sa = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){M}, 0x40000);
        v->sb = ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){N, 1}, 0x50000);
    } else {
        v->sa = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){1}, 0x40000);
        v->sb = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){1}, 0x50000);
    }
    v->desc = (ptxq_gemm_desc){s, &v->sa, &v->sb, 0, 0, 0, 0};
}

static ptxq_status vrun(vcase *v) { return ptxq_gemm_validate(&v->desc, &v->a, &v->b, &v->d); }

static void test_validate(void **state) {
    (void)state;
    vcase v;
    for (int s = 1; s <= 3; ++s) {
        vcase_make(&v, (ptxq_gemm_scaling)s, 1000, 1000, 512);
        assert_int_equal(vrun(&v), PTXQ_OK);
    }
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 64, 64, 40);
    assert_int_equal(vrun(&v), PTXQ_ERR_SHAPE); /* K % 16 */
    vcase_make(&v, PTXQ_GEMM_SCALE_BLOCK, 64, 64, 192);
    v.sa.shape[1] = 2;
    v.sb.shape[1] = 2;
    assert_int_equal(vrun(&v), PTXQ_ERR_SHAPE); /* K % 128 for BLOCK */
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 64, 64, 128);
    v.a.dtype = PTXQ_E5M2;
    assert_int_equal(vrun(&v), PTXQ_ERR_DTYPE);
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 64, 64, 128);
    v.d.dtype = PTXQ_F32;
    assert_int_equal(vrun(&v), PTXQ_ERR_DTYPE);
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 64, 64, 128);
    v.b.shape[1] = 256;
    assert_int_equal(vrun(&v), PTXQ_ERR_SHAPE);
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 64, 64, 128);
    v.a.data += 8;
    assert_int_equal(vrun(&v), PTXQ_ERR_ALIGNMENT);
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 64, 64, 128);
    v.a.stride[0] = 136;
    assert_int_equal(vrun(&v), PTXQ_ERR_ALIGNMENT); /* row pitch not a multiple of 16 B */
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 64, 64, 128);
    v.d.stride[1] = 2;
    assert_int_equal(vrun(&v), PTXQ_ERR_STRIDE);
    vcase_make(&v, PTXQ_GEMM_SCALE_ROW, 64, 64, 128);
    v.sa.shape[0] = 63;
    assert_int_equal(vrun(&v), PTXQ_ERR_SCALE_SHAPE);
    vcase_make(&v, PTXQ_GEMM_SCALE_BLOCK, 64, 200, 256);
    v.sb.shape[0] = 1;
    assert_int_equal(vrun(&v), PTXQ_ERR_SCALE_SHAPE);
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 64, 64, 128);
    v.sa.dtype = PTXQ_BF16;
    assert_int_equal(vrun(&v), PTXQ_ERR_SCALE_SHAPE);
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 64, 64, 128);
    v.desc.scaling = (ptxq_gemm_scaling)9;
    assert_int_equal(vrun(&v), PTXQ_ERR_INVALID_ARGUMENT);
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 64, 64, 128);
    v.desc.tile_n = 96;
    assert_int_equal(vrun(&v), PTXQ_ERR_INVALID_ARGUMENT);
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 64, 64, 128);
    v.desc.cluster = 3;
    assert_int_equal(vrun(&v), PTXQ_ERR_INVALID_ARGUMENT);
    assert_true(strlen(ptxq_last_error()) > 0);
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 64, 64, 128);
    v.desc.a_scale = NULL;
    assert_int_equal(vrun(&v), PTXQ_ERR_INVALID_ARGUMENT);
    char name[64];
    vcase_make(&v, PTXQ_GEMM_SCALE_BLOCK, 4096, 7168, 1024);
    assert_int_equal(ptxq_gemm_kernel_for(&v.desc, &v.a, &v.b, &v.d, name, sizeof name), PTXQ_OK);
    assert_string_equal(name, "gemm_e4m3_bf16_block_n128p2"); /* p2 pipeline: measured faster */
    setenv("PTXQ_GEMM_PIPE", "off", 1);
    assert_int_equal(ptxq_gemm_kernel_for(&v.desc, &v.a, &v.b, &v.d, name, sizeof name), PTXQ_OK);
    assert_string_equal(name, "gemm_e4m3_bf16_block_n160"); /* 44.8 N tiles: fewest idle SMs */
    v.desc.tile_n = 128;
    v.desc.cluster = 2;
    assert_int_equal(ptxq_gemm_kernel_for(&v.desc, &v.a, &v.b, &v.d, name, sizeof name), PTXQ_OK);
    assert_string_equal(name, "gemm_e4m3_bf16_block_n128_c2");
    v.desc.cluster = 1;
    assert_int_equal(ptxq_gemm_kernel_for(&v.desc, &v.a, &v.b, &v.d, name, sizeof name), PTXQ_OK);
    assert_string_equal(name, "gemm_e4m3_bf16_block_n128");
    unsetenv("PTXQ_GEMM_PIPE");
    assert_int_equal(ptxq_gemm_kernel_for(&v.desc, &v.a, &v.b, &v.d, name, sizeof name), PTXQ_OK);
    assert_string_equal(name, "gemm_e4m3_bf16_block_n128p2");
    vcase_make(&v, PTXQ_GEMM_SCALE_TENSOR, 8192, 8192, 8192);
    v.desc.tile_n = 192;
    assert_int_equal(ptxq_gemm_kernel_for(&v.desc, &v.a, &v.b, &v.d, name, sizeof name), PTXQ_OK);
    assert_string_equal(name, "gemm_e4m3_bf16_tensor_n192h2_c2");
    vcase_make(&v, PTXQ_GEMM_SCALE_ROW, 8192, 8192, 8192);
    v.desc.tile_n = 192;
    assert_int_equal(ptxq_gemm_kernel_for(&v.desc, &v.a, &v.b, &v.d, name, sizeof name), PTXQ_OK);
    assert_string_equal(name, "gemm_e4m3_bf16_row_n192_c2");
}

/* ---- on the GPU ---------------------------------------------------------------------------- */

static void run_case(gemm_cfg c) {
    if (gputest_no_gpu(&g_gpu)) skip();
    gemm_result r;
    int st = gemm_case_run(&g_gpu.dev, &c, g_gpu.seed, &r);
    print_message("[  CASE    ] %-28s %5lldx%5lldx%5lld: %lld checked, max norm err %.3g, max rel "
                  "err (|ref|>=S/2, %lld) %.3g, unwritten %lld, bad %lld\n",
                  r.kernel, (long long)c.M, (long long)c.N, (long long)c.K, (long long)r.checked,
                  r.max_norm, (long long)r.n_wc, r.max_rel_wc, (long long)r.unwritten,
                  (long long)r.bad);
    if (st != PTXQ_OK) fail_msg("ptxq_gemm: %s: %s", ptxq_status_name(st), ptxq_last_error());
    if (r.bad) print_error("first: %s\n", r.first_bad);
    assert_int_equal(r.unwritten, 0);
    assert_int_equal(r.bad, 0);
    assert_true(r.checked > 0);
}

#define CASE(fn, s, m, n, k, tn, extra)                                                            \
    static void fn(void **state) {                                                                 \
        (void)state;                                                                               \
        gemm_cfg c = {m, n, k, s, tn, 0, 0, 0, 0, 0};                                              \
        extra;                                                                                     \
        run_case(c);                                                                               \
    }

CASE(test_tensor_1000, PTXQ_GEMM_SCALE_TENSOR, 1000, 1000, 512, 0, (void)0)
CASE(test_tensor_1000_c1, PTXQ_GEMM_SCALE_TENSOR, 1000, 1000, 512, 192, c.cluster = 1)
CASE(test_tensor_1000_c2, PTXQ_GEMM_SCALE_TENSOR, 1000, 1000, 512, 128, c.cluster = 2)
CASE(test_tensor_129_c2, PTXQ_GEMM_SCALE_TENSOR, 129, 257, 256, 192, c.cluster = 2)
CASE(test_tensor_77_c2, PTXQ_GEMM_SCALE_TENSOR, 77, 300, 1040, 128, c.cluster = 2)
CASE(test_row_300_c2, PTXQ_GEMM_SCALE_ROW, 300, 520, 384, 192, c.cluster = 2)
CASE(test_block_300_c2, PTXQ_GEMM_SCALE_BLOCK, 300, 520, 384, 192, c.cluster = 2; c.sa_mmajor = 1)
CASE(test_block_300_c2_n128, PTXQ_GEMM_SCALE_BLOCK, 300, 520, 384, 128, c.cluster = 2)
CASE(test_block_300_n160, PTXQ_GEMM_SCALE_BLOCK, 300, 1000, 384, 160, c.cluster = 1; c.sa_mmajor = 1)
CASE(test_block_300_n160_c2, PTXQ_GEMM_SCALE_BLOCK, 300, 1000, 512, 160, c.cluster = 2)
CASE(test_tensor_129_n160, PTXQ_GEMM_SCALE_TENSOR, 129, 257, 256, 160, c.cluster = 1)
CASE(test_row_300_n160_c2, PTXQ_GEMM_SCALE_ROW, 300, 1000, 256, 160, c.cluster = 2)
CASE(test_tensor_129_n128, PTXQ_GEMM_SCALE_TENSOR, 129, 257, 256, 128, (void)0)
CASE(test_tensor_129_n192, PTXQ_GEMM_SCALE_TENSOR, 129, 257, 256, 192, (void)0)
CASE(test_tensor_odd_n_k16, PTXQ_GEMM_SCALE_TENSOR, 77, 195, 48, 192, c.pad_a = 16; c.pad_d = 6)
CASE(test_tensor_k0, PTXQ_GEMM_SCALE_TENSOR, 130, 70, 0, 0, (void)0)
CASE(test_tensor_big, PTXQ_GEMM_SCALE_TENSOR, 4096, 7168, 1024, 0, c.sample_rows = 48)
CASE(test_row_1000, PTXQ_GEMM_SCALE_ROW, 1000, 1000, 512, 0, (void)0)
CASE(test_row_129_n128, PTXQ_GEMM_SCALE_ROW, 129, 257, 256, 128, (void)0)
CASE(test_row_129_n192, PTXQ_GEMM_SCALE_ROW, 129, 257, 256, 192, c.pad_d = 2)
CASE(test_block_1000, PTXQ_GEMM_SCALE_BLOCK, 1000, 1000, 512, 0, c.sa_mmajor = 1)
CASE(test_block_129_n128, PTXQ_GEMM_SCALE_BLOCK, 129, 257, 256, 128, (void)0)
CASE(test_block_129_n192, PTXQ_GEMM_SCALE_BLOCK, 129, 257, 256, 192, c.sa_mmajor = 1)
CASE(test_block_big_n192, PTXQ_GEMM_SCALE_BLOCK, 4096, 7168, 1024, 192,
     c.sample_rows = 32; c.sa_mmajor = 1)
CASE(test_block_big_default, PTXQ_GEMM_SCALE_BLOCK, 4096, 7168, 1024, 0, c.sample_rows = 32)
CASE(test_block_big_n128, PTXQ_GEMM_SCALE_BLOCK, 512, 7168, 2048, 128, c.sample_rows = 16)

/* pipelined consumers (gen/gemm.py PIPES), picked with PTXQ_GEMM_PIPE: odd and even K-block
 * counts (the K loop is unrolled by two blocks), K = 0, K tails, ragged M/N, both cluster sizes */
#define PCASE(fn, pipe, s, m, n, k, tn, extra)                                                     \
    static void fn(void **state) {                                                                 \
        (void)state;                                                                               \
        gemm_cfg c = {m, n, k, s, tn, 0, 0, 0, 0, 0};                                              \
        extra;                                                                                     \
        setenv("PTXQ_GEMM_PIPE", pipe, 1);                                                         \
        run_case(c);                                                                               \
        unsetenv("PTXQ_GEMM_PIPE");                                                                \
    }
PCASE(test_p2_tensor_1000, "p2", PTXQ_GEMM_SCALE_TENSOR, 1000, 1000, 512, 128, c.cluster = 1)
PCASE(test_p2_tensor_129_c2, "p2", PTXQ_GEMM_SCALE_TENSOR, 129, 257, 384, 128, c.cluster = 2)
PCASE(test_p2_tensor_k16, "p2", PTXQ_GEMM_SCALE_TENSOR, 77, 195, 48, 128, c.pad_a = 16; c.pad_d = 6)
PCASE(test_p2_tensor_k0, "p2", PTXQ_GEMM_SCALE_TENSOR, 130, 70, 0, 128, (void)0)
PCASE(test_p2_row_300_c2, "p2", PTXQ_GEMM_SCALE_ROW, 300, 520, 1040, 128, c.cluster = 2)
PCASE(test_p2_block_300_c2, "p2", PTXQ_GEMM_SCALE_BLOCK, 300, 520, 384, 128, c.cluster = 2)
PCASE(test_p2_block_1000, "p2", PTXQ_GEMM_SCALE_BLOCK, 1000, 1000, 512, 128,
      c.cluster = 1; c.sa_mmajor = 1)
PCASE(test_h2_tensor_1000, "h2", PTXQ_GEMM_SCALE_TENSOR, 1000, 1000, 512, 192, c.cluster = 1)
PCASE(test_h2_tensor_77_c2, "h2", PTXQ_GEMM_SCALE_TENSOR, 77, 300, 1040, 192, c.cluster = 2)
PCASE(test_h2_tensor_k0, "h2", PTXQ_GEMM_SCALE_TENSOR, 130, 70, 0, 160, (void)0)
PCASE(test_h2_row_300_c2, "h2", PTXQ_GEMM_SCALE_ROW, 300, 520, 384, 192, c.cluster = 2)
PCASE(test_h2_row_129_n128, "h2", PTXQ_GEMM_SCALE_ROW, 129, 257, 256, 128, (void)0)
PCASE(test_h2_block_300_n160, "h2", PTXQ_GEMM_SCALE_BLOCK, 300, 1000, 384, 160,
      c.cluster = 1; c.sa_mmajor = 1)
PCASE(test_h2_block_300_n160_c2, "h2", PTXQ_GEMM_SCALE_BLOCK, 300, 1000, 512, 160, c.cluster = 2)
PCASE(test_h2_block_129_n128, "h2", PTXQ_GEMM_SCALE_BLOCK, 129, 257, 640, 128, (void)0)
PCASE(test_h2_tensor_big, "h2", PTXQ_GEMM_SCALE_TENSOR, 4096, 7168, 1024, 192, c.sample_rows = 48)
PCASE(test_h2_block_big, "h2", PTXQ_GEMM_SCALE_BLOCK, 4096, 7168, 1024, 160, c.sample_rows = 32)
PCASE(test_off_tensor_129_c2, "off", PTXQ_GEMM_SCALE_TENSOR, 129, 257, 256, 192, c.cluster = 2)
PCASE(test_off_tensor_77_n128, "off", PTXQ_GEMM_SCALE_TENSOR, 77, 300, 1040, 128, c.cluster = 2)
PCASE(test_off_block_1000, "off", PTXQ_GEMM_SCALE_BLOCK, 1000, 1000, 512, 0, c.sa_mmajor = 1)
PCASE(test_off_block_129_n128, "off", PTXQ_GEMM_SCALE_BLOCK, 129, 257, 256, 128, (void)0)
PCASE(test_off_block_big, "off", PTXQ_GEMM_SCALE_BLOCK, 4096, 7168, 1024, 0, c.sample_rows = 32)

/* A refused call writes nothing: D keeps its poison. */
static void test_refused_untouched(void **state) {
    (void)state;
    if (gputest_no_gpu(&g_gpu)) skip();
    ptxq_dev *d = &g_gpu.dev;
    const int64_t M = 256, N = 256, K = 256;
    uint64_t a = dev_alloc(d, (size_t)(M * K) + 64), b = dev_alloc(d, (size_t)(N * K));
    uint64_t dd = dev_alloc(d, (size_t)(M * N) * 2), s = dev_alloc(d, 64);
    dev_fill(d, a, 0x38, (size_t)(M * K) + 64);
    dev_fill(d, b, 0x38, (size_t)(N * K));
    dev_fill(d, s, 0, 64);
    dev_fill(d, dd, 0xFF, (size_t)(M * N) * 2);
    ptxq_tensor ta = ptxq_tensor_make(PTXQ_E4M3, 2, (int64_t[]){M, K}, a);
    ptxq_tensor tb = ptxq_tensor_make(PTXQ_E4M3, 2, (int64_t[]){N, K}, b);
    ptxq_tensor td = ptxq_tensor_make(PTXQ_BF16, 2, (int64_t[]){M, N}, dd);
    ptxq_tensor ts = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){1}, s);
    ptxq_tensor tbad = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){2}, s);
    ptxq_gemm_desc desc = {PTXQ_GEMM_SCALE_TENSOR, &ts, &tbad, 0, 0, 0, 0};
    assert_int_equal(ptxq_gemm(d->ctx, &desc, &ta, &tb, &td, d->stream), PTXQ_ERR_SCALE_SHAPE);
    desc.b_scale = &ts;
    ta.data = a + 8;
    assert_int_equal(ptxq_gemm(d->ctx, &desc, &ta, &tb, &td, d->stream), PTXQ_ERR_ALIGNMENT);
    ta.data = a;
    ta.shape[1] = 200;
    assert_int_equal(ptxq_gemm(d->ctx, &desc, &ta, &tb, &td, d->stream), PTXQ_ERR_SHAPE);
    ta.shape[1] = K;
    desc.scaling = PTXQ_GEMM_SCALE_BLOCK;
    assert_int_equal(ptxq_gemm(d->ctx, &desc, &ta, &tb, &td, d->stream), PTXQ_ERR_SCALE_SHAPE);
    dev_sync(d);
    uint16_t *h = malloc((size_t)(M * N) * 2);
    assert_non_null(h);
    dev_download(d, h, dd, (size_t)(M * N) * 2);
    int64_t touched = 0;
    for (int64_t i = 0; i < M * N; ++i) touched += h[i] != 0xFFFF;
    free(h);
    dev_free(d, a);
    dev_free(d, b);
    dev_free(d, dd);
    dev_free(d, s);
    assert_int_equal(touched, 0);
}

/* ---- SASS of the gemm cubins ---------------------------------------------------------------- */

static void test_gemm_sass(void **state) {
    (void)state;
    char path[4096];
    if (sass_find_nvdisasm(path, sizeof path) != 0) {
        print_message("[  SKIP    ] %s\n", sass_nvdisasm_hint());
        skip();
    }
    int n = 0, bad = 0;
    for (int i = 0; i < ptxq_kernel_count(); ++i) {
        ptxq_kernel_info k;
        assert_int_equal(ptxq_kernel_get(i, &k), PTXQ_OK);
        if (strcmp(k.family, "gemm")) continue;
        ++n;
        sass_hist h;
        char err[512] = "";
        if (sass_hist_cubin(k.cubin, k.cubin_size, &h, err, sizeof err)) fail_msg("%s: %s", k.name, err);
        print_message("[  SASS    ] %s %s: %d regs, qgmma %d, utmaldg %d, ldl/stl %d/%d\n", k.name,
                      k.target, k.registers, h.qgmma, h.tma_ld, h.ldl, h.stl);
        if (h.qgmma == 0 || h.tma_ld == 0 || h.ldl || h.stl || k.spill_stores || k.stack_frame ||
            k.wgmma_serialized)
            ++bad;
    }
    assert_true(n > 0);
    assert_int_equal(bad, 0);
}

static int setup(void **state) {
    (void)state;
    return gputest_open(&g_gpu) < 0 ? -1 : 0;
}

static int teardown(void **state) {
    (void)state;
    gputest_close(&g_gpu);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_gemm_sass),
        cmocka_unit_test(test_tensor_1000),
        cmocka_unit_test(test_tensor_1000_c1),
        cmocka_unit_test(test_tensor_1000_c2),
        cmocka_unit_test(test_tensor_129_c2),
        cmocka_unit_test(test_tensor_77_c2),
        cmocka_unit_test(test_row_300_c2),
        cmocka_unit_test(test_block_300_c2),
        cmocka_unit_test(test_block_300_c2_n128),
        cmocka_unit_test(test_block_300_n160),
        cmocka_unit_test(test_block_300_n160_c2),
        cmocka_unit_test(test_tensor_129_n160),
        cmocka_unit_test(test_row_300_n160_c2),
        cmocka_unit_test(test_tensor_129_n128),
        cmocka_unit_test(test_tensor_129_n192),
        cmocka_unit_test(test_tensor_odd_n_k16),
        cmocka_unit_test(test_tensor_k0),
        cmocka_unit_test(test_tensor_big),
        cmocka_unit_test(test_row_1000),
        cmocka_unit_test(test_row_129_n128),
        cmocka_unit_test(test_row_129_n192),
        cmocka_unit_test(test_block_1000),
        cmocka_unit_test(test_block_129_n128),
        cmocka_unit_test(test_block_129_n192),
        cmocka_unit_test(test_block_big_n192),
        cmocka_unit_test(test_block_big_default),
        cmocka_unit_test(test_block_big_n128),
        cmocka_unit_test(test_p2_tensor_1000),
        cmocka_unit_test(test_p2_tensor_129_c2),
        cmocka_unit_test(test_p2_tensor_k16),
        cmocka_unit_test(test_p2_tensor_k0),
        cmocka_unit_test(test_p2_row_300_c2),
        cmocka_unit_test(test_p2_block_300_c2),
        cmocka_unit_test(test_p2_block_1000),
        cmocka_unit_test(test_h2_tensor_1000),
        cmocka_unit_test(test_h2_tensor_77_c2),
        cmocka_unit_test(test_h2_tensor_k0),
        cmocka_unit_test(test_h2_row_300_c2),
        cmocka_unit_test(test_h2_row_129_n128),
        cmocka_unit_test(test_h2_block_300_n160),
        cmocka_unit_test(test_h2_block_300_n160_c2),
        cmocka_unit_test(test_h2_block_129_n128),
        cmocka_unit_test(test_h2_tensor_big),
        cmocka_unit_test(test_h2_block_big),
        cmocka_unit_test(test_off_tensor_129_c2),
        cmocka_unit_test(test_off_tensor_77_n128),
        cmocka_unit_test(test_off_block_1000),
        cmocka_unit_test(test_off_block_129_n128),
        cmocka_unit_test(test_off_block_big),
        cmocka_unit_test(test_refused_untouched),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
