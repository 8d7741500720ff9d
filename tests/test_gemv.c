/* test_gemv.c -- block-scaled GEMV.
 *
 * Everywhere (no GPU needed): ptxq_gemv_validate on good and bad arguments (status and message),
 * every gemv cubin's ptxas report (no spill, no stack frame), and with nvdisasm the SASS of every
 * gemv cubin: 128-bit global loads for A and x (and NVFP4's scale pairs as 16-bit loads), no
 * local memory, no tensor-core MMA.
 * On a GPU: every format x x dtype x y dtype against the float64 CPU reference (gemv_ref.c) on
 * ragged M, K with a half chunk (NVFP4, K % 32 == 16), batches, padded rows, M-major and 128x4
 * A scales, shared x, per-tensor scales, every plan (rows per thread x warps along K), and bad
 * calls leaving a poisoned y untouched, and programmatic dependent launch (a GEMV reading the
 * output of the one before it, every launch mode and prefetch depth, bit-identical results). Without a GPU those tests are skipped, visibly. Data is
 * fresh each run (seed printed; PTXQ_TEST_SEED repeats one). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "gemv_ref.h"
#include "internal.h"
#include "gputest.h"
#include "sass.h"
#include "test_filter.h"

/* Fake device addresses for the CPU validation and planning cases, 2^40 bytes apart: y is refused
 * where its bytes overlap what the call reads, and some cases' shapes are huge. */
#define A_AT ((uint64_t)1 << 40)
#define AS_AT ((uint64_t)2 << 40)
#define X_AT ((uint64_t)3 << 40)
#define XS_AT ((uint64_t)4 << 40)
#define Y_AT ((uint64_t)5 << 40)
#define G_AT ((uint64_t)6 << 40)

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

/* ---- validation without a device ---------------------------------------------------------- */

/* A good NVFP4 call on fake (aligned) addresses: A [3, 100, 1024], scales row-major, x [3, 1024]
 * NVFP4 with scales, y [3, 100] F16. */
typedef struct vcall {
    ptxq_gemv_desc d;
    ptxq_tensor a, as, x, xs, y;
    int no_xs;
} vcall;

static vcall good_call(void) {
    vcall v;
    memset(&v, 0, sizeof v);
    v.d.format = PTXQ_GEMV_NVFP4;
    int64_t ash[3] = {3, 100, 1024}, ssh[3] = {3, 100, 64}, xsh[2] = {3, 1024}, xssh[2] = {3, 64};
    int64_t ysh[2] = {3, 100};
    v.a = ptxq_tensor_make(PTXQ_E2M1, 3, ash, A_AT);
    v.as = ptxq_tensor_make(PTXQ_UE4M3, 3, ssh, (AS_AT + 1));
    v.x = ptxq_tensor_make(PTXQ_E2M1, 2, xsh, X_AT);
    v.xs = ptxq_tensor_make(PTXQ_UE4M3, 2, xssh, (XS_AT + 3));
    v.y = ptxq_tensor_make(PTXQ_F16, 2, ysh, (Y_AT + 2));
    v.d.a_global = G_AT;
    return v;
}

static ptxq_status validate(const vcall *v) {
    return ptxq_gemv_validate(&v->d, &v->a, &v->as, &v->x, v->no_xs ? NULL : &v->xs, &v->y);
}

/* An sm_90a context made up here (no device: planning reads only the registry and the device
 * figures), 132 SMs and dram GB/s of DRAM. */
static struct ptxq_context fake_sm90(int dram) {
    struct ptxq_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.target = "sm_90a";
    ctx.info.sm_count = 132;
    ctx.info.dram_gbps = dram;
    return ctx;
}

/* A desc of format f with the plan fields fixed (0: the runtime's choice), the rest zero. */
static ptxq_gemv_desc plan_desc(ptxq_gemv_format f, int rows, int kw, int pipelined) {
    ptxq_gemv_desc d;
    memset(&d, 0, sizeof d);
    d.format = f;
    d.rows_per_thread = rows;
    d.k_warps = kw;
    d.pipelined = pipelined;
    return d;
}

/* NVFP4 x NVFP4 [L, M, K] tensors a, a_scale, x, x_scale, y (F16) at made-up addresses; A's
 * scales row-major or (sf) in 128x4. */
static void nvfp4_tensors(int64_t M, int64_t K, int64_t L, int sf, ptxq_tensor t[5]) {
    int64_t nk = K / 16;
    int64_t ash[3] = {L, M, K}, ssh[3] = {L, M, nk}, xsh[2] = {L, K}, xssh[2] = {L, nk};
    int64_t ysh[2] = {L, M}, n128 = L * ((M + 127) / 128) * ((nk + 3) / 4) * 512;
    t[0] = ptxq_tensor_make(PTXQ_E2M1, 3, ash, A_AT);
    t[1] = sf ? ptxq_tensor_make(PTXQ_UE4M3, 1, &n128, AS_AT)
              : ptxq_tensor_make(PTXQ_UE4M3, 3, ssh, AS_AT);
    t[2] = ptxq_tensor_make(PTXQ_E2M1, 2, xsh, X_AT);
    t[3] = ptxq_tensor_make(PTXQ_UE4M3, 2, xssh, XS_AT);
    t[4] = ptxq_tensor_make(PTXQ_F16, 2, ysh, Y_AT);
}

/* ptxq_gemv_plan_for on ctx, NVFP4 x NVFP4 [L, M, K], y F16; A's scales row-major or (sf) in
 * 128x4; rows / kw / pipelined: the desc fields (0: the runtime's choice). */
static void plan_nvfp4(struct ptxq_context *ctx, int64_t M, int64_t K, int64_t L, int sf, int rows,
                       int kw, int pipelined, ptxq_gemv_plan *p) {
    ptxq_tensor t[5];
    nvfp4_tensors(M, K, L, sf, t);
    ptxq_gemv_desc d = plan_desc(PTXQ_GEMV_NVFP4, rows, kw, pipelined);
    d.a_scale_layout = sf ? PTXQ_SCALE_128x4 : PTXQ_SCALE_STRIDED;
    memset(p, 0x7f, sizeof *p);
    ptxq_status st = ptxq_gemv_plan_for(ctx, &d, &t[0], &t[1], &t[2], &t[3], &t[4], p);
    if (st != PTXQ_OK)
        fail_msg("(%lld,%lld,%lld): %s: %s", (long long)M, (long long)K, (long long)L,
                 ptxq_status_name(st), ptxq_last_error());
}

/* The grid bound at its edge: validate and plan_for agree (L = 2^20, K = 32: M = 1919 fits
 * L * (M + 128) < 2^31, M = 2000 does not, though its plans' grids would). */
static void test_plan_grid_bound(void **state) {
    (void)state;
    struct ptxq_context ctx = fake_sm90(4800);
    for (int i = 0; i < 2; ++i) {
        int64_t M = i ? 2000 : 1919;
        ptxq_tensor t[5];
        nvfp4_tensors(M, 32, 1 << 20, 0, t);
        ptxq_gemv_desc d = plan_desc(PTXQ_GEMV_NVFP4, 0, 0, 0);
        ptxq_gemv_plan p;
        ptxq_status v = ptxq_gemv_validate(&d, &t[0], &t[1], &t[2], &t[3], &t[4]);
        ptxq_status q = ptxq_gemv_plan_for(&ctx, &d, &t[0], &t[1], &t[2], &t[3], &t[4], &p);
        ptxq_status want = i ? PTXQ_ERR_SHAPE : PTXQ_OK;
        if (v != want || q != want)
            fail_msg("M = %lld: validate %s, plan_for %s (%s), want %s", (long long)M,
                     ptxq_status_name(v), ptxq_status_name(q), ptxq_last_error(),
                     ptxq_status_name(want));
    }
}

/* What a review of the GEMV's validation found (forty-eighth session). The empty calls overflowed
 * on the code before (caught under UBSan only); the other cases failed there. A second review
 * found the first overlap check refusing layouts whose bytes are apart: those pass here. */
static void test_validate_review48(void **state) {
    (void)state;
    ptxq_gemv_desc d;
    memset(&d, 0, sizeof d);
    d.format = PTXQ_GEMV_NVFP4;
    /* empty calls whose unused strides are huge: accepted, nothing multiplied */
    int64_t K0 = 0, a3[2] = {2, 0}, s3[2] = {2, 0}, y3 = 2;
    ptxq_tensor a = ptxq_tensor_make(PTXQ_E2M1, 2, a3, A_AT);
    a.stride[0] = (int64_t)1 << 62;
    ptxq_tensor as = ptxq_tensor_make(PTXQ_UE4M3, 2, s3, AS_AT);
    ptxq_tensor x = ptxq_tensor_make(PTXQ_BF16, 1, &K0, X_AT);
    ptxq_tensor y = ptxq_tensor_make(PTXQ_F32, 1, &y3, Y_AT);
    assert_int_equal(ptxq_gemv_validate(&d, &a, &as, &x, NULL, &y), PTXQ_OK); /* K = 0 */
    int64_t a4[3] = {0, 2, 32}, s4[3] = {0, 2, 2}, k4 = 32, y4[2] = {0, 2};
    a = ptxq_tensor_make(PTXQ_E2M1, 3, a4, A_AT);
    as = ptxq_tensor_make(PTXQ_UE4M3, 3, s4, AS_AT);
    x = ptxq_tensor_make(PTXQ_BF16, 1, &k4, X_AT);
    y = ptxq_tensor_make(PTXQ_F32, 2, y4, Y_AT);
    y.stride[1] = (int64_t)1 << 62;
    assert_int_equal(ptxq_gemv_validate(&d, &a, &as, &x, NULL, &y), PTXQ_OK); /* L = 0 */
    /* an empty a_scale's K stride of 2^32 - 1 with K near its limit: refused as documented */
    int64_t K1 = (int64_t)0x7FFFFFF0 * 32, a1[2] = {0, K1}, s1[2] = {0, K1 / 16}, y1 = 0;
    a = ptxq_tensor_make(PTXQ_E2M1, 2, a1, A_AT);
    as = ptxq_tensor_make(PTXQ_UE4M3, 2, s1, AS_AT);
    as.stride[1] = 0xFFFFFFFFll;
    x = ptxq_tensor_make(PTXQ_BF16, 1, &K1, X_AT);
    y = ptxq_tensor_make(PTXQ_F32, 1, &y1, Y_AT);
    assert_int_equal(ptxq_gemv_validate(&d, &a, &as, &x, NULL, &y), PTXQ_ERR_STRIDE);

    /* y apart from everything the call reads */
    vcall v = good_call();
    assert_int_equal(validate(&v), PTXQ_OK);
    v.y.data = v.x.data + 64;
    assert_int_equal(validate(&v), PTXQ_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ptxq_last_error(), "overlaps"));
    v = good_call(); v.y.data = v.as.data + 1;
    assert_int_equal(validate(&v), PTXQ_ERR_INVALID_ARGUMENT);
    v = good_call(); v.d.a_global = v.y.data + 6;
    assert_int_equal(validate(&v), PTXQ_ERR_INVALID_ARGUMENT);
    v = good_call(); v.d.x_global = v.y.data + 2; /* (4-byte aligned: y starts at an odd half) */
    assert_int_equal(validate(&v), PTXQ_ERR_INVALID_ARGUMENT);
    v = good_call(); v.y.data = v.a.data + 4096;
    assert_int_equal(validate(&v), PTXQ_ERR_INVALID_ARGUMENT);
    v = good_call(); v.y.data = v.xs.data + 1;
    assert_int_equal(validate(&v), PTXQ_ERR_INVALID_ARGUMENT);
    /* back to back, exactly: y right after x_scale's last byte, then right before x */
    v = good_call();
    v.y.data = v.xs.data + 3 * 64 + 1; /* (odd base + 192 bytes: y F16 needs an even address) */
    assert_int_equal(validate(&v), PTXQ_OK);
    v.y.data -= 2;
    assert_int_equal(validate(&v), PTXQ_ERR_INVALID_ARGUMENT);
    v = good_call();
    v.y.data = v.x.data - 3 * 100 * 2;
    assert_int_equal(validate(&v), PTXQ_OK);
    /* x and y in one [L, K + M] F16 buffer, row by row (rows interleave, bytes apart) */
    v = good_call();
    v.no_xs = 1;
    v.x.dtype = PTXQ_F16;
    v.x.stride[0] = 1024 + 128;
    v.y.data = v.x.data + 1024 * 2;
    v.y.stride[0] = 1024 + 128;
    assert_int_equal(validate(&v), PTXQ_OK);
    v.y.data -= 2;
    assert_int_equal(validate(&v), PTXQ_ERR_INVALID_ARGUMENT);
    /* the size that is too large is named */
    v = good_call();
    v.a.shape[1] = v.as.shape[1] = v.y.shape[1] = (int64_t)1 << 31;
    v.a.shape[0] = v.as.shape[0] = v.x.shape[0] = v.xs.shape[0] = v.y.shape[0] = 1;
    assert_int_equal(validate(&v), PTXQ_ERR_SHAPE);
    assert_non_null(strstr(ptxq_last_error(), "M = 2147483648"));

    /* a scale stride of a size-1 dimension does not turn the fast paths off */
    struct ptxq_context ctx = fake_sm90(4800);
    ptxq_gemv_plan p0, p1;
    int64_t ash[3] = {1, 1, 4096}, ssh[3] = {1, 1, 256}, xsh[2] = {1, 4096}, xss[2] = {1, 256}, ysh[2] = {1, 1};
    ptxq_tensor A = ptxq_tensor_make(PTXQ_E2M1, 3, ash, A_AT), S = ptxq_tensor_make(PTXQ_UE4M3, 3, ssh, AS_AT);
    ptxq_tensor X = ptxq_tensor_make(PTXQ_E2M1, 2, xsh, X_AT), XS = ptxq_tensor_make(PTXQ_UE4M3, 2, xss, XS_AT);
    ptxq_tensor Y = ptxq_tensor_make(PTXQ_F16, 2, ysh, Y_AT);
    ptxq_gemv_desc dp = plan_desc(PTXQ_GEMV_NVFP4, 0, 0, 2);
    assert_int_equal(ptxq_gemv_plan_for(&ctx, &dp, &A, &S, &X, &XS, &Y, &p0), PTXQ_OK);
    assert_int_equal(p0.pipelined, 2); /* the bulk-copy ring kernel, as asked */
    S.stride[0] = 1;
    S.stride[1] = 257;
    assert_int_equal(ptxq_gemv_plan_for(&ctx, &dp, &A, &S, &X, &XS, &Y, &p1), PTXQ_OK);
    assert_string_equal(p1.kernel, p0.kernel);
    assert_int_equal(p1.pipelined, p0.pipelined);
    /* the twins are sm_90a's: elsewhere the plan stays the plain kernel (with its prefetch) */
    struct ptxq_context c100 = ctx;
    c100.target = "sm_100a";
    int64_t bsh[3] = {4, 7168, 2048}, bss[3] = {4, 7168, 128}, bx[2] = {4, 2048}, bxs[2] = {4, 128}, by[2] = {4, 7168};
    A = ptxq_tensor_make(PTXQ_E2M1, 3, bsh, A_AT);
    S = ptxq_tensor_make(PTXQ_UE4M3, 3, bss, AS_AT);
    X = ptxq_tensor_make(PTXQ_E2M1, 2, bx, X_AT);
    XS = ptxq_tensor_make(PTXQ_UE4M3, 2, bxs, XS_AT);
    Y = ptxq_tensor_make(PTXQ_F16, 2, by, Y_AT);
    for (int pip = 1; pip <= 2; ++pip) {
        dp = plan_desc(PTXQ_GEMV_NVFP4, 0, 0, pip);
        assert_int_equal(ptxq_gemv_plan_for(&c100, &dp, &A, &S, &X, &XS, &Y, &p1), PTXQ_OK);
        assert_int_equal(p1.pipelined, 0);
        char last = p1.kernel[strlen(p1.kernel) - 1];
        assert_true(last != 's' && last != 'b');
        assert_true(p1.prefetch_trips > 0);
    }
}

/* The plans on a made-up H100-like sm_90a, M = 300 (ragged), K = 2080, L = 2, r4 k1:
 * - M = 0 plans (grid 0: the call enqueues nothing, as ptxq.h says; a NaN score had failed it
 *   with PTXQ_ERR_NOT_FOUND);
 * - 128x4 scales take rows 32 apart and a grid of whole 128-row blocks (2 x 3 x 4), row-major
 *   scales the plain grid (2 x ceil(300 / 32)), alternating on one thread (the plan memo once
 *   handed one layout's grid to the other). */
static void test_plan_layouts(void **state) {
    (void)state;
    struct ptxq_context ctx = fake_sm90(3350);
    for (int i = 0; i < 4; ++i) {
        int sf = i % 2, m0 = i == 3;
        int64_t M = m0 ? 0 : 300;
        ptxq_gemv_plan p;
        plan_nvfp4(&ctx, M, 2080, 2, sf, 4, 1, 0, &p);
        unsigned want_grid = m0 ? 0u : sf ? 2u * 3u * 4u : 2u * 10u;
        printf("[ INFO     ] M %lld %s: %s grid %u rows_step %d\n", (long long)M,
               sf ? "128x4" : "row-major", p.kernel, p.grid, p.rows_step);
        assert_int_equal(p.grid, want_grid);
        assert_int_equal(p.rows_step, sf ? 32 : 1);
    }
}

/* The automatic plans for the four bench shapes, NVFP4 x NVFP4, on a made-up H200 (4800 GB/s):
 * 128x4 scales take the "...v" twin with CTAs of at least 16 rows ((7168,16384,1) r4 k2, where
 * row-major scales keep r4 k4: src/gemv.c, score_plan), the others r4 k1. */
static void test_plan_sf128_h200(void **state) {
    (void)state;
    struct ptxq_context ctx = fake_sm90(4800);
    static const int64_t shapes[4][3] = {{7168, 16384, 1}, {4096, 7168, 8}, {7168, 2048, 4},
                                         {16384, 16384, 4}};
    static const int want_k[2][4] = {{4, 1, 1, 1}, {2, 1, 1, 1}};
    for (int i = 0; i < 8; ++i) {
        int sf = i / 4;
        const int64_t *sh = shapes[i % 4];
        ptxq_gemv_plan p;
        plan_nvfp4(&ctx, sh[0], sh[1], sh[2], sf, 0, 0, 0, &p);
        printf("[ INFO     ] (%lld,%lld,%lld) %s: %s r%d k%d\n", (long long)sh[0],
               (long long)sh[1], (long long)sh[2], sf ? "128x4" : "row-major", p.kernel,
               p.rows_per_thread, p.k_warps);
        assert_string_equal(p.kernel, sf ? "gemv_nvfp4_nvfp4_r4v" : "gemv_nvfp4_nvfp4_r4");
        assert_int_equal(p.k_warps, want_k[sf][i % 4]);
        /* desc.pipelined = -1: the plain kernel, same plan */
        ptxq_gemv_plan q;
        plan_nvfp4(&ctx, sh[0], sh[1], sh[2], sf, 0, 0, -1, &q);
        assert_string_equal(q.kernel, "gemv_nvfp4_nvfp4_r4");
        assert_int_equal(q.k_warps, p.k_warps);
    }
    /* other targets (not measured there): the plain kernel */
    struct ptxq_context c100 = ctx;
    c100.target = "sm_100a";
    ptxq_gemv_plan p;
    plan_nvfp4(&c100, 4096, 7168, 8, 1, 4, 1, 0, &p);
    assert_string_equal(p.kernel, "gemv_nvfp4_nvfp4_r4");
}

/* ptxq_gemv_plan_for on ctx, FP4 A [L, M, K] with BF16 x, y F16; A's scales row-major (their
 * base s_off bytes past an aligned address) or (sf) 128x4; pipelined: desc.pipelined. sl, for
 * row-major scales: 0 contiguous, 1 K stride 2, 2 rows one byte longer than nk, 3 batches two
 * bytes apart beyond M rows. */
static void plan_tc(struct ptxq_context *ctx, ptxq_gemv_format f, int64_t M, int64_t K, int64_t L,
                    int sf, uint64_t s_off, int pipelined, int sl, ptxq_dtype xdt,
                    ptxq_gemv_plan *p) {
    int blk = f == PTXQ_GEMV_NVFP4 ? 16 : 32;
    int64_t nk = K / blk;
    int64_t ash[3] = {L, M, K}, ssh[3] = {L, M, nk}, xsh[2] = {L, K}, ysh[2] = {L, M};
    int64_t n128 = L * ((M + 127) / 128) * ((nk + 3) / 4) * 512;
    ptxq_gemv_desc d = plan_desc(f, 0, 0, pipelined);
    d.a_scale_layout = sf ? PTXQ_SCALE_128x4 : PTXQ_SCALE_STRIDED;
    ptxq_dtype sdt = f == PTXQ_GEMV_NVFP4 ? PTXQ_UE4M3 : PTXQ_UE8M0;
    ptxq_tensor a = ptxq_tensor_make(PTXQ_E2M1, 3, ash, A_AT);
    ptxq_tensor as = sf ? ptxq_tensor_make(sdt, 1, &n128, AS_AT + s_off)
                        : ptxq_tensor_make(sdt, 3, ssh, AS_AT + s_off);
    if (!sf && sl) {
        int64_t ks = sl == 1 ? 2 : 1, rs = sl == 2 ? nk + 1 : ks * nk;
        as.stride[2] = ks;
        as.stride[1] = rs;
        as.stride[0] = rs * M + (sl == 3 ? 2 : 0);
    }
    ptxq_tensor x = ptxq_tensor_make(xdt, 2, xsh, X_AT);
    ptxq_tensor y = ptxq_tensor_make(PTXQ_F16, 2, ysh, Y_AT);
    memset(p, 0x7f, sizeof *p);
    ptxq_status st = ptxq_gemv_plan_for(ctx, &d, &a, &as, &x, NULL, &y, p);
    if (st != PTXQ_OK)
        fail_msg("(%lld,%lld,%lld): %s: %s", (long long)M, (long long)K, (long long)L,
                 ptxq_status_name(st), ptxq_last_error());
}

/* The tensor-core kernels' ring twins ("..._tcr", src/gemv.c pick_tc_ring), "w" = whole windows
 * a warp under the plan's k_warps. A made-up H200 (4800 GB/s): BF16 x from 8 ((7168,16384,1)
 * k8: w 16, (16384,16384,4) k8: 16, (4096,7168,8) k4: 14; not (7168,2048,4) k4: 4, nor
 * (4096,3072,8) k4: 6), F16 x from 4 ((7168,2048,4); (4096,1024,8) k2: 4; not (4096,1536,8) k4:
 * 3, (4096,1280,8) k4: 2, (4096,768,8) k4: 1), neither on (300,384,2) (k8: 0). A made-up H100
 * (3350 GB/s): from 4 and only on grids past one wave of 528 CTAs ((7168,2048,4): 896 CTAs;
 * (16384,16384,4): 4096; (8192,1024,8) k2: w 4, 1024 CTAs; not (8192,768,8) k2: 3, nor
 * (8192,384,8): 1, nor (7168,16384,1): 448 CTAs, a 2-batch M = 1000: 126, (8448,4096,1): 528,
 * one wave exactly). Not with desc.pipelined = -1, not on sm_100a (whose plans are CUDA-core
 * kernels unless asked); desc.pipelined = 2 asks for it anywhere; scales whose runs are not
 * 4-byte aligned (an odd base; row-major K = 2080, 130-byte rows; 133-byte padded rows; batches
 * 2 bytes off; a 128x4 base 2 bytes off) or not contiguous along K (stride 2) keep the plain
 * kernel whatever is asked; aligned 128x4 scales allow it. */
static void test_plan_tc_ring(void **state) {
    (void)state;
    struct ptxq_context h200 = fake_sm90(4800), h100 = fake_sm90(3350), c100 = h200;
    c100.target = "sm_100a";
    const struct {
        struct ptxq_context *ctx;
        ptxq_gemv_format f;
        int64_t M, K, L;
        int sf, s_off, pipelined, want; /* want: 1 the twin, 0 the plain tensor-core kernel, -1
                                           no twin (sm_100a plans CUDA-core kernels) */
        int sl;                         /* plan_tc's row-major scale strides */
        int f16;                        /* x F16 (else BF16) */
    } cs[] = {
        {&h200, PTXQ_GEMV_NVFP4, 7168, 16384, 1, 0, 0, 0, 1, 0, 0},
        {&h200, PTXQ_GEMV_MXFP4, 16384, 16384, 4, 0, 0, 0, 1, 0, 0},
        {&h200, PTXQ_GEMV_NVFP4, 4096, 7168, 8, 1, 0, 0, 1, 0, 0},
        {&h200, PTXQ_GEMV_MXFP4, 7168, 2048, 4, 0, 0, 0, 0, 0, 0},
        {&h200, PTXQ_GEMV_MXFP4, 7168, 2048, 4, 0, 0, 0, 1, 0, 1},
        {&h200, PTXQ_GEMV_NVFP4, 7168, 16384, 1, 0, 0, -1, 0, 0, 0},
        {&h200, PTXQ_GEMV_NVFP4, 300, 384, 2, 0, 0, 0, 0, 0, 0},
        {&h200, PTXQ_GEMV_NVFP4, 4096, 384, 8, 0, 0, 0, 0, 0, 1},
        {&h100, PTXQ_GEMV_NVFP4, 7168, 16384, 1, 0, 0, 0, 0, 0, 0},
        {&h100, PTXQ_GEMV_MXFP4, 7168, 2048, 4, 0, 0, 2, 1, 0, 0},
        {&h100, PTXQ_GEMV_NVFP4, 7168, 2048, 4, 0, 0, 0, 1, 0, 0},
        {&h100, PTXQ_GEMV_MXFP4, 16384, 16384, 4, 0, 0, 0, 1, 0, 0},
        {&h100, PTXQ_GEMV_NVFP4, 1000, 4096, 2, 0, 0, 0, 0, 0, 0},
        {&h100, PTXQ_GEMV_NVFP4, 8448, 4096, 1, 0, 0, 0, 0, 0, 0},
        {&h100, PTXQ_GEMV_NVFP4, 8192, 384, 8, 0, 0, 0, 0, 0, 0},
        {&h100, PTXQ_GEMV_NVFP4, 8192, 768, 8, 0, 0, 0, 0, 0, 0},
        {&h100, PTXQ_GEMV_NVFP4, 8192, 1024, 8, 0, 0, 0, 1, 0, 0},
        {&h200, PTXQ_GEMV_NVFP4, 4096, 768, 8, 0, 0, 0, 0, 0, 1},
        {&h200, PTXQ_GEMV_NVFP4, 4096, 1024, 8, 0, 0, 0, 1, 0, 1},
        {&h200, PTXQ_GEMV_NVFP4, 4096, 1536, 8, 0, 0, 0, 0, 0, 1},
        {&h200, PTXQ_GEMV_NVFP4, 4096, 1280, 8, 0, 0, 0, 0, 0, 1},
        {&h200, PTXQ_GEMV_NVFP4, 4096, 3072, 8, 0, 0, 0, 0, 0, 0},
        {&h200, PTXQ_GEMV_NVFP4, 7168, 16384, 1, 0, 1, 2, 0, 0, 0},
        {&h200, PTXQ_GEMV_NVFP4, 300, 2080, 2, 0, 0, 2, 0, 0, 0},
        {&h200, PTXQ_GEMV_NVFP4, 300, 2080, 2, 1, 0, 2, 1, 0, 0},
        {&c100, PTXQ_GEMV_NVFP4, 7168, 16384, 1, 0, 0, 0, -1, 0, 0},
        /* tc_ring_ok's branches: aligned control, K stride 2, 133-byte rows, batches 2 bytes
         * off, a 128x4 base 2 bytes off */
        {&h200, PTXQ_GEMV_NVFP4, 300, 2112, 2, 0, 0, 2, 1, 0, 0},
        {&h200, PTXQ_GEMV_NVFP4, 300, 2112, 2, 0, 0, 2, 0, 1, 0},
        {&h200, PTXQ_GEMV_NVFP4, 300, 2112, 2, 0, 0, 2, 0, 2, 0},
        {&h200, PTXQ_GEMV_MXFP4, 300, 2176, 2, 0, 0, 2, 0, 3, 0},
        {&h200, PTXQ_GEMV_NVFP4, 300, 2080, 2, 1, 2, 2, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i) {
        ptxq_gemv_plan p;
        plan_tc(cs[i].ctx, cs[i].f, cs[i].M, cs[i].K, cs[i].L, cs[i].sf, (uint64_t)cs[i].s_off,
                cs[i].pipelined, cs[i].sl, cs[i].f16 ? PTXQ_F16 : PTXQ_BF16, &p);
        const char *fn = cs[i].f == PTXQ_GEMV_NVFP4 ? "nvfp4" : "mxfp4";
        char want[48];
        snprintf(want, sizeof want, "gemv_%s_%s_tc%s", fn, cs[i].f16 ? "f16" : "bf16",
                 cs[i].want ? "r" : "");
        printf("[ INFO     ] case %zu (%lld,%lld,%lld) %s: %s k%d pipelined %d\n", i,
               (long long)cs[i].M, (long long)cs[i].K, (long long)cs[i].L,
               cs[i].ctx->target, p.kernel, p.k_warps, p.pipelined);
        if (cs[i].want >= 0) {
            assert_string_equal(p.kernel, want);
            assert_int_equal(p.ctas_per_sm, 4);
        } else {
            assert_null(strstr(p.kernel, "_tcr"));
        }
        assert_int_equal(p.pipelined, cs[i].want > 0 ? 3 : 0);
    }
}

#define expect_ok(v)                                                                             \
    do {                                                                                         \
        ptxq_status st_ = validate(&(v));                                                        \
        if (st_ != PTXQ_OK) fail_msg("%s: %s", ptxq_status_name(st_), ptxq_last_error());        \
    } while (0)

static void test_validate_good(void **state) {
    (void)state;
    vcall v = good_call();
    expect_ok(v);
    /* BF16 x, no x scales, y F32 rank 2 with a padded pitch */
    v.x.dtype = PTXQ_BF16;
    v.no_xs = 1;
    v.y.dtype = PTXQ_F32;
    v.y.data = Y_AT;
    v.y.stride[0] = 128;
    expect_ok(v);
    /* x shared by the batches: [K], or [1, K] */
    v = good_call();
    int64_t k = 1024, nk = 64;
    v.x = ptxq_tensor_make(PTXQ_E2M1, 1, &k, X_AT);
    v.xs = ptxq_tensor_make(PTXQ_UE4M3, 1, &nk, XS_AT);
    expect_ok(v);
    /* M-major scales, 128x4 scales */
    v = good_call();
    v.as.stride[2] = 100;
    v.as.stride[1] = 1;
    v.as.stride[0] = 6400;
    expect_ok(v);
    v = good_call();
    v.d.a_scale_layout = PTXQ_SCALE_128x4;
    int64_t sf = 3 * 512 * 16; /* ceil(100/128) * ceil(64/4) * 512 per batch */
    v.as = ptxq_tensor_make(PTXQ_UE4M3, 1, &sf, AS_AT);
    expect_ok(v);
    /* NVFP4 with K % 32 == 16 and L = 1 (rank 2, y rank 1); a padded row pitch */
    v = good_call();
    int64_t a2[2] = {7, 48}, s2[2] = {7, 3}, x1 = 48, xs1 = 3, y1 = 7;
    v.a = ptxq_tensor_make(PTXQ_E2M1, 2, a2, A_AT);
    v.a.stride[0] = 64;
    v.as = ptxq_tensor_make(PTXQ_UE4M3, 2, s2, AS_AT);
    v.x = ptxq_tensor_make(PTXQ_E2M1, 1, &x1, X_AT);
    v.xs = ptxq_tensor_make(PTXQ_UE4M3, 1, &xs1, XS_AT);
    v.y = ptxq_tensor_make(PTXQ_BF16, 1, &y1, Y_AT);
    expect_ok(v);
    /* MXFP8 with F16 x and plan overrides; K = 0 */
    v = good_call();
    v.d.format = PTXQ_GEMV_MXFP8;
    v.d.a_global = 0;
    v.d.rows_per_thread = 2;
    v.d.k_warps = 8;
    v.a.dtype = PTXQ_E4M3;
    v.a.stride[1] = 1024;
    v.a.stride[0] = 102400;
    v.as.dtype = PTXQ_UE8M0;
    v.as.shape[2] = 32;
    v.as.stride[1] = 32;
    v.as.stride[0] = 3200;
    v.x.dtype = PTXQ_F16;
    v.no_xs = 1;
    expect_ok(v);
    v.d.flags = PTXQ_GEMV_NO_PDL | PTXQ_GEMV_STATIC_WEIGHTS;
    v.d.prefetch_trips = 64;
    v.d.pipelined = 1;
    expect_ok(v);
    v.d.flags = PTXQ_GEMV_STATIC_WEIGHTS;
    v.d.prefetch_trips = -1;
    v.d.pipelined = -1;
    expect_ok(v);
    /* the tensor-core kernel: NVFP4 A with F16 x (MXFP8 A is refused) */
    vcall t = good_call();
    t.d.rows_per_thread = 16;
    t.x.dtype = PTXQ_F16;
    t.no_xs = 1;
    expect_ok(t);
    v.d.rows_per_thread = 16;
    ptxq_status st16 = validate(&v);
    if (st16 != PTXQ_ERR_INVALID_ARGUMENT || !strstr(ptxq_last_error(), "tensor-core"))
        fail_msg("MXFP8 with rows_per_thread 16: %s (%s)", ptxq_status_name(st16),
                 ptxq_last_error());
    v.d.rows_per_thread = 2;
    v.d.pipelined = 2;
    expect_ok(v);
    /* dimensions of size 1 never step: their strides are not checked (ptxq.h) */
    vcall one = good_call();
    int64_t oa[3] = {1, 100, 1024}, osc[3] = {1, 100, 64}, ox[2] = {1, 1024}, oxs[2] = {1, 64},
            oy[2] = {1, 100};
    one.a = ptxq_tensor_make(PTXQ_E2M1, 3, oa, A_AT);
    one.a.stride[0] = 1;   /* odd: E2M1 packs two a byte, but the batch never steps */
    one.as = ptxq_tensor_make(PTXQ_UE4M3, 3, osc, (AS_AT + 1));
    one.x = ptxq_tensor_make(PTXQ_E2M1, 2, ox, X_AT);
    one.x.stride[0] = 1023;
    one.xs = ptxq_tensor_make(PTXQ_UE4M3, 2, oxs, (XS_AT + 3));
    one.y = ptxq_tensor_make(PTXQ_F16, 2, oy, (Y_AT + 2));
    one.y.stride[0] = INT64_MAX; /* never multiplied (a review found it overflowing) */
    expect_ok(one);
    /* 128x4 scales with L = 0: nothing bounds M * K then, and nothing is needed (the size
     * product overflowed until a review) */
    vcall e = good_call();
    int64_t ea[3] = {0, 1 << 20, 1 << 20}, ex[2] = {0, 1 << 20}, exs[2] = {0, 1 << 16},
            ey[2] = {0, 1 << 20}, es = 0;
    e.d.a_scale_layout = PTXQ_SCALE_128x4;
    e.a = ptxq_tensor_make(PTXQ_E2M1, 3, ea, A_AT);
    e.as = ptxq_tensor_make(PTXQ_UE4M3, 1, &es, AS_AT);
    e.x = ptxq_tensor_make(PTXQ_E2M1, 2, ex, X_AT);
    e.xs = ptxq_tensor_make(PTXQ_UE4M3, 2, exs, XS_AT);
    e.y = ptxq_tensor_make(PTXQ_F16, 2, ey, Y_AT);
    expect_ok(e);
    int64_t a0[2] = {5, 0}, s0[2] = {5, 0}, x0 = 0, y0 = 5;
    vcall z = good_call();
    z.a = ptxq_tensor_make(PTXQ_E2M1, 2, a0, 0);
    z.as = ptxq_tensor_make(PTXQ_UE4M3, 2, s0, 0);
    z.x = ptxq_tensor_make(PTXQ_E2M1, 1, &x0, 0);
    z.xs = ptxq_tensor_make(PTXQ_UE4M3, 1, &x0, 0);
    z.y = ptxq_tensor_make(PTXQ_F32, 1, &y0, Y_AT);
    expect_ok(z);
}

static void test_validate_bad(void **state) {
    (void)state;
    int64_t bl[3] = {1 << 21, 2048, 32}, bs[3] = {1 << 21, 2048, 2}, bx[2] = {1 << 21, 32},
            bxs[2] = {1 << 21, 2}, by[2] = {1 << 21, 2048}, mxs[2] = {3, 32};
    for (int c = 0; c < 41; ++c) {
        vcall v = good_call();
        ptxq_status want;
        const char *names = "gemv"; /* what the message must name */
        switch (c) {
        case 0: v.d.format = (ptxq_gemv_format)9; want = PTXQ_ERR_INVALID_ARGUMENT; break;
        case 1: v.a.dtype = PTXQ_E4M3; want = PTXQ_ERR_DTYPE; break;
        case 2: v.a.shape[2] = v.x.shape[1] = 1000; v.as.shape[2] = 62; want = PTXQ_ERR_SHAPE;
                break; /* K not a multiple of 16 */
        case 3: v.a.stride[2] = 2; want = PTXQ_ERR_STRIDE; break;
        case 4: v.a.data += 8; want = PTXQ_ERR_ALIGNMENT; break;
        case 5: v.a.stride[1] = 1040; want = PTXQ_ERR_ALIGNMENT; break; /* 520-byte rows */
        case 6: v.x.dtype = PTXQ_F32; want = PTXQ_ERR_DTYPE; break;
        case 7: v.x.shape[1] = 512; want = PTXQ_ERR_SHAPE; break;
        case 8: v.no_xs = 1; want = PTXQ_ERR_INVALID_ARGUMENT; break;
        case 9: v.x.dtype = PTXQ_BF16; want = PTXQ_ERR_INVALID_ARGUMENT; break; /* stray x_scale */
        case 10: v.xs.dtype = PTXQ_UE8M0; want = PTXQ_ERR_SCALE_SHAPE; break;
        case 11: v.as.shape[2] = 32; want = PTXQ_ERR_SCALE_SHAPE; break;
        case 12: v.as.shape[1] = 99; want = PTXQ_ERR_SCALE_SHAPE; break;
        case 13: v.d.a_scale_layout = PTXQ_SCALE_128x4; want = PTXQ_ERR_SCALE_SHAPE; break;
        case 14: v.y.dtype = PTXQ_E4M3; want = PTXQ_ERR_DTYPE; break;
        case 15: v.y.shape[1] = 101; want = PTXQ_ERR_SHAPE; break;
        case 16: v.y.data += 1; want = PTXQ_ERR_ALIGNMENT; break;
        case 17: v.d.rows_per_thread = 3; want = PTXQ_ERR_INVALID_ARGUMENT; break;
        case 18: v.d.k_warps = 16; want = PTXQ_ERR_INVALID_ARGUMENT; break;
        case 19: v.d.a_global += 2; want = PTXQ_ERR_ALIGNMENT; break;
        case 20: v.x.data = 0; want = PTXQ_ERR_INVALID_ARGUMENT; break;
        case 21: v.x.shape[0] = 2; want = PTXQ_ERR_SHAPE; break; /* neither 1 nor L */
        case 22: v.x.data += 4; want = PTXQ_ERR_ALIGNMENT; break;
        case 23: v.a.rank = 4; want = PTXQ_ERR_SHAPE; break;
        case 24: v.x.dtype = PTXQ_F16; v.no_xs = 1; v.d.x_global = (G_AT + 16);
                 want = PTXQ_ERR_INVALID_ARGUMENT; break;
        case 25: /* a_scale in UE4M3 for MXFP4, x_scale right: the a_scale check must fail */
            v.d.format = PTXQ_GEMV_MXFP4;
            v.xs = ptxq_tensor_make(PTXQ_UE8M0, 2, mxs, (XS_AT + 3));
            want = PTXQ_ERR_SCALE_SHAPE;
            names = "a_scale";
            break;
        case 26: v.d.flags = 8; want = PTXQ_ERR_INVALID_ARGUMENT; break;
        case 27: v.d.prefetch_trips = -2; want = PTXQ_ERR_INVALID_ARGUMENT; break;
        case 28: v.d.prefetch_trips = 65; want = PTXQ_ERR_INVALID_ARGUMENT; break;
        case 29: v.d.rows_per_thread = 16; want = PTXQ_ERR_INVALID_ARGUMENT; break; /* FP4 x */
        case 30: v.y.stride[1] = 0; want = PTXQ_ERR_STRIDE; break; /* every row's y at one address */
        case 31: v.y.stride[0] = 50; want = PTXQ_ERR_STRIDE; break; /* batches overlap */
        case 32: v.d.pipelined = -2; want = PTXQ_ERR_INVALID_ARGUMENT; break;
        case 33: v.d.a_scale_layout = (ptxq_scale_layout)7; want = PTXQ_ERR_SCALE_SHAPE; break;
        case 34: v.y.rank = 3; want = PTXQ_ERR_SHAPE; break;
        case 35: v.y.shape[0] = 2; want = PTXQ_ERR_SHAPE; break; /* not L */
        case 36: v.x.rank = 3; want = PTXQ_ERR_SHAPE; break;
        case 37: v.x.stride[1] = 2; want = PTXQ_ERR_STRIDE; break;
        case 38: v.a.stride[0] = 102401; want = PTXQ_ERR_ALIGNMENT; break; /* odd batch pitch */
        case 39: /* L * (M + 128) past the grid limit: refused here as by ptxq_gemv's plan */
            v.a = ptxq_tensor_make(PTXQ_E2M1, 3, bl, A_AT);
            v.as = ptxq_tensor_make(PTXQ_UE4M3, 3, bs, (AS_AT + 1));
            v.x = ptxq_tensor_make(PTXQ_E2M1, 2, bx, X_AT);
            v.xs = ptxq_tensor_make(PTXQ_UE4M3, 2, bxs, (XS_AT + 3));
            v.y = ptxq_tensor_make(PTXQ_F16, 2, by, (Y_AT + 2));
            want = PTXQ_ERR_SHAPE;
            names = "grid";
            break;
        default: v.d.pipelined = 3; want = PTXQ_ERR_INVALID_ARGUMENT; break;
        }
        ptxq_status st = validate(&v);
        if (st != want)
            fail_msg("case %d: %s (%s), want %s", c, ptxq_status_name(st), ptxq_last_error(),
                     ptxq_status_name(want));
        if (strlen(ptxq_last_error()) < 12) fail_msg("case %d: message too short", c);
        if (!strstr(ptxq_last_error(), "gemv") || !strstr(ptxq_last_error(), names))
            fail_msg("case %d: '%s' (must name %s)", c, ptxq_last_error(), names);
    }
    assert_int_equal(ptxq_gemv_validate(NULL, NULL, NULL, NULL, NULL, NULL), PTXQ_ERR_INVALID_ARGUMENT);
    /* each tensor NULL in turn (desc given) */
    vcall v = good_call();
    const ptxq_tensor *t[5] = {&v.a, &v.as, &v.x, &v.xs, &v.y};
    for (int i = 0; i < 5; ++i) {
        const ptxq_tensor *u[5] = {t[0], t[1], t[2], t[3], t[4]};
        u[i] = NULL;
        ptxq_status st = ptxq_gemv_validate(&v.d, u[0], u[1], u[2], u[3], u[4]);
        if (st == PTXQ_OK) fail_msg("tensor %d NULL accepted", i);
    }
}

/* ---- the cubins ---------------------------------------------------------------------------- */

/* The registry's gemv entries (every target); the caller frees *out. */
static int gemv_kernels(ptxq_kernel_info **out) {
    int count = ptxq_kernel_count(), n = 0;
    ptxq_kernel_info *v = calloc((size_t)count + 1, sizeof *v);
    assert_non_null(v);
    for (int i = 0; i < count; ++i)
        if (ptxq_kernel_get(i, &v[n]) == PTXQ_OK && !strcmp(v[n].family, "gemv")) ++n;
    *out = v;
    return n;
}

/* 3 formats x 3 x dtypes x 3 rows-per-thread, and the software-pipelined twins and bulk-copy ring
 * kernels of the 3 NVFP4 x NVFP4 kernels, and the 4 tensor-core kernels and their ring twins, each
 * for sm_90a, sm_100a, sm_120a. */
static void test_registry(void **state) {
    (void)state;
    ptxq_kernel_info *ks;
    int n = gemv_kernels(&ks), bad = 0;
    for (int i = 0; i < n; ++i) {
        const ptxq_kernel_info *k = &ks[i];
        if (k->spill_stores || k->spill_loads || k->stack_frame || k->threads != 256) {
            print_error("%s %s: spills %d/%d, stack %d, threads %d\n", k->name, k->target,
                        k->spill_stores, k->spill_loads, k->stack_frame, k->threads);
            ++bad;
        }
    }
    printf("[ INFO     ] %d gemv cubins in the registry\n", n);
    free(ks);
    assert_int_equal(n, 129); /* 35 variants + 4 tensor-core + 4 ring twins, x 3 targets */
    assert_int_equal(bad, 0);
}

/* Rows per thread, from the name's "_r<R>" suffix. */
static int kernel_rows(const char *name) {
    const char *r = strrchr(name, 'r');
    return r ? atoi(r + 1) : 0;
}

/* The fast loop of the rows-per-thread-4 FP4 x FP4 kernels (sm_90a; the first loop with an IDP)
 * issues every load of a trip, A's scale pairs included, before its first dp4a: where ptxas
 * sinks a load below the decode, each trip waits on memory twice (gen/gemv.py, "Two copies of
 * the loops"). */
static void test_sass_load_order(void **state) {
    (void)state;
    if (sass_no_nvdisasm()) skip();
    static const char *const names[3] = {"gemv_nvfp4_nvfp4_r4", "gemv_mxfp4_mxfp4_r4",
                                         "gemv_nvfp4_nvfp4_r4v"};
    /* A and x per row and x's scales; A's scales a row, or (the "...v" twin) one vector */
    static const int loads[3] = {2 * (4 + 1), 2 * (4 + 1), 4 + 1 + 2};
    ptxq_kernel_info *ks;
    int n = gemv_kernels(&ks);
    for (int i = 0; i < 3; ++i) {
        const ptxq_kernel_info *e = NULL;
        for (int j = 0; j < n; ++j)
            if (!strcmp(ks[j].name, names[i]) && !strcmp(ks[j].target, "sm_90a")) e = &ks[j];
        assert_non_null(e);
        char err[512] = "";
        char *text = sass_disassemble(e->cubin, e->cubin_size, err, sizeof err);
        if (!text) print_error("%s: %s\n", names[i], err);
        assert_non_null(text);
        sass_loop lp;
        int rc = sass_loop_loads(text, "IDP", &lp);
        free(text);
        printf("[ INFO     ] %s sm_90a fast loop: %d instructions, %d LDG, %d after the first "
               "IDP\n", names[i], lp.length, lp.loads, lp.late);
        assert_int_equal(rc, 0);
        assert_int_equal(lp.loads, loads[i]);
        assert_int_equal(lp.late, 0);
    }
    free(ks);
}

/* The ring twins' scale runs (gen/gemv.py, TC.cpsync): each 4-byte piece is copied by one lane
 * and read by others, which the PTX orders with bar.warp.sync after each wait and before each
 * refill (ptxas turns them into NOPs in the converged warp and schedules around them). What the
 * hardware needs of the SASS: after each DEPBAR (cp.async.wait_group) the window's two scale LDS
 * (LDS.U16 NVFP4, LDS.U8 MXFP4) must come before any LDGSTS of its refill. Checks every sm_90a
 * "..._tcr" cubin: each loop LDGSTS (those after the first DEPBAR) follows two scale LDS since
 * the last DEPBAR. */
static void test_sass_ring_order(void **state) {
    (void)state;
    if (sass_no_nvdisasm()) skip();
    ptxq_kernel_info *ks;
    int n = gemv_kernels(&ks), twins = 0, bad = 0;
    for (int i = 0; i < n; ++i) {
        const ptxq_kernel_info *k = &ks[i];
        size_t nl = strlen(k->name);
        if (nl < 4 || strcmp(k->name + nl - 4, "_tcr") || strcmp(k->target, "sm_90a")) continue;
        char err[512] = "";
        char *text = sass_disassemble(k->cubin, k->cubin_size, err, sizeof err);
        if (!text) print_error("%s: %s\n", k->name, err);
        assert_non_null(text);
        int depbar = 0, lds = 0, checked = 0, early = 0;
        for (const char *l = text; *l;) {
            const char *e = strchr(l, '\n');
            size_t len = e ? (size_t)(e - l) : strlen(l);
            char line[256];
            snprintf(line, sizeof line, "%.*s", (int)(len < 255 ? len : 255), l);
            if (strstr(line, "DEPBAR.LE")) {
                depbar = 1;
                lds = 0;
            } else if (strstr(line, "LDS.U16") || strstr(line, "LDS.U8")) {
                ++lds;
            } else if (strstr(line, "LDGSTS") && depbar) {
                ++checked;
                if (lds < 2) ++early;
            }
            l += len + (e ? 1 : 0);
        }
        free(text);
        printf("[ INFO     ] %s: %d loop LDGSTS checked, %d before their window's scale LDS\n",
               k->name, checked, early);
        ++twins;
        if (checked < 10 || early) ++bad;
    }
    free(ks);
    assert_int_equal(twins, 4);
    assert_int_equal(bad, 0);
}

static void test_sass(void **state) {
    (void)state;
    if (sass_no_nvdisasm()) skip();
    ptxq_kernel_info *ks;
    int n = gemv_kernels(&ks);
    const unsigned char **cubins = calloc((size_t)n + 1, sizeof *cubins);
    size_t *sizes = calloc((size_t)n + 1, sizeof *sizes);
    sass_hist *h = calloc((size_t)n + 1, sizeof *h);
    int *st = calloc((size_t)n + 1, sizeof *st);
    for (int i = 0; i < n; ++i) {
        cubins[i] = ks[i].cubin;
        sizes[i] = ks[i].cubin_size;
    }
    char err[512] = "";
    int failed = sass_hist_many(n, cubins, sizes, h, st, 0, err, sizeof err);
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const ptxq_kernel_info *k = &ks[i];
        if (st[i]) continue;
        /* A: one 16-byte load per row in the one-chunk loop and in the tail (more in the main
         * loop); x: at least one more of each. Other loads: scale bytes (NVFP4's pairs as one
         * 16-bit load each in the fast loops), the 8-byte half chunk of an NVFP4 row, the two
         * per-tensor scale words. */
        /* the tensor-core kernels ("..._tc"): 2 rows of A and x's 2 16-byte loads a window
         * (one register set) in each copy of the window loop (NVFP4: the u16 scale copy, the
         * byte copy, the tail; MXFP4: the last two), and the 8 mma.sync of a window as HMMA;
         * minimums: the sm_90a kernels' pipelined loop (spl) holds each copy's window four
         * times (two sets, two exits). Their ring twins ("..._tcr", sm_90a) copy A, its scale
         * runs and x into shared memory by cp.async (5 LDGSTS a window: A's rows A and B, a
         * scale word, x's two halves) at each of 2 D issue sites (D >= 2), so LDG.128 only in
         * the tail window; elsewhere the twins are the plain kernels. On sm_90a F16 x decodes
         * A by bit moves (spread_f16): F2FP only for scales, fewer than the HMMA (the cvt
         * decode had 4 a word: 134-312 against 32-72 HMMA) */
        size_t nl = strlen(k->name);
        int tcr = nl > 4 && !strcmp(k->name + nl - 4, "_tcr");
        int tc = tcr || (nl > 3 && !strcmp(k->name + nl - 3, "_tc"));
        int tc_ring = tcr && !strcmp(k->target, "sm_90a");
        int tc_copies = !strncmp(k->name, "gemv_nvfp4_", 11) ? 3 : 2;
        int f16_bits = tc && strstr(k->name, "_f16_tc") && !strcmp(k->target, "sm_90a");
        int want128 = tc_ring ? 2 + 2 : tc ? tc_copies * (2 + 2) : 2 * (kernel_rows(k->name) + 1);
        /* the bulk-copy ring kernels (sm_90a) read A from shared memory: LDG.128 for x only */
        int ring = k->name[strlen(k->name) - 1] == 'b' && !strcmp(k->target, "sm_90a");
        if (ring) want128 = 1;
        /* NVFP4 (not the ring): the fast one-chunk loop loads R + 1 scale pairs as LDG.U16; the
         * "...v" twins x's pair only (A's R scale words are one LDG.64 or LDG.128) */
        int vtwin = k->name[strlen(k->name) - 1] == 'v';
        int want16 = !strncmp(k->name, "gemv_nvfp4_", 11) && !ring && !tc ?
                     (vtwin ? 1 : kernel_rows(k->name) + 1) : 0;
        int other = sass_ldg_total(&h[i]) - h[i].ldg[SASS_W128] - h[i].ldg[SASS_W8] -
                    h[i].ldg[SASS_W16] - h[i].ldg[SASS_W64];
        /* the tensor-core kernels prefetch rows A and B of their first windows before the PDL
         * wait (prefetch.global.L2: CCTL.E.PF2). PDL in every kernel: the signal to dependents
         * twice (all CTAs but 0 first, CTA 0 after its wait: PREEXIT) and the wait twice (before
         * the loads, unless FLAG_NOWAIT; at the exit with it: ACQBULK). No MUFU: the batch
         * index comes from the runtime's magic multiplier, not a division */
        if (h[i].ldg[SASS_W128] < want128 || (ring && h[i].ldg[SASS_W128] > 2) || other > 2 ||
            (tc_ring && (h[i].ldgsts < 20 || h[i].ldgsts % 10 || h[i].ldg[SASS_W128] > 4)) ||
            h[i].ldg[SASS_W16] < want16 || (tc && h[i].pf < 2) || h[i].preexit < 2 ||
            h[i].acqbulk < 2 || h[i].mufu ||
            h[i].ldl || h[i].stl || (f16_bits && h[i].f2fp >= h[i].mma) ||
            (tc ? h[i].mma < 16 : !strcmp(k->target, "sm_90a") && h[i].mma)) {
            print_error("%s %s: LDG.128 %d (want >= %d), LDG.U16 %d (want >= %d), other LDG %d, "
                        "LDGSTS %d, LDL/STL %d/%d, MMA %d, F2FP %d, prefetch %d, PDL wait/signal "
                        "%d/%d (want >= 2/2), MUFU %d\n",
                        k->name, k->target, h[i].ldg[SASS_W128], want128, h[i].ldg[SASS_W16],
                        want16, other, h[i].ldgsts, h[i].ldl, h[i].stl, h[i].mma, h[i].f2fp,
                        h[i].pf, h[i].acqbulk, h[i].preexit, h[i].mufu);
            ++bad;
        }
    }
    printf("[ INFO     ] %d gemv cubins disassembled, %d failed, %d violations\n", n, failed, bad);
    free(h);
    free(st);
    free(cubins);
    free(sizes);
    free(ks);
    if (failed) fail_msg("nvdisasm failed on %d cubins: %s", failed, err);
    assert_int_equal(bad, 0);
}

/* ---- on the GPU ---------------------------------------------------------------------------- */

/* Runs case c with a fresh seed into *r: 0 if correct. The case line is printed when it fails,
 * when verbose, or when bad (a plan check of the caller's) is set: then it counts as failed. */
static int run_case(gemv_case c, int verbose, gemv_result *r, int (*bad)(const gemv_case *,
                                                                          const gemv_result *)) {
    char desc[256];
    c.seed = g_test.seed++;
    gemv_case_describe(&c, desc, sizeof desc);
    int rc = gemv_case_run(&g_test.dev, &c, r);
    int fail = rc || (bad && bad(&c, r));
    if (fail || verbose)
        printf("[ %s ] %s: %s r%d k%d grid %u rows_step %d | wrong %lld/%lld, pad %lld, worst %.3f "
               "of bound (dev %.8g ref %.8g) %s%s\n",
               fail ? "FAIL    " : "CASE    ", desc, r->plan.kernel, r->plan.rows_per_thread,
               r->plan.k_warps, r->plan.grid, r->plan.rows_step, (long long)r->wrong,
               (long long)r->outputs, (long long)r->pad_touched, r->worst, r->worst_dev,
               r->worst_ref, rc < 0 ? ptxq_status_name(r->status) : "", rc < 0 ? r->msg : "");
    return fail;
}

static int run_one(gemv_case c, int verbose) {
    gemv_result r;
    return run_case(c, verbose, &r, NULL);
}

static const ptxq_gemv_format k_formats[3] = {PTXQ_GEMV_NVFP4, PTXQ_GEMV_MXFP4, PTXQ_GEMV_MXFP8};
static const ptxq_dtype k_x[3] = {(ptxq_dtype)0, PTXQ_BF16, PTXQ_F16};
static const ptxq_dtype k_y[3] = {PTXQ_F16, PTXQ_BF16, PTXQ_F32};

/* Every format x x x y on ragged shapes, single and batched. */
static void test_all_combinations(void **state) {
    (void)state;
    if (no_gpu()) skip();
    int fails = 0, n = 0;
    for (int f = 0; f < 3; ++f)
        for (int xi = 0; xi < 3; ++xi)
            for (int yi = 0; yi < 3; ++yi) {
                gemv_case c;
                memset(&c, 0, sizeof c);
                c.format = k_formats[f];
                c.x = k_x[xi];
                c.y = k_y[yi];
                c.M = 1 + 37 * (3 * xi + yi) + f; /* 1 .. 300, ragged */
                c.K = f == 0 ? 16 * (17 + 8 * yi) : 32 * (9 + 4 * yi); /* NVFP4: K % 32 == 16 */
                c.L = 1 + (xi + yi) % 3;
                fails += run_one(c, 0) != 0;
                c.M = 333;
                c.K = 4096 + (f == 0 ? 16 : 32);
                c.L = 1;
                fails += run_one(c, 0) != 0;
                n += 2;
            }
    printf("[ INFO     ] %d cases, %d failed\n", n, fails);
    assert_int_equal(fails, 0);
}

/* Big A: MXFP8 66001 x 65536 (4.3 GB, byte offsets past 2^32) and NVFP4 x BF16 (tensor cores)
 * 70003 x 65536 (4.6 * 10^9 elements past 2^32, 2.3 GB); every output against the float64
 * reference. About 3 minutes of host time (codes and reference on one core), so only with
 * PTXQ_TEST_BIG=1; skipped visibly otherwise. */
static void test_big_a(void **state) {
    (void)state;
    if (no_gpu()) skip();
    const char *big = getenv("PTXQ_TEST_BIG");
    if (!big || strcmp(big, "1")) {
        printf("[ SKIP     ] test_big_a: set PTXQ_TEST_BIG=1 (about 3 minutes of host time)\n");
        skip();
    }
    int fails = 0;
    gemv_case c;
    memset(&c, 0, sizeof c);
    c.format = PTXQ_GEMV_MXFP8, c.y = PTXQ_F32, c.M = 66001, c.K = 65536, c.L = 1;
    fails += run_one(c, 1) != 0;
    c.format = PTXQ_GEMV_NVFP4, c.x = PTXQ_BF16, c.y = PTXQ_BF16, c.M = 70003, c.K = 65536;
    fails += run_one(c, 1) != 0;
    assert_int_equal(fails, 0);
}

/* Padded A rows, M-major and 128x4 scales, shared x, per-tensor scales; v = 4, 5: A scales at an
 * odd address and x's with K stride 2 (NVFP4: no aligned scale pairs, the slow loop). */
static void test_layouts(void **state) {
    (void)state;
    if (no_gpu()) skip();
    int fails = 0;
    for (int f = 0; f < 3; ++f)
        for (int v = 0; v < 6; ++v) {
            gemv_case c;
            memset(&c, 0, sizeof c);
            c.format = k_formats[f];
            c.x = v == 3 ? PTXQ_BF16 : (ptxq_dtype)0;
            c.y = k_y[v % 3];
            c.M = 200 + 9 * v;
            c.K = 1024 + 96 * v;
            c.L = v == 1 ? 1 : 3;
            c.a_pad = f == 2 ? 16 * v : 32 * v;
            c.scales = v == 4 ? 0 : v % 3;
            c.x_shared = v >= 2 && v < 4;
            c.globals = v != 1;
            c.odd_scales = v >= 4;
            fails += run_one(c, 1) != 0;
        }
    assert_int_equal(fails, 0);
}

/* Every plan on a shape that leaves ragged row tiles and ragged trips along K. */
static void test_every_plan(void **state) {
    (void)state;
    if (no_gpu()) skip();
    static const int rs[3] = {1, 2, 4}, ks[4] = {1, 2, 4, 8};
    int fails = 0;
    for (int f = 0; f < 3; ++f)
        for (int xi = 0; xi < 2; ++xi)
            for (int i = 0; i < 12; ++i) {
                gemv_case c;
                memset(&c, 0, sizeof c);
                c.format = k_formats[f];
                c.x = k_x[xi];
                c.y = PTXQ_F32;
                c.M = 77;
                c.K = f == 0 ? 3 * 1024 + 16 : 3 * 1024 + 32;
                c.L = 2;
                c.rows_per_thread = rs[i / 4];
                c.k_warps = ks[i % 4];
                c.globals = 1;
                fails += run_one(c, 0) != 0;
            }
    /* the tensor-core kernels (FP4 A, F16 or BF16 x): every warps-along-K, y type, scale
     * layout */
    for (int f = 0; f < 4; ++f)
        for (int i = 0; i < 8; ++i) {
            gemv_case c;
            memset(&c, 0, sizeof c);
            c.format = k_formats[f % 2];
            c.x = f < 2 ? PTXQ_F16 : PTXQ_BF16;
            c.y = k_y[i % 3];
            c.M = 77 + 40 * (i % 2);
            c.K = f % 2 == 0 ? 3 * 1024 + 16 : 3 * 1024 + 32;
            c.L = 2;
            c.rows_per_thread = 16;
            c.k_warps = ks[i % 4];
            c.scales = i < 4 ? 0 : i < 6 ? 2 : 1;  /* row-major, 128x4, M-major */
            c.x_shared = i == 7;
            c.globals = 1;
            fails += run_one(c, 0) != 0;
        }
    assert_int_equal(fails, 0);
}

/* Plan checks for run_case: the row step the plan must report (32 where 128x4 scales put a
 * thread's 2 or 4 rows 32 apart), and whether the "...v" twin ran where it must (NVFP4 x NVFP4
 * 128x4, R = 2 or 4, A's scale base 4R-byte aligned). */
static int wrong_row_step(const gemv_case *c, const gemv_result *r) {
    return r->plan.rows_step != (c->rows_per_thread > 1 ? 32 : 1);
}

static int ran_vec_twin(const gemv_result *r) {
    size_t n = strlen(r->plan.kernel);
    return n > 0 && r->plan.kernel[n - 1] == 'v';
}

/* Whether this GPU is sm_90a, where `what` (the runtime's sm_90a-only picks); if not, says so
 * for test `name`, which then skips. */
static int sm90a_here(const char *name, const char *what) {
    if (!strcmp(g_test.dev.info.target, "sm_90a")) return 1;
    printf("[ SKIPPED  ] %s: %s on sm_90a only; this GPU is %s\n", name, what,
           g_test.dev.info.target);
    return 0;
}

static int wrong_vec_twin(const gemv_case *c, const gemv_result *r) {
    int want = c->scale_offset % (4 * c->rows_per_thread) == 0;
    return wrong_row_step(c, r) || ran_vec_twin(r) != want;
}

/* 128x4 A scales on every plain plan (FLAG_RI32: R = 2, 4 take rows 32 apart, the grid whole
 * 32 R-row blocks): M ragged across several 128-row tiles (300) and below one (77), every format,
 * x in A's format and BF16, every warps-along-K; the plan must report the row step it ran. */
static void test_sf128_rows(void **state) {
    (void)state;
    if (no_gpu()) skip();
    static const int rs[3] = {1, 2, 4}, ks[4] = {1, 2, 4, 8};
    int fails = 0, ri = 0;
    for (int f = 0; f < 3; ++f)
        for (int xi = 0; xi < 2; ++xi)
            for (int i = 0; i < 12; ++i) {
                gemv_case c;
                memset(&c, 0, sizeof c);
                c.format = k_formats[f];
                c.x = k_x[xi];
                c.y = k_y[i % 3];
                c.M = i % 2 ? 300 : 77;
                c.K = f == 0 ? 2048 + 16 : 2048 + 32;
                c.L = 2;
                c.scales = 2;
                c.rows_per_thread = rs[i / 4];
                c.k_warps = ks[i % 4];
                c.globals = 1;
                gemv_result r;
                fails += run_case(c, 0, &r, wrong_row_step);
                ri += r.plan.rows_step == 32;
            }
    printf("[ INFO     ] %d of 72 cases ran with rows 32 apart\n", ri);
    assert_int_equal(fails, 0);
    assert_int_equal(ri, 48);
}

/* The "...v" twins (NVFP4 x NVFP4, R = 2 and 4, 128x4 scales: a chunk's R scale words as one
 * vector; gen/gemv.py, variants). K % 64 == 0, so that the scale pairs are aligned u16s (FLAG_SPAIR)
 * and the fast loop runs (with K = 2064, as in test_sf128_rows, every warp takes the byte loop:
 * a review found the twins' loop untested there). Every warps-along-K, M ragged, L = 3; each shape
 * with A's scale base aligned, then 8 bytes off on the same thread (the plan memo's entry reused):
 * aligned and R = 2 at 8 bytes off run the twin, R = 4 at 8 bytes off the plain kernel. */
static void test_sf128_vec(void **state) {
    (void)state;
    if (no_gpu() || !sm90a_here("test_sf128_vec", "the runtime takes the scale-vector twins"))
        skip();
    static const int ks[4] = {1, 2, 4, 8};
    int fails = 0, vt = 0;
    for (int i = 0; i < 32; ++i) {
        gemv_case c;
        memset(&c, 0, sizeof c);
        c.format = k_formats[0];
        c.y = k_y[i % 3];
        c.M = i < 16 ? 300 : 1000 + 8 * ((i / 4) % 4);
        c.K = i < 16 ? 2048 : 4096;
        c.L = i < 16 ? 3 : 1;
        c.scales = 2;
        c.rows_per_thread = (i / 2) % 2 ? 4 : 2;
        c.k_warps = ks[(i / 4) % 4];
        c.scale_offset = i % 2 ? 8 : 0;
        c.globals = 1;
        gemv_result r;
        fails += run_case(c, 0, &r, wrong_vec_twin);
        vt += ran_vec_twin(&r);
    }
    printf("[ INFO     ] %d of 32 cases ran a scale-vector twin\n", vt);
    assert_int_equal(fails, 0);
    assert_int_equal(vt, 24);
}

/* The tensor-core kernels' window loop walks running pointers on sm_90a (gen/gemv.py pinc): A's
 * rows, their scale bytes and x step by constants each window, and the tail window uses them too.
 * A review listed what no other test gave these kernels: 128x4 scales with k_warps 4 and 8 and
 * M past one 128-row block, NVFP4's u16 scale-pair loop (row-major, an even scale count a row)
 * with a tail window, odd scale bases with BF16/F16 x, and K shorter than one window. The
 * software-pipelined loop (spl) leaves by one of two exits by the parity of a warp's whole
 * windows: K = 1184 (37 chunks: 9 windows and one chunk) gives odd counts for every k_warps.
 * 80 cases: both FP4 formats, BF16 and F16 x, every k_warps, row-major / 128x4 / odd row-major. */
static void test_tc_windows(void **state) {
    (void)state;
    if (no_gpu()) skip();
    static const int ks[4] = {1, 2, 4, 8};
    static const int64_t kk[5] = {4160, 4096, 96, 2080, 1184};
    int fails = 0;
    for (int i = 0; i < 80; ++i) {
        gemv_case c;
        memset(&c, 0, sizeof c);
        c.format = i % 2 ? PTXQ_GEMV_MXFP4 : PTXQ_GEMV_NVFP4;
        c.x = (i / 2) % 2 ? PTXQ_F16 : PTXQ_BF16;
        c.y = k_y[i % 3];
        c.k_warps = ks[(i / 4) % 4];
        c.rows_per_thread = 16;
        int v = i / 16;
        c.M = v == 2 ? 37 : 300;
        c.L = v == 3 ? 1 : 2;
        c.K = kk[v];
        c.scales = v == 1 ? 2 : 0;
        c.odd_scales = v == 3;
        c.globals = 1;
        c.pipelined = -1; /* the plain kernel (spl), not its ring twin (test_tc_ring) */
        fails += run_one(c, 0);
    }
    assert_int_equal(fails, 0);
}

/* Fails a case that ran a plan other than what its desc.pipelined and alignment ask for: the ring
 * twin ("..._tcr", plan.pipelined 3) where pipelined is 2 and the scales allow it (not
 * odd_scales), the plain kernel otherwise. */
static int wrong_tc_ring(const gemv_case *c, const gemv_result *r) {
    int want = c->pipelined == 2 && !c->odd_scales;
    return (r->plan.pipelined == 3) != want;
}

/* Whether this GPU runs the ring twins (sm_90a: elsewhere they are the plain kernels, and the
 * runtime takes them on sm_90a only); if not, says so for test `name`, which then skips. */
static int ring_twins_here(const char *name) {
    return sm90a_here(name, "the ring twins run");
}

/* The tensor-core kernels' ring twins (gen/gemv.py TC_RING: D = 2, MXFP4 x F16 3) against the
 * plain kernels, desc.pipelined 2 and -1 on each case: K with row-major scales in 4-byte
 * aligned rows (NVFP4 K % 64 == 0, MXFP4 K % 128 == 0) and with 128x4 scales (any K, NVFP4's
 * half chunk included), whole window counts a warp from 1 to 32 over k_warps 1-8 (every residue
 * of D, so every unrolled exit), tail windows, M past one 128-row block, and odd scale bases
 * (the twin refused: the plain kernel runs). 96 cases, 64 of them run the twin. */
static void test_tc_ring(void **state) {
    (void)state;
    if (no_gpu() || !ring_twins_here("test_tc_ring")) skip();
    static const int ks[4] = {1, 2, 4, 8};
    /* K and scale layout (2: 128x4) per format: NVFP4 66 / 38 / 38.5 / 128 chunks, MXFP4 36 /
     * 68 / 37 / 128 chunks */
    static const int64_t kn[4] = {2112, 1216, 1232, 4096}, km[4] = {1152, 2176, 1184, 4096};
    static const int sc[4] = {0, 0, 2, 2};
    int fails = 0, twin = 0;
    for (int i = 0; i < 96; ++i) {
        gemv_case c;
        memset(&c, 0, sizeof c);
        int f = i % 2, v = (i / 16) % 4;
        c.format = f ? PTXQ_GEMV_MXFP4 : PTXQ_GEMV_NVFP4;
        c.x = (i / 2) % 2 ? PTXQ_F16 : PTXQ_BF16;
        c.y = k_y[i % 3];
        c.k_warps = ks[(i / 4) % 4];
        c.rows_per_thread = 16;
        c.M = 300;
        c.L = 2;
        c.K = f ? km[v] : kn[v];
        c.scales = sc[v];
        c.odd_scales = i >= 64 && v < 2; /* row-major at an odd address: no twin */
        c.globals = 1;
        for (int pl = 0; pl < 2; ++pl) {
            c.pipelined = pl ? -1 : 2;
            gemv_result r;
            fails += run_case(c, 0, &r, wrong_tc_ring);
            twin += r.plan.pipelined == 3;
        }
    }
    printf("[ INFO     ] %d of 192 runs took a ring twin\n", twin);
    assert_int_equal(fails, 0);
    assert_int_equal(twin, 64);
}

/* The ring twins on the edges test_tc_ring leaves out: x shared by every batch, padded A rows,
 * L = 1, and M below one 16-row group or ragged past it (rows past M are masked lanes of the
 * mma, which still copy their ring slots). Every run asks for a twin (desc.pipelined 2) and every
 * one must get it: these layouts all pass tc_ring_ok. */
static void test_tc_ring_edges(void **state) {
    (void)state;
    if (no_gpu() || !ring_twins_here("test_tc_ring_edges")) skip();
    /* M, L, x shared, A pad (elements), k_warps */
    static const int64_t e[6][5] = {{300, 3, 1, 0, 1}, {300, 2, 0, 32, 2}, {300, 1, 0, 0, 4},
                                    {5, 2, 0, 0, 1},   {13, 1, 1, 64, 1}, {37, 3, 0, 32, 8}};
    int fails = 0, twin = 0, runs = 0;
    for (int i = 0; i < 24; ++i) {
        gemv_case c;
        memset(&c, 0, sizeof c);
        int f = i % 2;
        const int64_t *r = e[(i / 4) % 6];
        c.format = f ? PTXQ_GEMV_MXFP4 : PTXQ_GEMV_NVFP4;
        c.x = (i / 2) % 2 ? PTXQ_F16 : PTXQ_BF16;
        c.y = k_y[i % 3];
        c.M = r[0];
        c.L = r[1];
        c.x_shared = (int)r[2];
        c.a_pad = r[3];
        c.k_warps = (int)r[4];
        c.rows_per_thread = 16;
        c.scales = ((i >> 1) ^ (i >> 2)) & 1 ? 2 : 0; /* both layouts on every edge row */
        /* NVFP4 66 chunks: 16 whole windows and a half-window tail; MXFP4 68 (17 whole) with
         * row-major scales (which need K % 128 == 0 for the twin), 69 (a one-chunk tail) with
         * 128x4 ones */
        c.K = f ? (c.scales ? 2208 : 2176) : 2112;
        c.globals = 1;
        c.pipelined = 2;
        gemv_result res;
        fails += run_case(c, 0, &res, wrong_tc_ring);
        twin += res.plan.pipelined == 3;
        ++runs;
    }
    printf("[ INFO     ] %d of %d runs took a ring twin\n", twin, runs);
    assert_int_equal(fails, 0);
    assert_int_equal(twin, runs);
}

/* One shape with row-major, then 128x4, then row-major A scales on the same thread: the plan memo
 * must not hand one layout's grid to the other (128x4's covers whole 32 R-row blocks). A review
 * found it did: rows 256-299 of the last batch unwritten one way, CTAs past the last batch
 * writing beyond y the other (pad_touched, or a fault under PTXQ_TEST_GUARD). */
static void test_sf128_memo(void **state) {
    (void)state;
    if (no_gpu()) skip();
    int fails = 0;
    for (int rows = 0; rows <= 4; rows += 4)
        for (int i = 0; i < 3; ++i) {
            gemv_case c;
            memset(&c, 0, sizeof c);
            c.format = PTXQ_GEMV_NVFP4;
            c.y = PTXQ_F16;
            c.M = 300;
            c.K = 2064;
            c.L = 2;
            c.scales = i == 1 ? 2 : 0;
            c.rows_per_thread = rows;
            c.k_warps = rows ? 1 : 0;
            c.globals = 1;
            fails += run_one(c, 1) != 0;
        }
    assert_int_equal(fails, 0);
}

/* The hackathon's (7168, 2048, 4) with M ragged, FP4 x FP4: a grid past one wave whose warps make
 * 2 trips, where the runtime lets only the first wave's CTAs prefetch (plan.prefetch_ctas). */
static void test_first_wave_prefetch(void **state) {
    (void)state;
    if (no_gpu()) skip();
    int fails = 0;
    for (int f = 0; f < 2; ++f) {
        gemv_case c;
        memset(&c, 0, sizeof c);
        c.format = k_formats[f];
        c.y = PTXQ_F16;
        c.M = 7168 - 13;
        c.K = 2048;
        c.L = 4;
        c.globals = f == 0;
        c.seed = g_test.seed++;
        gemv_result r;
        int rc = gemv_case_run(&g_test.dev, &c, &r);
        unsigned slots = (unsigned)(g_test.dev.info.sm_count * r.plan.ctas_per_sm);
        unsigned want = r.plan.rows_per_thread != 16 && r.plan.prefetch_trips > 0 &&
                                (c.K / 32 + 32 * r.plan.k_warps - 1) / (32 * r.plan.k_warps) <= 2 &&
                                r.plan.grid > slots
                            ? slots
                            : r.plan.grid;
        printf("[ CASE     ] %s M %lld K %lld L %lld: %s r%d k%d grid %u, prefetch %d trips in %u "
               "CTAs (want %u) | wrong %lld/%lld\n", f ? "MXFP4" : "NVFP4", (long long)c.M,
               (long long)c.K, (long long)c.L, r.plan.kernel, r.plan.rows_per_thread,
               r.plan.k_warps, r.plan.grid, r.plan.prefetch_trips, r.plan.prefetch_ctas, want,
               (long long)r.wrong, (long long)r.outputs);
        fails += rc != 0 || r.plan.prefetch_ctas != want;
    }
    assert_int_equal(fails, 0);
}

/* Bad calls on a GPU: status, message, and y (poisoned) untouched. */
static void test_bad_inputs_untouched(void **state) {
    (void)state;
    if (no_gpu()) skip();
    int64_t M = 64, K = 512;
    size_t ybytes = (size_t)M * 2 + 64;
    uint64_t da = dev_alloc(&g_test.dev, (size_t)(M * K)), ds = dev_alloc(&g_test.dev, (size_t)(M * K / 16));
    uint64_t dx = dev_alloc(&g_test.dev, (size_t)K), dxs = dev_alloc(&g_test.dev, (size_t)K / 16);
    uint64_t dy = dev_alloc(&g_test.dev, ybytes);
    dev_fill(&g_test.dev, da, 0x22, (size_t)(M * K));
    dev_fill(&g_test.dev, ds, 0x38, (size_t)(M * K / 16));
    dev_fill(&g_test.dev, dx, 0x22, (size_t)K);
    dev_fill(&g_test.dev, dxs, 0x38, (size_t)K / 16);
    int64_t ash[2] = {M, K}, ssh[2] = {M, K / 16}, nk = K / 16;
    ptxq_gemv_desc good;
    memset(&good, 0, sizeof good);
    good.format = PTXQ_GEMV_NVFP4;
    ptxq_tensor a = ptxq_tensor_make(PTXQ_E2M1, 2, ash, da), as = ptxq_tensor_make(PTXQ_UE4M3, 2, ssh, ds);
    ptxq_tensor x = ptxq_tensor_make(PTXQ_E2M1, 1, &K, dx), xs = ptxq_tensor_make(PTXQ_UE4M3, 1, &nk, dxs);
    ptxq_tensor y = ptxq_tensor_make(PTXQ_F16, 1, &M, dy);
    unsigned char *h = malloc(ybytes);
    for (int c = 0; c < 6; ++c) {
        ptxq_gemv_desc d = good;
        ptxq_tensor ba = a, bas = as, bx = x, by = y;
        ptxq_status want;
        switch (c) {
        case 0: ba.shape[1] = bx.shape[0] = 520; want = PTXQ_ERR_SHAPE; break;
        case 1: bas.shape[1] = 16; want = PTXQ_ERR_SCALE_SHAPE; break;
        case 2: bx.data += 8; want = PTXQ_ERR_ALIGNMENT; break;
        case 3: d.format = PTXQ_GEMV_MXFP8; want = PTXQ_ERR_DTYPE; break;
        case 4: by.dtype = PTXQ_I32; want = PTXQ_ERR_DTYPE; break;
        default: d.k_warps = 3; want = PTXQ_ERR_INVALID_ARGUMENT; break;
        }
        dev_fill(&g_test.dev, dy, 0x77, ybytes);
        ptxq_status st = ptxq_gemv(g_test.dev.ctx, &d, &ba, &bas, &bx, &xs, &by, g_test.dev.stream);
        if (st != want)
            fail_msg("case %d: %s (%s), want %s", c, ptxq_status_name(st), ptxq_last_error(),
                     ptxq_status_name(want));
        assert_true(strlen(ptxq_last_error()) > 10);
        dev_sync(&g_test.dev);
        dev_download(&g_test.dev, h, dy, ybytes);
        for (size_t i = 0; i < ybytes; ++i) assert_int_equal(h[i], 0x77);
    }
    /* and the good call writes: every A code 0x22 is 1.0 * 1.0, x the same, scales 1.0 */
    assert_int_equal(ptxq_gemv(g_test.dev.ctx, &good, &a, &as, &x, &xs, &y, g_test.dev.stream), PTXQ_OK);
    dev_download(&g_test.dev, h, dy, ybytes);
    uint16_t y0;
    memcpy(&y0, h, 2);
    assert_true(ptxq_f16_decode(y0) == (float)K);
    for (size_t i = (size_t)M * 2; i < ybytes; ++i) assert_int_equal(h[i], 0x77);
    free(h);
    dev_free(&g_test.dev, da);
    dev_free(&g_test.dev, ds);
    dev_free(&g_test.dev, dx);
    dev_free(&g_test.dev, dxs);
    dev_free(&g_test.dev, dy);
}

/* GEMV 1 of the launch-order tests: NVFP4 A [N, K1] with UE4M3 scales in 0.5..1, and two NVFP4
 * x [K1] (with scales) to alternate between, random, uploaded; h: a host buffer of >= N * K1 / 2
 * bytes. */
typedef struct gemv1_inputs {
    uint64_t a1, s1, x1[2], xs1[2];
    ptxq_tensor A1, S1, X1[2], XS1[2];
} gemv1_inputs;

static void gemv1_make(ptxq_dev *D, rng64 *rg, int64_t N, int64_t K1, unsigned char *h,
                       gemv1_inputs *g) {
    int64_t nk1 = K1 / 16;
    size_t a1n = (size_t)(N * K1 / 2), s1n = (size_t)(N * nk1), x1n = (size_t)(K1 / 2);
    g->a1 = dev_alloc(D, a1n);
    g->s1 = dev_alloc(D, s1n);
    for (size_t i = 0; i < a1n; ++i) h[i] = (unsigned char)rng_next(rg);
    dev_upload(D, g->a1, h, a1n);
    for (size_t i = 0; i < s1n; ++i) h[i] = (unsigned char)(0x30 + rng_next(rg) % 9); /* 0.5..1 */
    dev_upload(D, g->s1, h, s1n);
    int64_t a1s[2] = {N, K1}, s1s[2] = {N, nk1};
    g->A1 = ptxq_tensor_make(PTXQ_E2M1, 2, a1s, g->a1);
    g->S1 = ptxq_tensor_make(PTXQ_UE4M3, 2, s1s, g->s1);
    for (int j = 0; j < 2; ++j) {
        g->x1[j] = dev_alloc(D, x1n);
        g->xs1[j] = dev_alloc(D, (size_t)nk1);
        for (size_t i = 0; i < x1n; ++i) h[i] = (unsigned char)rng_next(rg);
        dev_upload(D, g->x1[j], h, x1n);
        for (int64_t i = 0; i < nk1; ++i) h[i] = (unsigned char)(0x30 + rng_next(rg) % 9);
        dev_upload(D, g->xs1[j], h, (size_t)nk1);
        g->X1[j] = ptxq_tensor_make(PTXQ_E2M1, 1, &K1, g->x1[j]);
        g->XS1[j] = ptxq_tensor_make(PTXQ_UE4M3, 1, &nk1, g->xs1[j]);
    }
}

static void gemv1_free(ptxq_dev *D, gemv1_inputs *g) {
    dev_free(D, g->a1);
    dev_free(D, g->s1);
    for (int j = 0; j < 2; ++j) {
        dev_free(D, g->x1[j]);
        dev_free(D, g->xs1[j]);
    }
}

/* Programmatic dependent launch: GEMV 2 reads GEMV 1's output (x2 = y1, F16) right behind it in
 * the stream, GEMV 1 alternating between two inputs, so a GEMV 2 that read x before GEMV 1 was
 * done would see the previous y1 (or the NaN poison). Every format and plan of GEMV 2, launched
 * without PDL, with PDL, and with PDL + STATIC_WEIGHTS (A's prefetch before the wait), with the
 * L2 prefetch off, automatic and 1 trip (the tensor-core kernel's, always before the wait), and
 * the default captured in a CUDA graph: each must equal, bit for bit, the same plan run with a
 * plain launch and a stream synchronization after each call. */
static void test_pdl_chain(void **state) {
    (void)state;
    if (no_gpu()) skip();
    ptxq_dev *D = &g_test.dev;
    enum { IT = 4 };
    const int64_t K1 = 32768, N = 1024, M2 = 333;
    rng64 rg = {g_test.seed++ * 2 + 1};
    size_t a1n = (size_t)(N * K1 / 2), a2n = (size_t)(M2 * N), s2n = (size_t)(M2 * (N / 16));
    unsigned char *h = malloc(a1n > a2n ? a1n : a2n);
    gemv1_inputs g1;
    gemv1_make(D, &rg, N, K1, h, &g1);
    uint64_t y1 = dev_alloc(D, (size_t)N * 2), a2 = dev_alloc(D, a2n), s2 = dev_alloc(D, s2n);
    uint64_t y2 = dev_alloc(D, (size_t)(IT * M2 * 4));
    float *ref = malloc(sizeof *ref * (size_t)(IT * M2)), *got = malloc(sizeof *got * (size_t)(IT * M2));
    int64_t a2s[2] = {M2, N}, y2s[2] = {IT, M2};
    ptxq_tensor Y1 = ptxq_tensor_make(PTXQ_F16, 1, &N, y1), X2 = Y1;
    static const unsigned modes[3] = {PTXQ_GEMV_NO_PDL, 0, PTXQ_GEMV_STATIC_WEIGHTS};
    /* r16: the tensor-core kernel (x F16 here), whose prefetch runs before the wait */
    static const int pfs[3] = {-1, 0, 1}, rs[4] = {1, 2, 4, 16}, ks[4] = {1, 2, 4, 8};
    int fails = 0, runs = 0;
    for (int f = 0; f < 3; ++f) {
        ptxq_dtype elem, sdt;
        int blk;
        gemv_format_info(k_formats[f], &elem, &sdt, &blk);
        int64_t nk2 = N / blk, bytes2 = M2 * N * ptxq_dtype_bits(elem) / 8;
        for (int64_t i = 0; i < bytes2; ++i) {
            unsigned char b = (unsigned char)rng_next(&rg);
            h[i] = elem == PTXQ_E4M3 ? (unsigned char)(b & 0xF7) : b; /* no E4M3 NaN */
        }
        dev_upload(D, a2, h, (size_t)bytes2);
        for (int64_t i = 0; i < M2 * nk2; ++i)
            h[i] = (unsigned char)(sdt == PTXQ_UE4M3 ? 0x30 + rng_next(&rg) % 9 : 120 + rng_next(&rg) % 9);
        dev_upload(D, s2, h, (size_t)(M2 * nk2));
        int64_t s2s[2] = {M2, nk2};
        ptxq_tensor A2 = ptxq_tensor_make(elem, 2, a2s, a2), S2 = ptxq_tensor_make(sdt, 2, s2s, s2);
        ptxq_tensor Y2 = ptxq_tensor_make(PTXQ_F32, 2, y2s, y2);
        for (int pl = 0; pl < 16; ++pl)
            for (int m = -1; m < 10; ++m) { /* -1: the synchronized reference, 9: PDL in a graph */
                if (rs[pl / 4] == 16 && k_formats[f] == PTXQ_GEMV_MXFP8) break;
                ptxq_gemv_desc d1, d2;
                memset(&d1, 0, sizeof d1);
                memset(&d2, 0, sizeof d2);
                d1.format = PTXQ_GEMV_NVFP4;
                d2.format = k_formats[f];
                d2.rows_per_thread = rs[pl / 4];
                d2.k_warps = ks[pl % 4];
                d1.flags = d2.flags = m < 0 ? PTXQ_GEMV_NO_PDL : m >= 9 ? 0u : modes[m / 3];
                d2.prefetch_trips = m < 0 ? -1 : m >= 9 ? 0 : pfs[m % 3];
                dev_fill(D, y1, 0xFF, (size_t)N * 2); /* NaN */
                dev_fill(D, y2, 0xFF, (size_t)(IT * M2 * 4));
                int bad_call = m == 9 && gputest_graph_begin(D, "pdl chain");
                for (int it = 0; it < IT && !bad_call; ++it) {
                    ptxq_tensor Y2i = Y2;
                    Y2i.rank = 1;
                    Y2i.shape[0] = M2;
                    Y2i.stride[0] = 1;
                    Y2i.data = y2 + (uint64_t)(it * M2 * 4);
                    if (ptxq_gemv(D->ctx, &d1, &g1.A1, &g1.S1, &g1.X1[it & 1], &g1.XS1[it & 1], &Y1,
                                  D->stream) ||
                        ptxq_gemv(D->ctx, &d2, &A2, &S2, &X2, NULL, &Y2i, D->stream)) {
                        print_error("pdl chain: %s\n", ptxq_last_error());
                        bad_call = 1;
                        break;
                    }
                    if (m < 0) dev_sync(D);
                }
                if (m == 9) {
                    int ok = gputest_graph_end_launch(D, !bad_call);
                    if (!ok && !bad_call) {
                        print_error("pdl chain: the graph of PDL launches failed\n");
                        bad_call = 1;
                    }
                }
                ++runs;
                if (bad_call) {
                    ++fails;
                    continue;
                }
                dev_download(D, m < 0 ? ref : got, y2, sizeof *ref * (size_t)(IT * M2));
                if (m < 0) {
                    int nan = 0;
                    for (int64_t i = 0; i < IT * M2; ++i) nan += ref[i] != ref[i];
                    if (nan) {
                        print_error("pdl chain %s r%d k%d: %d NaN in the reference\n",
                                    gemv_format_name(k_formats[f]), rs[pl / 4], ks[pl % 4], nan);
                        ++fails;
                    }
                    continue;
                }
                if (memcmp(ref, got, sizeof *ref * (size_t)(IT * M2))) {
                    int64_t i = 0;
                    while (!memcmp(&ref[i], &got[i], sizeof *ref)) ++i;
                    print_error("pdl chain %s r%d k%d flags %u prefetch %d: y2[%lld] %.9g, "
                                "reference %.9g\n", gemv_format_name(k_formats[f]), rs[pl / 4],
                                ks[pl % 4], d2.flags, d2.prefetch_trips, (long long)i, got[i], ref[i]);
                    ++fails;
                }
            }
    }
    printf("[ INFO     ] pdl chain: %d runs of %d GEMV pairs, %d failed\n", runs, IT, fails);
    free(h);
    free(ref);
    free(got);
    gemv1_free(D, &g1);
    dev_free(D, y1);
    dev_free(D, a2);
    dev_free(D, s2);
    dev_free(D, y2);
    assert_int_equal(fails, 0);
}

/* A written by the preceding kernel, in a CUDA graph and on a plain PDL stream: while a stream is
 * captured, and on grids of at most two waves, ptxq_gemv puts the L2 prefetch of A before the PDL
 * wait without PTXQ_GEMV_STATIC_WEIGHTS (src/gemv.c), which is correct only because a prefetch
 * loads nothing into registers. GEMV 2's A is GEMV 1's F16 output read as E2M1 codes (every byte
 * is a valid pair), GEMV 1 alternating between two inputs; with a forced 1-trip prefetch, graph
 * launches and back-to-back PDL launches must equal, bit for bit, the same calls made with plain
 * launches and a synchronization after each. A kernel that read A (not just prefetched it)
 * before the wait would see the previous y1 or the NaN poison's bytes. */
static void test_graph_a_written(void **state) {
    (void)state;
    if (no_gpu()) skip();
    ptxq_dev *D = &g_test.dev;
    enum { IT = 6 };
    const int64_t K1 = 32768, N = 1024, M2 = 4, K2 = N, nk2 = K2 / 16;
    rng64 rg = {g_test.seed++ * 2 + 1};
    unsigned char *h = malloc((size_t)(N * K1 / 2));
    gemv1_inputs g1;
    gemv1_make(D, &rg, N, K1, h, &g1);
    uint64_t y1 = dev_alloc(D, (size_t)N * 2), s2 = dev_alloc(D, (size_t)(M2 * nk2));
    uint64_t x2 = dev_alloc(D, (size_t)K2 / 2), xs2 = dev_alloc(D, (size_t)nk2);
    uint64_t y2 = dev_alloc(D, (size_t)(IT * M2 * 4));
    for (int64_t i = 0; i < M2 * nk2; ++i) h[i] = (unsigned char)(0x30 + rng_next(&rg) % 9);
    dev_upload(D, s2, h, (size_t)(M2 * nk2));
    for (int64_t i = 0; i < K2 / 2; ++i) h[i] = (unsigned char)rng_next(&rg);
    dev_upload(D, x2, h, (size_t)K2 / 2);
    for (int64_t i = 0; i < nk2; ++i) h[i] = (unsigned char)(0x30 + rng_next(&rg) % 9);
    dev_upload(D, xs2, h, (size_t)nk2);
    int64_t a2s[2] = {M2, K2}, s2s[2] = {M2, nk2};
    ptxq_tensor Y1 = ptxq_tensor_make(PTXQ_F16, 1, &N, y1);
    ptxq_tensor A2 = ptxq_tensor_make(PTXQ_E2M1, 2, a2s, y1), S2 = ptxq_tensor_make(PTXQ_UE4M3, 2, s2s, s2);
    ptxq_tensor X2 = ptxq_tensor_make(PTXQ_E2M1, 1, &K2, x2), XS2 = ptxq_tensor_make(PTXQ_UE4M3, 1, &nk2, xs2);
    /* GEMV 2's x: E2M1 (the dp4a kernel) or F16 (the tensor-core kernel, whose prefetch always
     * runs before the wait) */
    uint64_t x2h = dev_alloc(D, (size_t)K2 * 2);
    for (int64_t i = 0; i < K2; ++i) {
        /* finite, |x| in [2^-3, 1), either sign */
        uint16_t v = (uint16_t)(0x3000 + rng_next(&rg) % 0x1000);
        v |= (uint16_t)((rng_next(&rg) & 1) << 15);
        memcpy(h + 2 * i, &v, 2);
    }
    dev_upload(D, x2h, h, (size_t)K2 * 2);
    ptxq_tensor X2H = ptxq_tensor_make(PTXQ_F16, 1, &K2, x2h);
    int fails = 0;
    for (int xv = 0; xv < 2; ++xv) {
        float *got[3] = {NULL, NULL, NULL};
        int xfails = 0;
        const ptxq_tensor *X2v = xv ? &X2H : &X2, *XS2v = xv ? NULL : &XS2;
        /* 0: plain launches, synchronized; 1: PDL in a graph; 2: PDL launches back to back on
         * the stream (GEMV 2's one-CTA grid is under two waves: its plan moves the prefetch
         * there too) */
        for (int m = 0; m < 3; ++m) {
            ptxq_gemv_desc d1, d2;
            memset(&d1, 0, sizeof d1);
            memset(&d2, 0, sizeof d2);
            d1.format = d2.format = PTXQ_GEMV_NVFP4;
            d1.flags = d2.flags = m ? 0u : PTXQ_GEMV_NO_PDL;
            d2.prefetch_trips = 1;
            if (m == 2) {
                ptxq_gemv_plan p2;
                int64_t m2 = M2;
                ptxq_tensor Y2 = ptxq_tensor_make(PTXQ_F32, 1, &m2, y2);
                if (ptxq_gemv_plan_for(D->ctx, &d2, &A2, &S2, X2v, XS2v, &Y2, &p2) || !p2.early ||
                    !p2.pdl || p2.prefetch_trips != 1) {
                    print_error("graph A written: GEMV 2's stream plan: early %d, pdl %d, "
                                "prefetch %d (want 1, 1, 1)\n", p2.early, p2.pdl,
                                p2.prefetch_trips);
                    ++xfails;
                    break;
                }
            }
            dev_fill(D, y1, 0xFF, (size_t)N * 2);
            dev_fill(D, y2, 0xFF, (size_t)(IT * M2 * 4));
            if (m == 1 && gputest_graph_begin(D, "graph A written")) {
                ++xfails;
                break;
            }
            int bad_call = 0;
            for (int it = 0; it < IT; ++it) {
                int64_t m2 = M2;
                ptxq_tensor Y2 = ptxq_tensor_make(PTXQ_F32, 1, &m2, y2 + (uint64_t)(it * M2 * 4));
                if (ptxq_gemv(D->ctx, &d1, &g1.A1, &g1.S1, &g1.X1[it & 1], &g1.XS1[it & 1], &Y1,
                              D->stream) ||
                    ptxq_gemv(D->ctx, &d2, &A2, &S2, X2v, XS2v, &Y2, D->stream)) {
                    print_error("graph A written: %s\n", ptxq_last_error());
                    bad_call = 1;
                    break;
                }
                if (!m) dev_sync(D);
            }
            if (m == 1) bad_call |= !gputest_graph_end_launch(D, !bad_call);
            got[m] = malloc(sizeof(float) * (size_t)(IT * M2));
            dev_download(D, got[m], y2, sizeof(float) * (size_t)(IT * M2));
            xfails += bad_call;
        }
        if (!xfails) {
            int nan = 0;
            for (int64_t i = 0; i < IT * M2; ++i) nan += got[0][i] != got[0][i];
            /* y1 as E2M1 codes: any bits decode, so NaN in y2 can only come from a NaN y1
             * (the poison) */
            if (nan) print_error("graph A written: %d NaN in the reference\n", nan);
            for (int m = 1; m < 3; ++m)
                if (memcmp(got[0], got[m], sizeof(float) * (size_t)(IT * M2))) {
                    print_error("graph A written: the %s y2 differs from the synchronized one\n",
                                m == 1 ? "graph's" : "PDL stream's");
                    ++xfails;
                }
            xfails += nan != 0;
        }
        printf("[ INFO     ] graph A written, x %s: %d GEMV pairs, graph and PDL stream %s\n",
               xv ? "F16 (tensor cores)" : "E2M1", IT, xfails ? "FAILED" : "equal");
        free(got[0]);
        free(got[1]);
        free(got[2]);
        fails += xfails;
    }
    dev_free(D, x2h);
    free(h);
    gemv1_free(D, &g1);
    dev_free(D, y1);
    dev_free(D, s2);
    dev_free(D, x2);
    dev_free(D, xs2);
    dev_free(D, y2);
    assert_int_equal(fails, 0);
}

/* PTXQ_GEMV_INDEPENDENT: GEMV 1 writes y1 (alternating between two inputs); three consumers read
 * x = y1 right behind it: C0 with the default flags (it waits), then C1 and C2 independent (no
 * wait: each relies on the kernel before it having signalled its dependents only after its own
 * wait, so that GEMV 1 is complete when it starts), and the next iteration's GEMV 1 overwrites y1
 * (it waits for C2 only, whose wait at exit covers C1 and C0). Consumers: x as E2M1 (the bytes of
 * y1, dp4a kernel) and as F16 (the tensor-core kernel), one A for all three, so every output of
 * an iteration must equal the others and, bit for bit, the plain synchronized run; in a PDL
 * stream and in a CUDA graph. A control that breaks the promise (C1 right behind GEMV 1) is
 * reported, not checked: it is a race. */
static void test_independent_chain(void **state) {
    (void)state;
    if (no_gpu()) skip();
    ptxq_dev *D = &g_test.dev;
    enum { IT = 4, NC = 3 };
    const int64_t K1 = 32768, N = 1024, M2 = 64;
    rng64 rg = {g_test.seed++ * 2 + 1};
    unsigned char *h = malloc((size_t)(N * K1 / 2));
    gemv1_inputs g1;
    gemv1_make(D, &rg, N, K1, h, &g1);
    uint64_t y1 = dev_alloc(D, (size_t)N * 2);
    uint64_t out = dev_alloc(D, sizeof(float) * (size_t)(IT * NC * M2));
    ptxq_tensor Y1 = ptxq_tensor_make(PTXQ_F16, 1, &N, y1);
    int fails = 0;
    for (int xv = 0; xv < 2; ++xv) {
        /* x: y1's bytes as 4N E2M1 codes with random UE4M3 scales, or y1 as N F16 values */
        int64_t K2 = xv ? N : 4 * N, nk2 = K2 / 16, a2s[2] = {M2, K2}, s2s[2] = {M2, nk2};
        uint64_t a2 = dev_alloc(D, (size_t)(M2 * K2 / 2)), s2 = dev_alloc(D, (size_t)(M2 * nk2));
        uint64_t xs2 = dev_alloc(D, (size_t)nk2);
        for (int64_t i = 0; i < M2 * K2 / 2; ++i) h[i] = (unsigned char)rng_next(&rg);
        dev_upload(D, a2, h, (size_t)(M2 * K2 / 2));
        for (int64_t i = 0; i < M2 * nk2; ++i) h[i] = (unsigned char)(0x30 + rng_next(&rg) % 9);
        dev_upload(D, s2, h, (size_t)(M2 * nk2));
        for (int64_t i = 0; i < nk2; ++i) h[i] = (unsigned char)(0x30 + rng_next(&rg) % 9);
        dev_upload(D, xs2, h, (size_t)nk2);
        ptxq_tensor A2 = ptxq_tensor_make(PTXQ_E2M1, 2, a2s, a2);
        ptxq_tensor S2 = ptxq_tensor_make(PTXQ_UE4M3, 2, s2s, s2);
        ptxq_tensor X2 = ptxq_tensor_make(xv ? PTXQ_F16 : PTXQ_E2M1, 1, &K2, y1);
        ptxq_tensor XS2 = ptxq_tensor_make(PTXQ_UE4M3, 1, &nk2, xs2);
        const ptxq_tensor *XS2v = xv ? NULL : &XS2;
        float *got[4] = {NULL, NULL, NULL, NULL};
        int xfails = 0;
        /* 0: plain launches, synchronized; 1: PDL stream; 2: PDL in a graph; 3: the control */
        for (int m = 0; m < 4 && !xfails; ++m) {
            ptxq_gemv_desc d1, dc[NC];
            memset(&d1, 0, sizeof d1);
            memset(dc, 0, sizeof dc);
            d1.format = PTXQ_GEMV_NVFP4;
            d1.flags = m ? 0u : PTXQ_GEMV_NO_PDL;
            for (int c = 0; c < NC; ++c) {
                dc[c] = d1;
                if (c) dc[c].flags |= PTXQ_GEMV_INDEPENDENT;
            }
            ptxq_gemv_plan pc;
            int64_t mm = M2;
            ptxq_tensor Yc = ptxq_tensor_make(PTXQ_F32, 1, &mm, out);
            if (ptxq_gemv_plan_for(D->ctx, &dc[1], &A2, &S2, &X2, XS2v, &Yc, &pc) ||
                pc.nowait != (m && pc.pdl)) {
                print_error("independent chain: C1's plan: nowait %d, pdl %d\n", pc.nowait, pc.pdl);
                ++xfails;
                break;
            }
            dev_fill(D, y1, 0xFF, (size_t)N * 2);
            dev_fill(D, out, 0xFF, sizeof(float) * (size_t)(IT * NC * M2));
            if (m == 2 && gputest_graph_begin(D, "independent chain")) {
                ++xfails;
                break;
            }
            int bad_call = 0;
            for (int it = 0; it < IT && !bad_call; ++it) {
                bad_call |= ptxq_gemv(D->ctx, &d1, &g1.A1, &g1.S1, &g1.X1[it & 1], &g1.XS1[it & 1],
                                      &Y1, D->stream) != PTXQ_OK;
                if (!m) dev_sync(D);
                for (int c = 0; c < NC && !bad_call; ++c) {
                    /* the control skips C0: C1 right behind GEMV 1, the promise broken */
                    if (m == 3 && c == 0) continue;
                    Yc.data = out + sizeof(float) * (uint64_t)((it * NC + c) * M2);
                    bad_call |= ptxq_gemv(D->ctx, &dc[c], &A2, &S2, &X2, XS2v, &Yc, D->stream) !=
                                PTXQ_OK;
                    if (!m) dev_sync(D);
                }
            }
            if (bad_call) print_error("independent chain: %s\n", ptxq_last_error());
            if (m == 2) bad_call |= !gputest_graph_end_launch(D, !bad_call);
            dev_sync(D);
            got[m] = malloc(sizeof(float) * (size_t)(IT * NC * M2));
            dev_download(D, got[m], out, sizeof(float) * (size_t)(IT * NC * M2));
            xfails += bad_call;
        }
        if (!xfails) {
            int nan = 0, same = 0;
            for (int64_t i = 0; i < IT * NC * M2; ++i) nan += got[0][i] != got[0][i];
            for (int it = 0; it < IT; ++it)
                for (int c = 1; c < NC; ++c)
                    same += !memcmp(got[0] + (it * NC + c) * M2, got[0] + it * NC * M2,
                                    sizeof(float) * (size_t)M2);
            if (nan || same != IT * (NC - 1)) {
                print_error("independent chain: reference has %d NaN, %d of %d outputs equal\n",
                            nan, same, IT * (NC - 1));
                ++xfails;
            }
            for (int m = 1; m < 3; ++m)
                if (memcmp(got[0], got[m], sizeof(float) * (size_t)(IT * NC * M2))) {
                    print_error("independent chain: the %s outputs differ from the synchronized "
                                "ones\n", m == 1 ? "PDL stream's" : "graph's");
                    ++xfails;
                }
            int ctl = 0;
            for (int it = 0; it < IT; ++it)
                ctl += memcmp(got[3] + (it * NC + 1) * M2, got[0] + (it * NC + 1) * M2,
                              sizeof(float) * (size_t)M2) != 0;
            printf("[ INFO     ] independent chain, x %s: %d iterations of 1 + %d GEMVs, PDL stream "
                   "and graph %s; promise broken (control): %d of %d outputs differ\n",
                   xv ? "F16 (tensor cores)" : "E2M1", IT, NC, xfails ? "FAILED" : "equal", ctl, IT);
        }
        for (int m = 0; m < 4; ++m) free(got[m]);
        dev_free(D, a2);
        dev_free(D, s2);
        dev_free(D, xs2);
        fails += xfails;
    }
    free(h);
    gemv1_free(D, &g1);
    dev_free(D, y1);
    dev_free(D, out);
    assert_int_equal(fails, 0);
}

/* One GEMV with plan (rows_per_thread, k_warps) = (r, kw) and desc.pipelined = pers on the tensors
 * t = {A, A scales, x, x scales, y}, y poisoned first; fills *pp. 0, or 1 with the error printed. */
static int plan_run(ptxq_dev *D, ptxq_gemv_format f, int r, int kw, int pers, const ptxq_tensor *t,
                    uint64_t y, size_t ybytes, ptxq_gemv_plan *pp, const char *tag) {
    ptxq_gemv_desc d = plan_desc(f, r, kw, pers);
    dev_fill(D, y, 0xFF, ybytes);
    if (ptxq_gemv_plan_for(D->ctx, &d, &t[0], &t[1], &t[2], &t[3], &t[4], pp) ||
        ptxq_gemv(D->ctx, &d, &t[0], &t[1], &t[2], &t[3], &t[4], D->stream)) {
        print_error("%s: %s\n", tag, ptxq_last_error());
        return 1;
    }
    return 0;
}

/* The bulk-copy ring kernels (the "...b" kernels, NVFP4 x NVFP4, desc.pipelined = 2) on ragged M,
 * batched L, every plan, K with a partial last stage (8448: 8 stages of 32 chunks and one of 8
 * per row; 768: one partial stage, and warps with none for k_warps > 1): y must equal, bit for
 * bit, the plain kernel of the same plan (same arithmetic in the same order). K % 256 != 0 and
 * 128x4 scales must fall back to a kernel that is not the ring. */
static void test_bulk(void **state) {
    (void)state;
    if (no_gpu()) skip();
    ptxq_dev *D = &g_test.dev;
    const int64_t M = 3001, L = 2, KMAX = 8448;
    static const int rs[3] = {1, 2, 4}, ks[4] = {1, 2, 4, 8};
    static const int64_t kv[3] = {8448, 768, 8192 + 32};
    rng64 rg = {g_test.seed++ * 2 + 1};
    size_t amax = (size_t)(L * M * KMAX / 2), ybytes = (size_t)(L * M * 4);
    unsigned char *h = malloc(amax);
    float *ref = malloc(ybytes), *got = malloc(ybytes);
    uint64_t a = dev_alloc(D, amax), as = dev_alloc(D, amax / 8), x = dev_alloc(D, (size_t)(L * KMAX));
    uint64_t xs = dev_alloc(D, (size_t)(L * KMAX / 16)), y = dev_alloc(D, ybytes);
    int fails = 0, runs = 0;
    for (int ki = 0; ki < 3; ++ki) {
        int64_t K = kv[ki], nk = K / 16, ab = L * M * K / 2;
        for (int64_t i = 0; i < ab; ++i) h[i] = (unsigned char)rng_next(&rg);
        dev_upload(D, a, h, (size_t)ab);
        dev_upload(D, x, h + 4096, (size_t)(L * K / 2));
        for (int64_t i = 0; i < L * M * nk; ++i) h[i] = (unsigned char)(0x30 + rng_next(&rg) % 9);
        dev_upload(D, as, h, (size_t)(L * M * nk));
        dev_upload(D, xs, h + 1000, (size_t)(L * nk));
        int64_t ash[3] = {L, M, K}, ssh[3] = {L, M, nk}, xsh[2] = {L, K}, xssh[2] = {L, nk}, ysh[2] = {L, M};
        ptxq_tensor A = ptxq_tensor_make(PTXQ_E2M1, 3, ash, a), AS = ptxq_tensor_make(PTXQ_UE4M3, 3, ssh, as);
        ptxq_tensor X = ptxq_tensor_make(PTXQ_E2M1, 2, xsh, x), XS = ptxq_tensor_make(PTXQ_UE4M3, 2, xssh, xs);
        ptxq_tensor Y = ptxq_tensor_make(PTXQ_F32, 2, ysh, y);
        int want = K % 256 == 0 ? 2 : -1;
        for (int pl = 0; pl < 12; ++pl)
            for (int pers = -1; pers <= 2; pers += 3) {
                ptxq_gemv_plan pp;
                const ptxq_tensor t[5] = {A, AS, X, XS, Y};
                ++runs;
                if (plan_run(D, PTXQ_GEMV_NVFP4, rs[pl / 4], ks[pl % 4], pers, t, y, ybytes, &pp,
                             "bulk")) {
                    ++fails;
                    continue;
                }
                if (pers == 2 && (pp.pipelined == 2) != (want == 2)) {
                    print_error("bulk K %lld r%d k%d: plan.pipelined %d (%s)\n", (long long)K,
                                rs[pl / 4], ks[pl % 4], pp.pipelined, pp.kernel);
                    ++fails;
                }
                dev_download(D, pers < 0 ? ref : got, y, ybytes);
                if (pers > 0 && memcmp(ref, got, ybytes)) {
                    int64_t i = 0;
                    while (!memcmp(&ref[i], &got[i], sizeof *ref)) ++i;
                    print_error("bulk K %lld r%d k%d: y[%lld] %.9g, plain kernel %.9g\n",
                                (long long)K, rs[pl / 4], ks[pl % 4], (long long)i, got[i], ref[i]);
                    ++fails;
                }
            }
    }
    printf("[ INFO     ] bulk: %d runs, %d failed\n", runs, fails);
    free(h);
    free(ref);
    free(got);
    dev_free(D, a);
    dev_free(D, as);
    dev_free(D, x);
    dev_free(D, xs);
    dev_free(D, y);
    assert_int_equal(fails, 0);
}

/* The ring kernels against the float64 reference: cases run on a fresh thread with
 * PTXQ_GEMV_BULK=1 (the runtime reads it once per thread), so the automatic choice is the ring
 * wherever the shape allows it; every case must have run it. */
typedef struct bulk_ref_job {
    int cases, fails;
} bulk_ref_job;

static void *bulk_ref_thread(void *arg) {
    bulk_ref_job *j = arg;
    if (ptxq_context_make_current(g_test.dev.ctx) != PTXQ_OK) {
        j->fails = -1;
        return NULL;
    }
    static const int rs[3] = {1, 2, 4}, ks[4] = {1, 2, 4, 8};
    for (int i = 0; i < 24; ++i) {
        gemv_case c;
        memset(&c, 0, sizeof c);
        c.format = PTXQ_GEMV_NVFP4;
        c.y = k_y[i % 3];
        c.M = 1 + 131 * i % 1000;                   /* ragged */
        c.K = 256 * (1 + (7 * i) % 40);             /* 256 .. 10240 */
        c.L = 1 + i % 3;
        c.globals = i % 2;
        c.x_shared = i % 5 == 4;
        c.a_pad = 512 * (i % 4 == 3);               /* row pitch + 256 bytes */
        c.rows_per_thread = i < 12 ? rs[i / 4] : 0;
        c.k_warps = i < 12 ? ks[i % 4] : 0;
        if (i == 23) {                              /* the benchmark shapes' K */
            c.M = 7168 + 5;
            c.K = 16384;
            c.L = 1;
        }
        ++j->cases;
        gemv_result r;
        char desc[256];
        c.seed = g_test.seed++;
        gemv_case_describe(&c, desc, sizeof desc);
        int rc = gemv_case_run(&g_test.dev, &c, &r);
        if (rc || r.plan.pipelined != 2) {
            printf("[ FAIL     ] bulk ref %s: %s (pipelined %d) wrong %lld/%lld worst %.3f %s\n",
                   desc, r.plan.kernel, r.plan.pipelined, (long long)r.wrong,
                   (long long)r.outputs, r.worst, rc < 0 ? r.msg : "");
            ++j->fails;
        }
    }
    return NULL;
}

/* Eight threads share one fresh context (no module loaded yet), each on its own stream, three
 * calls each: every format with x in A's format and in BF16 / F16 (the dp4a, CUDA-core and
 * tensor-core kernels), racing the lazy module loads; every output checked. */
typedef struct gemv_thread_job { gemv_case c; ptxq_context *ctx; int rc; char what[1024]; } gemv_thread_job;

static void *gemv_thread_main(void *arg) {
    gemv_thread_job *j = arg;
    ptxq_dev d;
    j->rc = -1;
    if (gputest_thread_dev(&d, &g_test.dev, j->ctx)) {
        snprintf(j->what, sizeof j->what, "no stream");
        return NULL;
    }
    char desc[256];
    gemv_case_describe(&j->c, desc, sizeof desc);
    for (int it = 0; it < 3; ++it) {
        gemv_result r;
        j->c.seed += 101;
        int rc = gemv_case_run(&d, &j->c, &r);
        snprintf(j->what, sizeof j->what, "%s: %s round %d, wrong %lld/%lld, pad %lld %s", desc,
                 r.plan.kernel, it, (long long)r.wrong, (long long)r.outputs,
                 (long long)r.pad_touched, rc < 0 ? r.msg : "");
        if (rc) {
            gputest_thread_dev_close(&d);
            return NULL;
        }
    }
    gputest_thread_dev_close(&d);
    j->rc = 0;
    return NULL;
}

static void test_threads_share_context(void **state) {
    (void)state;
    if (no_gpu()) skip();
    ptxq_context *fresh = NULL;
    assert_int_equal(ptxq_context_create(0, &fresh), PTXQ_OK);
    gemv_thread_job jobs[8];
    memset(jobs, 0, sizeof jobs);
    const struct { ptxq_gemv_format f; ptxq_dtype x, y; int64_t M, K, L; } cs[8] = {
        {PTXQ_GEMV_NVFP4, 0, PTXQ_F16, 1003, 4096, 2}, {PTXQ_GEMV_NVFP4, PTXQ_BF16, PTXQ_BF16, 777, 2048, 1},
        {PTXQ_GEMV_MXFP4, 0, PTXQ_F32, 515, 4096, 3},  {PTXQ_GEMV_MXFP4, PTXQ_F16, PTXQ_F16, 1003, 1024, 2},
        {PTXQ_GEMV_MXFP8, 0, PTXQ_BF16, 640, 2048, 1}, {PTXQ_GEMV_MXFP8, PTXQ_BF16, PTXQ_F32, 333, 4096, 2},
        {PTXQ_GEMV_NVFP4, PTXQ_F16, PTXQ_F32, 129, 8192, 4}, {PTXQ_GEMV_MXFP4, PTXQ_BF16, PTXQ_BF16, 2000, 512, 1},
    };
    pthread_t th[8];
    for (int i = 0; i < 8; ++i) {
        gemv_case *c = &jobs[i].c;
        c->format = cs[i].f, c->x = cs[i].x, c->y = cs[i].y;
        c->M = cs[i].M, c->K = cs[i].K, c->L = cs[i].L;
        c->seed = g_test.seed + 7919u * (uint64_t)i;
        jobs[i].ctx = fresh;
        assert_int_equal(pthread_create(&th[i], NULL, gemv_thread_main, &jobs[i]), 0);
    }
    for (int i = 0; i < 8; ++i) pthread_join(th[i], NULL);
    ptxq_context_make_current(g_test.dev.ctx);
    ptxq_context_destroy(fresh);
    int bad = 0;
    for (int i = 0; i < 8; ++i) {
        printf("[ %s ] thread %d: %s\n", jobs[i].rc ? "FAIL    " : "THREAD  ", i, jobs[i].what);
        bad += jobs[i].rc != 0;
    }
    assert_int_equal(bad, 0);
}

static void test_bulk_reference(void **state) {
    (void)state;
    if (no_gpu()) skip();
    bulk_ref_job j = {0, 0};
    setenv("PTXQ_GEMV_BULK", "1", 1);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, bulk_ref_thread, &j), 0);
    pthread_join(t, NULL);
    unsetenv("PTXQ_GEMV_BULK");
    printf("[ INFO     ] bulk reference: %d cases, %d failed\n", j.cases, j.fails);
    assert_int_equal(j.fails, 0);
}

/* The software-pipelined twins (the "...s" kernels, NVFP4 x NVFP4) on ragged shapes with several
 * trips per warp and a half chunk: y must equal, bit for bit, the plain kernel of the same plan
 * (same arithmetic in the same order), which the other tests check against the reference; for
 * MXFP4 / MXFP8 (no twin) desc.pipelined = 1 must fall back to the plain kernel. */
static void test_pipelined(void **state) {
    (void)state;
    if (no_gpu()) skip();
    ptxq_dev *D = &g_test.dev;
    const int64_t M = 3001, L = 2;
    static const int rs[3] = {1, 2, 4}, ks[4] = {1, 2, 4, 8};
    rng64 rg = {g_test.seed++ * 2 + 1};
    size_t amax = (size_t)(L * M * (8192 + 64)), ybytes = (size_t)(L * M * 4);
    unsigned char *h = malloc(amax);
    float *ref = malloc(ybytes), *got = malloc(ybytes);
    uint64_t a = dev_alloc(D, amax), as = dev_alloc(D, amax / 16), x = dev_alloc(D, (size_t)(L * 8256));
    uint64_t xs = dev_alloc(D, (size_t)(L * 8256 / 16)), y = dev_alloc(D, ybytes);
    int fails = 0, runs = 0;
    for (int f = 0; f < 3; ++f) {
        ptxq_dtype elem, sdt;
        int blk;
        gemv_format_info(k_formats[f], &elem, &sdt, &blk);
        int64_t K = f == 0 ? 8192 + 16 : 8192 + 64;
        int64_t nk = K / blk, xb = L * (f == 0 ? K + 16 : K) * ptxq_dtype_bits(elem) / 8;
        int64_t ab = L * M * (f == 0 ? K + 16 : K) * ptxq_dtype_bits(elem) / 8; /* NVFP4: padded */
        for (int64_t i = 0; i < ab; ++i) {
            unsigned char b = (unsigned char)rng_next(&rg);
            h[i] = elem == PTXQ_E4M3 ? (unsigned char)(b & 0xF7) : b;
        }
        dev_upload(D, a, h, (size_t)ab);
        dev_upload(D, x, h + 4096, (size_t)xb);
        for (int64_t i = 0; i < L * M * nk; ++i)
            h[i] = (unsigned char)(sdt == PTXQ_UE4M3 ? 0x30 + rng_next(&rg) % 9 : 120 + rng_next(&rg) % 9);
        dev_upload(D, as, h, (size_t)(L * M * nk));
        dev_upload(D, xs, h + 1000, (size_t)(L * nk));
        int64_t ash[3] = {L, M, K}, ssh[3] = {L, M, nk}, xsh[2] = {L, K}, xssh[2] = {L, nk}, ysh[2] = {L, M};
        ptxq_tensor A = ptxq_tensor_make(elem, 3, ash, a), AS = ptxq_tensor_make(sdt, 3, ssh, as);
        ptxq_tensor X = ptxq_tensor_make(elem, 2, xsh, x), XS = ptxq_tensor_make(sdt, 2, xssh, xs);
        ptxq_tensor Y = ptxq_tensor_make(PTXQ_F32, 2, ysh, y);
        if (f == 0) { /* NVFP4 with a half chunk: rows padded to a multiple of 16 bytes */
            A.stride[1] = K + 16;
            A.stride[0] = M * (K + 16);
            X.stride[0] = K + 16;
        }
        for (int pl = 0; pl < 12; ++pl)
            for (int pers = -1; pers <= 1; pers += 2) {
                ptxq_gemv_plan pp;
                const ptxq_tensor t[5] = {A, AS, X, XS, Y};
                ++runs;
                if (plan_run(D, k_formats[f], rs[pl / 4], ks[pl % 4], pers, t, y, ybytes, &pp,
                             "pipelined")) {
                    ++fails;
                    continue;
                }
                if (pp.pipelined != (pers > 0 && f == 0)) { /* NVFP4's twins only */
                    print_error("pipelined %s r%d k%d: plan.pipelined %d for desc %d (%s)\n",
                                gemv_format_name(k_formats[f]), rs[pl / 4], ks[pl % 4],
                                pp.pipelined, pers, pp.kernel);
                    ++fails;
                }
                dev_download(D, pers < 0 ? ref : got, y, ybytes);
                if (pers > 0 && memcmp(ref, got, ybytes)) {
                    int64_t i = 0;
                    while (!memcmp(&ref[i], &got[i], sizeof *ref)) ++i;
                    print_error("pipelined %s r%d k%d: y[%lld] %.9g, plain kernel %.9g\n",
                                gemv_format_name(k_formats[f]), rs[pl / 4], ks[pl % 4],
                                (long long)i, got[i], ref[i]);
                    ++fails;
                }
            }
    }
    printf("[ INFO     ] pipelined: %d runs, %d failed\n", runs, fails);
    free(h);
    free(ref);
    free(got);
    dev_free(D, a);
    dev_free(D, as);
    dev_free(D, x);
    dev_free(D, xs);
    dev_free(D, y);
    assert_int_equal(fails, 0);
}

/* Random configurations: the tests above pick their combinations by hand; this one draws them
 * from what ptxq.h accepts (format, x's type, y's type, ragged M, K any multiple of the scale
 * block, batches with own or shared x, padded A rows, each A-scale layout and odd scale bases,
 * per-tensor scales, forced plans: rows a thread, warps along K, the tensor-core kernel and the
 * pipelined and ring twins, launch flags and prefetch depths, now and then a grid of several
 * waves), each checked like the fixed cases (y poisoned twice, every output
 * against the float64 reference, the padding between batches untouched). The draws come from the
 * test seed (printed; PTXQ_TEST_SEED replays them with the same PTXQ_TEST_FILTER, since the tests
 * before take seeds from it too), PTXQ_TEST_RANDOM sets how many (default 60). */

static gemv_case random_case(rng64 *r) {
    static const int rows[3] = {1, 2, 4}, kws[4] = {1, 2, 4, 8};
    gemv_case c;
    memset(&c, 0, sizeof c);
    c.format = k_formats[rng_pick(r, 3)];
    c.x = k_x[rng_pick(r, 3)];
    c.y = k_y[rng_pick(r, 3)];
    const int block = c.format == PTXQ_GEMV_NVFP4 ? 16 : 32;
    const int fp4 = c.format != PTXQ_GEMV_MXFP8;
    c.M = rng_chance(r, 4) ? 1 + rng_pick(r, 40) : 1 + rng_pick(r, 3000);
    c.K = block * (rng_chance(r, 4) ? 1 + rng_pick(r, 16) : 1 + rng_pick(r, 8192 / block));
    c.L = rng_chance(r, 2) ? 1 : 2 + rng_pick(r, 3);
    c.x_shared = c.L > 1 && rng_chance(r, 3);
    c.a_pad = (fp4 ? 32 : 16) * rng_pick(r, 3);
    c.scales = rng_pick(r, 3);
    c.globals = rng_chance(r, 2);
    c.odd_scales = rng_chance(r, 6);
    if (rng_chance(r, 6)) c.scale_offset = 4 * (1 + rng_pick(r, 4));
    if (rng_chance(r, 3)) {
        if (fp4 && c.x && rng_chance(r, 2)) c.rows_per_thread = 16; /* the tensor-core kernel */
        else c.rows_per_thread = rows[rng_pick(r, 3)];
    }
    if (rng_chance(r, 3)) c.k_warps = kws[rng_pick(r, 4)];
    if (rng_chance(r, 4)) c.pipelined = rng_pick(r, 4) - 1; /* -1, 0, 1, 2 */
    if (rng_chance(r, 4)) {
        static const unsigned fl[3] = {PTXQ_GEMV_NO_PDL, PTXQ_GEMV_STATIC_WEIGHTS,
                                       PTXQ_GEMV_INDEPENDENT};
        c.flags = fl[rng_pick(r, 3)];
    }
    if (rng_chance(r, 4)) c.prefetch_trips = rng_chance(r, 2) ? -1 : 1 + rng_pick(r, 4);
    if (rng_chance(r, 10)) { /* past one wave of CTAs, long rows */
        c.M = 4000 + rng_pick(r, 12000);
        c.K = block * (1 + rng_pick(r, 16384 / block));
        c.L = 1;
    }
    return c;
}

/* gputest_random_run's step: draws case i, runs it, prints it; nonzero if it failed */
static int random_one(rng64 *r, int i) {
    gemv_case c = random_case(r);
    gemv_result res;
    printf("[ INFO     ] #%d\n", i);
    return run_case(c, 1, &res, NULL);
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
        cmocka_unit_test(test_validate_good),
        cmocka_unit_test(test_validate_bad),
        cmocka_unit_test(test_plan_layouts),
        cmocka_unit_test(test_plan_sf128_h200),
        cmocka_unit_test(test_plan_tc_ring),
        cmocka_unit_test(test_plan_grid_bound),
        cmocka_unit_test(test_validate_review48),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_sass),
        cmocka_unit_test(test_sass_load_order),
        cmocka_unit_test(test_sass_ring_order),
        cmocka_unit_test(test_all_combinations),
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_every_plan),
        cmocka_unit_test(test_sf128_rows),
        cmocka_unit_test(test_sf128_vec),
        cmocka_unit_test(test_sf128_memo),
        cmocka_unit_test(test_tc_windows),
        cmocka_unit_test(test_tc_ring),
        cmocka_unit_test(test_tc_ring_edges),
        cmocka_unit_test(test_bad_inputs_untouched),
        cmocka_unit_test(test_pdl_chain),
        cmocka_unit_test(test_graph_a_written),
        cmocka_unit_test(test_independent_chain),
        cmocka_unit_test(test_first_wave_prefetch),
        cmocka_unit_test(test_pipelined),
        cmocka_unit_test(test_bulk),
        cmocka_unit_test(test_bulk_reference),
        cmocka_unit_test(test_threads_share_context),
        cmocka_unit_test(test_random_configs),
        cmocka_unit_test(test_big_a),
    };
    test_filter_from_env();
    return cmocka_run_group_tests(tests, setup, teardown);
}
