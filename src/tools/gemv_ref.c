/* gemv_ref.c -- see gemv_ref.h. */
#include "gemv_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant_ref.h"

void gemv_format_info(ptxq_gemv_format f, ptxq_dtype *elem, ptxq_dtype *sdtype, int *block) {
    *elem = f == PTXQ_GEMV_MXFP8 ? PTXQ_E4M3 : PTXQ_E2M1;
    *sdtype = f == PTXQ_GEMV_NVFP4 ? PTXQ_UE4M3 : PTXQ_UE8M0;
    *block = f == PTXQ_GEMV_NVFP4 ? 16 : 32;
}

const char *gemv_format_name(ptxq_gemv_format f) {
    return f == PTXQ_GEMV_NVFP4 ? "nvfp4" : f == PTXQ_GEMV_MXFP4 ? "mxfp4"
         : f == PTXQ_GEMV_MXFP8 ? "mxfp8" : "?";
}

static double elem_value(ptxq_dtype t, uint8_t c) {
    return t == PTXQ_E2M1 ? ptxq_e2m1_decode(c) : ptxq_e4m3_decode(c);
}

static double scale_value(ptxq_dtype t, uint8_t c) {
    return t == PTXQ_UE4M3 ? ptxq_ue4m3_decode(c) : ptxq_ue8m0_decode(c);
}

/* Any E2M1 code; E4M3 codes of magnitude below 16 (subnormals included), so that sums of
 * thousands of products stay inside F16's range. */
static uint8_t random_elem(ptxq_dtype t, rng64 *g) {
    uint64_t r = rng_next(g);
    if (t == PTXQ_E2M1) return (uint8_t)(r & 15);
    return (uint8_t)(((r >> 8) % 0x58) | (r & 0x80));
}

/* Scales near 1 (UE4M3 0.125 .. 2, UE8M0 2^-5 .. 2) so F16 outputs stay finite; now and then a
 * zero block scale (UE4M3 0) or the smallest UE8M0 (2^-127). */
static uint8_t random_scale(ptxq_dtype t, rng64 *g) {
    uint64_t r = rng_next(g);
    if (r % 61 == 0) return 0;
    if (t == PTXQ_UE4M3) return (uint8_t)(0x20 + (r >> 8) % 33);
    return (uint8_t)(122 + (r >> 8) % 7);
}

void gemv_problem_make(gemv_problem *p, ptxq_gemv_format f, ptxq_dtype xdtype, int64_t M, int64_t K,
                       int64_t L, int x_shared, int with_ga, int with_gx, uint64_t seed) {
    memset(p, 0, sizeof *p);
    p->format = f;
    gemv_format_info(f, &p->elem, &p->sdtype, &p->block);
    p->xdtype = xdtype ? xdtype : p->elem;
    p->M = M;
    p->K = K;
    p->L = L;
    p->nk = K / p->block;
    p->xl = x_shared ? 1 : L;
    rng64 g = {seed * 0x9E3779B97F4A7C15ull + 7};
    size_t na = (size_t)(L * M * K), nsa = (size_t)(L * M * p->nk);
    size_t nx = (size_t)(p->xl * K), nsx = (size_t)(p->xl * p->nk);
    p->a = malloc(na ? na : 1);
    p->sa = malloc(nsa ? nsa : 1);
    for (size_t i = 0; i < na; ++i) p->a[i] = random_elem(p->elem, &g);
    for (size_t i = 0; i < nsa; ++i) p->sa[i] = random_scale(p->sdtype, &g);
    if (p->xdtype == p->elem) {
        p->xq = malloc(nx ? nx : 1);
        p->sx = malloc(nsx ? nsx : 1);
        for (size_t i = 0; i < nx; ++i) p->xq[i] = random_elem(p->elem, &g);
        for (size_t i = 0; i < nsx; ++i) p->sx[i] = random_scale(p->sdtype, &g);
    } else {
        p->xh = malloc(sizeof *p->xh * (nx ? nx : 1));
        double mag = 1.0;
        for (size_t i = 0; i < nx; ++i) {
            if (i % 32 == 0) mag = ldexp(1.0, (int)(rng_next(&g) % 5) - 2);
            float v = (float)(rng_normal(&g) * mag);
            p->xh[i] = p->xdtype == PTXQ_BF16 ? ptxq_bf16_encode(v) : ptxq_f16_encode(v);
        }
    }
    p->ga = with_ga ? (float)(0.5 + rng_uniform(&g)) : 1.0f;
    p->gx = with_gx ? (float)(0.5 + rng_uniform(&g)) : 1.0f;
}

void gemv_problem_free(gemv_problem *p) {
    free(p->a);
    free(p->sa);
    free(p->xq);
    free(p->sx);
    free(p->xh);
    memset(p, 0, sizeof *p);
}

static double x_value(const gemv_problem *p, int64_t xrow, int64_t k) {
    size_t i = (size_t)(xrow * p->K + k);
    if (p->xq) return elem_value(p->elem, p->xq[i]) * scale_value(p->sdtype, p->sx[xrow * p->nk + k / p->block]);
    return p->xdtype == PTXQ_BF16 ? ptxq_bf16_decode(p->xh[i]) : ptxq_f16_decode(p->xh[i]);
}

void gemv_ref(const gemv_problem *p, double *y, double *yabs) {
    double *xv = malloc(sizeof *xv * (size_t)(p->K ? p->K : 1));
    double g = (double)p->ga * (double)p->gx;
    for (int64_t l = 0; l < p->L; ++l) {
        int64_t xrow = p->xl == 1 ? 0 : l;
        for (int64_t k = 0; k < p->K; ++k) xv[k] = x_value(p, xrow, k);
        for (int64_t m = 0; m < p->M; ++m) {
            const uint8_t *ar = p->a + (size_t)((l * p->M + m) * p->K);
            const uint8_t *sr = p->sa + (size_t)((l * p->M + m) * p->nk);
            double s = 0.0, sabs = 0.0;
            for (int64_t kb = 0; kb < p->nk; ++kb) {
                double sc = scale_value(p->sdtype, sr[kb]);
                for (int64_t k = kb * p->block; k < (kb + 1) * p->block; ++k) {
                    double t = elem_value(p->elem, ar[k]) * sc * xv[k];
                    s += t;
                    sabs += fabs(t);
                }
            }
            y[l * p->M + m] = s * g;
            yabs[l * p->M + m] = sabs * fabs(g);
        }
    }
    free(xv);
}

/* Half an ulp of v in dtype t (subnormal spacing below the normal range). */
static double half_ulp(ptxq_dtype t, double v) {
    int mant = t == PTXQ_F16 ? 10 : t == PTXQ_BF16 ? 7 : 23;
    int emin = t == PTXQ_F16 ? -14 : -126;
    int e = v > 0 ? (int)floor(log2(v)) : emin;
    if (e < emin) e = emin;
    return ldexp(1.0, e - mant - 1);
}

double gemv_bound(const gemv_problem *p, ptxq_dtype ydt, double ref, double yabs) {
    int64_t nch = (p->K * (p->elem == PTXQ_E2M1 ? 4 : 8) + 127) / 128;
    double acc = (48.0 + 2.0 * (double)((nch + 31) / 32)) * ldexp(1.0, -24) * yabs;
    /* FP4 A with F16 x: the tensor-core kernel accumulates A's values times 2^-14 (sm_90a's
     * decode, gen/gemv.py spread_f16) and scales back at the end, so an output under 2^-112 has
     * f32-subnormal partial sums: each of its at most nk + 16 roundings (a block each, the lane
     * and warp trees) is then 2^-150 absolute, 2^-136 once scaled back (seen on an H200: MXFP4
     * K = 32 rows with scale code 0, y about 1.8e-38, 4.5e-4 relative) */
    if (p->elem == PTXQ_E2M1 && p->xdtype == PTXQ_F16)
        acc += (double)(p->nk + 16) * ldexp(1.0, -136);
    return acc * 1.01 + half_ulp(ydt, fabs(ref) + acc) + 1e-300;
}

void gemv_case_describe(const gemv_case *c, char *buf, size_t n) {
    static const char *scales[3] = {"", " m-major-scales", " sf128x4"};
    char plan[64] = "";
    if (c->rows_per_thread || c->k_warps)
        snprintf(plan, sizeof plan, " plan r%d/k%d", c->rows_per_thread, c->k_warps);
    if (c->pipelined)
        snprintf(plan + strlen(plan), sizeof plan - strlen(plan), " pipelined %d", c->pipelined);
    if (c->scale_offset)
        snprintf(plan + strlen(plan), sizeof plan - strlen(plan), " scale-offset %d",
                 c->scale_offset);
    if (c->flags || c->prefetch_trips)
        snprintf(plan + strlen(plan), sizeof plan - strlen(plan), " flags 0x%x prefetch %d",
                 c->flags, c->prefetch_trips);
    char pad[32] = "";
    if (c->a_pad) snprintf(pad, sizeof pad, " a-pad %lld", (long long)c->a_pad);
    snprintf(buf, n, "%s x=%s y=%s M=%lld K=%lld L=%lld%s%s%s%s%s%s seed %llu",
             gemv_format_name(c->format), c->x ? ptxq_dtype_name(c->x) : gemv_format_name(c->format),
             ptxq_dtype_name(c->y), (long long)c->M, (long long)c->K, (long long)c->L,
             pad, scales[c->scales], c->x_shared ? " x-shared" : "",
             c->globals ? " globals" : "", c->odd_scales ? " odd-scales" : "", plan,
             (unsigned long long)c->seed);
}

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/* Writes code c (element index i of a row) into a packed row. */
static void put_code(unsigned char *row, ptxq_dtype t, int64_t i, uint8_t c) {
    if (t != PTXQ_E2M1) {
        row[i] = c;
        return;
    }
    unsigned char *b = &row[i / 2];
    *b = (unsigned char)(i % 2 ? (*b & 0x0F) | (c & 15) << 4 : (*b & 0xF0) | (c & 15));
}

int gemv_case_run(ptxq_dev *d, const gemv_case *c, gemv_result *res) {
    memset(res, 0, sizeof *res);
    gemv_problem p;
    ptxq_dtype elem, sdt;
    int blk;
    gemv_format_info(c->format, &elem, &sdt, &blk);
    int quant_x = c->x == 0 || c->x == elem;
    gemv_problem_make(&p, c->format, c->x, c->M, c->K, c->L, c->x_shared, c->globals,
                      c->globals && quant_x, c->seed);
    int64_t M = c->M, K = c->K, L = c->L, nk = p.nk;
    int fp4 = p.elem == PTXQ_E2M1;
    res->outputs = L * M;

    /* A: rows of K rounded up to 16 bytes, plus a_pad elements */
    int64_t apitch = round_up(K, fp4 ? 32 : 16) + c->a_pad, arow_bytes = fp4 ? apitch / 2 : apitch;
    size_t abytes = (size_t)(L * M * arow_bytes);
    unsigned char *ha = calloc(1, abytes + 16);
    for (int64_t r = 0; r < L * M; ++r)
        for (int64_t k = 0; k < K; ++k) put_code(ha + r * arow_bytes, p.elem, k, p.a[r * K + k]);
    int64_t ashape[3] = {L, M, K};
    ptxq_tensor ta;
    memset(&ta, 0, sizeof ta);
    ta.dtype = p.elem;
    ta.rank = L > 1 ? 3 : 2;
    for (int i = 0; i < ta.rank; ++i) ta.shape[i] = ashape[3 - ta.rank + i];
    ta.stride[ta.rank - 1] = 1;
    ta.stride[ta.rank - 2] = apitch;
    if (ta.rank == 3) ta.stride[0] = apitch * M;

    /* A scales */
    ptxq_tensor tsa;
    memset(&tsa, 0, sizeof tsa);
    tsa.dtype = p.sdtype;
    size_t sabytes;
    unsigned char *hsa;
    if (c->scales == 2) {
        size_t per = (size_t)(((M + 127) / 128) * ((nk + 3) / 4) * 512);
        sabytes = per * (size_t)L;
        hsa = calloc(1, sabytes + 16);
        for (int64_t l = 0; l < L; ++l)
            for (int64_t m = 0; m < M; ++m)
                for (int64_t kb = 0; kb < nk; ++kb)
                    hsa[per * (size_t)l + quant_sf128_offset(m, kb, nk)] = p.sa[(l * M + m) * nk + kb];
        tsa.rank = 1;
        tsa.shape[0] = (int64_t)sabytes;
        tsa.stride[0] = 1;
    } else {
        int64_t mstride = c->scales == 1 ? 1 : nk, kstride = c->scales == 1 ? M + 3 : 1;
        int64_t lstride = c->scales == 1 ? nk * (M + 3) : M * nk;
        sabytes = (size_t)(L * lstride);
        hsa = calloc(1, sabytes + 16);
        for (int64_t l = 0; l < L; ++l)
            for (int64_t m = 0; m < M; ++m)
                for (int64_t kb = 0; kb < nk; ++kb)
                    hsa[l * lstride + m * mstride + kb * kstride] = p.sa[(l * M + m) * nk + kb];
        tsa.rank = ta.rank;
        int64_t sshape[3] = {L, M, nk}, sstr[3] = {lstride, mstride, kstride};
        for (int i = 0; i < tsa.rank; ++i) {
            tsa.shape[i] = sshape[3 - tsa.rank + i];
            tsa.stride[i] = sstr[3 - tsa.rank + i];
        }
    }

    /* x (pitch rounded to 64 elements, so every batch row is 16-byte aligned) and its scales */
    int64_t xl = p.xl, xpitch = round_up(K > 0 ? K : 1, 64);
    int xesz = p.xq ? 0 : 2;
    size_t xbytes = (size_t)(xl * (xesz ? xpitch * 2 : fp4 ? xpitch / 2 : xpitch));
    unsigned char *hx = calloc(1, xbytes + 16);
    for (int64_t r = 0; r < xl; ++r)
        for (int64_t k = 0; k < K; ++k) {
            if (p.xq) put_code(hx + (size_t)r * (xbytes / (size_t)xl), p.elem, k, p.xq[r * K + k]);
            else memcpy(hx + (size_t)(r * xpitch + k) * 2, &p.xh[r * K + k], 2);
        }
    ptxq_tensor tx, tsx;
    memset(&tx, 0, sizeof tx);
    memset(&tsx, 0, sizeof tsx);
    tx.dtype = p.xdtype;
    tx.rank = c->x_shared ? 1 : 2;
    tx.shape[tx.rank - 1] = K;
    tx.stride[tx.rank - 1] = 1;
    if (tx.rank == 2) {
        tx.shape[0] = L;
        tx.stride[0] = xpitch;
    }
    int64_t xks = c->odd_scales ? 2 : 1; /* x scales' K stride */
    size_t sxbytes = (size_t)(xl * nk * xks);
    unsigned char *hsx = calloc(1, sxbytes + 16);
    if (p.xq) {
        for (int64_t i = 0; i < xl * nk; ++i) hsx[i * xks] = p.sx[i];
        tsx = tx;
        tsx.dtype = p.sdtype;
        tsx.shape[tsx.rank - 1] = nk;
        tsx.stride[tsx.rank - 1] = xks;
        if (tsx.rank == 2) tsx.stride[0] = nk * xks;
    }

    /* y: [L][M + 5] so that the gaps between batches are checked too */
    int ysz = ptxq_dtype_bits(c->y) / 8;
    int64_t ypitch = M + 5;
    size_t ybytes = (size_t)(L * ypitch * ysz) + 64;
    ptxq_tensor ty;
    memset(&ty, 0, sizeof ty);
    ty.dtype = c->y;
    ty.rank = L > 1 ? 2 : 1;
    ty.shape[ty.rank - 1] = M;
    ty.stride[ty.rank - 1] = 1;
    if (ty.rank == 2) {
        ty.shape[0] = L;
        ty.stride[0] = ypitch;
    }

    /* A's scales start scale_offset (+ 1 with odd_scales) bytes into their buffer */
    uint64_t da = dev_alloc(d, abytes + 16),
             dsa = dev_alloc(d, sabytes + 16 + (size_t)c->scale_offset + 1);
    uint64_t dx = dev_alloc(d, xbytes + 16), dsx = dev_alloc(d, sxbytes + 16);
    uint64_t dy = dev_alloc(d, ybytes), dg = dev_alloc(d, 64);
    dev_upload(d, da, ha, abytes);
    uint64_t soff = (uint64_t)c->scale_offset + (c->odd_scales ? 1 : 0); /* an odd A-scale base */
    dev_upload(d, dsa + soff, hsa, sabytes);
    dev_upload(d, dx, hx, xbytes);
    dev_upload(d, dsx, hsx, sxbytes);
    float gw[8] = {p.ga, 0, 0, 0, p.gx, 0, 0, 0};
    dev_upload(d, dg, gw, sizeof gw);
    ta.data = da;
    tsa.data = dsa + soff;
    tx.data = dx;
    tsx.data = dsx;
    ty.data = dy;
    ptxq_gemv_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.format = c->format;
    desc.a_scale_layout = c->scales == 2 ? PTXQ_SCALE_128x4 : PTXQ_SCALE_STRIDED;
    desc.a_global = c->globals ? dg : 0;
    desc.x_global = c->globals && p.xq ? dg + 16 : 0;
    desc.rows_per_thread = c->rows_per_thread;
    desc.k_warps = c->k_warps;
    desc.pipelined = c->pipelined;
    desc.flags = c->flags;
    desc.prefetch_trips = c->prefetch_trips;

    double *ref = malloc(sizeof *ref * (size_t)(L * M + 1)), *rabs = malloc(sizeof *rabs * (size_t)(L * M + 1));
    gemv_ref(&p, ref, rabs);
    unsigned char *hy = malloc(ybytes);
    int bad = 0;
    static const unsigned char poisons[2] = {0x5A, 0xA5};
    ptxq_status st = ptxq_gemv_plan_for(d->ctx, &desc, &ta, &tsa, &tx, p.xq ? &tsx : NULL, &ty,
                                        &res->plan);
    for (int pass = 0; pass < 2 && !bad && st == PTXQ_OK; ++pass) {
        dev_fill(d, dy, poisons[pass], ybytes);
        st = ptxq_gemv(d->ctx, &desc, &ta, &tsa, &tx, p.xq ? &tsx : NULL, &ty, d->stream);
        if (st != PTXQ_OK) break;
        dev_sync(d);
        dev_download(d, hy, dy, ybytes);
        res->wrong = res->pad_touched = 0;
        for (size_t i = 0; i < ybytes; ++i) {
            size_t e = i / (size_t)ysz;
            int64_t l = (int64_t)e / ypitch, m = (int64_t)e % ypitch;
            if ((l >= L || m >= M) && hy[i] != poisons[pass]) res->pad_touched++;
        }
        for (int64_t l = 0; l < L; ++l)
            for (int64_t m = 0; m < M; ++m) {
                const unsigned char *src = hy + (size_t)(l * ypitch + m) * (size_t)ysz;
                double v;
                if (c->y == PTXQ_F32) {
                    float f;
                    memcpy(&f, src, 4);
                    v = f;
                } else {
                    uint16_t h;
                    memcpy(&h, src, 2);
                    v = c->y == PTXQ_F16 ? ptxq_f16_decode(h) : ptxq_bf16_decode(h);
                }
                double r = ref[l * M + m], b = gemv_bound(&p, c->y, r, rabs[l * M + m]);
                double q = fabs(v - r) / b;
                if (isnan(v) || q > 1.0) res->wrong++;
                if (isnan(v) || q > res->worst) {
                    res->worst = isnan(v) ? INFINITY : q;
                    res->worst_at = l * M + m;
                    res->worst_dev = v;
                    res->worst_ref = r;
                }
            }
        if (res->wrong || res->pad_touched) bad = 1;
    }
    if (st != PTXQ_OK) {
        res->status = st;
        snprintf(res->msg, sizeof res->msg, "%s", ptxq_last_error());
        bad = -1;
    }
    dev_free(d, da);
    dev_free(d, dsa);
    dev_free(d, dx);
    dev_free(d, dsx);
    dev_free(d, dy);
    dev_free(d, dg);
    free(ha);
    free(hsa);
    free(hx);
    free(hsx);
    free(hy);
    free(ref);
    free(rabs);
    gemv_problem_free(&p);
    return bad;
}
