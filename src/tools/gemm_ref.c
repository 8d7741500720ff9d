/* gemm_ref.c -- see gemm_ref.h. */
#include "gemm_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint8_t gemm_rand_e4m3(rng64 *r) {
    double v = (rng_uniform(r) * 4.0 - 1.0) * ldexp(1.0, (int)(rng_uniform(r) * 4.0) - 2);
    uint8_t c = ptxq_e4m3_encode((float)v, 1);
    if ((c & 0x7F) == 0) c = 0x38 | (c & 0x80); /* never zero: +-1.0 */
    return c;
}

float gemm_rand_scale(rng64 *r, double lo_log2, double hi_log2) {
    return (float)exp2(lo_log2 + (hi_log2 - lo_log2) * rng_uniform(r));
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "gemm_ref: out of host memory (%zu bytes)\n", n);
        exit(3);
    }
    return p;
}

static uint8_t rand_fp8(rng64 *r, ptxq_dtype t) {
    if (t != PTXQ_E5M2) return gemm_rand_e4m3(r);
    double v = (rng_uniform(r) * 4.0 - 1.0) * ldexp(1.0, (int)(rng_uniform(r) * 4.0) - 2);
    uint8_t c = ptxq_e5m2_encode((float)v, 1);
    if ((c & 0x7F) == 0) c = 0x3C | (c & 0x80); /* never zero: +-1.0 */
    return c;
}

/* Random BF16 with all 8 significant bits in use: values in [-2, 6), mostly positive, never 0. */
static uint16_t rand_bf16(rng64 *r) {
    double v = (rng_uniform(r) * 4.0 - 1.0) * ldexp(1.0, (int)(rng_uniform(r) * 4.0) - 2);
    uint16_t h = ptxq_bf16_encode((float)v);
    if ((h & 0x7FFF) == 0) h = 0x3F80 | (h & 0x8000); /* never zero: +-1.0 */
    return h;
}

static double load_el(const void *buf, ptxq_dtype t, int64_t i) {
    if (t == PTXQ_F32) return ((const float *)buf)[i];
    uint16_t h = ((const uint16_t *)buf)[i];
    return t == PTXQ_F16 ? ptxq_f16_decode(h) : ptxq_bf16_decode(h);
}

static void store_el(void *buf, ptxq_dtype t, int64_t i, float v) {
    if (t == PTXQ_F32) ((float *)buf)[i] = v;
    else ((uint16_t *)buf)[i] = t == PTXQ_F16 ? ptxq_f16_encode(v) : ptxq_bf16_encode(v);
}

static int is_poison(const void *buf, ptxq_dtype t, int64_t i) {
    if (t == PTXQ_F32) return ((const uint32_t *)buf)[i] == 0xFFFFFFFFu;
    return ((const uint16_t *)buf)[i] == 0xFFFF;
}

int gemm_case_run(ptxq_dev *d, const gemm_cfg *c, uint64_t seed, gemm_result *res) {
    memset(res, 0, sizeof *res);
    const ptxq_dtype at = c->a_type ? c->a_type : PTXQ_E4M3, bt = c->b_type ? c->b_type : PTXQ_E4M3;
    const ptxq_dtype dt = c->d_type ? c->d_type : PTXQ_BF16;
    const int64_t es = dt == PTXQ_F32 ? 4 : 2;
    const ptxq_gemm_grouping gm = c->grouping;
    const int64_t G = c->batch > 1 ? c->batch : 1;
    const int64_t N = c->N, K = c->K;
    const int64_t L = gm == PTXQ_GEMM_GROUP_CONTIGUOUS ? 1 : G;
    const int64_t Lb = gm == PTXQ_GEMM_GROUP_CONTIGUOUS ? G : (c->b_shared ? 1 : L);
    const int rank3 = gm == PTXQ_GEMM_GROUP_MASKED || (gm == PTXQ_GEMM_GROUP_NONE && G > 1);
    rng64 r = {seed * 0x9E3779B97F4A7C15ull + 1};

    /* rows: contiguous groups get random sizes (one empty), each padded to 128 rows */
    int64_t M = c->M;
    int32_t *hmap = NULL;
    int64_t nmap = 0;
    if (gm == PTXQ_GEMM_GROUP_CONTIGUOUS) {
        int64_t *sizes = xmalloc((size_t)G * sizeof *sizes), tot = 0;
        for (int64_t g = 0; g < G; ++g) {
            sizes[g] = c->group_sizes ? c->group_sizes[g]
                       : g == 1 && G > 2 ? 0 : 1 + (int64_t)(rng_uniform(&r) * (double)c->M);
            tot += (sizes[g] + 127) / 128 * 128;
        }
        M = tot;
        nmap = M;
        hmap = malloc((size_t)(M > 0 ? M : 1) * 4);
        int64_t row = 0;
        for (int64_t g = 0; g < G; ++g) {
            int64_t padded = (sizes[g] + 127) / 128 * 128;
            for (int64_t i = 0; i < padded; ++i) hmap[row++] = i < sizes[g] ? (int32_t)g : -1;
        }
        free(sizes);
    } else if (gm == PTXQ_GEMM_GROUP_MASKED) {
        nmap = G;
        hmap = malloc((size_t)G * 4);
        for (int64_t g = 0; g < G; ++g)
            hmap[g] = c->group_sizes ? c->group_sizes[g]
                      : g == 0 ? (int32_t)M : g == 1 && G > 2 ? 0 : (int32_t)(rng_uniform(&r) * (double)(M + 1));
    }
    const int64_t lda = K + c->pad_a, ldd = (N + c->pad_d + 1) / 2 * 2; /* even: pair stores */
    const int64_t nkb = (K + 127) / 128, nbn = (N + 127) / 128;
    const int64_t a_el = L * M * lda, b_el = Lb * N * lda, d_el = L * M * ldd;
    /* operands: FP8 codes (ha, hb), or BF16 (bits in ha, hb as uint16_t; esz 2) */
    const int bf = at == PTXQ_BF16;
    const size_t esz = bf ? 2 : 1;
    uint8_t *ha = xmalloc((size_t)a_el * esz), *hb = xmalloc((size_t)b_el * esz);
    for (int64_t i = 0; i < a_el; ++i) {
        if (bf) ((uint16_t *)ha)[i] = rand_bf16(&r);
        else ha[i] = rand_fp8(&r, at);
    }
    for (int64_t i = 0; i < b_el; ++i) {
        if (bf) ((uint16_t *)hb)[i] = rand_bf16(&r);
        else hb[i] = rand_fp8(&r, bt);
    }
    /* scales: one set, or one per batch of A (not for contiguous groups) and of B */
    const int64_t sla = c->scales_batched && gm != PTXQ_GEMM_GROUP_CONTIGUOUS ? L : 1;
    const int64_t slb = c->scales_batched ? Lb : 1;
    int64_t nsa = 1, nsb = 1;
    if (c->scaling == PTXQ_GEMM_SCALE_ROW) nsa = M, nsb = N;
    const int mx = c->scaling == PTXQ_GEMM_SCALE_MX;
    const int64_t nk32 = K / 32;
    const int64_t kpitch = c->sa_kpitch > nkb && !c->sa_mmajor ? c->sa_kpitch : nkb;
    if (c->scaling == PTXQ_GEMM_SCALE_BLOCK) nsa = M * kpitch, nsb = nbn * nkb;
    if (mx) nsa = M * nk32, nsb = N * nk32;
    double lo = dt == PTXQ_F16 ? -6 : -3, hi = dt == PTXQ_F16 ? -3 : 3; /* F16: no overflow */
    float *hsa = xmalloc((size_t)(nsa * sla) * 4), *hsb = xmalloc((size_t)(nsb * slb) * 4);
    /* MX: UE8M0 codes 2^lo .. 2^hi (the device gets the bytes, the reference their values) */
    uint8_t *csa = mx ? xmalloc((size_t)(nsa * sla)) : NULL, *csb = mx ? xmalloc((size_t)(nsb * slb)) : NULL;
    for (int64_t i = 0; i < nsa * sla; ++i) {
        if (mx) csa[i] = (uint8_t)(127 + (int)lo + (int)(rng_uniform(&r) * (hi - lo + 1)));
        hsa[i] = mx ? (float)ldexp(1, csa[i] - 127) : gemm_rand_scale(&r, lo, hi);
    }
    for (int64_t i = 0; i < nsb * slb; ++i) {
        if (mx) csb[i] = (uint8_t)(127 + (int)lo + (int)(rng_uniform(&r) * (hi - lo + 1)));
        hsb[i] = mx ? (float)ldexp(1, csb[i] - 127) : gemm_rand_scale(&r, lo, hi);
    }
    /* C (random, d's dtype and layout) and bias */
    void *hc = NULL, *hbias = NULL;
    const ptxq_dtype bist = c->bias_type;
    const int64_t nbias = c->bias_type ? (c->bias_batched ? Lb : 1) * N : 0;
    if (c->with_c) {
        hc = xmalloc((size_t)(d_el * es));
        for (int64_t i = 0; i < d_el; ++i) store_el(hc, dt, i, (float)(rng_uniform(&r) * 4.0 - 2.0));
    }
    if (nbias) {
        hbias = xmalloc((size_t)(nbias * 4));
        for (int64_t i = 0; i < nbias; ++i) store_el(hbias, bist, i, (float)(rng_uniform(&r) * 2.0 - 1.0));
    }

    uint64_t da = dev_alloc(d, (size_t)a_el * esz + 16), db = dev_alloc(d, (size_t)b_el * esz + 16);
    const size_t ssz = mx ? 1 : 4; /* scale element size */
    uint64_t dsa = dev_alloc(d, (size_t)(nsa * sla) * ssz), dsb = dev_alloc(d, (size_t)(nsb * slb) * ssz);
    size_t dbytes = (size_t)(d_el * es);
    uint64_t dd = dev_alloc(d, dbytes + 16);
    uint64_t dc = c->with_c && !c->c_is_d ? dev_alloc(d, dbytes + 16) : 0;
    uint64_t dbias = nbias ? dev_alloc(d, (size_t)(nbias * 4)) : 0;
    uint64_t dmap = hmap ? dev_alloc(d, (size_t)(nmap > 0 ? nmap : 1) * 4) : 0;
    dev_upload(d, da, ha, (size_t)a_el * esz);
    dev_upload(d, db, hb, (size_t)b_el * esz);
    dev_upload(d, dsa, mx ? (void *)csa : (void *)hsa, (size_t)(nsa * sla) * ssz);
    dev_upload(d, dsb, mx ? (void *)csb : (void *)hsb, (size_t)(nsb * slb) * ssz);
    if (nbias) dev_upload(d, dbias, hbias, (size_t)(nbias * (bist == PTXQ_F32 ? 4 : 2)));
    if (hmap && nmap) dev_upload(d, dmap, hmap, (size_t)nmap * 4);
    if (c->with_c && !c->c_is_d) dev_upload(d, dc, hc, dbytes);
    if (c->c_is_d) dev_upload(d, dd, hc, dbytes);
    else dev_fill(d, dd, 0xFF, dbytes); /* poison: 0xFFFF / 0xFFFFFFFF are NaNs */

    int64_t sa_m = 1, sa_k = 0, sb_n = 0, sb_k = 0;
    ptxq_tensor ta, tb, td, tc, tbias, tmap, tsa, tsb;
    if (rank3) {
        ta = ptxq_tensor_make(at, 3, (int64_t[]){L, M, K}, da);
        ta.stride[0] = M * lda, ta.stride[1] = lda;
        td = ptxq_tensor_make(dt, 3, (int64_t[]){L, M, N}, dd);
        td.stride[0] = M * ldd, td.stride[1] = ldd;
    } else if (c->odd_bstride) {
        ta = ptxq_tensor_make(at, 3, (int64_t[]){1, M, K}, da);
        ta.stride[0] = M * lda + 1, ta.stride[1] = lda;
        td = ptxq_tensor_make(dt, 3, (int64_t[]){1, M, N}, dd);
        td.stride[0] = M * ldd + 1, td.stride[1] = ldd;
    } else {
        ta = ptxq_tensor_make(at, 2, (int64_t[]){M, K}, da);
        ta.stride[0] = lda;
        td = ptxq_tensor_make(dt, 2, (int64_t[]){M, N}, dd);
        td.stride[0] = ldd;
    }
    if (Lb > 1 || gm != PTXQ_GEMM_GROUP_NONE || (rank3 && !c->b_shared)) {
        tb = ptxq_tensor_make(bt, 3, (int64_t[]){Lb, N, K}, db);
        tb.stride[0] = N * lda, tb.stride[1] = lda;
    } else if (c->odd_bstride) { /* rank-3 B too: the maps are 3-D (gemm.c maps3d) */
        tb = ptxq_tensor_make(bt, 3, (int64_t[]){1, N, K}, db);
        tb.stride[0] = N * lda + 1, tb.stride[1] = lda;
    } else {
        tb = ptxq_tensor_make(bt, 2, (int64_t[]){N, K}, db);
        tb.stride[0] = lda;
    }
    tc = td;
    tc.data = c->c_is_d ? dd : dc;
    if (nbias) {
        tbias = c->bias_batched ? ptxq_tensor_make(bist, 2, (int64_t[]){Lb, N}, dbias)
                                : ptxq_tensor_make(bist, 1, (int64_t[]){N}, dbias);
    }
    if (hmap) tmap = ptxq_tensor_make(PTXQ_I32, 1, (int64_t[]){nmap}, dmap);
    if (c->scaling == PTXQ_GEMM_SCALE_TENSOR && c->unit_scales) {
        memset(&tsa, 0, sizeof tsa);
        memset(&tsb, 0, sizeof tsb);
        /* NULL scale pointers: 1.0 for every batch (scales_batched or not) */
        for (int64_t i = 0; i < nsa * sla; ++i) hsa[i] = 1.0f;
        for (int64_t i = 0; i < nsb * slb; ++i) hsb[i] = 1.0f;
    } else if (c->scaling == PTXQ_GEMM_SCALE_TENSOR) {
        tsa = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){sla}, dsa);
        tsb = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){slb}, dsb);
    } else if (c->scaling == PTXQ_GEMM_SCALE_ROW) {
        tsa = sla > 1 ? ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){sla, M}, dsa)
                      : ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){M, 1}, dsa);
        tsb = slb > 1 ? ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){slb, N}, dsb)
                      : ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){N}, dsb);
    } else if (mx) {
        tsa = sla > 1 ? ptxq_tensor_make(PTXQ_UE8M0, 3, (int64_t[]){sla, M, nk32}, dsa)
                      : ptxq_tensor_make(PTXQ_UE8M0, 2, (int64_t[]){M, nk32}, dsa);
        tsb = slb > 1 ? ptxq_tensor_make(PTXQ_UE8M0, 3, (int64_t[]){slb, N, nk32}, dsb)
                      : ptxq_tensor_make(PTXQ_UE8M0, 2, (int64_t[]){N, nk32}, dsb);
    } else {
        tsa = sla > 1 ? ptxq_tensor_make(PTXQ_F32, 3, (int64_t[]){sla, M, nkb}, dsa)
                      : ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){M, nkb}, dsa);
        if (c->sa_mmajor) { /* per batch: strides {1, M} */
            tsa.stride[tsa.rank - 2] = 1;
            tsa.stride[tsa.rank - 1] = M;
        } else if (kpitch > nkb) { /* padded rows: strides {kpitch, 1}, batches M * kpitch apart */
            tsa.stride[tsa.rank - 2] = kpitch;
            if (tsa.rank == 3) tsa.stride[0] = M * kpitch;
        }
        tsb = slb > 1 ? ptxq_tensor_make(PTXQ_F32, 3, (int64_t[]){slb, nbn, nkb}, dsb)
                      : ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){nbn, nkb}, dsb);
        if (c->sb_nmajor) { /* per batch: strides {1, nbn} */
            tsb.stride[tsb.rank - 2] = 1;
            tsb.stride[tsb.rank - 1] = nbn;
        }
    }
    if (c->scaling == PTXQ_GEMM_SCALE_BLOCK) {
        sa_m = tsa.stride[tsa.rank - 2];
        sa_k = tsa.stride[tsa.rank - 1];
        sb_n = tsb.stride[tsb.rank - 2];
        sb_k = tsb.stride[tsb.rank - 1];
    }
    ptxq_gemm_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.scaling = c->scaling;
    desc.a_scale = c->unit_scales ? NULL : &tsa;
    desc.b_scale = c->unit_scales ? NULL : &tsb;
    desc.mx_path = (ptxq_gemm_mx_path)c->mx_path;
    desc.tile_n = c->tile_n;
    desc.tile_m = c->tile_m;
    desc.cluster = c->cluster;
    desc.group_m = c->group_m;
    desc.alpha = c->alpha;
    desc.beta = c->beta;
    desc.c = c->with_c ? &tc : NULL;
    desc.bias = nbias ? &tbias : NULL;
    desc.grouping = gm;
    desc.group_rows = hmap ? &tmap : NULL;
    desc.expected_rows = c->expected_rows;
    desc.split_k = c->split_k;
    desc.store = c->store;
    desc.ctas = c->ctas;
    desc.flags = c->flags;
    size_t wsb = 0;
    uint64_t dws = 0;
    if (!c->no_ws && ptxq_gemm_workspace_size(&desc, &ta, &tb, &td, &wsb) == PTXQ_OK && wsb) {
        dws = dev_alloc_aligned(d, wsb, 256);
        dev_fill(d, dws, 0xA5, wsb); /* garbage: the kernel must not rely on its content */
        desc.workspace = dws;
        desc.workspace_bytes = wsb;
    }
    ptxq_gemm_kernel_for(&desc, &ta, &tb, &td, res->kernel, sizeof res->kernel);
    ptxq_gemm_plan plan;
    if (ptxq_gemm_plan_for(d->ctx, &desc, &ta, &tb, &td, &plan) == PTXQ_OK) {
        res->splits = plan.splits;
        res->split_tiles = plan.split_tiles;
        res->dequant = plan.dequant;
        res->cluster_split = plan.cluster_split;
        snprintf(res->launched, sizeof res->launched, "%s", plan.kernel);
    }
    int st = ptxq_gemm(d->ctx, &desc, &ta, &tb, &td, d->stream);
    if (st != PTXQ_OK) /* now: the frees and copies below may clear the thread's message */
        snprintf(res->error, sizeof res->error, "%s", ptxq_last_error());
    void *hd = xmalloc(dbytes);
    dev_sync(d);
    dev_download(d, hd, dd, dbytes);

    if (st == PTXQ_OK) {
        const double alpha = c->alpha == 0.0f ? 1.0 : (double)c->alpha, beta = c->beta;
        const double u = dt == PTXQ_F32 ? ldexp(1, -24) : dt == PTXQ_F16 ? ldexp(1, -11) : ldexp(1, -8);
        /* below D's normal range its spacing is absolute: half of the subnormal step (an F16 D
         * of 1.1e-5 rounded to 2^-24 steps failed u |ref| alone: test_random_configs, BF16 x
         * BF16 -> F16, K = 8) */
        const double sub = dt == PTXQ_F32 ? ldexp(1, -150) : dt == PTXQ_F16 ? ldexp(1, -25) : ldexp(1, -134);
        /* the S term: FP8's truncating k32 steps (gemm_ref.h), or for BF16 operands FP32
         * accumulation: exact products, one rounding (at most 2^-23 of a partial sum <= S) per
         * add, K adds */
        const double tol_norm = bf ? ldexp((double)(K > 64 ? K : 64), -23) : GEMM_TOL_NORM;
        float deca[256], decb[256];
        for (int i = 0; i < 256; ++i) {
            deca[i] = at == PTXQ_E5M2 ? ptxq_e5m2_decode((uint8_t)i) : ptxq_e4m3_decode((uint8_t)i);
            decb[i] = bt == PTXQ_E5M2 ? ptxq_e5m2_decode((uint8_t)i) : ptxq_e4m3_decode((uint8_t)i);
        }
        float *fa = xmalloc((size_t)K * 4 + 4);
        const int full_scan = c->sample_rows > 0 && gm == PTXQ_GEMM_GROUP_NONE && !c->c_is_d;
        for (int64_t ba = 0; ba < L; ++ba) {
            const uint8_t *A = ha + ba * M * lda;
            const uint16_t *A16 = (const uint16_t *)ha + ba * M * lda;
            const int64_t d0 = ba * M * ldd;
            int64_t nrows = c->sample_rows > 0 && c->sample_rows + 2 < M ? c->sample_rows + 2 : M;
            for (int64_t ri = 0; ri < nrows; ++ri) {
                int64_t m = nrows == M ? ri : ri == 0 ? 0 : ri == 1 ? M - 1 : (int64_t)(rng_uniform(&r) * M);
                int64_t bb = gm == PTXQ_GEMM_GROUP_CONTIGUOUS ? hmap[m] : c->b_shared ? 0 : ba;
                int valid = gm == PTXQ_GEMM_GROUP_CONTIGUOUS ? hmap[m] >= 0
                            : gm == PTXQ_GEMM_GROUP_MASKED ? m < hmap[ba] : 1;
                for (int64_t n = N; n < ldd; ++n) /* row padding must stay untouched */
                    if (!(c->c_is_d ? load_el(hd, dt, d0 + m * ldd + n) == load_el(hc, dt, d0 + m * ldd + n) ||
                          isnan(load_el(hc, dt, d0 + m * ldd + n))
                                    : is_poison(hd, dt, d0 + m * ldd + n)) && res->bad++ == 0)
                        snprintf(res->first_bad, sizeof res->first_bad,
                                 "padding d[%lld, %lld, %lld] written (%.8g)", (long long)ba,
                                 (long long)m, (long long)n, load_el(hd, dt, d0 + m * ldd + n));
                if (!valid) {
                    ++res->skipped_rows;
                    for (int64_t n = 0; n < N; ++n) {
                        int64_t i = d0 + m * ldd + n;
                        int same = c->c_is_d ? load_el(hd, dt, i) == load_el(hc, dt, i) : is_poison(hd, dt, i);
                        if (!same && res->bad++ == 0)
                            snprintf(res->first_bad, sizeof res->first_bad,
                                     "d[%lld, %lld, %lld] written in a row that is not computed",
                                     (long long)ba, (long long)m, (long long)n);
                    }
                    continue;
                }
                for (int64_t k = 0; k < K; ++k)
                    fa[k] = bf ? ptxq_bf16_decode(A16[m * lda + k]) : deca[A[m * lda + k]];
                const float *sa = hsa + (sla > 1 ? ba * nsa : 0);
                const float *sb = hsb + (slb > 1 ? bb * nsb : 0);
                const uint8_t *B = hb + bb * N * lda;
                const uint16_t *B16 = (const uint16_t *)hb + bb * N * lda;
                for (int64_t n = 0; n < N; ++n) {
                    const uint8_t *brow = B + n * lda;
                    const uint16_t *brow16 = B16 + n * lda;
                    double ref = 0, S = 0;
                    const int64_t gran = mx ? 32 : 128, nblk = mx ? nk32 : nkb;
                    for (int64_t kb = 0; kb < nblk; ++kb) {
                        double s = 0, sabs = 0;
                        int64_t k1 = (kb + 1) * gran < K ? (kb + 1) * gran : K;
                        for (int64_t k = kb * gran; k < k1; ++k) {
                            double p = (double)fa[k] * (bf ? (double)ptxq_bf16_decode(brow16[k])
                                                              : (double)decb[brow[k]]);
                            s += p;
                            sabs += fabs(p);
                        }
                        double sc = 1;
                        if (c->scaling == PTXQ_GEMM_SCALE_BLOCK)
                            sc = (double)sa[m * sa_m + kb * sa_k] * (double)sb[(n / 128) * sb_n + kb * sb_k];
                        if (mx) sc = (double)sa[m * nk32 + kb] * (double)sb[n * nk32 + kb];
                        ref += sc * s;
                        S += fabs(sc) * sabs;
                    }
                    double sc = 1;
                    if (c->scaling == PTXQ_GEMM_SCALE_TENSOR) sc = (double)sa[0] * (double)sb[0];
                    if (c->scaling == PTXQ_GEMM_SCALE_ROW) sc = (double)sa[m] * (double)sb[n];
                    ref *= sc * alpha;
                    S *= fabs(sc * alpha);
                    double E = fabs(ref);
                    int64_t i = d0 + m * ldd + n;
                    if (c->with_c) {
                        double cv = load_el(hc, dt, i);
                        ref += beta * cv;
                        E += fabs(beta * cv);
                    }
                    if (nbias) {
                        double bv = load_el(hbias, bist, (c->bias_batched ? bb * N : 0) + n);
                        ref += bv;
                        E += fabs(bv);
                    }
                    double got = load_el(hd, dt, i);
                    if (!c->c_is_d && !full_scan && is_poison(hd, dt, i)) ++res->unwritten;
                    double err = fabs(got - ref);
                    ++res->checked;
                    double norm = S > 0 ? err / S : err;
                    if (!(norm <= res->max_norm)) res->max_norm = isnan(norm) ? INFINITY : norm;
                    if (fabs(ref) >= 0.5 * S && S > 0) {
                        ++res->n_wc;
                        double rel = err / fabs(ref);
                        if (rel > res->max_rel_wc) res->max_rel_wc = rel;
                    }
                    if (!(err <= u * fabs(ref) + tol_norm * S + ldexp(E, -20) + sub)) {
                        if (res->bad++ == 0)
                            snprintf(res->first_bad, sizeof res->first_bad,
                                     "d[%lld, %lld, %lld] = %.8g, reference %.8g (S = %.4g, normalised "
                                     "error %.3g)", (long long)ba, (long long)m, (long long)n, got,
                                     ref, S, norm);
                    }
                }
            }
        }
        free(fa);
        /* sampled rows: every row of a plain call must still be written (a wrapped address
         * would leave rows unwritten that no sample hits), and every row's padding past N
         * untouched (a store past N lands in rows no sample hits just as well) */
        for (int64_t i = 0; full_scan && i < L * M; ++i) {
            for (int64_t n = 0; n < N; ++n)
                if (is_poison(hd, dt, i * ldd + n)) ++res->unwritten;
            for (int64_t n = N; n < ldd; ++n)
                if (!is_poison(hd, dt, i * ldd + n) && res->bad++ == 0)
                    snprintf(res->first_bad, sizeof res->first_bad,
                             "padding d[%lld, %lld, %lld] written (%.8g; a row not sampled)",
                             (long long)(i / M), (long long)(i % M), (long long)n,
                             load_el(hd, dt, i * ldd + n));
        }
    } else {
        /* a refused call must leave d untouched */
        for (int64_t i = 0; i < d_el; ++i)
            if (c->c_is_d ? !(load_el(hd, dt, i) == load_el(hc, dt, i) || isnan(load_el(hc, dt, i)))
                          : !is_poison(hd, dt, i))
                ++res->bad;
    }
    free(hd);
    free(ha);
    free(hb);
    free(hsa);
    free(hsb);
    free(csa);
    free(csb);
    free(hc);
    free(hbias);
    free(hmap);
    dev_free(d, da);
    dev_free(d, db);
    dev_free(d, dsa);
    dev_free(d, dsb);
    dev_free(d, dd);
    if (dc) dev_free(d, dc);
    if (dbias) dev_free(d, dbias);
    if (dmap) dev_free(d, dmap);
    if (dws) dev_free(d, dws);
    return st;
}
