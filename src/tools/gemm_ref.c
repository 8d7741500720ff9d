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

static float rand_scale(rng64 *r, double lo_log2, double hi_log2) {
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

int gemm_case_run(ptxq_dev *d, const gemm_cfg *c, uint64_t seed, gemm_result *res) {
    memset(res, 0, sizeof *res);
    const int64_t M = c->M, N = c->N, K = c->K;
    const int64_t lda = K + c->pad_a, ldd = (N + c->pad_d + 1) / 2 * 2; /* even: bf16x2 stores */
    const int64_t nkb = (K + 127) / 128, nbn = (N + 127) / 128;
    rng64 r = {seed * 0x9E3779B97F4A7C15ull + 1};
    uint8_t *ha = xmalloc((size_t)(M * lda)), *hb = xmalloc((size_t)(N * lda));
    for (int64_t i = 0; i < M * lda; ++i) ha[i] = gemm_rand_e4m3(&r);
    for (int64_t i = 0; i < N * lda; ++i) hb[i] = gemm_rand_e4m3(&r);
    /* scales */
    int64_t nsa = 1, nsb = 1;
    if (c->scaling == PTXQ_GEMM_SCALE_ROW) nsa = M, nsb = N;
    if (c->scaling == PTXQ_GEMM_SCALE_BLOCK) nsa = M * nkb, nsb = nbn * nkb;
    float *hsa = xmalloc((size_t)nsa * 4), *hsb = xmalloc((size_t)nsb * 4);
    for (int64_t i = 0; i < nsa; ++i) hsa[i] = rand_scale(&r, -3, 3);
    for (int64_t i = 0; i < nsb; ++i) hsb[i] = rand_scale(&r, -3, 3);

    uint64_t da = dev_alloc(d, (size_t)(M * lda) + 16), db = dev_alloc(d, (size_t)(N * lda) + 16);
    uint64_t dsa = dev_alloc(d, (size_t)nsa * 4), dsb = dev_alloc(d, (size_t)nsb * 4);
    size_t dbytes = (size_t)(M * ldd) * 2;
    uint64_t dd = dev_alloc(d, dbytes + 16);
    dev_upload(d, da, ha, (size_t)(M * lda));
    dev_upload(d, db, hb, (size_t)(N * lda));
    dev_upload(d, dsa, hsa, (size_t)nsa * 4);
    dev_upload(d, dsb, hsb, (size_t)nsb * 4);
    dev_fill(d, dd, 0xFF, dbytes); /* poison: BF16 0xFFFF is a NaN */

    int64_t sa_m = 1, sa_k = 0;
    ptxq_tensor ta = ptxq_tensor_make(PTXQ_E4M3, 2, (int64_t[]){M, K}, da);
    ta.stride[0] = lda;
    ptxq_tensor tb = ptxq_tensor_make(PTXQ_E4M3, 2, (int64_t[]){N, K}, db);
    tb.stride[0] = lda;
    ptxq_tensor td = ptxq_tensor_make(PTXQ_BF16, 2, (int64_t[]){M, N}, dd);
    td.stride[0] = ldd;
    ptxq_tensor tsa, tsb;
    if (c->scaling == PTXQ_GEMM_SCALE_TENSOR) {
        tsa = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){1}, dsa);
        tsb = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){1}, dsb);
    } else if (c->scaling == PTXQ_GEMM_SCALE_ROW) {
        tsa = ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){M, 1}, dsa);
        tsb = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){N}, dsb);
    } else {
        tsa = ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){M, nkb}, dsa);
        if (c->sa_mmajor) {
            tsa.stride[0] = 1;
            tsa.stride[1] = M;
        }
        tsb = ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){nbn, nkb}, dsb);
    }
    if (c->scaling == PTXQ_GEMM_SCALE_BLOCK) {
        sa_m = tsa.stride[0];
        sa_k = tsa.stride[1];
    }
    ptxq_gemm_desc desc = {c->scaling, &tsa, &tsb, c->tile_n, 0, c->cluster, 0};
    ptxq_gemm_kernel_for(&desc, &ta, &tb, &td, res->kernel, sizeof res->kernel);
    int st = ptxq_gemm(d->ctx, &desc, &ta, &tb, &td, d->stream);
    uint16_t *hd = xmalloc(dbytes);
    dev_sync(d);
    dev_download(d, hd, dd, dbytes);

    if (st == PTXQ_OK) {
        /* poison: every element of every row */
        for (int64_t m = 0; m < M; ++m) {
            for (int64_t n = 0; n < N; ++n)
                if (hd[m * ldd + n] == 0xFFFF) ++res->unwritten;
            for (int64_t n = N; n < ldd; ++n) /* row padding must stay untouched */
                if (hd[m * ldd + n] != 0xFFFF && res->bad++ == 0)
                    snprintf(res->first_bad, sizeof res->first_bad, "padding d[%lld, %lld] written",
                             (long long)m, (long long)n);
        }
        float dec[256];
        for (int i = 0; i < 256; ++i) dec[i] = ptxq_e4m3_decode((uint8_t)i);
        float *fb = xmalloc((size_t)(N * K) * 4 + 4);
        for (int64_t n = 0; n < N; ++n)
            for (int64_t k = 0; k < K; ++k) fb[n * K + k] = dec[hb[n * lda + k]];
        float *fa = xmalloc((size_t)K * 4 + 4);
        int64_t nrows = c->sample_rows > 0 && c->sample_rows + 2 < M ? c->sample_rows + 2 : M;
        for (int64_t ri = 0; ri < nrows; ++ri) {
            int64_t m = nrows == M ? ri : ri == 0 ? 0 : ri == 1 ? M - 1 : (int64_t)(rng_uniform(&r) * M);
            for (int64_t k = 0; k < K; ++k) fa[k] = dec[ha[m * lda + k]];
            for (int64_t n = 0; n < N; ++n) {
                const float *b = fb + n * K;
                double ref = 0, S = 0;
                for (int64_t kb = 0; kb < nkb; ++kb) {
                    double s = 0, sabs = 0;
                    int64_t k1 = (kb + 1) * 128 < K ? (kb + 1) * 128 : K;
                    for (int64_t k = kb * 128; k < k1; ++k) {
                        double p = (double)fa[k] * (double)b[k];
                        s += p;
                        sabs += fabs(p);
                    }
                    double sc = 1;
                    if (c->scaling == PTXQ_GEMM_SCALE_BLOCK)
                        sc = (double)hsa[m * sa_m + kb * sa_k] * (double)hsb[(n / 128) * nkb + kb];
                    ref += sc * s;
                    S += fabs(sc) * sabs;
                }
                double sc = 1;
                if (c->scaling == PTXQ_GEMM_SCALE_TENSOR) sc = (double)hsa[0] * (double)hsb[0];
                if (c->scaling == PTXQ_GEMM_SCALE_ROW) sc = (double)hsa[m] * (double)hsb[n];
                ref *= sc;
                S *= fabs(sc);
                double got = ptxq_bf16_decode(hd[m * ldd + n]);
                double err = fabs(got - ref);
                ++res->checked;
                double norm = S > 0 ? err / S : err;
                if (!(norm <= res->max_norm)) res->max_norm = isnan(norm) ? INFINITY : norm;
                if (fabs(ref) >= 0.5 * S && S > 0) {
                    ++res->n_wc;
                    double rel = err / fabs(ref);
                    if (rel > res->max_rel_wc) res->max_rel_wc = rel;
                }
                if (!(err <= ldexp(fabs(ref), -8) + GEMM_TOL_NORM * S)) {
                    if (res->bad++ == 0)
                        snprintf(res->first_bad, sizeof res->first_bad,
                                 "d[%lld, %lld] = %.8g, reference %.8g (S = %.4g, normalised error %.3g)",
                                 (long long)m, (long long)n, got, ref, S, norm);
                }
            }
        }
        free(fa);
        free(fb);
    } else {
        /* a refused call must leave d untouched */
        for (size_t i = 0; i < dbytes / 2; ++i)
            if (hd[i] != 0xFFFF) ++res->bad;
    }
    free(hd);
    free(ha);
    free(hb);
    free(hsa);
    free(hsb);
    dev_free(d, da);
    dev_free(d, db);
    dev_free(d, dsa);
    dev_free(d, dsb);
    dev_free(d, dd);
    return st;
}
