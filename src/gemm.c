/* gemm.c -- FP8 and BF16 GEMM: argument checks, the launch plan (kernel, tile width, tensor maps,
 * persistent grid), the launch; MXFP8's dequantize path (two gemm_mx_dequant launches into the
 * workspace, then the BF16 GEMM).
 *
 * Kernels (gen/gemm.py): gemm_<a>_<b>_<scaling>_n<tile_n>[pipe][_ts][_sm][_c2], parameters
 * (CUtensorMap A, CUtensorMap B[, CUtensorMap D][, CUtensorMap A scales, B scales], ptxq_gemm_args);
 * "_sm": BLOCK scales by TMA (scale_map), where their layout allows. Everything is checked, the kernels loaded and
 * the tensor maps encoded before the first launch is enqueued, so a call that fails writes nothing.
 * The GEMM kernel is launched with programmatic dependent launch unless desc.flags has
 * PTXQ_GEMM_NO_PDL (it waits for its predecessor before any global access: gen/gemm.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_args.h"
#include "internal.h"

typedef struct gemm_plan {
    char kernel[64];
    int64_t M, N, K;
    int64_t L, Lb;     /* batches of A (and D, C), of B */
    int64_t esz;       /* bytes per A / B element: 1 (FP8) or 2 (BF16); TMA and K blocks count bytes */
    int tile_n, group, cluster, ctas;
    int tile_m;        /* 128 (two consumer warpgroups) or 192 (three: "_m192" kernels) */
    ptxq_gemm_args args;
    uint64_t a_data, b_data;
    uint64_t lda, ldb, a_bs, b_bs; /* row and batch pitches in bytes */
    size_t ws_bytes, cnt_off;      /* split-K workspace: partials, then the counters */
    int64_t tiles;                 /* output (cluster) tiles over all batches */
    int maps3d;                    /* A and B maps {K, rows, batch} (else {K, rows}) */
    int store;                     /* TMA-store epilogue: D map {N, M(, batch)}, "_ts" kernel */
    /* BLOCK with the plain consumer: its scales by TMA ("_sm" kernel, scale_maps) when their
     * layout allows; maps {inner, outer, batch} of F32, [0] A's, [1] B's */
    int sm;
    /* a split the runtime picked, without a workspace: it runs only if summed across a cluster
     * (cluster_split), else drop_split before the launch */
    int ws_free;
    uint64_t sc_addr[2];
    cuuint64_t sc_dims[2][3], sc_strides[2][2];
    cuuint32_t sc_box[2][3];
} gemm_plan;

/* Split-K pick: when the output tiles fill less than half of the SMs, cut K so that about one
 * wave of units runs, keeping at least 8 K blocks (1024 of K) per unit and K >= 4096. Measured on
 * an H200 (block-scaled, M = 64): N x K = 2112 x 7168 34 -> 25 us (7 splits), 4096 x 7168
 * 34 -> 29 us (4), 7168 x 16384 65 -> 61 us (2); but 7168 x 2048 20 -> 23 us with 2 splits. */
static int pick_splits(int64_t tiles, int64_t nkb, int sms) {
    if (tiles <= 0 || 2 * tiles > sms || nkb < 32) return 1;
    int64_t s = sms / tiles;
    if (s > nkb / 8) s = nkb / 8;
    if (s > 64) s = 64;
    return s < 2 ? 1 : (int)s;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Tail split (split_k = 0, with a workspace): `tiles` over `slots` concurrent (cluster) CTAs make
 * whole waves and a last wave of rest = tiles % slots. When that wave is at most half full, its
 * tiles are cut into S = slots / rest K ranges (the split-K machinery: FP32 partials in the
 * workspace, the last CTA of a tile sums them in order), so the last wave runs on S times the
 * CTAs for 1/S of the time; the whole waves stay unsplit. At least 8 K blocks a range, as for
 * split-K. E.g. BLOCK 4096 x 7168 x 16384 at n192 on 132 SMs: 1216 tiles = 9 waves + 28 tiles,
 * the 28 cut in 4. Returns S, or 1 for no split. */
static int pick_tail_split(int64_t tiles, int64_t nkb, int64_t slots) {
    if (slots < 2 || tiles <= slots) return 1;
    int64_t rest = tiles % slots;
    if (rest == 0 || 2 * rest > slots) return 1;
    int64_t s = slots / rest;
    if (s > nkb / 8) s = nkb / 8;
    if (s > 64) s = 64;
    return s < 2 ? 1 : (int)s;
}

/* Workspace of `tiles` split (cluster) tiles: per CTA and split an FP32 partial tile (256
 * consumer threads x tile_n / 2 values), then one counter per CTA tile, 256-byte aligned. */
static void split_workspace(gemm_plan *p, int64_t tiles, int splits) {
    size_t ctas = (size_t)(tiles * p->cluster);
    size_t part = ctas * (size_t)splits * 256 * (size_t)(p->tile_n / 2) * 4;
    p->cnt_off = (part + 255) / 256 * 256;
    p->ws_bytes = p->cnt_off + ctas * 4;
}

static const char *scaling_name(ptxq_gemm_scaling s) {
    return s == PTXQ_GEMM_SCALE_TENSOR ? "tensor" : s == PTXQ_GEMM_SCALE_ROW ? "row"
           : s == PTXQ_GEMM_SCALE_BLOCK ? "block" : s == PTXQ_GEMM_SCALE_MX ? "mx" : NULL;
}

static const char *op_name(ptxq_dtype t) {
    return t == PTXQ_E4M3 ? "e4m3" : t == PTXQ_E5M2 ? "e5m2" : t == PTXQ_BF16 ? "bf16" : NULL;
}

/* Waves x tile width, with a handicap for the narrower tiles (more operand traffic per FLOP).
 * ts: the call can take the TMA-store epilogue, which exists at 192 and 128 (BF16: 256 too) and,
 * for TENSOR / ROW with FP8 operands, at 160; so with it 160 is no candidate for BLOCK (its n160
 * K loop ran 11-18% more cycles than n192's at 4096 x 7168 x 16384, ncu, H100, thirty-third
 * session) or BF16. TENSOR / ROW at 160 keep the 0.97 measured with direct stores: with the TMA
 * store on an H100 (same session, both orders in one process) 160 against 192 at 4096 x 7168 x K
 * was +1 to +2% at K = 16384, +4 to +12% at K = 2048 / 4096, 8192 x 7168 x 2048 +5%, 4096 x 14336 x
 * 4096 (in CTA pairs) within 1% either way, where this model picks 160 by 0.5%; 8192^3 stays at
 * 192 (-3 to -5% at 160).
 * BLOCK with TMA store rates 128 at 0.85 of 192: measured on an H100
 * (bench gemm --sweep deepseek --tile-n 192|128 --store 1), this picks the faster width on all
 * 18 DeepSeek-V3 shapes (4096 x 2112 x 7168: 973 vs 833 TFLOPS at 192; 64 x 32768 x 512: 121 vs 108
 * at 128). Otherwise (measured on an H200 before the TMA store) 160 at 0.97 and 128 at 0.90.
 * BF16 also has 256 (128 accumulator registers: no promotion partial), rated as 192. H100,
 * 2026-11-27, both orders in one process (bench/RESULTS.md thirty-second session), TFLOPS 256 /
 * the old pick: 4096^3 786.6-791.6 / 750.6-751.8 (128), 4096 x 4096 x 8192 849.6-850.4 /
 * 754.1-762.4 (128), 4096 x 7168 x 16384 868.0-869.0 / 833.0 (192), 8192 x 4096 x 4096
 * 806.6-818.4 / 791.1-794.3 (192); even at 6144^3 and 8192^3 (both keep 192: a tie or fewer
 * column-waves); at 2048^3 (128 tiles of 256: less than a wave) 2-4% behind 128, so 256 needs a
 * full wave. The H200 alike: +3% / +5.5% / +3% / +4% on the first four shapes. Measured with the
 * TMA store only, so only with it. */
/* The widths with a TMA-store ("_ts") kernel, gen/gemm.py TS_WIDTHS, TS160_MODES and BF16's 256 */
static int ts_width_built(int tile_n, ptxq_gemm_scaling s, int bf16) {
    if (tile_n == 128 || tile_n == 192) return 1;
    if (tile_n == 256) return bf16;
    return tile_n == 160 && !bf16 && (s == PTXQ_GEMM_SCALE_TENSOR || s == PTXQ_GEMM_SCALE_ROW);
}

static int pick_tile_n(int64_t M, int64_t N, int sms, int ts, ptxq_gemm_scaling s, int bf16) {
    double best = 0;
    int pick = 192;
    static const int cand[4] = {192, 160, 128, 256};
    double eff[4] = {1.0, 0.97, s == PTXQ_GEMM_SCALE_BLOCK && ts ? 0.85 : 0.90, 1.0};
    for (int i = 0; i < 4; ++i) {
        if (ts && !ts_width_built(cand[i], s, bf16)) continue;
        int64_t tiles = ceil_div(M, PTXQ_GEMM_TILE_M) * ceil_div(N, cand[i]);
        if (cand[i] == 256 && (!bf16 || !ts || tiles < sms)) continue;
        double cost = (double)ceil_div(tiles, sms) * cand[i] / eff[i];
        if (i == 0 || cost < best) {
            best = cost;
            pick = cand[i];
        }
    }
    return pick;
}

/* The rows pick_tile_n counts: M x L, or for masked groups the M tiles the kernels will run (they
 * walk the valid tiles only, gen/gemm.py masked_walk): L x the expected rows' 128-row tiles, of
 * the capacity M without a hint. A wave of tiles more costs a whole wave (H100, bench gemm --moe
 * masked, 2026-11-28): G 1 x 4096 x 7168 with 764 rows (6 M tiles) n192 1195-1229 TFLOPS (132
 * tiles, one wave) and n128 765-785 (two); G 2 x 4096 x 7168 with 913 rows (8) n192 787-797 (176
 * tiles, two waves) and n128 934-949 (256, two). So the pick is only as good as the hint: with
 * DeepGEMM's groups of m x U(0.7, 1.3) rows and m as the hint it picked the faster width on 3 of
 * 6 shapes, counting the capacity on 5 of 6. */
static int64_t pick_rows(const ptxq_gemm_desc *desc, const gemm_plan *p) {
    if (desc->grouping != PTXQ_GEMM_GROUP_MASKED) return p->M * p->L;
    int64_t r = desc->expected_rows && desc->expected_rows < p->M ? desc->expected_rows : p->M;
    return ceil_div(r, PTXQ_GEMM_TILE_M) * PTXQ_GEMM_TILE_M * p->L;
}

/* Pipelined consumer variants (gen/gemm.py PIPES): "" (wait for each 128-K chain), "p2" (two
 * partial sets alternate by K block; tile_n 128 only) or "h2" (the chain split in two column
 * halves, one always queued; not BLOCK at 192). Defaults, measured on an H200 (same run,
 * 3 interleaved rounds): TENSOR 8192^3 n192_c2 1186-1277 -> h2 1320-1332 TFLOPS; TENSOR n128
 * 1211 -> p2 1255-1265; BLOCK 4096x7168x16384 n160 1035-1083 -> n128 p2 1102-1111 (plain n128
 * 936-952); ROW 8192^3 h2 was slower (1208-1294 vs 1268-1351), so ROW keeps "".
 * Re-measured 2026-11-22 after the consumer stopped keeping %tid.x-derived values live through the
 * K loop (3 interleaved rounds, H200): TENSOR 8192^3 n192_c2 1329-1342 vs h2 1305-1312, so TENSOR
 * at 192 is plain again; ROW "" 1286-1297 vs h2 1289-1292; BLOCK n128 p2 still best (4096 x
 * {24576x1536, 32768x512, 7168x16384}: p2 838 / 451 / 1132 TFLOPS, plain n128 795 / 442 / 969,
 * n160 815 / 450 / 1075, n192 776 / 430 / 893).
 * PTXQ_GEMM_PIPE=off|p2|h2 overrides the default (off also restores BLOCK's tile-width pick);
 * a variant that does not exist for the mode and width falls back to "". */
static int pipe_off(void) {
    const char *e = getenv("PTXQ_GEMM_PIPE");
    return e && !strcmp(e, "off");
}

static const char *pick_pipe(ptxq_gemm_scaling s, int tile_n, int e4m3_pair, int bf16) {
    const char *e = getenv("PTXQ_GEMM_PIPE");
    const char *want;
    if (s == PTXQ_GEMM_SCALE_MX) return ""; /* one consumer for MX (gen/gemm.py mx_kblock) */
    if (bf16) return "";                    /* one consumer for BF16 (gen/gemm.py direct_kblock) */
    if (e && *e && e4m3_pair) /* other type pairs exist with the default pipeline only */
        want = !strcmp(e, "p2") ? "p2" : !strcmp(e, "h2") ? "h2" : "";
    else if (s == PTXQ_GEMM_SCALE_ROW)
        want = "";
    else
        want = tile_n == 128 ? "p2" : "";
    if (!strcmp(want, "p2") && tile_n != 128) want = "";
    if (!strcmp(want, "h2") && s == PTXQ_GEMM_SCALE_BLOCK && tile_n == 192) want = "";
    return want;
}

/* The three-warpgroup kernels ("_m192", desc.tile_m 0 = the runtime's pick): BLOCK calls with few
 * K blocks and many rows, one GEMM, the TMA store and scales TMA can read, where the N tiles of 192
 * would leave a part-filled last column. Measured on an H100 (bench/RESULTS.md, thirtieth session;
 * five single-call rounds in separate processes, against the pick of before): 4096 x 7168 x 2048
 * +3.7 to +5.3%, 8192 x 7168 x 2048 +4.2 to +5.6%, 4096 x 32768 x 512 +3.7 to +4.9%; within 1% on
 * 4096 x 16384 x 1024; behind where 192 divides N (4096 x 24576 x 1536, -0.7%) and at K >= 7168
 * (4096 x 4096 x 7168 -3%, 4096 x 7168 x 16384 -8%: the wave tail, no tail split in them). */
static int pick_m192(const ptxq_gemm_desc *desc, const gemm_plan *p, int e4, int ts) {
    return desc->scaling == PTXQ_GEMM_SCALE_BLOCK && e4 && ts && p->sm && p->L == 1 &&
           desc->tile_n == 0 && desc->split_k <= 1 && desc->cluster != 2 && p->M >= 4096 &&
           p->K > 0 && p->K <= 2048 && p->N % 192 != 0;
}

/* The TMA-store epilogue ("_ts" kernels, gen/gemm.py TS_WIDTHS and TS160_MODES) takes the call when store_d is
 * set (call_store_ok: BF16 or F16 D without C; D, its row pitch and batch pitch 16-byte aligned,
 * TMA's rules for global addresses and strides; N a multiple of 8; any FP8 pair (E5M2 operands
 * since the thirty-second session) or BF16 x BF16), tile_n is 128 or 192 (BF16: 256 too; FP8
 * TENSOR / ROW: 160 too) and the pipeline is the mode's default (the variants that are built).
 * Bias, F16 and groups since the forty-fourth session, by the "_tsg" twins (call_plain false):
 * they add the bias while staging, and a consumer warpgroup whose rows are not all the tile's
 * (masked: past the batch's count; contiguous: another group's or padding) writes the rows it
 * owns with plain 16-byte stores from the staging buffer instead of the bulk store (gen/gemm.py
 * epilogue_tma, store_rows). Plain calls keep the "_ts" kernels, whose K loop that code moved
 * (1-2% slower). C stays on the register path (its rows would have to be read into the staging
 * buffer first).
 * NOTE: a TMA store clips at N only to the 16-byte chunk: with N * 2 bytes not a multiple of 16
 * it wrote zeros into the row's padding up to the next 16-byte boundary (seen on an H100 for every
 * "_ts" width, 2026-11-27: test_gemm test_ts_odd_n_*, found by test_random_configs), which may be
 * another tensor's columns; so such rows take the register stores. */
/* bs_bytes: D's batch stride, read only where L > 1. The store's tensor map takes byte strides
 * below 2^40 (as A's and B's maps: plan_gemm); past that the register stores write D. */
static int call_store_ok(unsigned flags, uint64_t d, int64_t n_bytes, int64_t ldd_bytes, int64_t L,
                         int64_t bs_bytes) {
    const int64_t lim = (int64_t)1 << 40;
    unsigned out = flags & 3u;
    return (out == 0 || out == 1) && !(flags & PTXQ_GEMM_FLAG_C) && d % 16 == 0 &&
           n_bytes % 16 == 0 && ldd_bytes % 16 == 0 && ldd_bytes < lim &&
           (L == 1 || (bs_bytes % 16 == 0 && bs_bytes < lim));
}

/* Plain BF16 D without bias or groups: what the three-warpgroup "_m192" kernels are tested and
 * picked for (a 192-row tile would also break contiguous grouping's 128-row alignment). */
static int call_plain(const ptxq_gemm_desc *desc, unsigned flags) {
    return (flags & 3u) == 0 && !((flags >> PTXQ_GEMM_FLAG_BIAS_SHIFT) & 3u) &&
           desc->grouping == PTXQ_GEMM_GROUP_NONE;
}

static int store_ok(const gemm_plan *p, const ptxq_gemm_desc *desc, int store_d, const char *pipe) {
    const char *dflt = desc->scaling == PTXQ_GEMM_SCALE_ROW || desc->scaling == PTXQ_GEMM_SCALE_MX ||
                       p->esz == 2 ? "" : p->tile_n == 128 ? "p2" : "";
    return store_d && ts_width_built(p->tile_n, desc->scaling, p->esz == 2) && !strcmp(pipe, dflt);
}

/* A scale tensor with an optional leading batch dim: `inner` is the rank and shape without it.
 * Returns the batch stride in bytes (0: one set for every batch) through *bs, and fills
 * *view with the tensor minus its batch dim. */
static int scale_batch(const ptxq_tensor *s, int inner, int64_t nb, const char *what,
                       ptxq_tensor *view, uint64_t *bs) {
    *view = *s;
    *bs = 0;
    if (s->rank == inner + 1 && nb >= 1 && s->shape[0] == nb) {
        view->rank = inner;
        for (int i = 0; i < inner; ++i) {
            view->shape[i] = s->shape[i + 1];
            view->stride[i] = s->stride[i + 1];
        }
        /* one batch: its stride is never used (found by review: an unused stride of 2^44 went
         * into the TMA scale map, which refused it at launch, and MX refused odd ones) */
        *bs = nb > 1 ? (uint64_t)s->stride[0] * 4 : 0;
        return PTXQ_OK;
    }
    if (s->rank <= inner + 1) return PTXQ_OK;
    return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: %s has rank %d (at most %d with a batch dim of "
                     "%lld)", what, s->rank, inner + 1, (long long)nb);
}

/* The vector scale of ROW mode: [len] or [len, 1], optionally after a batch dim of nb
 * ([nb, len] or [nb, len, 1]; [nb, len] is read as batched, nb = 1 too). Returns the element
 * stride and the batch stride in bytes (0: shared by every batch). */
static int row_scale(const ptxq_tensor *s, int64_t len, int64_t nb, const char *what,
                     uint64_t *stride, uint64_t *bs) {
    *bs = 0;
    if (s->rank == 1 && s->shape[0] == len) {
        *stride = (uint64_t)s->stride[0];
        return PTXQ_OK;
    }
    /* [nb, len]; nb = 1 too ([1, M] for one batch: ptxq.h's batched form, refused until a
     * review), its batch stride then unused */
    if (s->rank == 2 && nb >= 1 && s->shape[0] == nb && s->shape[1] == len) {
        *stride = (uint64_t)s->stride[1];
        *bs = nb > 1 ? (uint64_t)s->stride[0] * 4 : 0;
        return PTXQ_OK;
    }
    if (s->rank == 2 && s->shape[0] == len && s->shape[1] == 1) {
        *stride = (uint64_t)s->stride[0];
        return PTXQ_OK;
    }
    if (s->rank == 3 && s->shape[0] == nb && s->shape[1] == len && s->shape[2] == 1) {
        *stride = (uint64_t)s->stride[1];
        *bs = (uint64_t)s->stride[0] * 4;
        return PTXQ_OK;
    }
    return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: ROW %s must be [%lld] or [%lld, 1] (optionally "
                     "after a batch dim of %lld)", what, (long long)len, (long long)len,
                     (long long)nb);
}

static uint64_t round16(uint64_t x) { return (x + 15) / 16 * 16; }

/* One BLOCK scale tensor [rows, nkb] (element strides rs, ks; batch stride bs bytes, 0: one set
 * for all nbat batches) as a TMA map {inner, outer, batch} of F32 for the "_sm" kernels. TMA needs
 * a 16-byte aligned base, byte strides that are multiples of 16 and boxes of >= 16 bytes along the
 * inner dim, and a box must start on a 16-byte boundary, so a K block's scales come as:
 *   rows innermost (rs = 1: M-major, DeepGEMM's TMA-aligned layout): box {rows_box, 1} (A: the
 *   tile's 128 rows from m0; B: 8 blocks from nb0 & ~3, holding nb0 and nb0 + 1), or
 *   K innermost (ks = 1: [rows, K/128] row-major, what ptxq_quantize writes): box {4,
 *   kfirst_box_rows} from K block kb & ~3 (the kernel reads element kb & 3).
 * Returns 1 (K innermost), 0 (rows innermost) or -1 (no TMA layout: the kernel with the scale
 * warp reads any strides). */
static int scale_map(uint64_t addr, int64_t rows, int64_t nkb, int64_t rs, int64_t ks,
                     uint64_t bs, int64_t nbat, cuuint32_t kfirst_box_rows, cuuint32_t rows_box,
                     cuuint64_t dims[3], cuuint64_t strides[2], cuuint32_t box[3]) {
    const int64_t lim = (int64_t)1 << 38;
    if (addr % 16 || bs % 16 || rows < 1 || nkb < 1) return -1;
    int kfirst = (ks == 1 || nkb == 1) && (rows == 1 || (rs > 0 && rs < lim && rs % 4 == 0));
    int rfirst = (rs == 1 || rows == 1) && (nkb == 1 || (ks > 0 && ks < lim && ks % 4 == 0));
    if (!kfirst && !rfirst) return -1;
    if (kfirst) {
        dims[0] = (cuuint64_t)nkb, dims[1] = (cuuint64_t)rows;
        strides[0] = rows == 1 ? round16((uint64_t)nkb * 4) : (uint64_t)rs * 4;
        box[0] = 4, box[1] = kfirst_box_rows;
    } else {
        dims[0] = (cuuint64_t)rows, dims[1] = (cuuint64_t)nkb;
        strides[0] = nkb == 1 ? round16((uint64_t)rows * 4) : (uint64_t)ks * 4;
        box[0] = rows_box, box[1] = 1;
    }
    dims[2] = bs ? (cuuint64_t)nbat : 1;
    strides[1] = bs ? bs : round16(strides[0] * dims[1]);
    box[2] = 1;
    return kfirst;
}

/* rows (dim rank-2) and row stride of a rank-2 or rank-3 operand, and its batch count/stride */
typedef struct mat3 {
    int64_t batches, rows, cols, bstride, rstride;
} mat3;

static mat3 mat_of(const ptxq_tensor *t) {
    mat3 m;
    int r = t->rank;
    m.batches = r == 3 ? t->shape[0] : 1;
    m.rows = t->shape[r - 2];
    m.cols = t->shape[r - 1];
    m.rstride = t->stride[r - 2];
    m.bstride = r == 3 ? t->stride[0] : 0;
    return m;
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
    int tensor = desc->scaling == PTXQ_GEMM_SCALE_TENSOR; /* NULL scales: 1.0 */
    if (!tensor && (!desc->a_scale || !desc->b_scale))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: %s scaling needs desc.a_scale and "
                         "desc.b_scale", sname);
    if (desc->a_scale && (st = ptxq_check_tensor(desc->a_scale, "gemm: a_scale", 1))) return st;
    if (desc->b_scale && (st = ptxq_check_tensor(desc->b_scale, "gemm: b_scale", 1))) return st;
    const char *an = op_name(a->dtype), *bname = op_name(b->dtype);
    int bf16 = a->dtype == PTXQ_BF16;
    if (!an || !bname || bf16 != (b->dtype == PTXQ_BF16))
        return ptxq_fail(PTXQ_ERR_DTYPE, "gemm: a and b must be E4M3 or E5M2, or both BF16 (got "
                         "%s, %s)", ptxq_dtype_name(a->dtype), ptxq_dtype_name(b->dtype));
    if (bf16 && !tensor)
        return ptxq_fail(PTXQ_ERR_DTYPE, "gemm: BF16 operands take TENSOR scaling only (got %s)",
                         sname);
    p->esz = bf16 ? 2 : 1;
    int out = d->dtype == PTXQ_BF16 ? 0 : d->dtype == PTXQ_F16 ? 1 : d->dtype == PTXQ_F32 ? 2 : -1;
    if (out < 0)
        return ptxq_fail(PTXQ_ERR_DTYPE, "gemm: d must be BF16, F16 or F32 (got %s)",
                         ptxq_dtype_name(d->dtype));
    int64_t esize = out == 2 ? 4 : 2;
    ptxq_gemm_grouping gm = desc->grouping;
    if (gm != PTXQ_GEMM_GROUP_NONE && gm != PTXQ_GEMM_GROUP_MASKED && gm != PTXQ_GEMM_GROUP_CONTIGUOUS)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: unknown grouping %d", (int)gm);

    /* ranks: NONE 2/2/2 or 3/(2|3)/3; MASKED 3/3/3; CONTIGUOUS 2/3/2 */
    int ra = gm == PTXQ_GEMM_GROUP_MASKED ? 3 : gm == PTXQ_GEMM_GROUP_CONTIGUOUS ? 2 : a->rank;
    if (a->rank != ra || (ra != 2 && ra != 3))
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: a has rank %d; %s expected", a->rank,
                         gm == PTXQ_GEMM_GROUP_MASKED ? "3 ([G, M, K])"
                         : gm == PTXQ_GEMM_GROUP_CONTIGUOUS ? "2 ([M, K])" : "2 or 3");
    if (d->rank != ra)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: d has rank %d; a's rank %d expected", d->rank, ra);
    if (b->rank != 2 && b->rank != 3)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: b has rank %d; 2 or 3 expected", b->rank);
    if (gm != PTXQ_GEMM_GROUP_NONE && b->rank != 3)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: grouped GEMMs need b as [G, N, K]");
    if (gm == PTXQ_GEMM_GROUP_NONE && ra == 2 && b->rank != 2)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: rank-3 b needs rank-3 a and d (a batch)");
    mat3 ma = mat_of(a), mb = mat_of(b), md = mat_of(d);
    p->M = ma.rows;
    p->K = ma.cols;
    p->N = mb.rows;
    p->L = ma.batches;
    p->Lb = mb.batches;
    if (mb.cols != p->K)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: b has %lld columns; K = %lld expected",
                         (long long)mb.cols, (long long)p->K);
    if (md.batches != p->L || md.rows != p->M || md.cols != p->N)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: d is [%lld, %lld, %lld] (batch, rows, cols); "
                         "[%lld, %lld, %lld] expected", (long long)md.batches, (long long)md.rows,
                         (long long)md.cols, (long long)p->L, (long long)p->M, (long long)p->N);
    if (b->rank == 3 && gm != PTXQ_GEMM_GROUP_CONTIGUOUS && p->Lb != p->L)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: b has %lld batches, a %lld", (long long)p->Lb,
                         (long long)p->L);
    /* rows with no group to read from: an empty b needs no data pointer, and its tensor map
     * would point at address 0 (found by review) */
    if (gm == PTXQ_GEMM_GROUP_CONTIGUOUS && p->Lb == 0 && p->M > 0)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: contiguous grouping of %lld rows with no group "
                         "(b is [0, N, K])", (long long)p->M);
    /* K: whole 16-byte pieces of a row (TMA), whole scale blocks */
    int kq = desc->scaling == PTXQ_GEMM_SCALE_BLOCK || desc->scaling == PTXQ_GEMM_SCALE_MX ? 128
             : bf16 ? 8 : 16;
    if (p->K % kq)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: K = %lld must be a multiple of %d", (long long)p->K,
                         kq);
    if (p->M >= ((int64_t)1 << 31) || p->N >= ((int64_t)1 << 31) || p->K >= ((int64_t)1 << 31) ||
        p->L >= ((int64_t)1 << 31) || p->Lb >= ((int64_t)1 << 31))
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: M, N, K and batch counts must be below 2^31");
    if (a->stride[a->rank - 1] != 1 || b->stride[b->rank - 1] != 1 || d->stride[d->rank - 1] != 1)
        return ptxq_fail(PTXQ_ERR_STRIDE, "gemm: a, b and d must be contiguous in their last dim");
    p->lda = (uint64_t)(p->M > 1 ? ma.rstride : (p->K > 0 ? p->K : 16)) * (uint64_t)p->esz;
    p->ldb = (uint64_t)(p->N > 1 ? mb.rstride : (p->K > 0 ? p->K : 16)) * (uint64_t)p->esz;
    p->a_bs = p->L > 1 ? (uint64_t)ma.bstride * (uint64_t)p->esz
                       : p->lda * (uint64_t)(p->M > 0 ? p->M : 1);
    p->b_bs = p->Lb > 1 ? (uint64_t)mb.bstride * (uint64_t)p->esz
                        : p->ldb * (uint64_t)(p->N > 0 ? p->N : 1);
    if ((p->M > 1 && ma.rstride < p->K) || (p->N > 1 && mb.rstride < p->K))
        return ptxq_fail(PTXQ_ERR_STRIDE, "gemm: a/b rows overlap (row stride < K)");
    int64_t ldd = p->M > 1 ? md.rstride : p->N;
    if (p->M > 1 && ldd < p->N)
        return ptxq_fail(PTXQ_ERR_STRIDE, "gemm: d rows overlap (row stride %lld < N = %lld)",
                         (long long)ldd, (long long)p->N);
    if (p->L > 1 && p->M > 0 && md.bstride < ldd * (p->M - 1) + p->N)
        return ptxq_fail(PTXQ_ERR_STRIDE, "gemm: d batches overlap (batch stride %lld)",
                         (long long)md.bstride);
    if (a->data % 16 || b->data % 16)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemm: a and b must be 16-byte aligned");
    if (p->lda % 16 || p->ldb % 16 || p->a_bs % 16 || p->b_bs % 16 ||
        p->lda >= ((uint64_t)1 << 40) || p->ldb >= ((uint64_t)1 << 40) ||
        p->a_bs >= ((uint64_t)1 << 40) || p->b_bs >= ((uint64_t)1 << 40))
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemm: a and b row and batch strides (%llu, %llu; "
                         "%llu, %llu bytes) must be multiples of 16 bytes below 2^40",
                         (unsigned long long)p->lda, (unsigned long long)p->ldb,
                         (unsigned long long)p->a_bs, (unsigned long long)p->b_bs);
    if (d->data % 4 || (esize == 2 && ((p->M > 1 && ldd % 2) || (p->L > 1 && md.bstride % 2))))
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemm: d must be 4-byte aligned (16-bit types: even "
                         "row and batch strides)");

    /* grouping map */
    ptxq_gemm_args *g = &p->args;
    if (gm != PTXQ_GEMM_GROUP_NONE) {
        const ptxq_tensor *gr = desc->group_rows;
        if (!gr)
            return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: grouped GEMMs need desc.group_rows");
        if ((st = ptxq_check_tensor(gr, "gemm: group_rows", 1))) return st;
        int64_t want = gm == PTXQ_GEMM_GROUP_MASKED ? p->L : p->M;
        if (gr->dtype != PTXQ_I32 || gr->rank != 1 || gr->shape[0] != want ||
            (want > 1 && gr->stride[0] != 1))
            return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: group_rows must be a contiguous I32 [%lld] (%s)",
                             (long long)want, gm == PTXQ_GEMM_GROUP_MASKED
                             ? "rows used per group" : "the group of each row of a");
        if (gr->data % 4)
            return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemm: group_rows must be 4-byte aligned");
        if (desc->expected_rows < 0 || (desc->expected_rows && gm != PTXQ_GEMM_GROUP_MASKED))
            return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: expected_rows %lld; >= 0 and for "
                             "masked groups only", (long long)desc->expected_rows);
        g->rows = gr->data;
    } else if (desc->group_rows || desc->expected_rows) {
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: %s given without a grouping",
                         desc->group_rows ? "group_rows" : "expected_rows");
    }

    /* epilogue operands */
    unsigned flags = (unsigned)out;
    if (desc->c) {
        const ptxq_tensor *c = desc->c;
        if ((st = ptxq_check_tensor(c, "gemm: c", 1))) return st;
        if (c->dtype != d->dtype)
            return ptxq_fail(PTXQ_ERR_DTYPE, "gemm: c must have d's dtype %s (got %s)",
                             ptxq_dtype_name(d->dtype), ptxq_dtype_name(c->dtype));
        mat3 mc = mat_of(c);
        if (c->rank != d->rank || mc.batches != p->L || mc.rows != p->M || mc.cols != p->N)
            return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: c must have d's shape");
        if (c->stride[c->rank - 1] != 1)
            return ptxq_fail(PTXQ_ERR_STRIDE, "gemm: c must be contiguous in its last dim");
        if (c->data % (uint64_t)esize)
            return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemm: c must be aligned to its element size");
        g->c = c->data;
        g->ldc = (uint64_t)mc.rstride * (uint64_t)esize;
        g->c_bs = (uint64_t)mc.bstride * (uint64_t)esize;
        flags |= PTXQ_GEMM_FLAG_C;
    }
    if (desc->bias) {
        const ptxq_tensor *bi = desc->bias;
        if ((st = ptxq_check_tensor(bi, "gemm: bias", 1))) return st;
        if (bi->dtype != PTXQ_BF16 && bi->dtype != PTXQ_F32)
            return ptxq_fail(PTXQ_ERR_DTYPE, "gemm: bias must be BF16 or F32 (got %s)",
                             ptxq_dtype_name(bi->dtype));
        int64_t bsz = bi->dtype == PTXQ_F32 ? 4 : 2;
        int batched = bi->rank == 2 && bi->shape[0] == p->Lb;
        if (!((bi->rank == 1 && bi->shape[0] == p->N) || (batched && bi->shape[1] == p->N)))
            return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: bias must be [%lld] or [%lld, %lld]",
                             (long long)p->N, (long long)p->Lb, (long long)p->N);
        if (bi->stride[bi->rank - 1] != 1 && p->N > 1)
            return ptxq_fail(PTXQ_ERR_STRIDE, "gemm: bias must be contiguous along N");
        if (bi->data % (uint64_t)bsz)
            return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemm: bias must be aligned to its element size");
        g->bias = bi->data;
        g->bias_bs = batched ? (uint64_t)bi->stride[0] * (uint64_t)bsz : 0;
        flags |= (bi->dtype == PTXQ_F32 ? 2u : 1u) << PTXQ_GEMM_FLAG_BIAS_SHIFT;
    }
    flags |= (unsigned)gm << PTXQ_GEMM_FLAG_GROUP_SHIFT;
    if (out != 0 || desc->c || desc->bias || gm == PTXQ_GEMM_GROUP_CONTIGUOUS)
        flags |= PTXQ_GEMM_FLAG_GENERAL;
    /* 3-D tensor maps only for batches and groups (one GEMM keeps the 2-D TMA of before) */
    p->maps3d = p->L > 1 || b->rank == 3;
    if (p->maps3d) flags |= PTXQ_GEMM_FLAG_MAPS3D;
    p->tile_m = desc->tile_m ? desc->tile_m : PTXQ_GEMM_TILE_M;
    if (p->tile_m != PTXQ_GEMM_TILE_M && p->tile_m != 192)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: tile_m %d; 0, 128 or 192 expected",
                         desc->tile_m);
    g->flags = flags;
    float alpha = desc->alpha == 0.0f ? 1.0f : desc->alpha, beta = desc->beta;
    memcpy(&g->alpha, &alpha, 4);
    memcpy(&g->beta, &beta, 4);

    /* scales */
    /* TENSOR: a NULL scale is 1.0 (the kernel reads no scale through a NULL pointer) */
    ptxq_tensor unit;
    memset(&unit, 0, sizeof unit);
    unit.dtype = PTXQ_F32;
    unit.rank = 1;
    unit.shape[0] = unit.stride[0] = 1;
    const ptxq_tensor *sa0 = desc->a_scale ? desc->a_scale : &unit;
    const ptxq_tensor *sb0 = desc->b_scale ? desc->b_scale : &unit;
    ptxq_dtype sdt = desc->scaling == PTXQ_GEMM_SCALE_MX ? PTXQ_UE8M0 : PTXQ_F32;
    if (sa0->dtype != sdt || sb0->dtype != sdt)
        return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: %s scales must be %s (got %s, %s)",
                         scaling_name(desc->scaling), ptxq_dtype_name(sdt),
                         ptxq_dtype_name(sa0->dtype), ptxq_dtype_name(sb0->dtype));
    if (sa0->data % 4 || sb0->data % 4)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemm: scales must be 4-byte aligned");
    /* K blocks of 128 bytes (128 of K for FP8, 64 for BF16); BLOCK's scale blocks are 128 of K */
    int64_t nkb = ceil_div(p->K * p->esz, 128), nbn = ceil_div(p->N, 128);
    ptxq_tensor sa, sb;
    uint64_t sa_bs, sb_bs;
    switch (desc->scaling) {
    case PTXQ_GEMM_SCALE_TENSOR:
        /* 1 element shared, or [L] / [Lb] */
        sa = *sa0, sb = *sb0, sa_bs = sb_bs = 0;
        if (ptxq_shape_product(sa0->shape, sa0->rank) != 1) {
            if (sa0->rank != 1 || sa0->shape[0] != p->L || gm == PTXQ_GEMM_GROUP_CONTIGUOUS)
                return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: TENSOR a_scale has one element "
                                 "(or [L] = [%lld] for a batch)", (long long)p->L);
            sa_bs = (uint64_t)sa0->stride[0] * 4;
        }
        if (ptxq_shape_product(sb0->shape, sb0->rank) != 1) {
            if (sb0->rank != 1 || sb0->shape[0] != p->Lb)
                return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: TENSOR b_scale has one element "
                                 "(or [%lld], one per batch of b)", (long long)p->Lb);
            sb_bs = (uint64_t)sb0->stride[0] * 4;
        }
        break;
    case PTXQ_GEMM_SCALE_ROW:
        sa = *sa0, sb = *sb0;
        if ((st = row_scale(sa0, p->M, gm == PTXQ_GEMM_GROUP_CONTIGUOUS ? 1 : p->L, "a_scale",
                            &g->sam, &sa_bs)))
            return st;
        if ((st = row_scale(sb0, p->N, p->Lb, "b_scale", &g->sbn, &sb_bs))) return st;
        break;
    case PTXQ_GEMM_SCALE_BLOCK:
        if (gm == PTXQ_GEMM_GROUP_CONTIGUOUS) sa = *sa0, sa_bs = 0;
        else if ((st = scale_batch(sa0, 2, p->L, "a_scale", &sa, &sa_bs))) return st;
        if ((st = scale_batch(sb0, 2, p->Lb, "b_scale", &sb, &sb_bs))) return st;
        if (sa.rank != 2 || sa.shape[0] != p->M || sa.shape[1] != nkb)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: BLOCK a_scale must be [M, K/128] = "
                             "[%lld, %lld]", (long long)p->M, (long long)nkb);
        if (sb.rank != 2 || sb.shape[0] != nbn || sb.shape[1] != nkb)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: BLOCK b_scale must be [ceil(N/128), "
                             "K/128] = [%lld, %lld]", (long long)nbn, (long long)nkb);
        g->sam = (uint64_t)sa.stride[0];
        g->sak = (uint64_t)sa.stride[1];
        g->sbn = (uint64_t)sb.stride[0];
        g->sbk = (uint64_t)sb.stride[1];
        {
            /* the TMA layouts of the scales ("_sm" kernels), else the scale warp's any strides */
            /* A's box spans the tile's rows: set once tile_m is final (below) */
            int ka = scale_map(sa0->data, p->M, nkb, sa.stride[0], sa.stride[1], sa_bs, p->L, 128,
                               128, p->sc_dims[0], p->sc_strides[0], p->sc_box[0]);
            int kb_ = scale_map(sb0->data, nbn, nkb, sb.stride[0], sb.stride[1], sb_bs, p->Lb, 2, 8,
                                p->sc_dims[1], p->sc_strides[1], p->sc_box[1]);
            const char *e = getenv("PTXQ_GEMM_SCALES");
            p->sm = ka >= 0 && kb_ >= 0 && !(e && !strcmp(e, "warp"));
            p->sc_addr[0] = sa0->data;
            p->sc_addr[1] = sb0->data;
            g->scmode = (ka == 1 ? PTXQ_GEMM_SC_A_KMAJOR : 0u) | (kb_ == 0 ? PTXQ_GEMM_SC_B_NMAJOR : 0u) |
                        (sa_bs ? PTXQ_GEMM_SC_A_BATCH : 0u) | (sb_bs ? PTXQ_GEMM_SC_B_BATCH : 0u);
        }
        break;
    case PTXQ_GEMM_SCALE_MX: {
        /* UE8M0 [M, K/32] and [N, K/32] (+ a batch dim), contiguous along K; the kernels read a
         * K block's 4 scale bytes as one word, so rows (and batches) must be 4-byte aligned */
        int64_t nk32 = p->K / 32;
        if (gm == PTXQ_GEMM_GROUP_CONTIGUOUS) sa = *sa0, sa_bs = 0;
        else if ((st = scale_batch(sa0, 2, p->L, "a_scale", &sa, &sa_bs))) return st;
        if ((st = scale_batch(sb0, 2, p->Lb, "b_scale", &sb, &sb_bs))) return st;
        /* scale_batch counts F32 elements: UE8M0 batch strides are bytes */
        sa_bs /= 4, sb_bs /= 4;
        if (sa.rank != 2 || sa.shape[0] != p->M || sa.shape[1] != nk32)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: MX a_scale must be [M, K/32] = [%lld, %lld]",
                             (long long)p->M, (long long)nk32);
        if (sb.rank != 2 || sb.shape[0] != p->N || sb.shape[1] != nk32)
            return ptxq_fail(PTXQ_ERR_SCALE_SHAPE, "gemm: MX b_scale must be [N, K/32] = [%lld, %lld]",
                             (long long)p->N, (long long)nk32);
        if ((nk32 > 1 && (sa.stride[1] != 1 || sb.stride[1] != 1)) ||
            (p->M > 1 && sa.stride[0] % 4) || (p->N > 1 && sb.stride[0] % 4) || sa_bs % 4 ||
            sb_bs % 4)
            return ptxq_fail(PTXQ_ERR_STRIDE, "gemm: MX scales must be contiguous along K with row "
                             "and batch strides a multiple of 4 bytes");
        g->sam = (uint64_t)sa.stride[0];
        g->sbn = (uint64_t)sb.stride[0];
        break;
    }
    default:
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: unknown scaling");
    }
    g->sa_bs = sa_bs;
    g->sb_bs = sb_bs;

    /* BLOCK without the TMA store: 128 wide with the p2 pipeline beat the wave-quantisation pick
     * (see pick_pipe); with it, the pick below (pick_tile_n) */
    int e4 = a->dtype == PTXQ_E4M3 && b->dtype == PTXQ_E4M3;
    int store_d = call_store_ok(flags, d->data, p->N * esize, ldd * esize, p->L,
                                p->L > 1 ? md.bstride * esize : 0);
    int ts = store_d && desc->store >= 0 && !getenv("PTXQ_GEMM_PIPE");
    int plain = call_plain(desc, flags);
    int blk = desc->scaling == PTXQ_GEMM_SCALE_BLOCK;
    if (desc->tile_m == 0 && pick_m192(desc, p, e4, ts && plain)) p->tile_m = 192;
    /* the A-scale box (scale_map above: {4, rows} K-major, {rows, 1} M-major) spans the tile */
    p->sc_box[0][g->scmode & PTXQ_GEMM_SC_A_KMAJOR ? 1 : 0] = (cuuint32_t)p->tile_m;
    p->tile_n = desc->tile_n ? desc->tile_n
                : desc->scaling == PTXQ_GEMM_SCALE_MX ? 128 /* the width built (gen/gemm.py) */
                : p->tile_m != PTXQ_GEMM_TILE_M ? 128 /* the "_m192" width */
                : (blk && !ts && !pipe_off())
                    ? 128 : pick_tile_n(pick_rows(desc, p), p->N, sms > 0 ? sms : 132, ts,
                                  desc->scaling, bf16);
    if (p->tile_n != 128 && p->tile_n != 160 && p->tile_n != 192 && !(bf16 && p->tile_n == 256))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: tile_n %d; 0, 128, 160 or 192 expected "
                         "(256 too for BF16)", desc->tile_n);
    p->ctas = desc->ctas;
    if (p->ctas < 0)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: ctas %d is negative", desc->ctas);
    p->group = desc->group_m ? desc->group_m : 8;
    if (p->group < 1 || p->group > 1 << 16)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: group_m %d out of range", desc->group_m);
    /* clusters of two along M pay off once there are two M tiles and a full wave of tiles;
     * FP8 TENSOR / ROW only from 16 waves of tiles on, BF16 only when asked (below) */
    int64_t tm1 = ceil_div(p->M, p->tile_m), tn = ceil_div(p->N, p->tile_n);
    /* measured on an H200 (8192^3): TENSOR/ROW 1290 vs 1258 TFLOPS with pairs; BLOCK
     * (4096x7168x16384) was faster without them (1030 vs 924). Re-measured for BLOCK on an H100
     * with staged scales, the TMA store and the tail split (2026-11-23, same process): 1292 vs
     * 1282 at 4096x7168x16384, mixed on the DeepSeek-V3 shapes (within 2% either way at M =
     * 4096, 10-20% slower at M <= 128): still no pairs. Contiguous groups: a pair of M tiles may
     * belong to two groups, so no pairs.
     * E4M3 x E4M3 TENSOR and ROW re-measured (2026-11-27, both orders in one process, two
     * rounds, bench/RESULTS.md thirty-first session): pairs lose at 4096^3 (H100 7-9%, H200
     * 1-2%), 4096 x 4096 x 8192 (H100 7-10%), row 4096^3 (H100 5-7%, H200 1-3%) and row 4096 x
     * 7168 x 4096 (1-2%), are even at 6144^3 and 8192^3 and gain 0.5-0.9% at 16384 x 8192 x
     * 4096 (5504 tiles): so they need 16 waves of tiles there. BF16 x BF16 (also MXFP8's
     * dequantize path) without pairs: they lost 6-14% at 4096^3 and 4-5% at 8192^3 on the H100,
     * 0-1% on the H200. MX's promoting kernels keep the rule above (not re-measured). Pairs
     * with E5M2 operands (the same kernels but for the wgmma's types) follow E4M3's rule since
     * they have the TMA store too (thirty-second session). */
    int contig = gm == PTXQ_GEMM_GROUP_CONTIGUOUS;
    int64_t waves_min = !bf16 && (desc->scaling == PTXQ_GEMM_SCALE_TENSOR ||
                                  desc->scaling == PTXQ_GEMM_SCALE_ROW) ? 16 : 1;
    p->cluster = desc->cluster ? desc->cluster
                 : (!contig && !bf16 && desc->scaling != PTXQ_GEMM_SCALE_BLOCK && tm1 >= 2 &&
                    tm1 * tn * p->L >= waves_min * (sms > 0 ? sms : 132)) ? 2 : 1;
    if (p->cluster != 1 && p->cluster != 2)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: cluster %d; 0, 1 or 2 expected",
                         desc->cluster);
    if (contig && p->cluster != 1)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: contiguous grouping runs without clusters");
    if (desc->scaling == PTXQ_GEMM_SCALE_MX && p->tile_n != 128)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: MX runs at tile_n 128 (got %d)", p->tile_n);
    if (desc->store < -1 || desc->store > 1)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: store %d; 0 (auto), 1 or -1", desc->store);

    int64_t tm = ceil_div(p->M, (int64_t)p->tile_m * p->cluster);
    if (tm * tn * p->L >= ((int64_t)1 << 31))
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: too many output tiles");

    /* split-K */
    int splits = desc->split_k;
    if (splits < 0 || splits > 64)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: split_k %d; 0..64 expected", desc->split_k);
    if (p->tile_m != PTXQ_GEMM_TILE_M && splits > 1)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: tile_m 192 runs without split-K");
    if (splits == 0)
        splits = p->tile_m != PTXQ_GEMM_TILE_M ? 1 : pick_splits(tm * tn * p->L * p->cluster, nkb,
                                                                  sms > 0 ? sms : 132);
    if (splits > 1 && nkb < splits) splits = (int)(nkb > 1 ? nkb : 1);
    int64_t kbs = splits > 1 ? ceil_div(nkb, splits) : (nkb > 0 ? nkb : 1);
    if (splits > 1) splits = (int)ceil_div(nkb, kbs); /* no empty split */
    if (splits > 1) split_workspace(p, tm * tn * p->L, splits);
    if (splits <= 1) p->cnt_off = p->ws_bytes = 0;
    int64_t full = 0; /* leading whole-tile units (tail split) */
    if (desc->split_k == 0 && splits <= 1 && p->tile_m == PTXQ_GEMM_TILE_M) {
        int64_t slots = sms > 0 ? sms : 132;
        if (p->ctas > 0 && p->ctas < slots) slots = p->ctas;
        int s2 = pick_tail_split(tm * tn * p->L, nkb, slots / p->cluster);
        if (s2 > 1) {
            int64_t rest = (tm * tn * p->L) % (slots / p->cluster);
            kbs = ceil_div(nkb, s2);
            splits = (int)ceil_div(nkb, kbs);
            full = tm * tn * p->L - rest;
            split_workspace(p, rest, splits);
        }
    }
    g->full = (uint32_t)full;
    g->splits = (uint32_t)(splits > 1 ? splits : 1);
    g->kb_split = (uint32_t)kbs;
    g->d = d->data;
    g->sa = sa0->data;
    g->sb = sb0->data;
    g->ldd = (uint64_t)ldd * (uint64_t)esize;
    /* one batch: its stride is never used, but the TMA-store map of a rank-3 call still encodes
     * it (a multiple of 16 bytes), so it is D's span as for A and B (found by review: D [1, M, N]
     * with batch stride 3 passed validation and failed the map encode) */
    g->d_bs = p->L > 1 ? (uint64_t)md.bstride * (uint64_t)esize
                       : g->ldd * (uint64_t)(p->M > 0 ? p->M : 1);
    g->m = (uint32_t)p->M;
    g->n = (uint32_t)p->N;
    g->nkb = (uint32_t)nkb;
    g->tiles_m = (uint32_t)tm;
    g->tiles_n = (uint32_t)tn;
    g->group = (uint32_t)(p->group < tm ? p->group : (tm > 0 ? tm : 1));
    g->tiles_b = (uint32_t)(tm * tn > 0 ? tm * tn : 1);
    g->batches = (uint32_t)p->L; /* masked groups walk the batches' valid tiles (gen/gemm.py) */
    if (tm * tn * p->L * g->splits >= ((int64_t)1 << 31))
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: too many work units");
    g->ntiles = (uint32_t)(full + (tm * tn * p->L - full) * g->splits);
    p->tiles = tm * tn * p->L;
    g->nbn = (uint32_t)nbn;
    g->b_batched = gm != PTXQ_GEMM_GROUP_CONTIGUOUS && b->rank == 3;

    const char *pipe = p->tile_m != PTXQ_GEMM_TILE_M ? "" : pick_pipe(desc->scaling, p->tile_n, e4, bf16);
    /* TMA store wherever allowed. Measured on an H100 (bench gemm --store 1,-1, same process):
     * TENSOR / ROW 8192^3 1417 / 1415 TFLOPS vs 1319 / 1250 direct; BLOCK 4096 x 7168 x 16384 at
     * 192 1081 vs 885 direct; DeepSeek-V3 shapes with K <= 7168 +1% to +88% (4096 x 32768 x 512:
     * 409 -> 771). At 128 with >= 64 K blocks (n128p2: 7 ring stages -> 6) it was 1-2% slower,
     * but the width pick sends large M to 192 and small M measured even (441 vs 441). */
    /* MX (CUDA-core bound, gen/gemm.py mx_kblock) keeps direct stores and its 6th ring stage unless
     * asked: H100, 4096 x 7168 x 16384 / 8192^3: 355 / 356 TFLOPS direct vs 330 / 333 TMA store. */
    int mx = desc->scaling == PTXQ_GEMM_SCALE_MX;
    p->store = (desc->store > 0 || (desc->store == 0 && !mx)) && store_ok(p, desc, store_d, pipe);
    /* BLOCK's plain consumer (pipe "") has the "_sm" twin; the pipelined ones load their scales
     * from global memory themselves */
    p->sm = p->sm && desc->scaling == PTXQ_GEMM_SCALE_BLOCK && !*pipe;
    if (p->tile_m != PTXQ_GEMM_TILE_M) {
        /* the "_m192" kernels (gen/gemm.py M192_MODES): E4M3 x E4M3, tile_n 128, the TMA-store
         * epilogue (plain BF16 D), BLOCK with its scales by TMA; no split-K (above) */
        p->store = store_d && desc->store >= 0;
        if (!e4 || mx || bf16 || p->tile_n != 128 || !p->store || !plain ||
            (desc->scaling == PTXQ_GEMM_SCALE_BLOCK && !p->sm))
            return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT,
                             "gemm: tile_m 192 needs E4M3 x E4M3, tile_n 128, the TMA-store epilogue "
                             "(BF16 D without c, bias or grouping, 16-byte aligned rows, N a multiple "
                             "of 8) and, for "
                             "BLOCK, scales TMA can read");
    }
    snprintf(p->kernel, sizeof p->kernel, "gemm_%s_%s_%s%s_n%d%s%s%s%s", an, bname, sname,
             p->tile_m != PTXQ_GEMM_TILE_M ? "_m192" : "", p->tile_n, pipe,
             !p->store ? "" : plain ? "_ts" : "_tsg",
             p->sm ? "_sm" : "", p->cluster == 2 ? "_c2" : "");
    p->a_data = a->data;
    p->b_data = b->data;
    return PTXQ_OK;
}

/* Multiplier and shift that divide an n < 2^31 by d (1 <= d < 2^31) as (mulhi(n, mul) + n) >> shr
 * (Granlund and Montgomery's round-up method with a 33-bit multiplier, its top bit the "+ n"):
 * the kernels' tile coordinates take them instead of division instructions (gen/gemm.py fdiv). */
void ptxq_fast_div(uint32_t d, uint32_t *mul, uint32_t *shr) {
    uint32_t s = 0;
    while (s < 31 && ((uint32_t)1 << s) < d) ++s;
    *shr = s;
    *mul = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << s) - d)) / d + 1);
}

/* The divisors of the tile coordinates (gen/gemm.py tile_coords), once the split is final. */
static void gemm_divisors(ptxq_gemm_args *g) {
    uint32_t group = g->group > 0 ? g->group : 1;
    uint32_t tm = g->tiles_m > 0 ? g->tiles_m : 1;
    uint32_t last = tm % group ? tm % group : group;
    uint32_t per = group * (g->tiles_n > 0 ? g->tiles_n : 1);
    ptxq_fast_div(per, &g->dv_per, &g->sh_per);
    ptxq_fast_div(group, &g->dv_grp, &g->sh_grp);
    ptxq_fast_div(last, &g->dv_last, &g->sh_last);
    ptxq_fast_div(g->splits > 0 ? g->splits : 1, &g->dv_spl, &g->sh_spl);
    ptxq_fast_div(g->tiles_b > 0 ? g->tiles_b : 1, &g->dv_tb, &g->sh_tb);
}

/* No split after all (the divisors again: gemm_divisors). */
static void drop_split(gemm_plan *p) {
    ptxq_gemm_args *g = &p->args;
    g->splits = 1;
    g->full = 0;
    g->kb_split = g->nkb > 0 ? g->nkb : 1;
    g->ntiles = (uint32_t)p->tiles;
    p->ws_bytes = p->cnt_off = 0;
    p->ws_free = 0;
    gemm_divisors(g);
}

/* Cluster split-K (args.csplit, gen/gemm.py cluster_split_reduce): when every split tile's units
 * can run at once, one per CTA, as clusters of `splits` CTAs (at most 8, whole clusters resident
 * together: cuOccupancyMaxActiveClusters), the partials are summed through distributed shared
 * memory instead of the workspace (no partial store, fence, count or serial sum by one CTA; the
 * same sum in the same split order). Pure split-K only (no tail split, no CTA pairs, no groups:
 * a skipped tile would leave its cluster waiting), and only the single-CTA kernels of tile_n
 * PTXQ_GEMM_CSPLIT_TILE_N have the sum (gen/gemm.py CS_TILE_N: the runtime's width for the few
 * tiles that split). A runtime-picked split may shrink to fit the resident clusters; a split the
 * caller gave is kept or the workspace path runs. cluster_split_may: the checks that need no
 * device (plan_workspace keeps a runtime-picked split without a workspace only past them, and
 * ptxq_gemm_plan_for loads the kernel only past them); cluster_split (below) the rest. */
static int cluster_split_may(const ptxq_gemm_desc *desc, const gemm_plan *p) {
    const ptxq_gemm_args *g = &p->args;
    return g->splits >= 2 && g->full == 0 && p->cluster == 1 &&
           p->tile_n == PTXQ_GEMM_CSPLIT_TILE_N && !(desc->flags & PTXQ_GEMM_NO_CLUSTER_SPLIT) &&
           ((g->flags >> PTXQ_GEMM_FLAG_GROUP_SHIFT) & 3u) == 0;
}

/* The workspace for the split picked: a split the runtime chose is dropped without one, unless
 * it may run across a cluster (ws_free: decided at launch, cluster_split); a split the caller
 * asked for is an error without one. */
static int plan_workspace(const ptxq_gemm_desc *desc, gemm_plan *p, const ptxq_gemm_desc *caller,
                          size_t before) {
    ptxq_gemm_args *g = &p->args;
    if (g->splits <= 1) return PTXQ_OK;
    int have = desc->workspace && desc->workspace_bytes >= p->ws_bytes;
    /* the caller's figures: MX's dequantize path puts its BF16 copies (before bytes) first */
    if (!have && desc->split_k > 1)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: split_k %u needs desc.workspace of %zu "
                         "bytes (ptxq_gemm_workspace_size; got %zu)", g->splits,
                         before + p->ws_bytes, caller->workspace ? caller->workspace_bytes : (size_t)0);
    if (!have && cluster_split_may(desc, p)) {
        p->ws_free = 1;
        p->ws_bytes = p->cnt_off = 0;
        return PTXQ_OK;
    }
    if (!have) {
        drop_split(p);
        return PTXQ_OK;
    }
    g->ws = desc->workspace;
    g->cnt = desc->workspace + p->cnt_off;
    return PTXQ_OK;
}

/* ---- MXFP8, dequantize path -------------------------------------------------------------------
 * A and B are decoded to dense BF16 copies in the front of the workspace (gemm_mx_dequant: 8
 * codes a lane, lanes on consecutive quarters of the 32-code scale blocks, a thread one block's
 * worth a trip, reading the operands and their scales in place), then the BF16
 * GEMM runs on the copies with unit scales, the call's alpha, beta, C, bias and grouping, and the
 * rest of the workspace for its own split. */
typedef struct mx_call {
    int on;                       /* the dequantize path is taken */
    ptxq_tensor a16, b16;         /* the BF16 copies (dense) */
    ptxq_gemm_desc d16;           /* the BF16 GEMM's desc */
    ptxq_gemm_dq_args qa, qb;     /* the two dequantize launches */
    size_t bytes;                 /* workspace taken by the copies (each 256-byte aligned) */
} mx_call;

/* AUTO's pick: dequantize when (bytes the decode passes move) / BW + flops / R_BF16 is below
 * flops / R_MX, i.e. when the promote path's slower MMA costs more than the decode passes. Each
 * decoded element moves 3 bytes + 1/32 (FP8 in, BF16 out, its scale). Fitted to an H100's
 * timings of both paths in one process (bench/RESULTS.md, forty-third session, after the decoder
 * went to whole-sector stores), N = 7168 unless noted, ms promote / dequantize:
 * M = 256 K 16384 0.193 / 0.235, 384 0.379 / 0.314, 512 0.381 / 0.309, 768 0.560 / 0.386;
 * 512 x 7168 x 7168 0.170 / 0.143; 256 x 24576 x 1536 0.067 / 0.085; 4096 x 7168 x 16384
 * dequantize 1.330. BW is an effective rate (the two decode launches' time with their starts
 * and tails over the bytes), not the decoder's streaming rate (89-92% of a 2.9 TB/s copy); the
 * promote kernels ran at 238-322 TFLOPS on these shapes. */
static const double MX_RATE_PROMOTE = 310e12, MX_RATE_BF16 = 870e12, MX_DQ_BW = 2.2e12;

static int mx_prefers_dequant(const gemm_plan *p) {
    double flops = 2.0 * (double)p->L * (double)p->M * (double)p->N * (double)p->K;
    double bytes = ((double)p->L * (double)p->M + (double)p->Lb * (double)p->N) * (double)p->K *
                   (3.0 + 1.0 / 32.0);
    return bytes / MX_DQ_BW + flops / MX_RATE_BF16 < flops / MX_RATE_PROMOTE;
}

static size_t align256(size_t x) { return (x + 255) / 256 * 256; }

/* The copies and the decode launches, from the MX call's own plan pm (its scale strides). */
static int mx_dequant_plan(const ptxq_gemm_desc *desc, const ptxq_tensor *a, const ptxq_tensor *b,
                           const gemm_plan *pm, mx_call *x) {
    /* without a workspace (ptxq_gemm_workspace_size) the copies get a stand-in address: the
     * plan is only measured then, never launched */
    uint64_t ws = desc->workspace ? desc->workspace : 256;
    /* the decode kernel counts blocks in 32 bits and a lane's unit 4 x block + part too (its
     * store offset: gen/gemm.py mx_dequant), so at most 2^30 blocks an operand (found by review:
     * from 2^30 on the unit index wrapped and the copy's front was overwritten; the grid-stride
     * index stays below 2^31); L * M and Lb * N are below 2^62 (each factor below 2^31), so
     * dividing first keeps every product in range */
    int64_t nj = pm->K / 32, lim = (int64_t)1 << 30;
    if (pm->L * pm->M > lim / nj || pm->Lb * pm->N > lim / nj)
        return ptxq_fail(PTXQ_ERR_SHAPE, "gemm: MX dequantize path: more than 2^30 scale blocks in "
                         "an operand (use mx_path PROMOTE)");
    size_t abytes = align256((size_t)(pm->L * pm->M * pm->K * 2));
    size_t bbytes = align256((size_t)(pm->Lb * pm->N * pm->K * 2));
    x->bytes = abytes + bbytes;
    /* dense copies of a's and b's shapes (only an outer batch dim can be 0 here) */
    x->a16 = ptxq_tensor_make(PTXQ_BF16, a->rank, a->shape, ws);
    x->b16 = ptxq_tensor_make(PTXQ_BF16, b->rank, b->shape, ws + abytes);
    const ptxq_gemm_args *g = &pm->args;
    int e5a = a->dtype == PTXQ_E5M2, e5b = b->dtype == PTXQ_E5M2;
    x->qa = (ptxq_gemm_dq_args){.q = a->data, .s = g->sa, .y = x->a16.data, .q_rs = pm->lda,
                                .q_bs = pm->a_bs, .s_rs = g->sam, .s_bs = g->sa_bs,
                                .rows_b = (uint32_t)pm->M, .nj = (uint32_t)nj,
                                .blocks = (uint32_t)(pm->L * pm->M * nj), .e5m2 = (uint32_t)e5a};
    x->qb = (ptxq_gemm_dq_args){.q = b->data, .s = g->sb, .y = x->b16.data, .q_rs = pm->ldb,
                                .q_bs = pm->b_bs, .s_rs = g->sbn, .s_bs = g->sb_bs,
                                .rows_b = (uint32_t)pm->N, .nj = (uint32_t)nj,
                                .blocks = (uint32_t)(pm->Lb * pm->N * nj), .e5m2 = (uint32_t)e5b};
    /* the kernel divides a block index by nj and a row by rows_b with these (gen/gemm.py
     * mx_dequant); both numerators are below 2^31 */
    ptxq_gemm_dq_args *qs[2] = {&x->qa, &x->qb};
    for (int i = 0; i < 2; ++i) {
        ptxq_fast_div(qs[i]->nj ? qs[i]->nj : 1, &qs[i]->dv_nj, &qs[i]->sh_nj);
        ptxq_fast_div(qs[i]->rows_b ? qs[i]->rows_b : 1, &qs[i]->dv_rb, &qs[i]->sh_rb);
    }
    x->d16 = *desc;
    x->d16.scaling = PTXQ_GEMM_SCALE_TENSOR;
    x->d16.a_scale = x->d16.b_scale = NULL;
    x->d16.mx_path = PTXQ_GEMM_MX_AUTO;
    x->d16.workspace = desc->workspace ? ws + x->bytes : 0;
    x->d16.workspace_bytes = desc->workspace_bytes > x->bytes ? desc->workspace_bytes - x->bytes : 0;
    return PTXQ_OK;
}

/* Every check and pick of a call: the GEMM plan p (for MX's dequantize path, that of the BF16
 * GEMM) and x. sizing: for ptxq_gemm_workspace_size (the path and split as if the workspace were
 * large enough; no workspace step). */
static int plan_call(const ptxq_gemm_desc *desc, const ptxq_tensor *a, const ptxq_tensor *b,
                     const ptxq_tensor *d, int sms, int sizing, gemm_plan *p, mx_call *x) {
    memset(x, 0, sizeof *x);
    int st = plan_gemm(desc, a, b, d, sms, p);
    if (st) return st;
    if (desc->mx_path < PTXQ_GEMM_MX_AUTO || desc->mx_path > PTXQ_GEMM_MX_DEQUANTIZE)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: mx_path %d; 0 (auto), 1 (promote) or "
                         "2 (dequantize)", (int)desc->mx_path);
    if (desc->flags & ~(PTXQ_GEMM_NO_PDL | PTXQ_GEMM_COUNTERS_ZEROED | PTXQ_GEMM_NO_CLUSTER_SPLIT))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: unknown flags 0x%x (PTXQ_GEMM_NO_PDL | "
                         "PTXQ_GEMM_COUNTERS_ZEROED | PTXQ_GEMM_NO_CLUSTER_SPLIT)", desc->flags);
    /* NOTE: one check for every path, whether or not a split or the MX copies are planned, so
     * that the answer does not depend on the shape or the device's SM count (a review found a
     * misaligned workspace refused at M = 64 and accepted at M = 4096) */
    if (!sizing && desc->workspace % 256)
        return ptxq_fail(PTXQ_ERR_ALIGNMENT, "gemm: workspace must be 256-byte aligned");
    /* MX: an empty call (K = 0: D = beta C + bias; nothing to enqueue) has nothing to decode */
    int empty = p->M == 0 || p->N == 0 || p->L == 0 || p->K == 0;
    if (desc->scaling == PTXQ_GEMM_SCALE_MX && desc->mx_path != PTXQ_GEMM_MX_PROMOTE && !empty) {
        int forced = desc->mx_path == PTXQ_GEMM_MX_DEQUANTIZE;
        if ((st = mx_dequant_plan(desc, a, b, p, x))) {
            if (forced) return st;
            ptxq_ok(); /* AUTO: promote instead */
        } else {
            int fits = desc->workspace && desc->workspace_bytes >= x->bytes;
            if (forced && !sizing && !fits)
                return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: MX dequantize path needs "
                                 "desc.workspace of at least %zu bytes (ptxq_gemm_workspace_size; "
                                 "got %zu)", x->bytes, desc->workspace ? desc->workspace_bytes : 0);
            /* AUTO keeps masked groups on the promote path: the copies would cover every
             * group's capacity rows, while the valid rows (device data) may be few */
            int auto_ok = desc->grouping != PTXQ_GEMM_GROUP_MASKED && mx_prefers_dequant(p);
            x->on = forced || (auto_ok && (sizing || fits));
        }
        if (x->on && (st = plan_gemm(&x->d16, &x->a16, &x->b16, d, sms, p))) return st;
    }
    if (sizing) return PTXQ_OK;
    st = plan_workspace(x->on ? &x->d16 : desc, p, desc, x->on ? x->bytes : 0);
    if (!st) gemm_divisors(&p->args);
    return st;
}

ptxq_status ptxq_gemm_validate(const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                               const ptxq_tensor *b, const ptxq_tensor *d) {
    gemm_plan p;
    mx_call x;
    int st = plan_call(desc, a, b, d, 0, 0, &p, &x);
    return st ? (ptxq_status)st : (ptxq_status)ptxq_ok();
}

ptxq_status ptxq_gemm_workspace_size(const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                                     const ptxq_tensor *b, const ptxq_tensor *d, size_t *bytes) {
    if (!bytes) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm_workspace_size: bytes is NULL");
    gemm_plan p;
    mx_call x;
    int st = plan_call(desc, a, b, d, 0, 1, &p, &x);
    if (st) return (ptxq_status)st;
    *bytes = (x.on ? x.bytes : 0) + p.ws_bytes;
    return ptxq_ok();
}

ptxq_status ptxq_gemm_kernel_for(const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                                 const ptxq_tensor *b, const ptxq_tensor *d, char *name,
                                 size_t n) {
    if (!name || n == 0) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm_kernel_for: no buffer");
    gemm_plan p;
    mx_call x;
    int st = plan_call(desc, a, b, d, 0, 0, &p, &x);
    if (st) return (ptxq_status)st;
    snprintf(name, n, "%s", p.kernel);
    return ptxq_ok();
}

/* The cluster split-K decision with the device (cluster_split_may's comment): returns 1 when
 * taken (p->args updated), else 0 and p unchanged. */
static int cluster_split(ptxq_context *ctx, const ptxq_gemm_desc *desc, gemm_plan *p,
                         const ptxq_loaded *k) {
    ptxq_gemm_args *g = &p->args;
    if (!cluster_split_may(desc, p)) return 0;
    int64_t slots = ctx->info.sm_count > 0 ? ctx->info.sm_count : 1;
    if (p->ctas > 0 && p->ctas < slots) slots = p->ctas;
    int64_t nkb = g->nkb;
    for (int64_t s = g->splits < 8 ? g->splits : 8; s >= 2; --s) {
        if (desc->split_k > 1 && s != (int64_t)g->splits) break;
        int64_t kbs = ceil_div(nkb, s);
        if (ceil_div(nkb, kbs) != s || p->tiles * s > slots) continue;
        /* a smaller split lengthens every unit's K loop; at M <= 64 the workspace path's sum reads
         * half the rows, so take it there only for at most 25% more K blocks a unit. H100, 20
         * calls back to back, block-scaled (bench/RESULTS.md, 2026-11-26): 64 x 2112 x 7168 cluster
         * 6 splits 13.4 us / workspace 7 14.4, 128 x 2112 15.0 / 17.1, 128 x 4096 x 7168 cluster 3
         * 19.4 / workspace 4 21.9, but 64 x 4096 x 7168 19.6 / 18.5 (clusters of 4 did not fit).
         * Without a workspace (ws_free) the other choice is no split at all: any split fits. */
        int shrunk = s < (int64_t)g->splits;
        if (shrunk && p->M <= 64 && !p->ws_free && 4 * kbs > 5 * (int64_t)g->kb_split) continue;
        int fit = ptxq_max_clusters(ctx, k, (unsigned)s, (unsigned)k->entry->threads,
                                    k->entry->dynamic_smem);
        if (fit < p->tiles) continue;
        g->splits = (uint32_t)s;
        g->kb_split = (uint32_t)kbs;
        g->ntiles = (uint32_t)(p->tiles * s);
        g->csplit = 1;
        p->ws_bytes = p->cnt_off = 0; /* the workspace is not touched */
        gemm_divisors(g);
        return 1;
    }
    return 0;
}

/* The split as launched: across a cluster where cluster_split takes it; a runtime-picked split
 * without a workspace (ws_free) is dropped otherwise. Returns 1 for the cluster sum. */
static int launch_split(ptxq_context *ctx, const ptxq_gemm_desc *desc, gemm_plan *p,
                        const ptxq_loaded *k) {
    int cs = k && cluster_split(ctx, desc, p, k);
    if (!cs && p->ws_free) drop_split(p);
    return cs;
}

static unsigned grid_of(const ptxq_context *ctx, const gemm_plan *p) {
    /* persistent: one CTA per SM (the ring takes most of shared memory), at most one cluster per
     * (cluster) work unit; the grid is a whole number of clusters */
    unsigned cl = (unsigned)p->cluster;
    unsigned slots = (unsigned)(ctx->info.sm_count > 0 ? ctx->info.sm_count : 1);
    if (p->ctas > 0 && (unsigned)p->ctas < slots) slots = (unsigned)p->ctas;
    slots /= cl;
    if (slots == 0) slots = 1;
    return (p->args.ntiles < slots ? p->args.ntiles : slots) * cl;
}

ptxq_status ptxq_gemm_plan_for(ptxq_context *ctx, const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                               const ptxq_tensor *b, const ptxq_tensor *d, ptxq_gemm_plan *plan) {
    if (!ctx || !plan) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm_plan_for: NULL argument");
    gemm_plan p;
    mx_call x;
    int st = plan_call(desc, a, b, d, ctx->info.sm_count, 0, &p, &x);
    if (st) return (ptxq_status)st;
    memset(plan, 0, sizeof *plan);
    if (p.args.splits > 1) {
        const ptxq_gemm_desc *dg = x.on ? &x.d16 : desc;
        const ptxq_loaded *k = NULL;
        if (cluster_split_may(dg, &p) && p.M > 0 && p.N > 0 && p.L > 0 &&
            (st = ptxq_get_kernel(ctx, p.kernel, &k)))
            return (ptxq_status)st;
        plan->cluster_split = launch_split(ctx, dg, &p, k);
    }
    snprintf(plan->kernel, sizeof plan->kernel, "%s", p.kernel);
    plan->tile_n = p.tile_n;
    plan->tile_m = p.tile_m;
    plan->cluster = p.cluster;
    plan->store = p.store;
    plan->splits = (int)p.args.splits;
    plan->units = p.args.ntiles;
    plan->grid = grid_of(ctx, &p);
    plan->workspace_bytes = (x.on ? x.bytes : 0) + p.ws_bytes;
    plan->counters_offset = p.args.splits > 1 ? (x.on ? x.bytes : 0) + p.cnt_off : plan->workspace_bytes;
    plan->dequant = x.on;
    plan->split_tiles = p.args.splits > 1 ? (unsigned)(p.tiles - p.args.full) : 0;
    plan->pdl = !(desc->flags & PTXQ_GEMM_NO_PDL) && ptxq_cudrv_launch_ex() != NULL;
    return ptxq_ok();
}

ptxq_status ptxq_gemm(ptxq_context *ctx, const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                      const ptxq_tensor *b, const ptxq_tensor *d, void *stream) {
    if (!ctx) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "gemm: ctx is NULL");
    gemm_plan p;
    mx_call x;
    int st = plan_call(desc, a, b, d, ctx->info.sm_count, 0, &p, &x);
    if (st) return st;
    if (p.M == 0 || p.N == 0 || p.L == 0) return ptxq_ok(); /* empty: nothing to enqueue */
    const ptxq_loaded *k = NULL, *kq = NULL;
    if ((st = ptxq_get_kernel(ctx, p.kernel, &k))) return st;
    if (x.on && (st = ptxq_get_kernel(ctx, "gemm_mx_dequant", &kq))) return st;
    /* the split as launched (across a cluster, or dropped without a workspace), before anything
     * is enqueued */
    int csplit = launch_split(ctx, x.on ? &x.d16 : desc, &p, k);

    /* TMA maps: {K, rows, batches}, innermost first; one box = 128 K-bytes x (128 | tile_n) rows
     * of one batch, 128B swizzle. K = 0 still needs a valid map: it is never read (no K blocks),
     * so give it K = 16. A batch of B is picked by the kernel's third coordinate. */
    CUtensorMap ma, mb;
    cuuint64_t kdim = (cuuint64_t)(p.K > 0 ? p.K * p.esz : 16);
    cuuint64_t da[3] = {kdim, (cuuint64_t)p.M, (cuuint64_t)p.L};
    cuuint64_t db[3] = {kdim, (cuuint64_t)p.N, (cuuint64_t)(p.Lb > 0 ? p.Lb : 1)};
    cuuint64_t sa[2] = {p.lda, p.a_bs}, sb[2] = {p.ldb, p.b_bs};
    /* with clusters of two, each CTA loads half of the B tile and multicasts it to both */
    cuuint32_t ba[3] = {128, (cuuint32_t)p.tile_m, 1}, bb[3] = {128, (cuuint32_t)(p.tile_n / p.cluster), 1};
    unsigned rank = p.maps3d ? 3u : 2u;
    if ((st = ptxq_tmap_get(ctx, CU_TENSOR_MAP_DATA_TYPE_UINT8, rank, p.a_data, da, sa, ba,
                            CU_TENSOR_MAP_SWIZZLE_128B, &ma)))
        return st;
    if ((st = ptxq_tmap_get(ctx, CU_TENSOR_MAP_DATA_TYPE_UINT8, rank, p.b_data, db, sb, bb,
                            CU_TENSOR_MAP_SWIZZLE_128B, &mb)))
        return st;
    unsigned grid = grid_of(ctx, &p);
    /* TMA store: D as BF16 or F16 {N, M, batches}; one box = one staging slab, 64 columns (128 bytes,
     * the 128B-swizzle span) x 64 rows (a consumer warpgroup's rows); at tile_n 160, 32 columns
     * (64 bytes, 64B swizzle: gen/gemm.py epilogue_tma). Encoded before anything is enqueued,
     * like the other maps. */
    CUtensorMap md;
    if (p.store) {
        int narrow = p.tile_n % 64 != 0; /* 160: 32-column slabs (gen/gemm.py epilogue_tma) */
        cuuint64_t dd[3] = {(cuuint64_t)p.N, (cuuint64_t)p.M, (cuuint64_t)p.L};
        cuuint64_t sd[2] = {p.args.ldd, p.args.d_bs};
        cuuint32_t bd[3] = {narrow ? 32 : 64, 64, 1};
        CUtensorMapDataType dt = (p.args.flags & 3u) == 1u ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                           : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
        if ((st = ptxq_tmap_get(ctx, dt, rank, p.args.d, dd, sd, bd,
                                narrow ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B,
                                &md)))
            return st;
    }
    /* BLOCK "_sm": the scale maps (F32, no swizzle; scale_map), encoded before anything is
     * enqueued like the others */
    CUtensorMap msc[2];
    for (int i = 0; p.sm && i < 2; ++i)
        if ((st = ptxq_tmap_get(ctx, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, p.sc_addr[i], p.sc_dims[i],
                                p.sc_strides[i], p.sc_box[i], CU_TENSOR_MAP_SWIZZLE_NONE, &msc[i])))
            return st;
    /* the caller's current context is put back after the launches (ptxq_ctx_enter) */
    CUcontext prev;
    if ((st = ptxq_ctx_enter(ctx, &prev))) return st;
    if (x.on) { /* MX dequantize path: A and B to BF16 in the workspace, in stream order */
        ptxq_gemm_dq_args *qs[2] = {&x.qa, &x.qb};
        for (int i = 0; i < 2; ++i) {
            uint64_t work = (qs[i]->blocks + PTXQ_GEMM_DQ_THREADS - 1) / PTXQ_GEMM_DQ_THREADS;
            uint64_t resident = (uint64_t)ctx->info.sm_count * (uint64_t)kq->ctas_per_sm;
            unsigned gq = (unsigned)(work < resident ? work : resident);
            void *qparams[] = {qs[i]};
            if ((st = ptxq_launch_ex_current(ctx, kq, gq ? gq : 1, PTXQ_GEMM_DQ_THREADS, 0, stream,
                                             qparams, 0u, 0u)))
                goto done;
        }
    }
    if (p.args.splits > 1 && !csplit && !(desc->flags & PTXQ_GEMM_COUNTERS_ZEROED)) {
        /* the tile counters start at zero (every call leaves them so: gen/gemm.py split_k_reduce;
         * with PTXQ_GEMM_COUNTERS_ZEROED the caller vouches for it and no plain memset sits
         * between two PDL launches) */
        const ptxq_cudrv *drv = ctx->drv;
        size_t ncnt = (p.ws_bytes - p.cnt_off) / 4;
        CUresult r = drv->cuMemsetD32Async(p.args.cnt, 0, ncnt, (CUstream)stream);
        if (r != CUDA_SUCCESS) {
            st = ptxq_cuda_fail(drv, r, "cuMemsetD32Async (split-K counters)");
            goto done;
        }
    }
    void *params3[] = {&ma, &mb, &p.args}, *params4[] = {&ma, &mb, &md, &p.args};
    void *params5[] = {&ma, &mb, &msc[0], &msc[1], &p.args};
    void *params6[] = {&ma, &mb, &md, &msc[0], &msc[1], &p.args};
    /* the kernel's own block size and shared-memory size (gen/gemm.py: one producer warpgroup
     * and tile_m / 64 consumers; geometry), recorded in the registry; PDL unless NO_PDL (the
     * kernel waits for its predecessor before any global access) */
    unsigned lf = desc->flags & PTXQ_GEMM_NO_PDL ? 0u : PTXQ_LAUNCH_PDL;
    st = ptxq_launch_ex_current(ctx, k, grid, (unsigned)k->entry->threads, k->entry->dynamic_smem,
                                stream, p.sm ? (p.store ? params6 : params5) : p.store ? params4 : params3,
                                lf, csplit ? p.args.splits : 1u);
done:
    ptxq_ctx_leave(ctx, prev);
    if (st) return st;
    return ptxq_ok();
}
