/* gemm.c -- FP8 GEMM: argument checks, the launch plan (kernel, tile width, tensor maps, persistent
 * grid), the launch.
 *
 * Kernels (gen/gemm.py): gemm_e4m3_bf16_<scaling>_n<tile_n>, parameters (CUtensorMap A,
 * CUtensorMap B, ptxq_gemm_args). Everything is checked, the kernel loaded and both tensor maps
 * encoded before the launch is enqueued, so a call that fails writes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_args.h"
#include "internal.h"

typedef struct gemm_plan {
    char kernel[64];
    int64_t M, N, K;
    int tile_n, group, cluster, ctas;
    unsigned smem;
    ptxq_gemm_args args;
    uint64_t a_data, b_data;
    uint64_t lda, ldb; /* row pitches in bytes */
} gemm_plan;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t numel(const ptxq_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; ++i) n *= t->shape[i];
    return n;
}

static const char *scaling_name(ptxq_gemm_scaling s) {
    return s == PTXQ_GEMM_SCALE_TENSOR ? "tensor" : s == PTXQ_GEMM_SCALE_ROW ? "row"
           : s == PTXQ_GEMM_SCALE_BLOCK ? "block" : NULL;
}

/* Waves x tile width, with a small handicap for the narrower tile (more operand traffic per FLOP). */
static int pick_tile_n(int64_t M, int64_t N, int sms) {
    double best = 0;
    int pick = 192;
    static const int cand[3] = {192, 160, 128};
    static const double eff[3] = {1.0, 0.97, 0.90};
    for (int i = 0; i < 3; ++i) {
        int64_t tiles = ceil_div(M, PTXQ_GEMM_TILE_M) * ceil_div(N, cand[i]);
        double cost = (double)ceil_div(tiles, sms) * cand[i] / eff[i];
        if (i == 0 || cost < best) {
            best = cost;
            pick = cand[i];
        }
    }
    return pick;
}

/* Pipelined consumer variants (gen/gemm.py PIPES): "" (wait for each 128-K chain), "p2" (two
 * partial sets alternate by K block; tile_n 128 only) or "h2" (the chain split in two column
 * halves, one always queued; not BLOCK at 192). Defaults, measured on an H200 (same run,
 * 3 interleaved rounds): TENSOR 8192^3 n192_c2 1186-1277 -> h2 1320-1332 TFLOPS; TENSOR n128
 * 1211 -> p2 1255-1265; BLOCK 4096x7168x16384 n160 1035-1083 -> n128 p2 1102-1111 (plain n128
 * 936-952); ROW 8192^3 h2 was slower (1208-1294 vs 1268-1351), so ROW keeps "".
 * PTXQ_GEMM_PIPE=off|p2|h2 overrides the default (off also restores BLOCK's tile-width pick);
 * a variant that does not exist for the mode and width falls back to "". */
static int pipe_off(void) {
    const char *e = getenv("PTXQ_GEMM_PIPE");
    return e && !strcmp(e, "off");
}

static const char *pick_pipe(ptxq_gemm_scaling s, int tile_n) {
    const char *e = getenv("PTXQ_GEMM_PIPE");
    const char *want;
    if (e && *e)
        want = !strcmp(e, "p2") ? "p2" : !strcmp(e, "h2") ? "h2" : "";
    else if (s == PTXQ_GEMM_SCALE_ROW)
        want = "";
    else
        want = tile_n == 128 ? "p2" : (s == PTXQ_GEMM_SCALE_TENSOR && tile_n == 192) ? "h2" : "";
    if (!strcmp(want, "p2") && tile_n != 128) want = "";
    if (!strcmp(want, "h2") && s == PTXQ_GEMM_SCALE_BLOCK && tile_n == 192) want = "";
    return want;
}

/* The vector scale of ROW mode: [len] or [len, 1]; returns its element stride. */
static int row_scale(const ptxq_tensor *s, int64_t len, const char *what, uint64_t *stride) {
    if (s->rank == 1 && s->shape[0] == len) {
        *stride = (uint64_t)s->stride[0];
        return PTXQ_OK;
    }
    if (s->rank == 2 && s->shape[0] == len && s->shape[1] == 1) {
        *stride = (uint64_t)s->stride[0];
        return PTXQ_OK;
    }
    return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: ROW %s must be [%lld] or [%lld, 1]", what,
                     (long long)len, (long long)len);
}

static int plan_gemm(const ptxq_gemm_desc *desc, const ptxq_tensor *a, const ptxq_tensor *b,
                     const ptxq_tensor *d, int sms, gemm_plan *p) {
    memset(p, 0, sizeof *p);
    if (!desc) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: desc is NULL");
    int st;
    if ((st = ptxq_check_tensor(a, "gemm: a", 1))) return st;
    if ((st = ptxq_check_tensor(b, "gemm: b", 1))) return st;
    if ((st = ptxq_check_tensor(d, "gemm: d", 1))) return st;
    const char *sname = scaling_name(desc->scaling);
    if (!sname)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: unknown scaling %d", (int)desc->scaling);
    if (!desc->a_scale || !desc->b_scale)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: desc.a_scale and desc.b_scale are needed");
    if ((st = ptxq_check_tensor(desc->a_scale, "gemm: a_scale", 1))) return st;
    if ((st = ptxq_check_tensor(desc->b_scale, "gemm: b_scale", 1))) return st;
    if (a->dtype != PTXQ_E4M3 || b->dtype != PTXQ_E4M3)
        return ptxq_fail(PTXQ_ERR_DTYPE, "gemm: a and b must be E4M3 (got %s, %s)",
                         ptxq_dtype_name(a->dtype), ptxq_dtype_name(b->dtype));
    if (d->dtype != PTXQ_BF16)
        return ptxq_fail(PTXQ_ERR_DTYPE, "gemm: d must be BF16 (got %s)", ptxq_dtype_name(d->dtype));
    if (a->rank != 2 || b->rank != 2 || d->rank != 2)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: a, b and d must have rank 2 (got %d, %d, %d)",
                         a->rank, b->rank, d->rank);
    p->M = a->shape[0];
    p->K = a->shape[1];
    p->N = b->shape[0];
    if (b->shape[1] != p->K)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: b is [%lld, %lld]; K = %lld expected in dim 1",
                         (long long)b->shape[0], (long long)b->shape[1], (long long)p->K);
    if (d->shape[0] != p->M || d->shape[1] != p->N)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: d is [%lld, %lld]; [%lld, %lld] expected",
                         (long long)d->shape[0], (long long)d->shape[1], (long long)p->M,
                         (long long)p->N);
    int kq = desc->scaling == PTXQ_GEMM_SCALE_BLOCK ? 128 : 16;
    if (p->K % kq)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: K = %lld must be a multiple of %d", (long long)p->K,
                         kq);
    if (p->M >= ((int64_t)1 << 31) || p->N >= ((int64_t)1 << 31) || p->K >= ((int64_t)1 << 31))
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: M, N and K must be below 2^31");
    if (a->stride[1] != 1 || b->stride[1] != 1 || d->stride[1] != 1)
        return ptxq_fail(PTXQ_ERR_STRIDE, "gemm: a, b and d must be contiguous in their last dim "
                         "(strides %lld, %lld, %lld)", (long long)a->stride[1],
                         (long long)b->stride[1], (long long)d->stride[1]);
    p->lda = (uint64_t)(p->M > 1 ? a->stride[0] : (p->K > 0 ? p->K : 16));
    p->ldb = (uint64_t)(p->N > 1 ? b->stride[0] : (p->K > 0 ? p->K : 16));
    if ((p->M > 1 && a->stride[0] < p->K) || (p->N > 1 && b->stride[0] < p->K))
        return ptxq_fail(PTXQ_ERR_STRIDE, "gemm: a/b rows overlap (row stride < K)");
    if (p->M > 1 && d->stride[0] < p->N)
        return ptxq_fail(PTXQ_ERR_STRIDE, "gemm: d rows overlap (row stride %lld < N = %lld)",
                         (long long)d->stride[0], (long long)p->N);
    if (a->data % 16 || b->data % 16)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemm: a and b must be 16-byte aligned");
    if (p->lda % 16 || p->ldb % 16 || p->lda >= ((uint64_t)1 << 40) || p->ldb >= ((uint64_t)1 << 40))
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemm: a and b row strides (%llu, %llu bytes) must be "
                         "multiples of 16 bytes", (unsigned long long)p->lda,
                         (unsigned long long)p->ldb);
    if (d->data % 4 || (p->M > 1 && d->stride[0] % 2))
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemm: d must be 4-byte aligned with an even row stride");

    /* scales */
    const ptxq_tensor *sa = desc->a_scale, *sb = desc->b_scale;
    if (sa->dtype != PTXQ_F32 || sb->dtype != PTXQ_F32)
        return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: scales must be F32 (got %s, %s)",
                         ptxq_dtype_name(sa->dtype), ptxq_dtype_name(sb->dtype));
    if (sa->data % 4 || sb->data % 4)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemm: scales must be 4-byte aligned");
    ptxq_gemm_args *g = &p->args;
    int64_t nkb = ceil_div(p->K, 128);
    switch (desc->scaling) {
    case PTXQ_GEMM_SCALE_TENSOR:
        if (numel(sa) != 1 || numel(sb) != 1)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: TENSOR scales have one element each "
                             "(got %lld, %lld)", (long long)numel(sa), (long long)numel(sb));
        break;
    case PTXQ_GEMM_SCALE_ROW:
        if ((st = row_scale(sa, p->M, "a_scale", &g->sam))) return st;
        if ((st = row_scale(sb, p->N, "b_scale", &g->sbn))) return st;
        break;
    case PTXQ_GEMM_SCALE_BLOCK: {
        int64_t nbn = ceil_div(p->N, 128);
        if (sa->rank != 2 || sa->shape[0] != p->M || sa->shape[1] != nkb)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: BLOCK a_scale must be [M, K/128] = "
                             "[%lld, %lld]", (long long)p->M, (long long)nkb);
        if (sb->rank != 2 || sb->shape[0] != nbn || sb->shape[1] != nkb)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: BLOCK b_scale must be [ceil(N/128), "
                             "K/128] = [%lld, %lld]", (long long)nbn, (long long)nkb);
        g->sam = (uint64_t)sa->stride[0];
        g->sak = (uint64_t)sa->stride[1];
        g->sbn = (uint64_t)sb->stride[0];
        g->sbk = (uint64_t)sb->stride[1];
        break;
    }
    }

    /* BLOCK: 128 wide with the p2 pipeline beat the wave-quantisation pick (see pick_pipe) */
    p->tile_n = desc->tile_n ? desc->tile_n
                : (desc->scaling == PTXQ_GEMM_SCALE_BLOCK && !pipe_off())
                    ? 128 : pick_tile_n(p->M, p->N, sms > 0 ? sms : 132);
    if (p->tile_n != 128 && p->tile_n != 160 && p->tile_n != 192)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: tile_n %d; 0, 128, 160 or 192 expected",
                         desc->tile_n);
    p->ctas = desc->ctas;
    if (p->ctas < 0)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: ctas %d is negative", desc->ctas);
    p->group = desc->group_m ? desc->group_m : 8;
    if (p->group < 1 || p->group > 1 << 16)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: group_m %d out of range", desc->group_m);
    /* clusters of two along M pay off once there are two M tiles and a full wave of tiles */
    int64_t tm1 = ceil_div(p->M, PTXQ_GEMM_TILE_M), tn = ceil_div(p->N, p->tile_n);
    /* measured on an H200 (8192^3): TENSOR/ROW 1290 vs 1258 TFLOPS with pairs; BLOCK
     * (4096x7168x16384) was faster without them (1030 vs 924) */
    p->cluster = desc->cluster ? desc->cluster
                 : (desc->scaling != PTXQ_GEMM_SCALE_BLOCK && tm1 >= 2 &&
                    tm1 * tn >= (sms > 0 ? sms : 132)) ? 2 : 1;
    if (p->cluster != 1 && p->cluster != 2)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: cluster %d; 0, 1 or 2 expected",
                         desc->cluster);
    snprintf(p->kernel, sizeof p->kernel, "gemm_e4m3_bf16_%s_n%d%s%s", sname, p->tile_n,
             pick_pipe(desc->scaling, p->tile_n), p->cluster == 2 ? "_c2" : "");
    p->smem = p->tile_n == 128 ? PTXQ_GEMM_SMEM_N128
              : p->tile_n == 160 ? PTXQ_GEMM_SMEM_N160 : PTXQ_GEMM_SMEM_N192;

    int64_t tm = ceil_div(p->M, (int64_t)PTXQ_GEMM_TILE_M * p->cluster);
    if (tm * tn >= ((int64_t)1 << 31))
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: too many output tiles");
    g->d = d->data;
    g->sa = sa->data;
    g->sb = sb->data;
    g->ldd = (uint64_t)(p->M > 1 ? d->stride[0] : p->N);
    g->m = (uint32_t)p->M;
    g->n = (uint32_t)p->N;
    g->nkb = (uint32_t)nkb;
    g->tiles_m = (uint32_t)tm;
    g->tiles_n = (uint32_t)tn;
    g->group = (uint32_t)(p->group < tm ? p->group : (tm > 0 ? tm : 1));
    g->ntiles = (uint32_t)(tm * tn);
    g->nbn = (uint32_t)ceil_div(p->N, 128);

    p->a_data = a->data;
    p->b_data = b->data;
    return PTXQ_OK;
}

ptxq_status ptxq_gemm_validate(const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                               const ptxq_tensor *b, const ptxq_tensor *d) {
    gemm_plan p;
    int st = plan_gemm(desc, a, b, d, 0, &p);
    return st ? (ptxq_status)st : (ptxq_status)ptxq_ok();
}

ptxq_status ptxq_gemm_kernel_for(const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                                 const ptxq_tensor *b, const ptxq_tensor *d, char *name,
                                 size_t n) {
    if (!name || n == 0) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm_kernel_for: no buffer");
    gemm_plan p;
    int st = plan_gemm(desc, a, b, d, 0, &p);
    if (st) return (ptxq_status)st;
    snprintf(name, n, "%s", p.kernel);
    return ptxq_ok();
}

ptxq_status ptxq_gemm(ptxq_context *ctx, const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                      const ptxq_tensor *b, const ptxq_tensor *d, void *stream) {
    if (!ctx) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: ctx is NULL");
    gemm_plan p;
    int st = plan_gemm(desc, a, b, d, ctx->info.sm_count, &p);
    if (st) return st;
    if (p.M == 0 || p.N == 0) return ptxq_ok(); /* empty: nothing to enqueue */
    const ptxq_loaded *k = NULL;
    if ((st = ptxq_get_kernel(ctx, p.kernel, &k))) return st;

    /* TMA maps: {K, rows}, innermost first; one box = 128 K-bytes x (128 | tile_n) rows, 128B
     * swizzle. K = 0 still needs a valid map: it is never read (no K blocks), so give it K = 16. */
    CUtensorMap ma, mb;
    cuuint64_t kdim = (cuuint64_t)(p.K > 0 ? p.K : 16);
    cuuint64_t da[2] = {kdim, (cuuint64_t)p.M}, db[2] = {kdim, (cuuint64_t)p.N};
    cuuint64_t sa[1] = {p.lda}, sb[1] = {p.ldb};
    /* with clusters of two, each CTA loads half of the B tile and multicasts it to both */
    cuuint32_t ba[2] = {128, PTXQ_GEMM_TILE_M}, bb[2] = {128, (cuuint32_t)(p.tile_n / p.cluster)};
    if ((st = ptxq_tmap_get(ctx, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, p.a_data, da, sa, ba,
                            CU_TENSOR_MAP_SWIZZLE_128B, &ma)))
        return st;
    if ((st = ptxq_tmap_get(ctx, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, p.b_data, db, sb, bb,
                            CU_TENSOR_MAP_SWIZZLE_128B, &mb)))
        return st;
    /* persistent: one CTA per SM (the ring takes most of shared memory), at most one cluster per
     * (cluster) tile; the grid is a whole number of clusters */
    unsigned cl = (unsigned)p.cluster;
    unsigned slots = (unsigned)(ctx->info.sm_count > 0 ? ctx->info.sm_count : 1);
    if (p.ctas > 0 && (unsigned)p.ctas < slots) slots = (unsigned)p.ctas;
    slots /= cl;
    if (slots == 0) slots = 1;
    unsigned grid = (p.args.ntiles < slots ? p.args.ntiles : slots) * cl;
    void *params[] = {&ma, &mb, &p.args};
    if ((st = ptxq_launch(ctx, k, grid, PTXQ_GEMM_THREADS, p.smem, stream, params))) return st;
    return ptxq_ok();
}
