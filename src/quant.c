/* quant.c -- quantization: argument checks, the launch plan, and the launches.
 *
 * Kernels (gen/quant.py): quant_<mode>_<in>[_<out>], one .param struct (ptxq_quant_args).
 * Per-tensor modes enqueue three things on the stream: a 4-byte memset of the caller's amax
 * word, the amax pass, the quantize pass. Everything is checked, and every kernel loaded, before
 * the first of them is enqueued, so a call that fails writes nothing. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "quant_args.h"

typedef struct quant_plan {
    char kernel[64];
    char amax_kernel[64]; /* "" unless an amax pass runs first */
    int vec;              /* input elements per item (one lane's 16 or 32 contiguous bytes) */
    int unroll;           /* items per lane per trip */
    int block;            /* elements per scale; 0 = row, -1 = tensor */
    int64_t rows, K, nk;
    int row_mode;
    int row_cta;          /* row modes: the CTA-per-row kernel */
    size_t sf_bytes;      /* 128x4 layout: bytes of the scale tensor (its padding zeroed by
                             the kernel, gen/quant.py sf128_padding) */
    int memset_amax;
    ptxq_quant_args args;
} quant_plan;

static const char *in_name(ptxq_dtype t) {
    return t == PTXQ_BF16 ? "bf16" : t == PTXQ_F16 ? "f16" : t == PTXQ_F32 ? "f32" : NULL;
}

static const char *out_name(ptxq_dtype t) {
    switch (t) {
    case PTXQ_E4M3: return "e4m3";
    case PTXQ_E5M2: return "e5m2";
    case PTXQ_E2M1: return "e2m1";
    case PTXQ_I8: return "s8";
    default: return NULL;
    }
}

/* mode -> kernel mode name, required q dtype family, scale dtype, block (0 row, -1 tensor) */
static int mode_info(const ptxq_quant_desc *d, const char **kmode, ptxq_dtype *sdtype, int *block) {
    switch (d->mode) {
    case PTXQ_QUANT_FP8_TENSOR: *kmode = "fp8tensor"; *sdtype = PTXQ_F32; *block = -1; break;
    case PTXQ_QUANT_FP8_ROW: *kmode = "fp8row"; *sdtype = PTXQ_F32; *block = 0; break;
    case PTXQ_QUANT_FP8_BLOCK: *kmode = "fp8block"; *sdtype = PTXQ_F32; *block = 128; break;
    case PTXQ_QUANT_MXFP8: *kmode = "mx8"; *sdtype = PTXQ_UE8M0; *block = 32; break;
    case PTXQ_QUANT_NVFP4: *kmode = "nvfp4"; *sdtype = PTXQ_UE4M3; *block = 16; break;
    case PTXQ_QUANT_INT8_ROW: *kmode = "i8row"; *sdtype = PTXQ_F32; *block = 0; break;
    case PTXQ_QUANT_INT8_BLOCK:
        *sdtype = PTXQ_F32;
        *block = d->block;
        *kmode = d->block == 32 ? "i8block32" : d->block == 64 ? "i8block64"
               : d->block == 128 ? "i8block128" : NULL;
        if (!*kmode)
            return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "INT8_BLOCK: block %d not 32, 64 or 128",
                             d->block);
        return PTXQ_OK;
    default:
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "unknown quantization mode %d", (int)d->mode);
    }
    /* 0, or the mode's own block (FP8_BLOCK 128, MXFP8 32, NVFP4 16); the row and per-tensor
     * modes have none (found by review: FP8_TENSOR's internal -1 was accepted as desc.block) */
    if (d->block != 0 && (*block <= 0 || d->block != *block))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "block %d given; this mode's block is implied "
                         "(pass 0)", d->block);
    return PTXQ_OK;
}

static int q_dtype_ok(ptxq_quant_mode m, ptxq_dtype q) {
    if (m == PTXQ_QUANT_NVFP4) return q == PTXQ_E2M1;
    if (m == PTXQ_QUANT_INT8_ROW || m == PTXQ_QUANT_INT8_BLOCK) return q == PTXQ_I8;
    return q == PTXQ_E4M3 || q == PTXQ_E5M2;
}

/* Leading dimensions right-aligned into three slots (missing ones: size 1, stride 0). */
static void lead3(const ptxq_tensor *t, int64_t d[3], uint64_t s[3]) {
    int nl = t->rank - 1;
    for (int j = 0; j < 3; ++j) {
        int i = nl - 3 + j;
        d[j] = i >= 0 ? t->shape[i] : 1;
        s[j] = i >= 0 ? (uint64_t)t->stride[i] : 0;
    }
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }


static size_t sf128_bytes(int64_t rows, int64_t nk) {
    return (size_t)(ceil_div(rows, 128) * ceil_div(nk, 4) * 512);
}

static int plan_quant(const ptxq_quant_desc *d, const ptxq_tensor *x, const ptxq_tensor *q,
                      const ptxq_tensor *s, quant_plan *p) {
    memset(p, 0, sizeof *p);
    if (!d) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quantize: desc is NULL");
    int st;
    if ((st = ptxq_check_tensor(x, "quantize: x", 1))) return st;
    if ((st = ptxq_check_tensor(q, "quantize: q", 1))) return st;
    if ((st = ptxq_check_tensor(s, "quantize: scale", 1))) return st;
    const char *kmode = NULL;
    ptxq_dtype sdt = PTXQ_F32;
    if ((st = mode_info(d, &kmode, &sdt, &p->block))) return st;
    const char *in = in_name(x->dtype), *out = out_name(q->dtype);
    if (!in)
        return ptxq_fail(PTXQ_ERR_DTYPE, "quantize: x is %s; BF16, F16 or F32 expected",
                         ptxq_dtype_name(x->dtype));
    if (!q_dtype_ok(d->mode, q->dtype) || d->out_dtype != q->dtype)
        return ptxq_fail(PTXQ_ERR_DTYPE, "quantize: q is %s, desc.out_dtype %s: not a valid output "
                         "of this mode", ptxq_dtype_name(q->dtype), ptxq_dtype_name(d->out_dtype));
    if (d->flags & ~PTXQ_QUANT_STATIC_SCALE)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quantize: unknown flags 0x%x", d->flags);
    if ((d->flags & PTXQ_QUANT_STATIC_SCALE) && d->mode != PTXQ_QUANT_FP8_TENSOR &&
        d->mode != PTXQ_QUANT_NVFP4)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quantize: STATIC_SCALE is for FP8_TENSOR and "
                         "NVFP4 only");
    if (x->rank < 2)
        return ptxq_fail(PTXQ_ERR_SHAPE, "quantize: x has rank %d; 2..4 expected", x->rank);
    if (q->rank != x->rank)
        return ptxq_fail(PTXQ_ERR_SHAPE, "quantize: q rank %d != x rank %d", q->rank, x->rank);
    for (int i = 0; i < x->rank; ++i)
        if (q->shape[i] != x->shape[i])
            return ptxq_fail(PTXQ_ERR_SHAPE, "quantize: q.shape[%d] = %lld != x.shape[%d] = %lld",
                             i, (long long)q->shape[i], i, (long long)x->shape[i]);
    int r = x->rank;
    if (x->stride[r - 1] != 1 || q->stride[r - 1] != 1)
        return ptxq_fail(PTXQ_ERR_STRIDE, "quantize: the innermost dimension must be contiguous "
                         "(x stride %lld, q stride %lld)", (long long)x->stride[r - 1],
                         (long long)q->stride[r - 1]);
    int esz = ptxq_dtype_bits(x->dtype) / 8;
    int nvec = 1;
    ptxq_quant_item_shape(kmode, esz, &nvec, &p->unroll);
    p->vec = 16 / esz * nvec; /* a lane's item: one or more 16-byte vectors */
    p->K = x->shape[r - 1];
    p->rows = ptxq_shape_product(x->shape, r - 1); /* INT64_MAX only where K = 0 */
    int empty = p->rows == 0 || p->K == 0;
    if (p->K % p->vec)
        return ptxq_fail(PTXQ_ERR_SHAPE, "quantize: K = %lld must be a multiple of %d for %s "
                         "(a lane's vector)", (long long)p->K, p->vec, in);
    if (p->block > 0 && p->K % p->block)
        return ptxq_fail(PTXQ_ERR_SHAPE, "quantize: K = %lld is not a multiple of the scale block %d",
                         (long long)p->K, p->block);
    if (p->rows * (p->K / p->vec) >= (int64_t)1 << 31)
        return ptxq_fail(PTXQ_ERR_SHAPE, "quantize: %lld elements is more than one launch takes "
                         "(2^31 vectors)", (long long)(p->rows * p->K));
    /* alignment: 16-byte loads of x; q stores of (vec) bytes, or vec/2 for FP4 */
    int qstore = q->dtype == PTXQ_E2M1 ? p->vec / 2 : p->vec;
    if (x->data % 16)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "quantize: x data 0x%llx is not 16-byte aligned",
                         (unsigned long long)x->data);
    if (q->data % (uint64_t)qstore)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "quantize: q data 0x%llx is not %d-byte aligned",
                         (unsigned long long)q->data, qstore);
    /* an empty x's strides are never used (and may be up to INT64_MAX: ptxq_check_tensor does
     * not bound them, found by review, UBSan) */
    for (int i = 0; i < r - 1 && !empty; ++i) {
        /* a size-1 dimension's stride is never multiplied by a nonzero index: not checked (as in
         * ptxq_check_tensor; found by review: x [1, 256] with stride 3 was refused) */
        if (x->shape[i] != 1 && (x->stride[i] * esz) % 16)
            return ptxq_fail(PTXQ_ERR_ALIGNMENT, "quantize: x.stride[%d] = %lld elements is not a "
                             "multiple of 16 bytes", i, (long long)x->stride[i]);
        int64_t qb = q->dtype == PTXQ_E2M1 ? q->stride[i] / 2 : q->stride[i];
        if (q->shape[i] != 1 && ((q->dtype == PTXQ_E2M1 && q->stride[i] % 2) || qb % qstore))
            return ptxq_fail(PTXQ_ERR_ALIGNMENT, "quantize: q.stride[%d] = %lld elements is not a "
                             "multiple of %d bytes", i, (long long)q->stride[i], qstore);
    }
    /* scales */
    if (s->dtype != sdt)
        return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "quantize: scale dtype %s; this mode writes %s",
                         ptxq_dtype_name(s->dtype), ptxq_dtype_name(sdt));
    p->nk = p->block > 0 ? p->K / p->block : 1;
    int ssz = ptxq_dtype_bits(sdt) / 8;
    if (s->data % (uint64_t)ssz)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "quantize: scale data is not %d-byte aligned", ssz);
    int64_t sd[3];
    uint64_t ss[3];
    if (d->scale_layout == PTXQ_SCALE_128x4) {
        if (d->mode != PTXQ_QUANT_MXFP8 && d->mode != PTXQ_QUANT_NVFP4)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "quantize: the 128x4 scale layout is for MXFP8 "
                             "and NVFP4");
        if (x->rank != 2)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "quantize: the 128x4 scale layout needs a rank-2 x");
        p->sf_bytes = sf128_bytes(p->rows, p->nk);
        /* the kernels compute 128x4 offsets in 32 bits (gen/quant.py scale_addr) */
        if (p->sf_bytes > 0xFFFFFFFFull)
            return ptxq_fail(PTXQ_ERR_SHAPE, "quantize: 128x4 scales of %zu bytes; at most 2^32 - 1",
                             p->sf_bytes);
        /* the padding stores walk (row groups + block groups) x 512 bytes with a 32-bit index
         * that grid-strides past the end, by fewer than 2^24 threads (gen/quant.py
         * sf128_padding; found by review: one row of K near 2^30 made the walk 2^32, which
         * wrapped to no padding stores at all) */
        int64_t walk = (ceil_div(p->rows, 128) + ceil_div(p->nk, 4)) * 512;
        if (walk > ((int64_t)1 << 32) - ((int64_t)1 << 24))
            return ptxq_fail(PTXQ_ERR_SHAPE, "quantize: 128x4 scales with %lld row groups and %lld "
                             "block groups; their sum times 512 must stay within 2^32 - 2^24",
                             (long long)ceil_div(p->rows, 128), (long long)ceil_div(p->nk, 4));
        if (s->rank != 1 || s->stride[0] != 1 || (size_t)s->shape[0] < p->sf_bytes)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "quantize: 128x4 scales need a contiguous rank-1 "
                             "tensor of at least %zu bytes", p->sf_bytes);
        ss[0] = ss[1] = ss[2] = 0;
    } else if (d->scale_layout != PTXQ_SCALE_STRIDED) {
        return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "quantize: unknown scale layout %d",
                         (int)d->scale_layout);
    } else if (p->block < 0) {
        int64_t n = ptxq_shape_product(s->shape, s->rank);
        if (n != 1)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "quantize: a per-tensor scale has 1 element, "
                             "not %lld", (long long)n);
        ss[0] = ss[1] = ss[2] = 0;
    } else {
        if (s->rank != r)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "quantize: scale rank %d != x rank %d", s->rank, r);
        for (int i = 0; i < r - 1; ++i)
            if (s->shape[i] != x->shape[i])
                return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "quantize: scale.shape[%d] = %lld != %lld",
                                 i, (long long)s->shape[i], (long long)x->shape[i]);
        if (s->shape[r - 1] != p->nk && p->block > 0)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "quantize: scale.shape[%d] = %lld; K / %d = %lld "
                             "expected", r - 1, (long long)s->shape[r - 1], p->block, (long long)p->nk);
        if (s->shape[r - 1] != p->nk) /* (found by review: said "K / 0 = 1" for the row modes) */
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "quantize: scale.shape[%d] = %lld; 1 expected (one "
                             "scale a row)", r - 1, (long long)s->shape[r - 1]);
        lead3(s, sd, ss);
    }
    /* outputs: two elements at one address would race (found by review: q rows overlapping and
     * scales of stride 0 were accepted) */
    if ((st = ptxq_check_disjoint(q, "quantize: q"))) return st;
    if ((st = ptxq_check_disjoint(s, "quantize: scale"))) return st;
    /* per-tensor words */
    int is_static = (d->flags & PTXQ_QUANT_STATIC_SCALE) != 0;
    int need_amax = (d->mode == PTXQ_QUANT_NVFP4 || d->mode == PTXQ_QUANT_FP8_TENSOR) && !is_static;
    /* the amax pass counts single 16-byte vectors, up to 4 of the main kernel's items: its
     * 32-bit count must not reach 2^31 either (found by review: NVFP4 BF16 x of 2^31 - 1 rows of
     * 16 passed the main count's check, and the amax kernel's loop never ended) */
    if (need_amax && p->rows * (p->K / (16 / esz)) >= (int64_t)1 << 31)
        return ptxq_fail(PTXQ_ERR_SHAPE, "quantize: %lld elements is more than the amax pass "
                         "takes (2^31 16-byte vectors)", (long long)(p->rows * p->K));
    if (need_amax && !d->amax)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quantize: this mode needs desc.amax (a device "
                         "float the amax pass reduces into)");
    /* desc.amax is used by the per-tensor modes (FP8_TENSOR static: written where given); the
     * others ignore it (found by review: a misaligned unused amax was refused) */
    int uses_amax = need_amax || (d->mode == PTXQ_QUANT_FP8_TENSOR && d->amax);
    if (uses_amax && d->amax % 4)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "quantize: desc.amax is not 4-byte aligned");
    if (d->mode == PTXQ_QUANT_NVFP4 && (!d->global_scale || d->global_scale % 4))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quantize: NVFP4 needs desc.global_scale, a "
                         "4-byte aligned device float");
    /* the per-tensor words: the kernels read amax while one thread writes the scale (found by
     * review: one word for both raced) */
    if (d->amax && d->mode == PTXQ_QUANT_NVFP4 && d->amax == d->global_scale)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quantize: desc.amax and desc.global_scale are "
                         "one word");
    /* what the call writes apart from all it touches: q, the scale (read, not written, as
     * FP8_TENSOR's static scale), amax where used, NVFP4's global scale where derived (found by
     * review: in-place quantization, a global scale or amax inside the scale bytes and an amax
     * word inside x passed, and raced or zeroed the input). Two things only read may share
     * bytes, and rows that interleave (a row's scale in q's row padding) are apart. */
    int s_written = !(d->mode == PTXQ_QUANT_FP8_TENSOR && is_static);
    int g_written = d->mode == PTXQ_QUANT_NVFP4 && !is_static;
    size_t xb = ptxq_tensor_bytes(x), qbytes = ptxq_tensor_bytes(q), sbytes = ptxq_tensor_bytes(s);
    if (ptxq_tensors_overlap(x, q))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quantize: q overlaps x (no in-place "
                         "quantization)");
    if (ptxq_tensors_overlap(s, q) || (s_written && ptxq_tensors_overlap(s, x)))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quantize: the scale overlaps x or q");
    if (uses_amax && !empty &&
        (ptxq_bytes_overlap(d->amax, 4, x->data, xb) || ptxq_bytes_overlap(d->amax, 4, q->data, qbytes) ||
         ptxq_bytes_overlap(d->amax, 4, s->data, sbytes)))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quantize: desc.amax lies inside x, q or the scale");
    if (d->mode == PTXQ_QUANT_NVFP4 && !empty &&
        ((g_written && ptxq_bytes_overlap(d->global_scale, 4, x->data, xb)) ||
         ptxq_bytes_overlap(d->global_scale, 4, q->data, qbytes) ||
         ptxq_bytes_overlap(d->global_scale, 4, s->data, sbytes)))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quantize: desc.global_scale lies inside x, q or "
                         "the scale");

    /* Row modes: a CTA keeps the row in registers (one read of x) when the row fits and is long
     * enough to occupy the CTA; short or very long rows go to the warp-per-row kernel, which
     * reads the row twice (the second read mostly from L2). */
    if (p->block == 0) {
        int64_t vpr = p->K / p->vec, cap = esz == 4 ? PTXQ_QUANT_ROW_CTA_VPR_4B : PTXQ_QUANT_ROW_CTA_VPR_2B;
        p->row_cta = vpr >= 64 && vpr <= cap;
        if (!p->row_cta) kmode = d->mode == PTXQ_QUANT_FP8_ROW ? "fp8rowl" : "i8rowl";
    }
    snprintf(p->kernel, sizeof p->kernel, "quant_%s_%s_%s", kmode, in, out);
    if (need_amax) snprintf(p->amax_kernel, sizeof p->amax_kernel, "quant_amax_%s", in);
    p->memset_amax = need_amax || (d->mode == PTXQ_QUANT_FP8_TENSOR && d->amax);
    if (d->mode == PTXQ_QUANT_NVFP4 && is_static && d->amax)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quantize: static NVFP4 takes no desc.amax");
    p->row_mode = p->block == 0;

    ptxq_quant_args *a = &p->args;
    int64_t xd[3], qd[3];
    uint64_t xs[3], qs[3];
    lead3(x, xd, xs);
    lead3(q, qd, qs);
    a->x = x->data;
    a->q = q->data;
    a->s = s->data;
    a->amax = d->amax;
    a->gscale = d->global_scale;
    a->xs0 = xs[0]; a->xs1 = xs[1]; a->xs2 = xs[2];
    a->qs0 = qs[0]; a->qs1 = qs[1]; a->qs2 = qs[2];
    a->ss0 = ss[0]; a->ss1 = ss[1]; a->ss2 = ss[2];
    /* one scale a row (nk = 1): its K stride is never used */
    a->ssk = d->scale_layout == PTXQ_SCALE_STRIDED && p->block > 0 && p->nk > 1
                 ? (uint64_t)s->stride[r - 1] : 0;
    a->d1 = (uint32_t)xd[1];
    a->d2 = (uint32_t)xd[2];
    a->vpr = (uint32_t)(p->K / p->vec);
    a->nrows = (uint32_t)p->rows;
    a->total = (uint32_t)(p->rows * (p->K / p->vec));
    a->kb4 = (uint32_t)ceil_div(p->nk, 4);
    a->flags = 0;
    if (d->flags & PTXQ_QUANT_STATIC_SCALE) {
        a->flags |= PTXQ_QUANT_FLAG_STATIC;
        if (d->amax) a->flags |= PTXQ_QUANT_FLAG_WRITE_AMAX;
    }
    if (d->scale_layout == PTXQ_SCALE_128x4) a->flags |= PTXQ_QUANT_FLAG_SF128x4;
    /* FLAT: row r starts at r * pitch everywhere, with 32-bit pitches (the kernel's fast path) */
    if (ptxq_rows_collapse(x) && ptxq_rows_collapse(q) && a->xs2 < 0xFFFFFFFFull && a->qs2 < 0xFFFFFFFFull &&
        a->ss2 < 0xFFFFFFFFull &&
        (d->scale_layout != PTXQ_SCALE_STRIDED || p->block < 0 || ptxq_rows_collapse(s)))
        a->flags |= PTXQ_QUANT_FLAG_FLAT;
    if (a->ssk > 0xFFFFFFFFull)
        return ptxq_fail(PTXQ_ERR_STRIDE, "quantize: the scale stride along K exceeds 2^32 elements");
    /* (an empty x enqueues nothing, whatever its other dimensions) */
    if (p->rows * p->K > 0 && (p->rows > 0xFFFFFFFFll || xd[1] > 0xFFFFFFFFll || xd[2] > 0xFFFFFFFFll))
        return ptxq_fail(PTXQ_ERR_SHAPE, "quantize: a dimension exceeds 2^32");
    return PTXQ_OK;
}

ptxq_status ptxq_quant_validate(const ptxq_quant_desc *d, const ptxq_tensor *x,
                                const ptxq_tensor *q, const ptxq_tensor *s) {
    quant_plan p;
    int st = plan_quant(d, x, q, s, &p);
    if (st) return (ptxq_status)st;
    return (ptxq_status)ptxq_ok();
}

ptxq_status ptxq_quant_scale_shape(const ptxq_quant_desc *d, const ptxq_tensor *x,
                                   ptxq_tensor *scale, size_t *bytes) {
    if (!d || !scale) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quant_scale_shape: NULL argument");
    int st = ptxq_check_tensor(x, "quant_scale_shape: x", 0);
    if (st) return st;
    const char *kmode = NULL;
    ptxq_dtype sdt = PTXQ_F32;
    int block = 0;
    if ((st = mode_info(d, &kmode, &sdt, &block))) return st;
    if (x->rank < 2) return ptxq_fail(PTXQ_ERR_SHAPE, "quant_scale_shape: x rank %d < 2", x->rank);
    int64_t K = x->shape[x->rank - 1], rows = ptxq_shape_product(x->shape, x->rank - 1);
    if (block > 0 && K % block)
        return ptxq_fail(PTXQ_ERR_SHAPE, "quant_scale_shape: K = %lld not a multiple of %d",
                         (long long)K, block);
    int64_t shape[PTXQ_MAX_RANK];
    int rank = x->rank;
    if (d->scale_layout != PTXQ_SCALE_STRIDED && d->scale_layout != PTXQ_SCALE_128x4)
        return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "quant_scale_shape: unknown scale layout %d",
                         (int)d->scale_layout);
    if (d->scale_layout == PTXQ_SCALE_128x4) {
        if (d->mode != PTXQ_QUANT_MXFP8 && d->mode != PTXQ_QUANT_NVFP4)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "the 128x4 scale layout is for MXFP8 and NVFP4");
        if (x->rank != 2)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "quant_scale_shape: the 128x4 scale layout needs "
                             "a rank-2 x");
        rank = 1;
        shape[0] = (int64_t)sf128_bytes(rows, K / block);
    } else if (block < 0) {
        rank = 1;
        shape[0] = 1;
    } else {
        for (int i = 0; i < x->rank - 1; ++i) shape[i] = x->shape[i];
        shape[x->rank - 1] = block > 0 ? K / block : 1;
    }
    /* an empty x of huge other dimensions (K = 0 in a row mode: one scale a row) would ask for
     * a scale no call accepts: refused here too (found by review: its byte count wrapped) */
    int64_t n = ptxq_shape_product(shape, rank);
    if (n >= (int64_t)1 << 48)
        return ptxq_fail(PTXQ_ERR_SHAPE, "quant_scale_shape: the scale would have 2^48 elements "
                         "or more");
    *scale = ptxq_tensor_make(sdt, rank, shape, 0);
    if (bytes) *bytes = (size_t)n * (size_t)(ptxq_dtype_bits(sdt) / 8);
    return ptxq_ok();
}

static int quant_launch(ptxq_context *ctx, quant_plan *p, const ptxq_tensor *x,
                        const ptxq_loaded *kq, const ptxq_loaded *ka, void *stream);

ptxq_status ptxq_quantize(ptxq_context *ctx, const ptxq_quant_desc *d, const ptxq_tensor *x,
                          const ptxq_tensor *q, const ptxq_tensor *s, void *stream) {
    if (!ctx) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "quantize: ctx is NULL");
    quant_plan p;
    int st = plan_quant(d, x, q, s, &p);
    if (st) return st;
    if (p.rows == 0 || p.K == 0) return ptxq_ok(); /* empty: nothing to enqueue */
    const ptxq_loaded *kq = NULL, *ka = NULL;
    if ((st = ptxq_get_kernel(ctx, p.kernel, &kq))) return st;
    if (p.amax_kernel[0] && (st = ptxq_get_kernel(ctx, p.amax_kernel, &ka))) return st;

    CUcontext prev;
    if ((st = ptxq_ctx_enter(ctx, &prev))) return st;
    st = quant_launch(ctx, &p, x, kq, ka, stream);
    ptxq_ctx_leave(ctx, prev);
    return st ? st : ptxq_ok();
}

/* ptxq_quantize's launches (ctx current): the amax memset, the amax pass, the main kernel. */
static int quant_launch(ptxq_context *ctx, quant_plan *p, const ptxq_tensor *x,
                        const ptxq_loaded *kq, const ptxq_loaded *ka, void *stream) {
    int st;
    const ptxq_cudrv *drv = ctx->drv;
    CUresult r;
    unsigned sms = (unsigned)ctx->info.sm_count;
    unsigned warps = PTXQ_QUANT_THREADS / 32;
    uint64_t work = p->row_cta    ? (uint64_t)p->rows
                    : p->row_mode ? (uint64_t)ceil_div(p->rows, warps)
                                 : (uint64_t)ceil_div(p->args.total, (int64_t)warps * 32 * p->unroll);
    /* persistent: at most one wave of resident CTAs, each striding over the work */
    uint64_t resident = (uint64_t)sms * (uint64_t)kq->ctas_per_sm;
    unsigned grid = (unsigned)(work < resident ? work : resident);
    if (grid == 0) grid = 1;
    /* the amax pass always takes one 16-byte vector per item */
    ptxq_quant_args aargs = p->args;
    int64_t avec = 16 / (ptxq_dtype_bits(x->dtype) / 8);
    aargs.vpr = (uint32_t)(p->K / avec);
    aargs.total = (uint32_t)(p->rows * (p->K / avec));
    uint64_t awork = (uint64_t)ceil_div(aargs.total, (int64_t)warps * 32 * PTXQ_QUANT_UNROLL);
    uint64_t resident_a = ka ? (uint64_t)sms * (uint64_t)ka->ctas_per_sm : 0;
    unsigned grid_a = (unsigned)(awork < resident_a ? awork : resident_a);
    if (grid_a == 0) grid_a = 1;
    void *params[] = {&p->args};
    void *aparams[] = {&aargs};
    if (p->memset_amax && (r = drv->cuMemsetD32Async(p->args.amax, 0, 1, (CUstream)stream)))
        return ptxq_cuda_fail(drv, r, "cuMemsetD32Async (amax)");
    if (ka && (st = ptxq_launch_ex_current(ctx, ka, grid_a, PTXQ_QUANT_THREADS, 0, stream, aparams,
                                           0u, 0u)))
        return st;
    if ((st = ptxq_launch_ex_current(ctx, kq, grid, PTXQ_QUANT_THREADS, 0, stream, params, 0u, 0u)))
        return st;
    return PTXQ_OK;
}

/* ---- dequantize (hand-written kernel ptx/dequant_fp8_bf16.ptx) ------------------------------- */
static int is_dense(const ptxq_tensor *t) {
    if (ptxq_shape_product(t->shape, t->rank) == 0) return 1; /* nothing to address */
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; --i) {
        if (t->shape[i] != 1 && t->stride[i] != s) return 0;
        s *= t->shape[i];
    }
    return 1;
}

ptxq_status ptxq_dequantize_fp8_validate(const ptxq_tensor *q, uint64_t scale, const ptxq_tensor *y) {
    int st;
    if ((st = ptxq_check_tensor(q, "dequantize: q", 1))) return st;
    if ((st = ptxq_check_tensor(y, "dequantize: y", 1))) return st;
    if ((st = ptxq_check_disjoint(y, "dequantize: y"))) return st;
    if (q->dtype != PTXQ_E4M3 && q->dtype != PTXQ_E5M2)
        return ptxq_fail(PTXQ_ERR_DTYPE, "dequantize: q is %s; E4M3 or E5M2 expected",
                         ptxq_dtype_name(q->dtype));
    if (y->dtype != PTXQ_BF16)
        return ptxq_fail(PTXQ_ERR_DTYPE, "dequantize: y is %s; BF16 expected", ptxq_dtype_name(y->dtype));
    if (q->rank != y->rank)
        return ptxq_fail(PTXQ_ERR_SHAPE, "dequantize: q rank %d != y rank %d", q->rank, y->rank);
    for (int i = 0; i < q->rank; ++i)
        if (q->shape[i] != y->shape[i])
            return ptxq_fail(PTXQ_ERR_SHAPE, "dequantize: q.shape[%d] = %lld != y.shape[%d] = %lld",
                             i, (long long)q->shape[i], i, (long long)y->shape[i]);
    int64_t n = ptxq_shape_product(q->shape, q->rank);
    /* the kernel counts units of 8 codes in 32 bits and grid-strides past the last one: below
     * 2^31 units (2^34 elements) no index wraps (found by review: near 2^35 they wrapped and the
     * loop restarted, when the kernel's units were 16 codes and the limit 2^35) */
    if (n % 16 || n / 8 >= ((int64_t)1 << 31))
        return ptxq_fail(PTXQ_ERR_SHAPE, "dequantize: %lld elements; a multiple of 16 below 2^34 "
                         "expected", (long long)n);
    if (!is_dense(q) || !is_dense(y))
        return ptxq_fail(PTXQ_ERR_STRIDE, "dequantize: q and y must be contiguous");
    if (q->data % 16 || y->data % 16)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "dequantize: q and y must be 16-byte aligned");
    if (!scale || scale % 4)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "dequantize: scale must be a 4-byte aligned "
                         "device float*");
    /* y written while q and the scale are read (found by review: not checked) */
    if (ptxq_tensors_overlap(y, q) || ptxq_bytes_overlap(y->data, ptxq_tensor_bytes(y), scale, 4))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "dequantize: y overlaps q or the scale");
    return (ptxq_status)ptxq_ok();
}

ptxq_status ptxq_dequantize_fp8(ptxq_context *ctx, const ptxq_tensor *q, uint64_t scale,
                                const ptxq_tensor *y, void *stream) {
    if (!ctx) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "dequantize: ctx is NULL");
    int st = ptxq_dequantize_fp8_validate(q, scale, y);
    if (st) return st;
    const ptxq_loaded *k = NULL;
    if ((st = ptxq_get_kernel(ctx, "dequant_fp8_bf16", &k))) return st;
    int64_t n = ptxq_shape_product(q->shape, q->rank);
    if (n == 0) return ptxq_ok();
    uint64_t qd = q->data, yd = y->data, sd = scale;
    uint32_t n16 = (uint32_t)(n / 16), e5m2 = q->dtype == PTXQ_E5M2;
    void *params[] = {&qd, &yd, &sd, &n16, &e5m2};
    /* groups of 16 codes: a thread takes 32 codes a trip (four units of 8) */
    uint64_t groups_per_cta = 2 * (uint64_t)k->entry->threads;
    uint64_t work = (n16 + groups_per_cta - 1) / groups_per_cta;
    uint64_t resident = (uint64_t)ctx->info.sm_count * (uint64_t)k->ctas_per_sm;
    unsigned grid = (unsigned)(work < resident ? work : resident);
    if ((st = ptxq_launch(ctx, k, grid ? grid : 1, (unsigned)k->entry->threads, 0, stream, params)))
        return st;
    return ptxq_ok();
}
