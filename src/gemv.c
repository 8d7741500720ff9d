/* gemv.c -- block-scaled GEMV: argument checks, the launch plan, the launch.
 *
 * Kernels (gen/gemv.py): gemv_<format>_<x>_r<R>, R rows per thread, one .param struct
 * (ptxq_gemv_args). A CTA is 8 warps: 8/WK row groups x WK warps along K, WK chosen at run time.
 * Everything is checked and the kernel loaded before the single launch, so a failing call writes
 * nothing.
 *
 * The plan (rows per thread R, warps along K WK) is a score over the 12 combinations:
 *   fill   = min(1, CTAs / (SMs * resident CTAs per SM))   enough CTAs to occupy every SM;
 *   tail   = w / (w + 0.25), w = CTAs per resident slot    the last CTAs drain alone for about
 *                                                           a quarter of a CTA's time;
 *   lanes  = 1 - (1 - u) / 2, u = useful chunks / chunks   ragged last trips along K (idle lanes
 *            the warps walk                                 cost issue slots, not bandwidth);
 *   rows   = M / rows the tiles cover                       ragged last tile;
 *   reuse  = 1, 0.8, 0.6 for R = 4, 2, 1 (FP4; 1, 1, 0.9 for FP8): x is loaded and decoded
 *            once per R rows, which matters most where the FP4 decode is the issue bottleneck;
 *   trips  = t / (t + 0.5), t = trips per warp             fixed cost of a warp's setup and
 *                                                           reduction (FP4 x FP4 on sm_90a:
 *                                                           see score_plan).
 * Resident CTAs per SM come from the kernel's register count (ptxas -v, in the registry).
 * FP4 A with BF16/F16 x on sm_90a takes the tensor-core kernel ("_tc", rows 16: 16 rows a warp)
 * wherever it exists (choose_plan tries it first), with WK by fill, tail and windows per warp:
 * measured ahead of the CUDA-core r4 plans on every bench shape (H100 and H200, 2026-11-25: F16
 * x 4-15 points of copy, BF16 x 0-10).
 * The constants were fitted to an H200 sweep of every plan on the benchmark shapes (bench gemv
 * --sweep, FP4 x in A's format): the pick is within 2 points of %copy of the best plan on each
 * of them, for all three formats; the FP4 x FP4 sm_90a terms to later H100 sweeps.
 * desc.rows_per_thread / desc.k_warps fix either choice; ptxq_gemv_plan_for() shows the result.
 *
 * Launch: with programmatic dependent launch (cuLaunchKernelEx, programmatic stream
 * serialization) unless desc.flags has PTXQ_GEMV_NO_PDL or the driver lacks cuLaunchKernelEx;
 * the kernels wait (griddepcontrol.wait) before their first load, so this is safe after any
 * kernel. Measured on an H200 against plain launches: +1.5 to +6.5 points of %copy on the
 * hackathon shapes (the next kernel's CTAs are resident and set up when the previous one ends).
 * NVFP4 x NVFP4 takes its software-pipelined twin and its bulk-copy ring only when asked
 * (pipe_auto, bulk_auto), the tensor-core kernels their cp.async ring twins where warps walk
 * >= 4 windows (BF16 x on >= 4 TB/s GPUs: 8; below 4 TB/s on grids past one wave:
 * pick_tc_ring), and every format with x in A's format a 1-trip L2 prefetch up to 8 waves
 * (prefetch_depth): each was measured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemv_args.h"
#include "internal.h"

typedef struct gemv_shape {
    int fmt, xk;           /* indices: format (0 nvfp4, 1 mxfp4, 2 mxfp8), x (0 same 1 bf16 2 f16) */
    int block;
    int64_t M, K, L, nk, nch;
    ptxq_gemv_args args;
} gemv_shape;

static const char *const k_fmt_names[3] = {"nvfp4", "mxfp4", "mxfp8"};
static const char *const k_x_names[3] = {NULL, "bf16", "f16"};

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t sf128_bytes(int64_t rows, int64_t nk) {
    return ceil_div(rows, 128) * ceil_div(nk, 4) * 512;
}

/* bytes of n elements of dtype t (E2M1: n must be even, checked by the caller) */
static int64_t elem_bytes(ptxq_dtype t, int64_t n) {
    return n * ptxq_dtype_bits(t) / 8;
}

/* A byte stride from an element stride of a 16-byte-accessed dimension. */
static int pitch16(const ptxq_tensor *t, int dim, const char *what, uint64_t *out) {
    int64_t s = t->stride[dim];
    /* a dimension of size 1 never steps: its stride is neither checked nor multiplied (a review
     * found odd E2M1 strides refused there, against ptxq.h, and huge ones overflowing) */
    if (t->shape[dim] <= 1) {
        *out = 0;
        return PTXQ_OK;
    }
    /* a stride of 2^48 or more passes ptxq_check_tensor only in an empty tensor, whose strides
     * address nothing (found by review: its byte stride overflowed, UBSan) */
    if (s >= (int64_t)1 << 48) {
        *out = 0;
        return PTXQ_OK;
    }
    if (t->dtype == PTXQ_E2M1 && s % 2)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemv: %s.stride[%d] = %lld elements is odd (E2M1 "
                         "packs two per byte)", what, dim, (long long)s);
    int64_t b = elem_bytes(t->dtype, s);
    if (b % 16)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemv: %s.stride[%d] = %lld elements is %lld bytes, not "
                         "a multiple of 16 (rows are read with 16-byte loads)", what, dim,
                         (long long)s, (long long)b);
    *out = (uint64_t)b;
    return PTXQ_OK;
}

static int check_x_batch(const ptxq_tensor *t, int64_t L, const char *what) {
    if (t->rank == 2 && t->shape[0] != 1 && t->shape[0] != L)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemv: %s.shape[0] = %lld; 1 or L = %lld expected", what,
                         (long long)t->shape[0], (long long)L);
    return PTXQ_OK;
}

static int plan_shape(const ptxq_gemv_desc *d, const ptxq_tensor *a, const ptxq_tensor *as,
                      const ptxq_tensor *x, const ptxq_tensor *xs, const ptxq_tensor *y,
                      gemv_shape *s) {
    memset(s, 0, sizeof *s);
    if (!d) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: desc is NULL");
    ptxq_dtype elem, sdt;
    switch (d->format) {
    case PTXQ_GEMV_NVFP4: s->fmt = 0; elem = PTXQ_E2M1; sdt = PTXQ_UE4M3; s->block = 16; break;
    case PTXQ_GEMV_MXFP4: s->fmt = 1; elem = PTXQ_E2M1; sdt = PTXQ_UE8M0; s->block = 32; break;
    case PTXQ_GEMV_MXFP8: s->fmt = 2; elem = PTXQ_E4M3; sdt = PTXQ_UE8M0; s->block = 32; break;
    default:
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: unknown format %d", (int)d->format);
    }
    const char *fname = k_fmt_names[s->fmt];
    int st;
    if ((st = ptxq_check_tensor(a, "gemv: a", 1))) return st;
    if ((st = ptxq_check_tensor(as, "gemv: a_scale", 1))) return st;
    if ((st = ptxq_check_tensor(x, "gemv: x", 1))) return st;
    if ((st = ptxq_check_tensor(y, "gemv: y", 1))) return st;
    if (d->rows_per_thread != 0 && d->rows_per_thread != 1 && d->rows_per_thread != 2 &&
        d->rows_per_thread != 4 && d->rows_per_thread != 16)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: rows_per_thread %d; 0 (auto), 1, 2, 4 "
                         "or 16 (the tensor-core kernel)", d->rows_per_thread);
    if (d->k_warps != 0 && d->k_warps != 1 && d->k_warps != 2 && d->k_warps != 4 && d->k_warps != 8)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: k_warps %d; 0 (auto), 1, 2, 4 or 8",
                         d->k_warps);
    if (d->flags & ~(PTXQ_GEMV_NO_PDL | PTXQ_GEMV_STATIC_WEIGHTS | PTXQ_GEMV_INDEPENDENT))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: unknown flags 0x%x (PTXQ_GEMV_NO_PDL, "
                         "PTXQ_GEMV_STATIC_WEIGHTS, PTXQ_GEMV_INDEPENDENT)", d->flags);
    if (d->prefetch_trips < -1 || d->prefetch_trips > 64)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: prefetch_trips %d; 0 (auto), -1 (none) or "
                         "1..64", d->prefetch_trips);
    if (d->pipelined < -1 || d->pipelined > 2)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: pipelined %d; 0 (auto), 1, 2 or -1",
                         d->pipelined);
    if (d->a_global % 4 || d->x_global % 4)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemv: a_global / x_global must be 4-byte aligned");

    /* A */
    if (a->dtype != elem)
        return ptxq_fail(PTXQ_ERR_DTYPE, "gemv: a is %s; %s takes %s", ptxq_dtype_name(a->dtype),
                         fname, ptxq_dtype_name(elem));
    if (a->rank != 2 && a->rank != 3)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemv: a has rank %d; [M, K] or [L, M, K] expected", a->rank);
    int ra = a->rank;
    s->L = ra == 3 ? a->shape[0] : 1;
    s->M = a->shape[ra - 2];
    s->K = a->shape[ra - 1];
    if (s->K % s->block)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemv: K = %lld is not a multiple of the %s scale block (%d)",
                         (long long)s->K, fname, s->block);
    s->nk = s->K / s->block;
    /* sizes the kernel counts in 32 bits, checked before any product of them; and a bound on
     * the grid every plan satisfies (L * row tiles <= L * (M + 128): tiles of whole 32 * R-row
     * blocks add at most 128 rows), so that ptxq_gemv_validate, which has no plan, agrees with
     * ptxq_gemv (a review found validate accepting a grid the plan then refused) */
    int64_t row_bytes = elem_bytes(elem, s->K);
    s->nch = ceil_div(row_bytes, 16);
    if (s->M > 0x7FFFFFFFll || s->L > 0x7FFFFFFFll)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemv: M = %lld, L = %lld; each below 2^31 (one launch)",
                         (long long)s->M, (long long)s->L);
    if (s->nch > 0x7FFFFFF0ll)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemv: K = %lld is %lld bytes a row; at most 16 * (2^31 - "
                         "16) (the kernels count 16-byte chunks in 32 bits)", (long long)s->K,
                         (long long)row_bytes);
    if (s->M > 0 && s->L * (s->M + 128) > 0x7FFFFFFFll)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemv: L * (M + 128) = %lld exceeds 2^31 - 1 (the grid)",
                         (long long)(s->L * (s->M + 128)));
    if (a->stride[ra - 1] != 1)
        return ptxq_fail(PTXQ_ERR_STRIDE, "gemv: a's innermost stride is %lld; 1 expected",
                         (long long)a->stride[ra - 1]);
    ptxq_gemv_args *g = &s->args;
    if ((st = pitch16(a, ra - 2, "a", &g->a_m))) return st;
    if (ra == 3 && (st = pitch16(a, 0, "a", &g->a_l))) return st;
    if (a->data % 16)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemv: a data 0x%llx is not 16-byte aligned",
                         (unsigned long long)a->data);

    /* x and its scales */
    int quant_x = x->dtype == elem;
    if (!quant_x && x->dtype != PTXQ_BF16 && x->dtype != PTXQ_F16)
        return ptxq_fail(PTXQ_ERR_DTYPE, "gemv: x is %s; %s A takes x in %s (with scales), BF16 or F16",
                         ptxq_dtype_name(x->dtype), fname, ptxq_dtype_name(elem));
    s->xk = quant_x ? 0 : x->dtype == PTXQ_BF16 ? 1 : 2;
    if (d->rows_per_thread == 16 && (s->fmt == 2 || quant_x))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: rows_per_thread 16 (the tensor-core "
                         "kernel) takes FP4 A (NVFP4, MXFP4) with BF16 or F16 x; this call has "
                         "%s A with x in %s", fname, ptxq_dtype_name(x->dtype));
    if (x->rank != 1 && x->rank != 2)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemv: x has rank %d; [K] or [L, K] expected", x->rank);
    if (x->shape[x->rank - 1] != s->K)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemv: x has K = %lld, a has K = %lld",
                         (long long)x->shape[x->rank - 1], (long long)s->K);
    if ((st = check_x_batch(x, s->L, "x"))) return st;
    if (x->stride[x->rank - 1] != 1)
        return ptxq_fail(PTXQ_ERR_STRIDE, "gemv: x's innermost stride is %lld; 1 expected",
                         (long long)x->stride[x->rank - 1]);
    if (x->rank == 2 && (st = pitch16(x, 0, "x", &g->x_l))) return st;
    if (x->data % 16)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemv: x data 0x%llx is not 16-byte aligned",
                         (unsigned long long)x->data);
    if (quant_x && !xs)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: x is %s: x_scale is required",
                         ptxq_dtype_name(x->dtype));
    if (!quant_x && xs)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: x is %s: x_scale must be NULL",
                         ptxq_dtype_name(x->dtype));
    if (!quant_x && d->x_global)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: x_global is for quantized x only");
    if (quant_x) {
        if ((st = ptxq_check_tensor(xs, "gemv: x_scale", 1))) return st;
        if (xs->dtype != sdt)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemv: x_scale is %s; %s uses %s",
                             ptxq_dtype_name(xs->dtype), fname, ptxq_dtype_name(sdt));
        if (xs->rank != x->rank || xs->shape[xs->rank - 1] != s->nk ||
            (xs->rank == 2 && xs->shape[0] != x->shape[0]))
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemv: x_scale must be shaped like x with K / %d "
                             "= %lld scales along K", s->block, (long long)s->nk);
        g->xs_l = xs->rank == 2 && xs->shape[0] > 1 ? (uint64_t)xs->stride[0] : 0;
        /* (a division, not nk * stride: an empty x_scale's stride is unbounded; found by review) */
        int64_t xks = xs->stride[xs->rank - 1];
        if (xks > 0xFFFFFFFFll || (xks > 0 && s->nk > 0xFFFFFFFFll / xks))
            return ptxq_fail(PTXQ_ERR_STRIDE, "gemv: x_scale's K stride is too large");
        g->xs_k = (uint32_t)xs->stride[xs->rank - 1];
        g->xs = xs->data;
    }

    /* A scales */
    if (as->dtype != sdt)
        return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemv: a_scale is %s; %s uses %s",
                         ptxq_dtype_name(as->dtype), fname, ptxq_dtype_name(sdt));
    if (d->a_scale_layout == PTXQ_SCALE_128x4) {
        /* L = 0: A has no elements, so nothing bounds M * K (a review found the product
         * overflowing); no bytes are needed then */
        int64_t per = s->L > 0 ? sf128_bytes(s->M, s->nk) : 0;
        if (as->rank != 1 || as->stride[0] != 1 || as->shape[0] < per * s->L)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemv: 128x4 scales need a contiguous rank-1 "
                             "tensor of at least L * %lld = %lld bytes", (long long)per,
                             (long long)(per * s->L));
        g->as_l = (uint64_t)per;
        g->kb4 = (uint32_t)ceil_div(s->nk, 4);
        g->ksh = 2;
        g->kmul = 512;
        g->kmsk = 3;
        g->ks1 = 1;
        g->flags |= PTXQ_GEMV_FLAG_SF128x4;
        if (per > 0xFFFFFFFFll)
            return ptxq_fail(PTXQ_ERR_SHAPE, "gemv: the 128x4 scales of one batch exceed 4 GiB");
    } else if (d->a_scale_layout == PTXQ_SCALE_STRIDED) {
        if (as->rank != ra)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemv: a_scale has rank %d, a has rank %d",
                             as->rank, ra);
        for (int i = 0; i < ra - 1; ++i)
            if (as->shape[i] != a->shape[i])
                return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemv: a_scale.shape[%d] = %lld != a.shape[%d] "
                                 "= %lld", i, (long long)as->shape[i], i, (long long)a->shape[i]);
        if (as->shape[ra - 1] != s->nk)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemv: a_scale.shape[%d] = %lld; K / %d = %lld "
                             "expected", ra - 1, (long long)as->shape[ra - 1], s->block,
                             (long long)s->nk);
        int64_t ks = as->stride[ra - 1];
        if (ks > 0xFFFFFFFFll || (ks > 0 && s->nk > 0xFFFFFFFFll / ks)) /* nk * ks, unbounded where empty */
            return ptxq_fail(PTXQ_ERR_STRIDE, "gemv: a_scale's K stride %lld is too large (offsets "
                             "along K must stay below 4 GiB)", (long long)ks);
        /* a size-1 dimension's stride is never used: 0, so that it does not turn off the
         * even-pitch and aligned fast paths below (found by review) */
        g->as_m = s->M > 1 ? (uint64_t)as->stride[ra - 2] : 0;
        g->as_l = ra == 3 && s->L > 1 ? (uint64_t)as->stride[0] : 0;
        g->kmul = g->ks1 = (uint32_t)ks;
    } else {
        return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemv: unknown a_scale_layout %d",
                         (int)d->a_scale_layout);
    }

    /* y */
    if (y->dtype != PTXQ_F32 && y->dtype != PTXQ_F16 && y->dtype != PTXQ_BF16)
        return ptxq_fail(PTXQ_ERR_DTYPE, "gemv: y is %s; F32, F16 or BF16 expected",
                         ptxq_dtype_name(y->dtype));
    if (!(y->rank == 2 || (y->rank == 1 && s->L == 1)))
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemv: y has rank %d; [L, M] (or [M] when L = 1) expected",
                         y->rank);
    if (y->shape[y->rank - 1] != s->M || (y->rank == 2 && y->shape[0] != s->L))
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemv: y must be [L, M] = [%lld, %lld]", (long long)s->L,
                         (long long)s->M);
    /* two outputs at one address would race (found by review: y of stride 0 was accepted) */
    int yst = ptxq_check_disjoint(y, "gemv: y");
    if (yst) return yst;
    int ysz = ptxq_dtype_bits(y->dtype) / 8;
    if (y->data % (uint64_t)ysz)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemv: y data is not %d-byte aligned", ysz);
    /* an empty y (M = 0 or L = 0) enqueues nothing and its strides are unbounded (found by review,
     * UBSan) */
    int yempty = s->M == 0 || s->L == 0;
    g->y_m = s->M > 1 && !yempty ? (uint64_t)(y->stride[y->rank - 1] * ysz) : 0;
    g->y_l = y->rank == 2 && s->L > 1 && !yempty ? (uint64_t)(y->stride[0] * ysz) : 0;
    /* y apart from everything the call reads (found by review: y inside x or a scale passed, and
     * raced with the reads) */
    /* (rows that interleave are apart: x and y in one [L, K + M] buffer; 128x4 scales count the
     * L * S bytes read, not a larger declared size) */
    size_t yb = ptxq_tensor_bytes(y);
    ptxq_tensor as_read = *as;
    if (d->a_scale_layout == PTXQ_SCALE_128x4) as_read.shape[0] = (int64_t)g->as_l * s->L;
    if (ptxq_tensors_overlap(y, a) || ptxq_tensors_overlap(y, &as_read) ||
        ptxq_tensors_overlap(y, x) || (xs && ptxq_tensors_overlap(y, xs)) ||
        (d->a_global && ptxq_bytes_overlap(y->data, yb, d->a_global, 4)) ||
        (d->x_global && ptxq_bytes_overlap(y->data, yb, d->x_global, 4)))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: y overlaps a, x, a scale or a per-tensor "
                         "scale");
    g->flags |= y->dtype == PTXQ_F32 ? PTXQ_GEMV_Y_F32 : y->dtype == PTXQ_F16 ? PTXQ_GEMV_Y_F16
                                                                               : PTXQ_GEMV_Y_BF16;

    g->a = a->data;
    g->as = as->data;
    g->x = x->data;
    g->y = y->data;
    g->ga = d->a_global;
    g->gx = d->x_global;
    /* NVFP4: each chunk's two scale bytes, A's and (x in NVFP4 too) x's, are one aligned u16
     * (the kernels' fast loop loads them so); otherwise every warp takes the loop with two byte
     * loads */
    if (s->fmt == 0 && g->ks1 == 1 && (g->as | g->as_m | g->as_l) % 2 == 0 &&
        (s->xk != 0 || (g->xs_k == 1 && (g->xs | g->xs_l) % 2 == 0)))
        g->flags |= PTXQ_GEMV_FLAG_SPAIR;
    if (d->a_global) g->flags |= PTXQ_GEMV_FLAG_GA;
    if (d->x_global) g->flags |= PTXQ_GEMV_FLAG_GX;
    g->m = (uint32_t)s->M;
    g->nch = (uint32_t)s->nch;
    g->nfull = (uint32_t)(row_bytes / 16);
    g->unit = 1;
    return PTXQ_OK;
}

ptxq_status ptxq_gemv_validate(const ptxq_gemv_desc *d, const ptxq_tensor *a,
                               const ptxq_tensor *a_scale, const ptxq_tensor *x,
                               const ptxq_tensor *x_scale, const ptxq_tensor *y) {
    gemv_shape s;
    int st = plan_shape(d, a, a_scale, x, x_scale, y, &s);
    if (st) return (ptxq_status)st;
    return (ptxq_status)ptxq_ok();
}

/* rows 16: the tensor-core kernel (a warp owns 16 rows; gen/gemv.py, class TC) */
static void kernel_name(const gemv_shape *s, int rows, char *buf, size_t n) {
    const char *xn = s->xk ? k_x_names[s->xk] : k_fmt_names[s->fmt];
    if (rows == 16)
        snprintf(buf, n, "gemv_%s_%s_tc", k_fmt_names[s->fmt], xn);
    else
        snprintf(buf, n, "gemv_%s_%s_r%d", k_fmt_names[s->fmt], xn, rows);
}

/* With 128x4 A scales the plain kernels' R = 2 or 4 rows of a thread lie 32 apart (FLAG_RI32;
 * gen/gemv.py, ri_row): the 128x4 layout keeps rows m, m + 32, m + 64, m + 96 of four K blocks in
 * one 16-byte run, so a warp's scale loads touch a quarter of the sectors that rows m .. m + 3
 * (each in its own run, 16 bytes apart) do. A thread's rows step by 32 pitches (args.a_m), and the
 * grid covers whole blocks of 32 R rows. H200, 2026-11-27, x in A's format, % of the copy, 128x4
 * scales with consecutive rows: NVFP4 52-83, MXFP4 68-109, MXFP8 86-116, against 79-116 with
 * row-major scales (bench/RESULTS.md, thirty-fourth session). */
static int rows_interleaved(const gemv_shape *s, int rows) {
    return (s->args.flags & PTXQ_GEMV_FLAG_SF128x4) && (rows == 2 || rows == 4);
}

static int64_t plan_tiles(const gemv_shape *s, int rows, int rows_per_cta) {
    if (rows_interleaved(s, rows))
        return ceil_div(s->M, 32 * rows) * (32 * rows / rows_per_cta);
    return ceil_div(s->M, rows_per_cta);
}

/* The tiles of plan_tiles that own a row below M: with rows 32 apart, tile j of the last 32 R-row
 * block owns rows from base + j * (rows_per_cta / R) on, so those past M own none (they exit at
 * once; the score must not count them as filling the GPU: a review found M = 1 with 128x4 scales
 * choosing 32 CTAs a batch, 31 empty). */
static int64_t plan_tiles_used(const gemv_shape *s, int rows, int rows_per_cta) {
    if (!rows_interleaved(s, rows)) return plan_tiles(s, rows, rows_per_cta);
    int64_t blk = 32 * (int64_t)rows, per = blk / rows_per_cta, g = rows_per_cta / rows;
    int64_t rem = s->M % blk, last = ceil_div(rem, g);
    return s->M / blk * per + (last < per ? last : per);
}

/* The plan's kernel is entry e (its name already in p->kernel): its registers and CTAs a SM. */
static void use_entry(ptxq_gemv_plan *p, const ptxq_kernel_entry *e) {
    p->registers = e->registers;
    int regs = e->registers > 0 ? (e->registers + 7) / 8 * 8 : 64;
    int cps = 65536 / (PTXQ_GEMV_THREADS * regs);
    p->ctas_per_sm = cps < 1 ? 1 : cps > 2048 / PTXQ_GEMV_THREADS ? 2048 / PTXQ_GEMV_THREADS : cps;
}

/* Fills *p for (rows, wk); returns its score (0 if the kernel is missing). */
static double score_plan(const gemv_shape *s, const char *target, int sms, int dram, int rows,
                         int wk,
                         ptxq_gemv_plan *p) {
    memset(p, 0, sizeof *p);
    kernel_name(s, rows, p->kernel, sizeof p->kernel);
    const ptxq_kernel_entry *e = ptxq_entry_find(p->kernel, target);
    if (!e) return 0.0;
    p->rows_per_thread = rows;
    p->k_warps = wk;
    p->rows_per_cta = PTXQ_GEMV_WARPS / wk * rows;
    p->threads = PTXQ_GEMV_THREADS;
    use_entry(p, e);
    int64_t tiles = plan_tiles(s, rows, p->rows_per_cta);
    int64_t ctas = s->L * tiles;
    p->grid = (unsigned)(ctas > 0x7FFFFFFFll ? 0x7FFFFFFFll : ctas);
    tiles = plan_tiles_used(s, rows, p->rows_per_cta); /* the score counts CTAs with rows */
    ctas = s->L * tiles;
    double slots = (double)sms * p->ctas_per_sm;
    double fill = ctas / slots < 1.0 ? ctas / slots : 1.0;
    double w = ctas / slots;
    double tail = w / (w + 0.25);
    /* M = 0: 1, not 0 / 0 (a NaN scored no plan, and the empty call that ptxq.h promises to
     * accept failed with PTXQ_ERR_NOT_FOUND; found by review) */
    double rows_eff = s->M > 0 ? (double)s->M / (double)(tiles * p->rows_per_cta) : 1.0;
    if (rows == 16) {
        /* the tensor-core kernel: a warp walks windows of 4 chunks; each extra window counts */
        int64_t win = ceil_div(s->nch, 4 * wk);
        double tw = (double)(win > 0 ? win : 1);
        return fill * tail * rows_eff * tw / (tw + 1.0);
    }
    int64_t trips = ceil_div(s->nch, 32 * wk);
    double lanes = trips > 0 ? (double)s->nch / (double)(trips * 32 * wk) : 1.0;
    lanes = 1.0 - 0.5 * (1.0 - lanes); /* idle lanes cost issue slots, not DRAM bandwidth */
    static const double reuse_fp4[5] = {0, 0.6, 0.8, 0, 1.0}, reuse_fp8[5] = {0, 0.9, 1.0, 0, 1.0};
    double reuse = s->fmt < 2 ? reuse_fp4[rows] : reuse_fp8[rows];
    double t = (double)(trips > 0 ? trips : 1);
    /* MXFP8 on sm_90a (any x) at 4 TB/s of DRAM or more (H200): 4 rows a thread over 2 (0.95
     * for r2), and each extra trip counts twice as much (t / (t + 1)). The H200 sweeps of
     * 2026-11-26 (bench gemv --sweep --prefetch 1, x MXFP8 and BF16; RESULTS.md, eighteenth
     * session) put r4 ahead of r2 at equal k-warps on every row measured (1.1-4.6%); this picks
     * r4 k4 / k1 / k1 / k2 on (7168,16384,1) / (4096,7168,8) / (7168,2048,4) / (16384,16384,4),
     * the sweeps' best rows on the hackathon shapes. On the H100 the same preference picked r4 k2
     * for 16384 x 16384 x 4 (2.7% slower than r2 k2; the best there, k8, 2.5% faster) and lost
     * 1-3% on two shapes with independent calls, so below 4 TB/s the rule is unchanged. */
    int fp8 = s->fmt == 2 && !strcmp(target, "sm_90a") && dram >= 4000;
    if (fp8 && rows == 2) reuse = 0.95;
    /* FP4 x FP4 on sm_90a (the dp4a kernels, whose fast loop issues a trip's loads first):
     * - below 4 TB/s of DRAM (H100) 2 trips a warp are as good as more, and more CTAs shorten
     *   the last wave: the H100 sweeps (bench gemv --sweep, RESULTS.md) have their best plan at
     *   the largest k-warps with 2 trips on the four default shapes, or within 1.1% of it;
     * - at 4 TB/s or more (H200) each extra trip still counts, as elsewhere: the H200 sweep of
     *   the plain kernels put r4 k2 / k4 (4-8 trips) 2.6-5.2% ahead of r4 k8 (2 trips) on the
     *   two K = 16384 shapes;
     * - since WK = 1 plans finish their rows without shared memory or bar.sync, WK > 1 pays for
     *   its cross-warp reduction (0.96): the H100 sweeps put r4 k1 3% ahead of r4 k4 on 4096 x
     *   7168 x 8 (both FP4 formats; the H200 8-13%), and r4 k8 7% ahead of r4 k1 on 16384 x
     *   16384 x 4 (the factor must stay within 0.947 and 0.976 to pick both).
     * Elsewhere (other formats, other targets) each extra trip counts and WK > 1 is not charged:
     * the same factor would pick MXFP8 k1 plans that measured 6.5% slower. */
    int fp4 = s->fmt < 2 && s->xk == 0 && !strcmp(target, "sm_90a");
    double tf = fp4 && dram < 4000 ? (trips >= 2 ? 1.0 : 0.85)
                : fp8 ? t / (t + 1.0) : t / (t + 0.5);
    if (fp4 && wk > 1) tf *= 0.96;
    /* NVFP4 x NVFP4 with 128x4 scales (rows 32 apart) at 4 TB/s or more: CTAs of fewer than 16
     * rows (0.7). H200, 2026-11-27, % of the copy, (7168,16384,1), the "...v" twins as built
     * (their L2 prefetch takes row 0's scale run only): r4 k2 83.9-84.3 as chosen (sweep 85.5),
     * r4 k4 82.1-82.3 forced (sweep 82.5), r4 k8 81.0, r4 k1 77.3 (bench gemv --scales 128x4
     * --sweep, one round; the default plans two); before that prefetch fix r4 k2 79.6-80.2,
     * r4 k4 70.4-71.5 (the choice before the rule), r2 k2 66.5-66.7, r4 k8 64.6-64.8. Row-major
     * scales have r4 k4 best (88.8-89.7 as chosen). The three other bench shapes keep r4 k1.
     * Why small CTAs lose with these scales and not with row-major ones was not measured (16
     * rows are 4 of the 8 rows of a 128-byte line of the layout a K block). A scale base the
     * twins cannot take (not 4R-byte aligned) gets the same plan with the plain kernel (not
     * measured). */
    if (fp4 && s->fmt == 0 && dram >= 4000 && p->rows_per_cta < 16 && rows_interleaved(s, rows))
        tf *= 0.7;
    return fill * tail * lanes * rows_eff * reuse * tf;
}

static int choose_plan(const gemv_shape *s, const ptxq_gemv_desc *d, const char *target, int sms,
                       int dram, ptxq_gemv_plan *best) {
    static const int rows_opts[4] = {16, 4, 2, 1}, wk_opts[4] = {1, 2, 4, 8};
    double best_score = -1.0;
    for (int i = 0; i < 4; ++i) {
        if (d->rows_per_thread && d->rows_per_thread != rows_opts[i]) continue;
        /* the tensor-core kernels are measured on sm_90a only: elsewhere only when asked */
        if (rows_opts[i] == 16 && !d->rows_per_thread && strcmp(target, "sm_90a")) continue;
        for (int j = 0; j < 4; ++j) {
            if (d->k_warps && d->k_warps != wk_opts[j]) continue;
            ptxq_gemv_plan p;
            double sc = score_plan(s, target, sms, dram, rows_opts[i], wk_opts[j], &p);
            if (p.rows_per_thread && sc > best_score * 1.0001) {
                best_score = sc;
                *best = p;
            }
        }
        /* the tensor-core kernels (tried first) win wherever they exist, as measured */
        if (rows_opts[i] == 16 && best_score > 0.0) break;
    }
    if (best_score < 0.0) {
        char name[48];
        kernel_name(s, d->rows_per_thread ? d->rows_per_thread : 4, name, sizeof name);
        return ptxq_fail(PTXQ_ERR_NOT_FOUND, "gemv: no kernel '%s' for %s in this build", name, target);
    }
    return PTXQ_OK;
}

/* Whether the automatic choice takes the software-pipelined twin (NVFP4 x NVFP4 only): never.
 * It used to where a warp makes >= 4 trips on >= 4 TB/s DRAM (+1 to +2 points on an H200 on
 * 2026-11-22), but the plain kernel has since gained its fast loop and the WK = 1 reduction:
 * on an H200 on 2026-11-24 (bench gemv --pipelined -1,1, two rounds) the plain kernel was 4-7%
 * faster on every plan with >= 4 trips measured (4096 x 7168 x 8 r4 k1 33.5-33.7 against
 * 35.7-35.9 us, r4 k2; 7168 x 16384 x 1 r4 k2, k4; 16384 x 16384 x 4 r4 k2, k4), and on the H100
 * it had lost since it was built. desc.pipelined = 1 still asks for it. PTXQ_GEMV_PIPE=1 makes
 * it the automatic choice (experiments). */
static int pipe_auto(void) {
    static _Thread_local int env = -2;
    if (env == -2) {
        const char *e = getenv("PTXQ_GEMV_PIPE");
        env = e && *e ? atoi(e) : -1;
    }
    return env > 0;
}

/* Whether the bulk-copy ring kernel ("...b", NVFP4 x NVFP4) can run this shape: its 1-D bulk
 * copies need 16-byte aligned sources and sizes, so K % 256 == 0 (a stage's scale bytes are a
 * multiple of 16), strided A scales with K stride 1, and 16-byte aligned A and scale rows and
 * batches. */
static int bulk_ok(const gemv_shape *s) {
    const ptxq_gemv_args *g = &s->args;
    return s->fmt == 0 && s->xk == 0 && s->K % 256 == 0 && !(g->flags & PTXQ_GEMV_FLAG_SF128x4) &&
           g->kmul == 1 && g->ks1 == 1 && g->a % 16 == 0 && g->a_m % 16 == 0 && g->a_l % 16 == 0 &&
           g->as % 16 == 0 && g->as_m % 16 == 0 && g->as_l % 16 == 0;
}

/* The automatic choice of the bulk-copy ring kernel: never since the plain kernels' fast loop
 * (gen/gemv.py, "two copies of the loops"). Measured on an H100 with PTXQ_GEMV_STATIC_WEIGHTS
 * (bench gemv --pdl early --pipelined -1,2, the ring's best case: its first stages fill before
 * the PDL wait): plain 91.0 / 97.5 / 79.6 / 106.7% of copy, ring 90.4 / 91.6 / 80.7 / 101.3% on
 * the four bench shapes; before, the ring had won by 0.5 to 6.8 points. desc.pipelined = 2 still
 * asks for it; PTXQ_GEMV_BULK=1 makes it the automatic choice wherever the shape allows it
 * (experiments and tests, read once per thread). */
static int bulk_auto(void) {
    static _Thread_local int env = -2;
    if (env == -2) {
        const char *e = getenv("PTXQ_GEMV_BULK");
        env = e && *e ? atoi(e) : -1;
    }
    return env > 0;
}

/* Swaps plan p's kernel for its twin, p->kernel with suffix appended, where this build has one for
 * target (the twin's register count then sets the occupancy): 1 if swapped. */
static int use_twin(ptxq_gemv_plan *p, const char *target, const char *suffix) {
    char name[sizeof p->kernel + 2];
    snprintf(name, sizeof name, "%s%s", p->kernel, suffix);
    const ptxq_kernel_entry *e =
        strlen(name) < sizeof p->kernel ? ptxq_entry_find(name, target) : NULL;
    if (!e) return 0;
    memcpy(p->kernel, name, sizeof p->kernel);
    use_entry(p, e);
    return 1;
}

/* Swaps in the software-pipelined twin ("...s") or the bulk-copy ring kernel ("...b"), NVFP4 x
 * NVFP4 only, where asked or chosen. desc.pipelined = 2 asks for the ring kernel; where the shape
 * does not allow it (bulk_ok) the automatic choice is made instead. */
static void pick_twin(const gemv_shape *s, const ptxq_gemv_desc *d, const char *target,
                      ptxq_gemv_plan *p) {
    p->pipelined = 0;
    /* the twins differ from the plain kernel on sm_90a only (gen/gemv.py); elsewhere the plan
     * stays the plain one, with its prefetch (found by review: it reported them) */
    if (s->fmt != 0 || s->xk != 0 || strcmp(target, "sm_90a") != 0) return;
    int bulk = bulk_ok(s) && (d->pipelined == 2 || (d->pipelined == 0 && bulk_auto()));
    if (!bulk && !(d->pipelined == 1 || ((d->pipelined == 0 || d->pipelined == 2) &&
                                         pipe_auto())))
        return;
    if (use_twin(p, target, bulk ? "b" : "s")) p->pipelined = bulk ? 2 : 1;
}

/* Whether the tensor-core kernel's cp.async ring twin ("..._tcr", gen/gemv.py TC_RING) can run
 * this call: each lane copies 4 bytes of a row's scale run, so A's scales must be contiguous along
 * K (K stride 1, or the 128x4 layout, whose 4-scale groups are 4-byte words) with 4-byte aligned
 * base, rows and batches. A and x are 16-byte aligned already (plan_shape). */
static int tc_ring_ok(const gemv_shape *s) {
    const ptxq_gemv_args *g = &s->args;
    if (s->xk == 0 || s->fmt == 2) return 0;
    if (g->flags & PTXQ_GEMV_FLAG_SF128x4) return g->as % 4 == 0 && g->as_l % 4 == 0;
    return g->ks1 == 1 && g->as % 4 == 0 && g->as_m % 4 == 0 && g->as_l % 4 == 0;
}

/* Resident CTAs on the whole GPU for plan p: one wave of its grid. (pick_tc_ring reads it with
 * the plain tensor-core kernel's occupancy; its twins have the same, 4 CTAs a SM at 64
 * registers, shared memory included: 23-34 KB a CTA.) */
static int64_t wave_ctas(const ptxq_gemv_plan *p, int sms) {
    return (int64_t)(sms > 0 ? sms : 1) * (p->ctas_per_sm > 0 ? p->ctas_per_sm : 1);
}

/* The tensor-core plans (rows 16) take the ring twin where tc_ring_ok allows it and asked
 * (desc.pipelined = 2) or chosen (desc.pipelined = 0), where a warp walks at least 4 whole
 * windows (8 with BF16 x at 4 TB/s of DRAM or more) and, below 4 TB/s, the grid is more than
 * one wave. % of the copy, against the plain kernels in one process, one to four rounds
 * (bench/RESULTS.md, thirty-eighth and thirty-ninth sessions):
 * - H200, waiting: +0.6 to +6.2 points on (16384,16384,4), (4096,7168,8) and (7168,16384,1)
 *   (14-16 windows a warp), independent +1.3 to +7.5 (BF16 x, and F16 x with its cvt decode);
 *   with F16 x decoded by bit moves +1.75 to +10.1 there but MXFP4 (7168,16384,1) -0.75 to
 *   -1.1 (+14 independent); on (7168,2048,4) (4 a warp) F16 x +0.2 to +3.0 (independent +4.0
 *   to +6.3), BF16 x over three rounds NVFP4 -0.2 to +1.8 but MXFP4 -2.0 to -0.3
 *   (independent 0 to +2.8);
 * - H100: waiting +1.6 to +4.6 on (7168,2048,4), -0.2 to +2.9 on (4096,7168,8), +1.6 to +2.0
 *   on (16384,16384,4), but -1.8 to -4.6 on (7168,16384,1), whose 448 CTAs are one wave of 528
 *   (BF16 and F16 x, NVFP4 and MXFP4, two to four rounds).
 * sm_90a only (elsewhere the twin is the plain kernel); desc.pipelined = -1 (or 1) keeps the
 * plain one. The memo key (memo_plan) holds everything read here: tc_ring_ok as "ring", nfull,
 * M and L (the grid), sms, dram and target. */
static void pick_tc_ring(const gemv_shape *s, const ptxq_gemv_desc *d, const char *target,
                         int sms, int dram, ptxq_gemv_plan *p) {
    if (p->rows_per_thread != 16 || strcmp(target, "sm_90a") || d->pipelined == -1 ||
        !tc_ring_ok(s))
        return;
    int64_t windows = (int64_t)(s->args.nfull / 4) / p->k_warps; /* whole windows a warp */
    int want = d->pipelined == 2;
    if (d->pipelined == 0)
        want = dram >= 4000 ? windows >= (s->xk == 1 ? 8 : 4)
                            : windows >= 4 && (int64_t)p->grid > wave_ctas(p, sms);
    if (want && use_twin(p, target, "r")) p->pipelined = 3;
}

/* NVFP4 x NVFP4 plain plans with rows 32 apart and the scale vector aligned (FLAG_SVEC, set by
 * the caller) take the "...v" twin: its fast loop loads a chunk's R scale words of the 128x4
 * layout with one instruction (gen/gemv.py, variants: up to +3.8 points of the copy waiting and
 * +6.3 independent on an H200). Same registers as the plain kernel. */
static void pick_vec_twin(const gemv_shape *s, const ptxq_gemv_desc *d, const char *target,
                          ptxq_gemv_plan *p) {
    /* measured on sm_90a only; elsewhere (not run: no such GPU lent) the plain kernel, as with
     * desc.pipelined = -1 (so that the plain kernel can be timed against the twin) */
    if (strcmp(target, "sm_90a") || d->pipelined == -1) return;
    if (s->fmt != 0 || s->xk != 0 || p->pipelined || p->rows_per_thread == 16) return;
    use_twin(p, target, "v");
}

/* The last plans this thread chose, by everything the choice depends on. Scoring looks 12 kernel
 * names up in the registry (a linear scan of every cubin): microseconds of host time per call,
 * as long as a small GEMV takes on the device, so back-to-back calls of one shape would be
 * host-bound without this memo. */
typedef struct plan_memo {
    const char *target;
    int sms, dram, fmt, xk, rows, kw, pipe, ring; /* ring: bulk_ok, or tc_ring_ok */
    int sf128;                                    /* 128x4 A scales: the grid (plan_tiles) */
    int64_t M, L, nch, nfull; /* nfull: whole chunks a row (pick_tc_ring counts windows) */
    ptxq_gemv_plan plan;
} plan_memo;
#define PLAN_MEMO 8
static _Thread_local plan_memo g_memo[PLAN_MEMO];
static _Thread_local int g_memo_next;

static int memo_plan(const gemv_shape *s, const ptxq_gemv_desc *d, const char *target, int sms,
                     int dram, ptxq_gemv_plan *p) {
    /* NOTE: the rings' eligibility depends on alignments and strides, not only on the shape */
    int ring = (s->fmt == 0 && s->xk == 0) ? bulk_ok(s) : tc_ring_ok(s);
    /* NOTE: the grid depends on the scale layout too (rows 32 apart with 128x4: plan_tiles); a
     * review found one layout's grid reused for the other on the same shape (rows unwritten, or
     * CTAs past the last batch) */
    int sf128 = (s->args.flags & PTXQ_GEMV_FLAG_SF128x4) != 0;
    for (int i = 0; i < PLAN_MEMO; ++i) {
        const plan_memo *m = &g_memo[i];
        if (m->target == target && m->target && m->sms == sms && m->dram == dram && m->fmt == s->fmt &&
            m->xk == s->xk && m->rows == d->rows_per_thread && m->kw == d->k_warps &&
            m->pipe == d->pipelined && m->ring == ring && m->sf128 == sf128 &&
            m->M == s->M && m->L == s->L && m->nch == s->nch && m->nfull == s->args.nfull) {
            *p = m->plan;
            return PTXQ_OK;
        }
    }
    int st = choose_plan(s, d, target, sms, dram, p);
    if (st) return st;
    pick_twin(s, d, target, p);
    pick_tc_ring(s, d, target, sms, dram, p);
    plan_memo *m = &g_memo[g_memo_next];
    g_memo_next = (g_memo_next + 1) % PLAN_MEMO;
    *m = (plan_memo){target, sms, dram, s->fmt, s->xk, d->rows_per_thread, d->k_warps, d->pipelined, ring,
                     sf128, s->M, s->L, s->nch, s->args.nfull, *p};
    return PTXQ_OK;
}

/* PTXQ_GEMV_PREFETCH (an experiment knob: the automatic prefetch depth forced), -1 if unset;
 * read once a thread. */
static int prefetch_env(void) {
    static _Thread_local int env = -2;
    if (env == -2) {
        const char *e = getenv("PTXQ_GEMV_PREFETCH");
        env = e && *e ? atoi(e) : -1;
    }
    return env;
}

/* L2 prefetch depth in trips (a trip: each thread one chunk of each of its R rows; for the
 * tensor-core kernel a window), at most the warp's trips along K. Automatic depth: x in A's
 * format and at most 8 waves of CTAs take 1 trip, the tensor-core kernel at most 2 waves 1
 * window (below), everything else none. Measured with bench gemv --prefetch 0,1: MXFP8 on an
 * H200, +0.4 to +2.2 points of %copy on the three hackathon shapes (+1.5 to +3.3 with
 * PTXQ_GEMV_STATIC_WEIGHTS; -1.5 on the 12-wave 16384 x 16384 x 4); NVFP4 on an H100 with the
 * fast-loop kernels, +1.0 on each hackathon shape (the older FP4 kernels lost 1 to 5 points with
 * it); MXFP4 on an H100 (eleventh session, RESULTS.md), +2.0 / +0.3 / +1.3 (90.0 -> 92.0% on
 * 7168 x 16384 x 1; the small shape +1.5 in each of three rounds). All trips lost up to 15.
 * PTXQ_GEMV_PREFETCH=n forces the automatic depth (an experiment knob); desc.prefetch_trips
 * overrides both. */
static int prefetch_depth(const gemv_shape *s, const ptxq_gemv_desc *d, const ptxq_gemv_plan *p,
                          int sms) {
    /* the tensor-core kernel's trips are windows (4 chunks a row, k_warps warps along K), and
     * it prefetches them before the PDL wait (gen/gemv.py, TC.prefetch_tc) */
    int tc = p->rows_per_thread == 16;
    int64_t trips = ceil_div(s->nch, (tc ? 4 : 32) * (int64_t)p->k_warps);
    /* the ring kernel has no prefetch */
    if (d->prefetch_trips < 0 || trips <= 0 || p->pipelined == 2) return 0;
    int64_t want = d->prefetch_trips;
    if (!want) {
        if (prefetch_env() >= 0) {
            want = prefetch_env();
        } else {
            int64_t slots = wave_ctas(p, sms);
            /* tensor-core kernels: one window on grids of at most two waves. 2026-11-26, two
             * rounds, F16 and BF16 x: 2.3-4.4% less time on the H100 and 0.4-4.1% on the H200
             * on the three hackathon shapes (0.85 to 1.94 waves); forced on the 7.8-wave
             * 16384 x 16384 x 4 within +0.9% on the H100; two windows gained less, four lost */
            /* CUDA-core kernels: x in A's format, and MXFP8 with BF16 / F16 x too (2026-11-26,
             * --prefetch -1,1: H200 -3.9 to -7.0% on the three hackathon shapes, the 7.8-wave
             * 16384 x 16384 x 4 equal; H100 -6.2 / -2.5 / -6.9%); FP4 A with BF16 / F16 x on
             * CUDA cores (only when forced: the tensor-core kernels are the pick) stays without */
            if (tc) want = (int64_t)p->grid <= 2 * slots ? 1 : 0;
            else want = (s->xk == 0 || s->fmt == 2) && (int64_t)p->grid <= 8 * slots ? 1 : 0;
        }
    }
    return (int)(want < trips ? want : trips);
}

/* CTAs that run the plan's L2 prefetch (those from this index on skip it, gen/gemv.py): the
 * first wave of a CUDA-core plan with the automatic depth whose warps make at most 2 trips
 * along K, every CTA otherwise. Measured 2026-11-26 on (7168,2048,4), stream launches: H100
 * NVFP4 13.02 -> 12.40-12.49 us (88 -> 91% of the copy), MXFP4 12.32-12.45 -> 11.95-12.03;
 * H200 MXFP4 -2 to -3.6%, NVFP4 -0.5%; on (7168,16384,1), 4 trips a warp, 1-6% slower. */
static unsigned prefetch_ctas(const gemv_shape *s, const ptxq_gemv_desc *d, const ptxq_gemv_plan *p,
                              int sms) {
    int64_t slots = wave_ctas(p, sms);
    int64_t trips = ceil_div(s->nch, 32 * (int64_t)p->k_warps);
    if (p->rows_per_thread == 16 || p->prefetch_trips <= 0 || d->prefetch_trips != 0 ||
        prefetch_env() >= 0 || trips > 2 || (int64_t)p->grid <= slots)
        return p->grid;
    return (unsigned)slots;
}

/* 1 if the plan's L2 prefetch should leave out A's scale bytes (FLAG_NOSPF; x in A's format only,
 * the kernels that read the flag): MXFP4 at 4 TB/s of DRAM or more on every plan, below it where
 * only the first wave prefetches (warps of at most 2 trips) on a grid of at most two waves; MXFP8
 * at 4 TB/s or more. 2026-11-26, the CUDA-core kernels built without the scale prefetch against
 * as built, stream launches, three rounds each: H200 MXFP4 -2.5 / -2.3 /
 * -2.6 / -0.9% on (7168,2048,4) / (4096,7168,8) / (7168,16384,1) / (16384,16384,4) (10.64 ->
 * 10.37 us on the first), NVFP4 +1.5% on (7168,2048,4), -1.5% on (4096,7168,8); H100 MXFP4 -1.6%
 * on (7168,2048,4) (11.96 -> 11.76 us) but up to +2% on (7168,16384,1) (3.4 waves), NVFP4 and
 * MXFP8 +0.1 to +2.5%. MXFP4's scale bytes are 1/16 of its A bytes, one prefetch instruction a row
 * like A's. As landed (e27bc33) against the build before it, three rounds: H100 (7168,2048,4)
 * 12.00-12.06 -> 11.77-11.80 us (90.8-91.3% of the copy), H200 -0.8 to -2.9% on all four.
 * MXFP8 (scale bytes 1/32 of A's), the kernels built without the scale prefetch, three rounds:
 * H200 -2.6% on (7168,2048,4) (16.65-16.70 -> 16.21-16.26 us), -0.2 to -0.5% on the other three;
 * H100 +0.1 to +2.5% (eighteenth session), so not below 4 TB/s. As landed, three rounds: H200
 * (7168,2048,4) 16.78-16.85 -> 16.25-16.34 us (87-88% -> 90-91% of the copy); H100 (flag not
 * set; the predicate's instructions only) +0.5% on (7168,2048,4), -0.4 to +0.4% elsewhere. */
static int prefetch_scales_off(const gemv_shape *s, const ptxq_gemv_plan *p, int sms, int dram) {
    if (s->fmt == 0 || s->xk != 0 || p->rows_per_thread == 16 || p->prefetch_trips <= 0) return 0;
    if (dram >= 4000) return 1;
    return s->fmt == 1 && p->prefetch_ctas < p->grid && (int64_t)p->grid <= 2 * wave_ctas(p, sms);
}

/* 1 if the plan's L2 prefetch of A may move before the PDL wait without the caller's promise:
 * a PDL launch with a prefetch, not already early, not the ring kernel (whose early start is
 * real loads; see the NOTE in ptxq_gemv). */
static int prefetch_may_move(const ptxq_gemv_plan *p) {
    return p->pdl && !p->early && p->prefetch_trips > 0 && p->pipelined != 2;
}

/* 1 if stream is being captured (cuStreamIsCapturing; 0 where the query fails). ctx's context
 * must be current: the NULL / per-thread stream means the current context's (found by review). */
static int stream_capturing(ptxq_context *ctx, void *stream) {
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    if (ctx->drv->cuStreamIsCapturing((CUstream)stream, &cs) != CUDA_SUCCESS) return 0;
    return cs == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

/* The kernels' batch index b / d for CTA b < 2^31 as (b * m) >> sh with a 64-bit product:
 * sh = 31 + s, s = ceil(log2 d), m = floor(2^sh / d) + 1 < 2^32. Exact: with e = m d - 2^sh in
 * (0, d], b m / 2^sh = b / d + b e / (d 2^sh), and b e < 2^31 2^s = 2^sh, so the excess is
 * under 1 / d, while b / d is at least 1 / d below the next integer. d = 0 (nothing is
 * launched) gives m = 0. */
void ptxq_gemv_tile_magic(uint32_t d, uint32_t *m, uint32_t *sh) {
    unsigned s = 0;
    while (s < 31 && ((uint64_t)1 << s) < d) ++s;
    *sh = 31 + s;
    *m = d ? (uint32_t)(((uint64_t)1 << *sh) / d + 1) : 0;
}

static int plan_all(ptxq_context *ctx, const ptxq_gemv_desc *d, const ptxq_tensor *a,
                    const ptxq_tensor *as, const ptxq_tensor *x, const ptxq_tensor *xs,
                    const ptxq_tensor *y, gemv_shape *s, ptxq_gemv_plan *p) {
    if (!ctx) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: ctx is NULL");
    int st = plan_shape(d, a, as, x, xs, y, s);
    if (st) return st;
    int pdl = !(d->flags & PTXQ_GEMV_NO_PDL) && ptxq_cudrv_launch_ex() != NULL;
    int early = pdl && (d->flags & PTXQ_GEMV_STATIC_WEIGHTS);
    if ((st = memo_plan(s, d, ctx->target, ctx->info.sm_count, (int)ctx->info.dram_gbps, p)))
        return st;
    int shift = p->k_warps == 1 ? 0 : p->k_warps == 2 ? 1 : p->k_warps == 4 ? 2 : 3;
    s->args.wk_shift = (uint32_t)shift;
    int64_t tiles = plan_tiles(s, p->rows_per_thread, p->rows_per_cta);
    if (tiles * s->L > 0x7FFFFFFFll)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemv: L * row tiles exceeds the grid limit");
    s->args.tiles = (uint32_t)tiles;
    if ((int64_t)p->grid != tiles * s->L)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv: internal: plan grid %u, tiles %lld x L %lld",
                         p->grid, (long long)tiles, (long long)s->L);
    p->rows_step = 1;
    if (rows_interleaved(s, p->rows_per_thread)) {
        p->rows_step = 32;
        s->args.flags |= PTXQ_GEMV_FLAG_RI32;
        s->args.a_m *= 32; /* the kernels' step between a thread's rows (gen/gemv.py, setup) */
        /* their R scale words of a chunk are then one aligned vector (FLAG_SVEC); NVFP4 x NVFP4
         * plain plans take the "...v" twin, which loads them so (gen/gemv.py, variants) */
        if (s->args.as % (uint64_t)(4 * p->rows_per_thread) == 0) {
            s->args.flags |= PTXQ_GEMV_FLAG_SVEC;
            pick_vec_twin(s, d, ctx->target, p);
        }
    }
    ptxq_gemv_tile_magic(s->args.tiles, &s->args.tmag, &s->args.tsh);
    p->pdl = pdl;
    p->early = early;
    if (p->early) s->args.flags |= PTXQ_GEMV_FLAG_EARLY;
    /* NOTE: an independent call (the caller's promise) skips the PDL wait; it relies on every
     * kernel of ours signalling its dependents only after its own wait (gen/gemv.py, pdl_wait),
     * so that whatever precedes the kernel before it has completed when it starts. */
    p->nowait = pdl && (d->flags & PTXQ_GEMV_INDEPENDENT) ? 1 : 0;
    if (p->nowait) s->args.flags |= PTXQ_GEMV_FLAG_NOWAIT;
    p->prefetch_trips = prefetch_depth(s, d, p, ctx->info.sm_count);
    s->args.pfn = (uint32_t)p->prefetch_trips;
    p->prefetch_ctas = prefetch_ctas(s, d, p, ctx->info.sm_count);
    s->args.pfcta = p->prefetch_ctas;
    if (prefetch_scales_off(s, p, ctx->info.sm_count, (int)ctx->info.dram_gbps))
        s->args.flags |= PTXQ_GEMV_FLAG_NOSPF;
    /* the tensor-core kernel's prefetch always runs before the wait (TC.prefetch_tc) */
    if (p->rows_per_thread == 16 && p->pdl && p->prefetch_trips > 0) p->early = 1;
    /* The L2 prefetch goes before the PDL wait (see the NOTE in ptxq_gemv on why that is correct
     * without the promise) from 4 TB/s of DRAM (H200) on every launch, and below it where the
     * grid is at most two waves, whose CTAs mostly start while the preceding kernel drains.
     * H200, 2026-11-25, stream launches: the FP4 and MXFP8 plans on the four bench shapes gained
     * 0.5-4.8 points of the copy ((7168,2048,4) NVFP4 69.5 -> 74.3%), 16384 x 16384 x 4 within
     * 0.3. H100, 2026-11-26, stream, two rounds against the prefetch after the wait: FP4 at 0.97
     * waves +11 to +14% ((2048,2048,8) NVFP4 8.62-8.66 -> 7.54-7.56 us), at 1.7-1.94 waves +1.3
     * to +2.8% ((7168,2048,4) NVFP4 13.56-13.61 -> 13.32-13.35) but (4096,7168,8) within 0.1%;
     * MXFP8 at 1.55 waves unchanged; with it forced at 2.9 waves -0.5 to +1%, at 3.4 waves -0.6
     * to -1.5%, so not there. */
    if (prefetch_may_move(p) &&
        (ctx->info.dram_gbps >= 4000 || (int64_t)p->grid <= 2 * wave_ctas(p, ctx->info.sm_count))) {
        p->early = 1;
        s->args.flags |= PTXQ_GEMV_FLAG_EARLY;
    }
    return PTXQ_OK;
}

ptxq_status ptxq_gemv_plan_for(ptxq_context *ctx, const ptxq_gemv_desc *d, const ptxq_tensor *a,
                               const ptxq_tensor *a_scale, const ptxq_tensor *x,
                               const ptxq_tensor *x_scale, const ptxq_tensor *y,
                               ptxq_gemv_plan *plan) {
    if (!plan) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemv_plan_for: plan is NULL");
    gemv_shape s;
    int st = plan_all(ctx, d, a, a_scale, x, x_scale, y, &s, plan);
    if (st) return (ptxq_status)st;
    return (ptxq_status)ptxq_ok();
}

ptxq_status ptxq_gemv(ptxq_context *ctx, const ptxq_gemv_desc *d, const ptxq_tensor *a,
                      const ptxq_tensor *a_scale, const ptxq_tensor *x, const ptxq_tensor *x_scale,
                      const ptxq_tensor *y, void *stream) {
    gemv_shape s;
    ptxq_gemv_plan p;
    int st = plan_all(ctx, d, a, a_scale, x, x_scale, y, &s, &p);
    if (st) return (ptxq_status)st;
    if (s.M == 0 || s.L == 0) return (ptxq_status)ptxq_ok(); /* empty: nothing to enqueue */
    const ptxq_loaded *k = NULL;
    if ((st = ptxq_get_kernel(ctx, p.kernel, &k))) return (ptxq_status)st;
    /* NOTE: the L2 prefetch of A moves before the PDL wait while the stream is being captured
     * into a CUDA graph, promise or not. A prefetch loads nothing into registers and L2 is
     * coherent with every SM's writes, so the kernel reads the preceding kernel's A after the
     * wait either way; only the speed differs. H100, 2026-11-25, FP4 (7168,2048,4) in a graph:
     * 83-87% of the copy with the prefetch after the wait, 88-91% before it, the other bench
     * shapes within 0.4 points; on a plain stream below 4 TB/s it moves only on grids of at
     * most two waves (plan_all: -0.6 to -1.5% on the H100 at 3.4 waves). Not for the ring
     * kernel: its early start is real loads, which need PTXQ_GEMV_STATIC_WEIGHTS. */
    CUcontext prev; /* current once for the query and the launch, the caller's put back */
    if ((st = ptxq_ctx_enter(ctx, &prev))) return (ptxq_status)st;
    if (prefetch_may_move(&p) && stream_capturing(ctx, stream))
        s.args.flags |= PTXQ_GEMV_FLAG_EARLY;
    void *params[] = {&s.args};
    st = ptxq_launch_ex_current(ctx, k, p.grid, p.threads, 0, stream, params,
                                p.pdl ? PTXQ_LAUNCH_PDL : 0u, 0u);
    ptxq_ctx_leave(ctx, prev);
    if (st) return (ptxq_status)st;
    return (ptxq_status)ptxq_ok();
}
