/* test_quant.c -- quantization kernels on the GPU against the CPU reference (quant_case.c):
 * every mode x input dtype x output dtype, ragged row counts, strided rank-3/4 inputs, M-major
 * and 128x4 scale layouts, static scales, bad inputs leaving poisoned outputs untouched, CUDA
 * graph capture, concurrent use of one context, and the PTXQ_KERNEL_DIR override (.cubin and
 * .ptx). Skips visibly without a GPU. Data is fresh each run (seed printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "gputest.h"
#include "quant_case.h"
#include "test_filter.h"

static gputest g_test;

static int setup(void **state) {
    (void)state;
    return gputest_open(&g_test);
}

static int teardown(void **state) {
    (void)state;
    gputest_close(&g_test);
    return 0;
}

static int no_gpu(void) { return gputest_no_gpu(&g_test); }

/* A zeroed case of this mode and these types (the rest set by the caller). */
static quant_case new_case(ptxq_quant_mode mode, ptxq_dtype out, ptxq_dtype in) {
    quant_case c;
    memset(&c, 0, sizeof c);
    c.mode = mode;
    c.out = out;
    c.in = in;
    return c;
}

static int run_one(quant_case c, int verbose) {
    quant_result r;
    char desc[256];
    c.seed = g_test.seed++;
    quant_case_describe(&c, desc, sizeof desc);
    int rc = quant_case_run(&g_test.dev, &c, &r);
    if (rc || verbose)
        printf("[ %s ] %s: codes %lld/%lld wrong, scales %lld wrong, pad %lld touched, amax %d, "
               "gscale %d, max err %.3f step, rel l2 %.2e, over bound %lld %s%s\n",
               rc ? "FAIL    " : "CASE    ", desc, (long long)r.code_mismatch,
               (long long)r.elements, (long long)r.scale_mismatch, (long long)r.pad_touched,
               r.amax_ok, r.gscale_ok, r.err.max_rel_step, r.err.rel_l2,
               (long long)r.err.over_bound, r.status ? ptxq_status_name(r.status) : "", r.msg);
    return rc;
}

static const ptxq_dtype k_in[3] = {PTXQ_BF16, PTXQ_F16, PTXQ_F32};

/* Every mode, input and output on two ragged rank-2 shapes. */
static void test_all_modes(void **state) {
    (void)state;
    if (no_gpu()) skip();
    struct { ptxq_quant_mode m; ptxq_dtype out; int block; int64_t K; } modes[] = {
        {PTXQ_QUANT_FP8_TENSOR, PTXQ_E4M3, 0, 392}, {PTXQ_QUANT_FP8_TENSOR, PTXQ_E5M2, 0, 1000},
        {PTXQ_QUANT_FP8_ROW, PTXQ_E4M3, 0, 4104}, {PTXQ_QUANT_FP8_ROW, PTXQ_E5M2, 0, 24},
        {PTXQ_QUANT_FP8_BLOCK, PTXQ_E4M3, 0, 640}, {PTXQ_QUANT_FP8_BLOCK, PTXQ_E5M2, 0, 128},
        {PTXQ_QUANT_MXFP8, PTXQ_E4M3, 0, 800}, {PTXQ_QUANT_MXFP8, PTXQ_E5M2, 0, 96},
        {PTXQ_QUANT_NVFP4, PTXQ_E2M1, 0, 208}, {PTXQ_QUANT_NVFP4, PTXQ_E2M1, 0, 2064},
        {PTXQ_QUANT_INT8_ROW, PTXQ_I8, 0, 1016}, {PTXQ_QUANT_INT8_BLOCK, PTXQ_I8, 32, 352},
        {PTXQ_QUANT_INT8_BLOCK, PTXQ_I8, 64, 448}, {PTXQ_QUANT_INT8_BLOCK, PTXQ_I8, 128, 1152},
    };
    const int64_t rows[2] = {1, 333};
    int fails = 0, n = 0;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i)
        for (int j = 0; j < 3; ++j)
            for (int s = 0; s < 2; ++s) {
                quant_case c;
                memset(&c, 0, sizeof c);
                c.mode = modes[i].m;
                c.out = modes[i].out;
                c.block = modes[i].block;
                c.in = k_in[j];
                c.rank = 2;
                c.shape[0] = rows[s] + (int64_t)i; /* every mode a different ragged count */
                c.shape[1] = modes[i].K;
                fails += run_one(c, 0) != 0;
                n++;
            }
    printf("[ INFO     ] %d cases, %d failed\n", n, fails);
    assert_int_equal(fails, 0);
}

/* Rank 3 and 4, padded pitches (padding must stay untouched), M-major scales. */
static void test_strided(void **state) {
    (void)state;
    if (no_gpu()) skip();
    int fails = 0;
    ptxq_quant_mode ms[4] = {PTXQ_QUANT_FP8_BLOCK, PTXQ_QUANT_MXFP8, PTXQ_QUANT_NVFP4,
                             PTXQ_QUANT_FP8_ROW};
    ptxq_dtype outs[4] = {PTXQ_E4M3, PTXQ_E4M3, PTXQ_E2M1, PTXQ_E5M2};
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j) {
            quant_case c = new_case(ms[i], outs[i], k_in[j]);
            c.rank = 3 + (i & 1);
            c.shape[0] = 3;
            c.shape[1] = c.rank == 3 ? 37 : 5;
            if (c.rank == 4) c.shape[2] = 7;
            c.shape[c.rank - 1] = 512;
            c.x_pad = 8 * (1 + j);
            c.q_pad = 16;
            c.scale_mmajor = i != 3;
            fails += run_one(c, 1) != 0;
        }
    /* padded batches (rows do not collapse to one pitch): the kernels' general path (row_index
     * and 64-bit strides of x, q and the scales), which the cases above never reach (found by
     * review); M-major scales for the block modes, row-major for the row mode */
    ptxq_quant_mode gm[5] = {PTXQ_QUANT_MXFP8, PTXQ_QUANT_INT8_BLOCK, PTXQ_QUANT_FP8_BLOCK,
                             PTXQ_QUANT_NVFP4, PTXQ_QUANT_INT8_ROW};
    ptxq_dtype go[5] = {PTXQ_E4M3, PTXQ_I8, PTXQ_E5M2, PTXQ_E2M1, PTXQ_I8};
    for (int i = 0; i < 5; ++i) {
        quant_case c = new_case(gm[i], go[i], k_in[i % 3]);
        c.block = gm[i] == PTXQ_QUANT_INT8_BLOCK ? 64 : 0;
        c.rank = 3;
        c.shape[0] = 3;
        c.shape[1] = 21;
        c.shape[2] = 512;
        c.batch_pad = 64;
        c.scale_mmajor = gm[i] != PTXQ_QUANT_INT8_ROW;
        fails += run_one(c, 1) != 0;
    }
    /* a broadcast batch: x [2, 1, 3, K] with strides (0, 0, K, 1), as NumPy's broadcast_to gives.
     * Its rows are not at r * K: the flat-row path once took it and read a batch past x's end
     * (src/quant.c, ptxq_rows_collapse); with PTXQ_TEST_GUARD that faults. Item, row-CTA and
     * NVFP4 kernels. */
    ptxq_quant_mode bm[3] = {PTXQ_QUANT_FP8_BLOCK, PTXQ_QUANT_FP8_ROW, PTXQ_QUANT_NVFP4};
    ptxq_dtype bo[3] = {PTXQ_E4M3, PTXQ_E4M3, PTXQ_E2M1};
    for (int i = 0; i < 3; ++i) {
        quant_case c = new_case(bm[i], bo[i], k_in[i]);
        c.rank = 4;
        c.shape[0] = 2;
        c.shape[1] = 1;
        c.shape[2] = 3;
        c.shape[3] = 1024;
        c.x_bcast = 1;
        fails += run_one(c, 1) != 0;
    }
    assert_int_equal(fails, 0);
}

static void test_sf128x4_and_static(void **state) {
    (void)state;
    if (no_gpu()) skip();
    int fails = 0;
    for (int j = 0; j < 3; ++j) {
        quant_case c;
        memset(&c, 0, sizeof c);
        c.in = k_in[j];
        c.rank = 2;
        c.layout = PTXQ_SCALE_128x4;
        c.mode = PTXQ_QUANT_MXFP8;
        c.out = PTXQ_E4M3;
        c.shape[0] = 200; /* 2 row tiles, the second partial */
        c.shape[1] = 96;  /* 3 scale columns: a partial column tile */
        fails += run_one(c, 1) != 0;
        c.mode = PTXQ_QUANT_NVFP4;
        c.out = PTXQ_E2M1;
        c.shape[0] = 129;
        c.shape[1] = 1040; /* 65 scale columns */
        fails += run_one(c, 1) != 0;
        memset(&c, 0, sizeof c);
        c.in = k_in[j];
        c.rank = 2;
        c.mode = PTXQ_QUANT_FP8_TENSOR;
        c.out = j == 1 ? PTXQ_E5M2 : PTXQ_E4M3;
        c.shape[0] = 77;
        c.shape[1] = 520;
        c.static_scale = 1;
        c.write_amax = j != 2;
        fails += run_one(c, 1) != 0;
    }
    assert_int_equal(fails, 0);
}

/* The scale rules' special values (ptxq.h): zero blocks and rows, magnitudes near 2^-130 (an
 * amax under fmax * 2^-126 once made inv Inf: zeros encoded as NaN, the rest saturated; NVFP4's
 * global scale underflowed the same way), all zeros. Codes and scales bit for bit against
 * quant_ref, whose error check counts a NaN. */
static void test_special_values(void **state) {
    (void)state;
    if (no_gpu()) skip();
    struct { ptxq_quant_mode m; ptxq_dtype out; int block; int64_t K; } modes[] = {
        {PTXQ_QUANT_FP8_TENSOR, PTXQ_E4M3, 0, 392}, {PTXQ_QUANT_FP8_ROW, PTXQ_E5M2, 0, 1000},
        {PTXQ_QUANT_FP8_ROW, PTXQ_E4M3, 0, 24}, {PTXQ_QUANT_FP8_BLOCK, PTXQ_E4M3, 0, 640},
        {PTXQ_QUANT_MXFP8, PTXQ_E4M3, 0, 800}, {PTXQ_QUANT_NVFP4, PTXQ_E2M1, 0, 2064},
        {PTXQ_QUANT_INT8_ROW, PTXQ_I8, 0, 1016}, {PTXQ_QUANT_INT8_BLOCK, PTXQ_I8, 32, 352},
    };
    int fails = 0, n = 0;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i)
        for (int v = QUANT_VALUES_ZERO_BLOCKS; v <= QUANT_VALUES_ZERO; ++v)
            for (int j = 0; j < 3; ++j) {
                if (v != QUANT_VALUES_TINY && j == 1) continue; /* F16: tiny values only */
                quant_case c = new_case(modes[i].m, modes[i].out, k_in[j]);
                c.block = modes[i].block;
                c.rank = 2;
                c.shape[0] = 33;
                c.shape[1] = modes[i].K;
                c.values = v;
                fails += run_one(c, 1) != 0;
                ++n;
            }
    /* static scales and the 128x4 layout on tiny values, then static scales too small for their
     * reciprocals (the FLT_MAX caps: codes saturate, zeros stay zero); static 0: derived */
    struct { ptxq_quant_mode m; int64_t rows, K; int stat; float value; int layout, vals; } sp[] = {
        {PTXQ_QUANT_FP8_TENSOR, 65, 520, 1, 0.0f, PTXQ_SCALE_STRIDED, QUANT_VALUES_TINY},
        {PTXQ_QUANT_NVFP4, 129, 1040, 0, 0.0f, PTXQ_SCALE_128x4, QUANT_VALUES_TINY},
        {PTXQ_QUANT_FP8_TENSOR, 33, 520, 1, 1e-44f, PTXQ_SCALE_STRIDED, QUANT_VALUES_ZERO_BLOCKS},
        {PTXQ_QUANT_NVFP4, 33, 1040, 1, 1e-45f, PTXQ_SCALE_STRIDED, QUANT_VALUES_TINY},
    };
    for (int j = 0; j < 3; j += 2)
        for (size_t i = 0; i < sizeof sp / sizeof sp[0]; ++i) {
            quant_case c = new_case(sp[i].m, sp[i].m == PTXQ_QUANT_NVFP4 ? PTXQ_E2M1 : PTXQ_E4M3,
                                    k_in[j]);
            c.rank = 2;
            c.shape[0] = sp[i].rows;
            c.shape[1] = sp[i].K;
            c.static_scale = sp[i].stat;
            c.write_amax = sp[i].stat && sp[i].value == 0.0f;
            c.static_value = sp[i].value;
            c.layout = (ptxq_scale_layout)sp[i].layout;
            c.values = sp[i].vals;
            fails += run_one(c, 1) != 0;
            ++n;
        }
    printf("[ INFO     ] %d cases, %d failed\n", n, fails);
    assert_int_equal(fails, 0);
}

/* No device: the reference itself (which the kernels match bit for bit) gives finite scales, no
 * NaN scale code and no NaN code on tiny and zero inputs, within the half-step error bound. Two
 * data sets: mixed (per-block floors, the tensor's amax ordinary) and all tiny (the per-tensor
 * floors: FP8_TENSOR's amax, NVFP4's global scale). The old reference failed both (zeros of a
 * block with amax 1e-37 came out NaN; on the all-tiny set FP8_TENSOR gave NaN codes and NVFP4
 * NaN scale codes). */
static void test_ref_tiny_values(void **state) {
    (void)state;
    const int64_t rows = 4, K = 256;
    float x[4 * 256];
    struct { ptxq_quant_mode m; ptxq_dtype out; int block; } modes[] = {
        {PTXQ_QUANT_FP8_TENSOR, PTXQ_E4M3, 0}, {PTXQ_QUANT_FP8_TENSOR, PTXQ_E5M2, 0},
        {PTXQ_QUANT_FP8_ROW, PTXQ_E4M3, 0}, {PTXQ_QUANT_FP8_BLOCK, PTXQ_E5M2, 0},
        {PTXQ_QUANT_MXFP8, PTXQ_E4M3, 0}, {PTXQ_QUANT_NVFP4, PTXQ_E2M1, 0},
        {PTXQ_QUANT_INT8_ROW, PTXQ_I8, 0}, {PTXQ_QUANT_INT8_BLOCK, PTXQ_I8, 64},
    };
    for (int set = 0; set < 2; ++set) {
        for (int64_t i = 0; i < rows * K; ++i) {
            int64_t r = i / K, k = i % K;
            /* row 0 ~1e-37, row 1 f32 subnormals, row 2 zeros, row 3 a zero block then 1e-30
             * (set 0) or 1e-38 (set 1) */
            float v = (float)((int)(k % 7) - 3), big = set ? 1e-38f : 1e-30f;
            x[i] = r == 0 ? v * 1e-37f : r == 1 ? v * 1e-40f : r == 2 ? 0.0f : k < 128 ? 0.0f : v * big;
        }
        for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i)
            for (int st = 0; st < 2; ++st) {
                /* st = 1: a static scale too small for its reciprocal (FP8_TENSOR, NVFP4) */
                if (st && modes[i].m != PTXQ_QUANT_FP8_TENSOR && modes[i].m != PTXQ_QUANT_NVFP4)
                    continue;
                quant_host h;
                assert_int_equal(quant_ref(x, rows, K, modes[i].m, modes[i].out, modes[i].block,
                                           st ? 1e-44f : -1.0f, &h), 0);
                int64_t nsc = modes[i].m == PTXQ_QUANT_FP8_TENSOR ? 1 : rows * h.nk;
                for (int64_t j = 0; j < nsc; ++j) {
                    /* F32 scales finite; UE4M3 / UE8M0 codes (held as floats) not NaN codes */
                    int code = (int)h.scale[j];
                    int nan_code = modes[i].m == PTXQ_QUANT_NVFP4   ? (code & 0x7F) == 0x7F
                                   : modes[i].m == PTXQ_QUANT_MXFP8 ? code == 255
                                                                    : !isfinite(h.scale[j]);
                    if (nan_code)
                        fail_msg("set %d mode %d static %d: scale %lld is %g", set, (int)modes[i].m,
                                 st, (long long)j, h.scale[j]);
                }
                assert_true(isfinite(h.gscale));
                for (int64_t j = 0; j < rows * K; ++j) {
                    double d = quant_decode(modes[i].out, h.q[j]);
                    if (!isfinite(d) || (x[j] == 0.0f && d != 0.0))
                        fail_msg("set %d mode %d out %s static %d: element %lld (x %g) -> code 0x%02x",
                                 set, (int)modes[i].m, ptxq_dtype_name(modes[i].out), st,
                                 (long long)j, x[j], h.q[j]);
                }
                if (!st) {
                    quant_err e;
                    quant_ref_error(x, &h, &e);
                    if (e.over_bound)
                        fail_msg("set %d mode %d out %s: %lld elements over the bound", set,
                                 (int)modes[i].m, ptxq_dtype_name(modes[i].out),
                                 (long long)e.over_bound);
                }
                quant_host_free(&h);
            }
    }
}

/* No device: the argument rules ptxq.h states, on fake (aligned, nonzero) addresses. */
static void test_validate_contract(void **state) {
    (void)state;
    uint64_t base = 0x100000;
    ptxq_quant_desc d;
    memset(&d, 0, sizeof d);
    d.mode = PTXQ_QUANT_MXFP8;
    d.out_dtype = PTXQ_E4M3;
    int64_t xs[3] = {64, 256, 0}, ss[2] = {64, 8};
    ptxq_tensor x = ptxq_tensor_make(PTXQ_BF16, 2, xs, base);
    ptxq_tensor q = ptxq_tensor_make(PTXQ_E4M3, 2, xs, base + 0x100000);
    ptxq_tensor s = ptxq_tensor_make(PTXQ_UE8M0, 2, ss, base + 0x200000);
    assert_int_equal(ptxq_quant_validate(&d, &x, &q, &s), PTXQ_OK);
    /* scale_shape: an unknown layout, 128x4 for rank 3 */
    ptxq_tensor sh;
    size_t bytes = 0;
    ptxq_quant_desc bad = d;
    bad.scale_layout = (ptxq_scale_layout)5;
    assert_int_equal(ptxq_quant_scale_shape(&bad, &x, &sh, &bytes), PTXQ_ERR_SCALE_SHAPE);
    bad.scale_layout = PTXQ_SCALE_128x4;
    int64_t x3s[3] = {2, 32, 256};
    ptxq_tensor x3 = ptxq_tensor_make(PTXQ_BF16, 3, x3s, base);
    assert_int_equal(ptxq_quant_scale_shape(&bad, &x3, &sh, &bytes), PTXQ_ERR_SCALE_SHAPE);
    assert_int_equal(ptxq_quant_scale_shape(&bad, &x, &sh, &bytes), PTXQ_OK);
    /* size-1 dimensions' strides are free: x [1, 256] stride 3, q stride 5, and a [64, 1] scale
     * whose (unused) K stride is 2^33 */
    int64_t one[2] = {1, 256}, s1[2] = {1, 8};
    ptxq_tensor x1 = ptxq_tensor_make(PTXQ_BF16, 2, one, base);
    ptxq_tensor q1 = ptxq_tensor_make(PTXQ_E4M3, 2, one, base + 0x100000);
    ptxq_tensor ss1 = ptxq_tensor_make(PTXQ_UE8M0, 2, s1, base + 0x200000);
    x1.stride[0] = 3;
    q1.stride[0] = 5;
    assert_int_equal(ptxq_quant_validate(&d, &x1, &q1, &ss1), PTXQ_OK);
    int64_t k32[2] = {64, 32}, sk1[2] = {64, 1};
    ptxq_tensor xk = ptxq_tensor_make(PTXQ_BF16, 2, k32, base);
    ptxq_tensor qk = ptxq_tensor_make(PTXQ_E4M3, 2, k32, base + 0x100000);
    ptxq_tensor sk = ptxq_tensor_make(PTXQ_UE8M0, 2, sk1, base + 0x200000);
    sk.stride[1] = (int64_t)1 << 33;
    assert_int_equal(ptxq_quant_validate(&d, &xk, &qk, &sk), PTXQ_OK);
    /* an empty x is accepted whatever its other dimension */
    int64_t e0[2] = {(int64_t)1 << 33, 0}, es[2] = {(int64_t)1 << 33, 0};
    ptxq_tensor xe = ptxq_tensor_make(PTXQ_BF16, 2, e0, base);
    ptxq_tensor qe = ptxq_tensor_make(PTXQ_E4M3, 2, e0, base + 0x100000);
    ptxq_tensor se = ptxq_tensor_make(PTXQ_UE8M0, 2, es, base + 0x200000);
    assert_int_equal(ptxq_quant_validate(&d, &xe, &qe, &se), PTXQ_OK);
    /* one word for amax and the per-tensor scale is refused */
    ptxq_quant_desc nv = d;
    nv.mode = PTXQ_QUANT_NVFP4;
    nv.out_dtype = PTXQ_E2M1;
    nv.amax = nv.global_scale = base + 0x300000;
    int64_t nvs[2] = {64, 16};
    ptxq_tensor qn = ptxq_tensor_make(PTXQ_E2M1, 2, xs, base + 0x100000);
    ptxq_tensor sn = ptxq_tensor_make(PTXQ_UE4M3, 2, nvs, base + 0x200000);
    assert_int_equal(ptxq_quant_validate(&nv, &x, &qn, &sn), PTXQ_ERR_INVALID_ARGUMENT);
    nv.global_scale += 4;
    assert_int_equal(ptxq_quant_validate(&nv, &x, &qn, &sn), PTXQ_OK);
    ptxq_quant_desc ft = d;
    ft.mode = PTXQ_QUANT_FP8_TENSOR;
    int64_t n1 = 1;
    ptxq_tensor st1 = ptxq_tensor_make(PTXQ_F32, 1, &n1, base + 0x300000);
    ft.amax = st1.data;
    assert_int_equal(ptxq_quant_validate(&ft, &x, &q, &st1), PTXQ_ERR_INVALID_ARGUMENT);
    ft.amax += 4;
    assert_int_equal(ptxq_quant_validate(&ft, &x, &q, &st1), PTXQ_OK);
}

/* Bad calls on a GPU: status and message, and the poisoned outputs untouched. */
static void test_bad_inputs_untouched(void **state) {
    (void)state;
    if (no_gpu()) skip();
    int64_t xs[2] = {64, 256}, ss[2] = {64, 8};
    uint64_t dx = dev_alloc(&g_test.dev, 64 * 256 * 2 + 64), dq = dev_alloc(&g_test.dev, 64 * 256 + 64);
    uint64_t ds = dev_alloc(&g_test.dev, 4096), dw = dev_alloc(&g_test.dev, 64);
    dev_fill(&g_test.dev, dx, 0x3C, 64 * 256 * 2 + 64);
    ptxq_quant_desc good;
    memset(&good, 0, sizeof good);
    good.mode = PTXQ_QUANT_MXFP8;
    good.out_dtype = PTXQ_E4M3;
    ptxq_tensor x = ptxq_tensor_make(PTXQ_BF16, 2, xs, dx);
    ptxq_tensor q = ptxq_tensor_make(PTXQ_E4M3, 2, xs, dq);
    ptxq_tensor s = ptxq_tensor_make(PTXQ_UE8M0, 2, ss, ds);
    for (int k = 0; k < 16; ++k) {
        ptxq_quant_desc d = good;
        ptxq_tensor bx = x, bq = q, bs = s;
        ptxq_status want;
        switch (k) {
        case 0: bx.dtype = PTXQ_I8; want = PTXQ_ERR_DTYPE; break;
        case 1: bx.data += 2; want = PTXQ_ERR_ALIGNMENT; break;
        case 2: bq.stride[1] = 2; want = PTXQ_ERR_STRIDE; break;
        case 3: bs.shape[1] = 4; want = PTXQ_ERR_SCALE_SHAPE; break;
        case 4: bq.shape[0] = 65; want = PTXQ_ERR_SHAPE; break;
        case 5: bx.stride[0] = 252; want = PTXQ_ERR_ALIGNMENT; break;
        case 6: d.mode = PTXQ_QUANT_NVFP4; d.out_dtype = PTXQ_E2M1; bq.dtype = PTXQ_E2M1;
                want = PTXQ_ERR_SCALE_SHAPE; break; /* UE8M0 scales for NVFP4 */
        case 7: d.mode = PTXQ_QUANT_FP8_TENSOR; bs = ptxq_tensor_make(PTXQ_F32, 1, xs, ds);
                bs.shape[0] = 1; want = PTXQ_ERR_INVALID_ARGUMENT; break; /* no amax word */
        case 8: d.scale_layout = PTXQ_SCALE_128x4; want = PTXQ_ERR_SCALE_SHAPE; break;
        case 9: bx.shape[1] = bq.shape[1] = 248; want = PTXQ_ERR_SHAPE; break;
        case 10: d.out_dtype = PTXQ_E5M2; want = PTXQ_ERR_DTYPE; break;
        case 11: bq.data = 0; want = PTXQ_ERR_INVALID_ARGUMENT; break;
        /* per-tensor modes with the amax word given (it must stay poisoned too) */
        case 12: d.mode = PTXQ_QUANT_FP8_TENSOR; d.amax = dw; bs = ptxq_tensor_make(PTXQ_F32, 1, xs, ds);
                 bs.shape[0] = 1; bq.data += 1; want = PTXQ_ERR_ALIGNMENT; break;
        case 13: d.mode = PTXQ_QUANT_NVFP4; d.out_dtype = PTXQ_E2M1; bq.dtype = PTXQ_E2M1;
                 d.amax = dw; d.global_scale = dw + 4; d.scale_layout = PTXQ_SCALE_128x4;
                 bs = ptxq_tensor_make(PTXQ_UE4M3, 1, (int64_t[]){1024}, ds);
                 want = PTXQ_ERR_SCALE_SHAPE; break; /* 2048 bytes of 128x4 scales needed */
        case 14: d.mode = PTXQ_QUANT_NVFP4; d.out_dtype = PTXQ_E2M1; bq.dtype = PTXQ_E2M1;
                 d.amax = d.global_scale = dw; bs = ptxq_tensor_make(PTXQ_UE4M3, 2, (int64_t[]){64, 16}, ds);
                 want = PTXQ_ERR_INVALID_ARGUMENT; break; /* one word for both */
        default: d.mode = PTXQ_QUANT_FP8_TENSOR; d.amax = ds; bs = ptxq_tensor_make(PTXQ_F32, 1, xs, ds);
                 bs.shape[0] = 1; want = PTXQ_ERR_INVALID_ARGUMENT; break; /* amax is the scale */
        }
        dev_fill(&g_test.dev, dq, 0x77, 64 * 256 + 64);
        dev_fill(&g_test.dev, ds, 0x77, 4096);
        dev_fill(&g_test.dev, dw, 0x77, 64);
        ptxq_status st = ptxq_quantize(g_test.dev.ctx, &d, &bx, &bq, &bs, g_test.dev.stream);
        if (st != want) fail_msg("case %d: %s (%s), want %s", k, ptxq_status_name(st), ptxq_last_error(), ptxq_status_name(want));
        assert_true(strlen(ptxq_last_error()) > 10);
        dev_sync(&g_test.dev);
        unsigned char *h = malloc(4096 + 64 * 256 + 64);
        dev_download(&g_test.dev, h, dq, 64 * 256 + 64);
        for (int i = 0; i < 64 * 256 + 64; ++i) assert_int_equal(h[i], 0x77);
        dev_download(&g_test.dev, h, ds, 4096);
        for (int i = 0; i < 4096; ++i) assert_int_equal(h[i], 0x77);
        dev_download(&g_test.dev, h, dw, 64);
        for (int i = 0; i < 64; ++i) assert_int_equal(h[i], 0x77);
        free(h);
    }
    /* and the good call does write, leaving the caller's current context as it was (none here;
     * found by review: a call made the library's context current and left it so) */
    CUcontext cur = (CUcontext)1;
    assert_int_equal(g_test.dev.drv->cuCtxSetCurrent(NULL), CUDA_SUCCESS);
    assert_int_equal(ptxq_quantize(g_test.dev.ctx, &good, &x, &q, &s, g_test.dev.stream), PTXQ_OK);
    assert_int_equal(g_test.dev.drv->cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    assert_null(cur);
    assert_int_equal(ptxq_context_make_current(g_test.dev.ctx), PTXQ_OK);
    dev_sync(&g_test.dev);
    unsigned char b;
    dev_download(&g_test.dev, &b, dq, 1);
    /* every input is bf16 0x3C3C: exponent field 0x78, scale code 0x78 - 8, inv 2^(127 - code) */
    float v = ptxq_bf16_decode(0x3C3C), inv = ldexpf(1.0f, 127 - (0x78 - 8));
    assert_int_equal(b, ptxq_e4m3_encode(v * inv, 1));
    dev_free(&g_test.dev, dx); dev_free(&g_test.dev, dq); dev_free(&g_test.dev, ds); dev_free(&g_test.dev, dw);
}

/* A per-tensor quantization (memset + two kernels) captured in a CUDA graph and replayed. */
static void test_graph_capture(void **state) {
    (void)state;
    if (no_gpu()) skip();
    const ptxq_cudrv *D = g_test.dev.drv;
    int64_t xs[2] = {96, 1024}, one = 1;
    size_t n = 96 * 1024;
    uint16_t *hx = malloc(n * 2);
    float amax = 0;
    rng64 g = {g_test.seed++};
    for (size_t i = 0; i < n; ++i) {
        hx[i] = ptxq_bf16_encode((float)rng_normal(&g) * 3.0f);
        float a = fabsf(ptxq_bf16_decode(hx[i]));
        if (a > amax) amax = a;
    }
    uint64_t dx = dev_alloc(&g_test.dev, n * 2), dq = dev_alloc(&g_test.dev, n), ds = dev_alloc(&g_test.dev, 4),
             dw = dev_alloc(&g_test.dev, 4);
    dev_upload(&g_test.dev, dx, hx, n * 2);
    dev_fill(&g_test.dev, dq, 0x5A, n);
    dev_fill(&g_test.dev, dw, 0x5A, 4); /* read back below: capture must leave it alone */
    ptxq_quant_desc d;
    memset(&d, 0, sizeof d);
    d.mode = PTXQ_QUANT_FP8_TENSOR;
    d.out_dtype = PTXQ_E4M3;
    d.amax = dw;
    ptxq_tensor x = ptxq_tensor_make(PTXQ_BF16, 2, xs, dx), q = ptxq_tensor_make(PTXQ_E4M3, 2, xs, dq);
    ptxq_tensor s = ptxq_tensor_make(PTXQ_F32, 1, &one, ds);
    CUgraph graph;
    CUgraphExec exec;
    assert_int_equal(D->cuStreamBeginCapture(g_test.dev.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
    assert_int_equal(ptxq_quantize(g_test.dev.ctx, &d, &x, &q, &s, g_test.dev.stream), PTXQ_OK);
    assert_int_equal(D->cuStreamEndCapture(g_test.dev.stream, &graph), CUDA_SUCCESS);
    assert_int_equal(D->cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
    uint32_t w0 = 0;
    dev_download(&g_test.dev, &w0, dw, 4);
    unsigned char q0;
    dev_download(&g_test.dev, &q0, dq, 1);
    assert_int_equal(q0, 0x5A); /* capture enqueued nothing */
    assert_int_equal(w0, 0x5A5A5A5Au);
    float got_amax = -1;
    for (int rep = 0; rep < 3; ++rep) {
        dev_fill(&g_test.dev, dq, 0x5A, n);
        assert_int_equal(D->cuGraphLaunch(exec, g_test.dev.stream), CUDA_SUCCESS);
        dev_sync(&g_test.dev);
        dev_download(&g_test.dev, &got_amax, dw, 4);
        assert_true(got_amax == amax);
        unsigned char *hq = malloc(n);
        dev_download(&g_test.dev, hq, dq, n);
        float inv = 448.0f / amax;
        for (size_t i = 0; i < n; ++i)
            assert_int_equal(hq[i], ptxq_e4m3_encode(ptxq_bf16_decode(hx[i]) * inv, 1));
        free(hq);
    }
    D->cuGraphExecDestroy(exec);
    D->cuGraphDestroy(graph);
    dev_free(&g_test.dev, dx); dev_free(&g_test.dev, dq); dev_free(&g_test.dev, ds); dev_free(&g_test.dev, dw);
    free(hx);
}

/* Several threads share one context and race the lazy module loads. */
typedef struct thread_job { ptxq_quant_mode mode; ptxq_dtype out; int rc; } thread_job;

static void *thread_main(void *arg) {
    thread_job *j = arg;
    quant_case c;
    memset(&c, 0, sizeof c);
    c.mode = j->mode;
    c.out = j->out;
    c.in = PTXQ_BF16;
    c.rank = 2;
    c.shape[0] = 50;
    c.shape[1] = 256;
    c.seed = (uint64_t)(uintptr_t)arg;
    quant_result r;
    j->rc = quant_case_run(&g_test.dev, &c, &r);
    return NULL;
}

static void test_threads_share_context(void **state) {
    (void)state;
    if (no_gpu()) skip();
    /* fresh context so that no module is loaded yet */
    ptxq_context *saved = g_test.dev.ctx, *fresh = NULL;
    assert_int_equal(ptxq_context_create(0, &fresh), PTXQ_OK);
    g_test.dev.ctx = fresh;
    thread_job jobs[8] = {
        {PTXQ_QUANT_INT8_ROW, PTXQ_I8, 0}, {PTXQ_QUANT_INT8_ROW, PTXQ_I8, 0},
        {PTXQ_QUANT_MXFP8, PTXQ_E4M3, 0}, {PTXQ_QUANT_MXFP8, PTXQ_E4M3, 0},
        {PTXQ_QUANT_FP8_BLOCK, PTXQ_E4M3, 0}, {PTXQ_QUANT_FP8_BLOCK, PTXQ_E4M3, 0},
        {PTXQ_QUANT_NVFP4, PTXQ_E2M1, 0}, {PTXQ_QUANT_NVFP4, PTXQ_E2M1, 0},
    };
    pthread_t th[8];
    for (int i = 0; i < 8; ++i) pthread_create(&th[i], NULL, thread_main, &jobs[i]);
    for (int i = 0; i < 8; ++i) pthread_join(th[i], NULL);
    g_test.dev.ctx = saved;
    ptxq_context_destroy(fresh);
    for (int i = 0; i < 8; ++i) assert_int_equal(jobs[i].rc, 0);
}

/* PTXQ_KERNEL_DIR: a .cubin (the embedded one, copied out) and a .ptx (the build's generated
 * PTX, JIT-compiled by the driver) replace the embedded kernel in a new context. */
static void test_override(void **state) {
    (void)state;
    if (no_gpu()) skip();
    const char *kname = "quant_i8rowl_bf16_s8"; /* rows of 256: the warp-per-row kernel */
    char dir[] = "/tmp/ptxq_ovXXXXXX", path[512], src[512];
    assert_non_null(mkdtemp(dir));
    for (int form = 0; form < 2; ++form) {
        if (form == 0) {
            ptxq_kernel_info k;
            assert_int_equal(ptxq_kernel_find(kname, g_test.dev.info.target, &k), PTXQ_OK);
            snprintf(path, sizeof path, "%s/%s.cubin", dir, kname);
            FILE *f = fopen(path, "wb");
            fwrite(k.cubin, 1, k.cubin_size, f);
            fclose(f);
        } else {
            unlink(path);
            snprintf(src, sizeof src, "%s/%s.%s.ptx", PTXQ_BUILD_GEN_DIR, kname, g_test.dev.info.target);
            FILE *in = fopen(src, "rb");
            if (!in) fail_msg("generated PTX %s not found", src);
            snprintf(path, sizeof path, "%s/%s.ptx", dir, kname);
            FILE *out = fopen(path, "wb");
            char buf[4096];
            size_t got;
            while ((got = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, got, out);
            fclose(in);
            fclose(out);
        }
        setenv("PTXQ_KERNEL_DIR", dir, 1);
        ptxq_context *saved = g_test.dev.ctx, *fresh = NULL;
        assert_int_equal(ptxq_context_create(0, &fresh), PTXQ_OK);
        g_test.dev.ctx = fresh;
        thread_job j = {PTXQ_QUANT_INT8_ROW, PTXQ_I8, -1};
        thread_main(&j);
        int ov = ptxq_kernel_overridden(fresh, kname);
        g_test.dev.ctx = saved;
        ptxq_context_destroy(fresh);
        unsetenv("PTXQ_KERNEL_DIR");
        assert_int_equal(j.rc, 0);
        assert_int_equal(ov, 1);
    }
    unlink(path);
    rmdir(dir);
}

/* Round trip through the hand-written dequantizer: every BF16 output is exactly
 * bf16(decode(q) * scale) for the codes and scale FP8_TENSOR wrote; y's padding stays poisoned. */
static void test_dequant(void **state) {
    (void)state;
    if (no_gpu()) skip();
    ptxq_dtype fmts[2] = {PTXQ_E4M3, PTXQ_E5M2};
    /* 4096 x 16384: 2^23 units of 8 codes, several trips for every thread of the grid */
    int64_t shapes[3][2] = {{37, 48}, {1000, 4096}, {4096, 16384}};
    rng64 g = {g_test.seed++};
    for (int f = 0; f < 2; ++f)
        for (int sh = 0; sh < 3; ++sh) {
            int64_t n = shapes[sh][0] * shapes[sh][1], one = 1;
            uint16_t *hx = malloc((size_t)n * 2), *hy = malloc((size_t)n * 2 + 64);
            uint8_t *hq = malloc((size_t)n);
            for (int64_t i = 0; i < n; ++i) hx[i] = ptxq_bf16_encode((float)rng_normal(&g) * 5.0f);
            uint64_t dx = dev_alloc(&g_test.dev, (size_t)n * 2), dq = dev_alloc(&g_test.dev, (size_t)n);
            uint64_t dy = dev_alloc(&g_test.dev, (size_t)n * 2 + 64), ds = dev_alloc(&g_test.dev, 4);
            uint64_t dw = dev_alloc(&g_test.dev, 4);
            dev_upload(&g_test.dev, dx, hx, (size_t)n * 2);
            ptxq_quant_desc d;
            memset(&d, 0, sizeof d);
            d.mode = PTXQ_QUANT_FP8_TENSOR;
            d.out_dtype = fmts[f];
            d.amax = dw;
            ptxq_tensor x = ptxq_tensor_make(PTXQ_BF16, 2, shapes[sh], dx);
            ptxq_tensor q = ptxq_tensor_make(fmts[f], 2, shapes[sh], dq);
            ptxq_tensor s = ptxq_tensor_make(PTXQ_F32, 1, &one, ds);
            ptxq_tensor y = ptxq_tensor_make(PTXQ_BF16, 2, shapes[sh], dy);
            assert_int_equal(ptxq_quantize(g_test.dev.ctx, &d, &x, &q, &s, g_test.dev.stream), PTXQ_OK);
            dev_fill(&g_test.dev, dy, 0x5A, (size_t)n * 2 + 64);
            assert_int_equal(ptxq_dequantize_fp8(g_test.dev.ctx, &q, ds, &y, g_test.dev.stream), PTXQ_OK);
            dev_sync(&g_test.dev);
            float scale;
            dev_download(&g_test.dev, &scale, ds, 4);
            dev_download(&g_test.dev, hq, dq, (size_t)n);
            dev_download(&g_test.dev, hy, dy, (size_t)n * 2 + 64);
            int64_t bad = 0;
            for (int64_t i = 0; i < n; ++i) {
                float v = f == 0 ? ptxq_e4m3_decode(hq[i]) : ptxq_e5m2_decode(hq[i]);
                bad += hy[i] != ptxq_bf16_encode(v * scale);
            }
            for (int i = 0; i < 32; ++i) bad += hy[n + i] != 0x5A5A;
            if (bad) fail_msg("dequant %s %lldx%lld: %lld wrong", ptxq_dtype_name(fmts[f]),
                              (long long)shapes[sh][0], (long long)shapes[sh][1], (long long)bad);
            /* bad calls leave y untouched */
            dev_fill(&g_test.dev, dy, 0x77, (size_t)n * 2 + 64);
            ptxq_tensor yb = y, qb = q;
            yb.dtype = PTXQ_F16;
            assert_int_equal(ptxq_dequantize_fp8(g_test.dev.ctx, &qb, ds, &yb, g_test.dev.stream), PTXQ_ERR_DTYPE);
            qb.data += 8;
            assert_int_equal(ptxq_dequantize_fp8(g_test.dev.ctx, &qb, ds, &y, g_test.dev.stream), PTXQ_ERR_ALIGNMENT);
            assert_int_equal(ptxq_dequantize_fp8(g_test.dev.ctx, &q, 0, &y, g_test.dev.stream), PTXQ_ERR_INVALID_ARGUMENT);
            dev_download(&g_test.dev, hy, dy, (size_t)n * 2 + 64);
            for (int64_t i = 0; i < n + 32; ++i) assert_int_equal(hy[i], 0x7777);
            dev_free(&g_test.dev, dx); dev_free(&g_test.dev, dq); dev_free(&g_test.dev, dy);
            dev_free(&g_test.dev, ds); dev_free(&g_test.dev, dw);
            free(hx); free(hy); free(hq);
        }
}

/* Random configurations: the tests above pick their combinations by hand; this one draws them
 * from what ptxq.h accepts (every mode and output type, INT8 block sizes, each input type, rank 2
 * to 4 with ragged dimensions, padded rows and batches, M-major scales, broadcast batches, the
 * 128x4 scale layout, static scales with and without amax, the special values: zero blocks,
 * magnitudes near 2^-130, all zeros), each checked like the fixed cases
 * (outputs poisoned twice, every code and scale against the exact reference, padding untouched).
 * The draws come from the test seed (printed; PTXQ_TEST_SEED replays them with the same
 * PTXQ_TEST_FILTER), PTXQ_TEST_RANDOM sets how many (default 60). */

static quant_case random_case(rng64 *r) {
    static const ptxq_quant_mode modes[7] = {
        PTXQ_QUANT_FP8_TENSOR, PTXQ_QUANT_FP8_ROW, PTXQ_QUANT_FP8_BLOCK, PTXQ_QUANT_MXFP8,
        PTXQ_QUANT_NVFP4, PTXQ_QUANT_INT8_ROW, PTXQ_QUANT_INT8_BLOCK};
    static const int i8blocks[3] = {32, 64, 128};
    quant_case c;
    memset(&c, 0, sizeof c);
    c.mode = modes[rng_pick(r, 7)];
    c.in = k_in[rng_pick(r, 3)];
    c.out = c.mode == PTXQ_QUANT_NVFP4 ? PTXQ_E2M1
            : c.mode == PTXQ_QUANT_INT8_ROW || c.mode == PTXQ_QUANT_INT8_BLOCK ? PTXQ_I8
            : rng_chance(r, 3) ? PTXQ_E5M2 : PTXQ_E4M3;
    if (c.mode == PTXQ_QUANT_INT8_BLOCK) c.block = i8blocks[rng_pick(r, 3)];
    /* K: whole scale blocks (FP8 per tensor / row: whole 16-byte pieces of an E4M3 row) */
    int kq = c.mode == PTXQ_QUANT_FP8_BLOCK ? 128 : c.mode == PTXQ_QUANT_MXFP8 ? 32
             : c.mode == PTXQ_QUANT_NVFP4 ? 16 : c.mode == PTXQ_QUANT_INT8_BLOCK ? c.block : 16;
    int64_t K = kq * (rng_chance(r, 4) ? 1 + rng_pick(r, 4) : 1 + rng_pick(r, 6144 / kq));
    c.rank = 2 + rng_pick(r, 3);
    if (c.mode == PTXQ_QUANT_FP8_TENSOR && rng_chance(r, 3)) c.static_scale = 1;
    if (c.mode == PTXQ_QUANT_NVFP4 && rng_chance(r, 4)) c.static_scale = 1;
    c.write_amax = c.static_scale && c.mode == PTXQ_QUANT_FP8_TENSOR && rng_chance(r, 2);
    if ((c.mode == PTXQ_QUANT_MXFP8 || c.mode == PTXQ_QUANT_NVFP4) && rng_chance(r, 3)) {
        c.layout = PTXQ_SCALE_128x4;
        c.rank = 2;
    }
    for (int i = 0; i < c.rank - 1; ++i)
        c.shape[i] = c.rank == 2 ? 1 + rng_pick(r, 700) : 1 + rng_pick(r, i == c.rank - 2 ? 60 : 4);
    c.shape[c.rank - 1] = K;
    c.x_pad = 8 * rng_pick(r, 3);
    c.q_pad = 16 * rng_pick(r, 3);
    if (c.rank >= 3 && rng_chance(r, 3)) c.batch_pad = 64 * (1 + rng_pick(r, 2));
    int blockwise = c.mode == PTXQ_QUANT_FP8_BLOCK || c.mode == PTXQ_QUANT_MXFP8 ||
                    c.mode == PTXQ_QUANT_NVFP4 || c.mode == PTXQ_QUANT_INT8_BLOCK;
    if (blockwise && c.layout == PTXQ_SCALE_STRIDED && rng_chance(r, 3)) c.scale_mmajor = 1;
    if (c.rank >= 3 && !c.scale_mmajor && rng_chance(r, 4)) c.x_bcast = 1;
    if (rng_chance(r, 6)) c.values = 1 + rng_pick(r, 3); /* zero blocks, tiny values, all zeros */
    return c;
}

/* gputest_random_run's step: draws case i, runs it, prints it; nonzero if it failed */
static int random_one(rng64 *r, int i) {
    quant_case c = random_case(r);
    printf("[ INFO     ] #%d\n", i);
    return run_one(c, 1);
}

static void test_random_configs(void **state) {
    (void)state;
    if (no_gpu()) skip();
    int n, fails = gputest_random_run(&g_test, 60, random_one, &n);
    if (n == 0) skip();
    assert_int_equal(fails, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_modes),
        cmocka_unit_test(test_strided),
        cmocka_unit_test(test_sf128x4_and_static),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_ref_tiny_values),
        cmocka_unit_test(test_validate_contract),
        cmocka_unit_test(test_bad_inputs_untouched),
        cmocka_unit_test(test_graph_capture),
        cmocka_unit_test(test_threads_share_context),
        cmocka_unit_test(test_override),
        cmocka_unit_test(test_dequant),
        cmocka_unit_test(test_random_configs),
    };
    test_filter_from_env();
    return cmocka_run_group_tests(tests, setup, teardown);
}
