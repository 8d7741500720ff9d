/* bench_gemm.c -- FP8 and BF16 GEMM: time, TFLOPS, % of the dense peak (H100/H200 SXM: 1979 TFLOPS
 * FP8, 989 BF16), and, where libcublasLt can be dlopen'd, cuBLASLt's GEMM of the same types on the
 * same inputs in the same process (per-tensor scales, default settings: FAST_ACCUM off, i.e.
 * promoted accumulation for FP8) and the ratio.
 *
 *   ptxq bench gemm [--m M --n N --k K] [--scaling tensor|row|block|mx] [--tile-n 0|128|192]
 *                   [--tile-m 0|128|192] (desc.tile_m: 192 = three consumer warpgroups)
 *                   [--store S[,S...]] (desc.store 0|1|-1: the first is the row's kernel, the
 *                   others are timed in the same process and shown in brackets)
 *                   [--rounds R] (R > 1: after the row, ours and cuBLASLt are timed back to back
 *                   R times, who goes first alternating; each side's median and range and the
 *                   median of the per-round ratios are printed: under the H100's clock swings one
 *                   library's spread between rounds reached 15%)
 *                   [--alt "K=V[,K=V..][;...]"] (more variants timed in the same process and
 *                   shown in brackets; keys store, split (desc.split_k), tile, tm (desc.tile_m), cluster, pipe
 *                   (PTXQ_GEMM_PIPE: off|p2|h2), mx (desc.mx_path: 1 promote, 2 dequantize),
 *                   pdl (0: PTXQ_GEMM_NO_PDL, 1: programmatic dependent launch),
 *                   csplit (0: PTXQ_GEMM_NO_CLUSTER_SPLIT, split-K through the workspace),
 *                   scales (PTXQ_GEMM_SCALES: warp = BLOCK scales by the scale warp, not TMA),
 *                   e.g. --alt "pipe=h2;split=1", --alt "mx=1;mx=2" or --alt "scales=warp")
 *                   [--group G] [--cluster 0|1|2] [--ctas C] [--reps R] [--no-cublas]
 *                   [--lt-fast] (cuBLASLt with CUBLASLT_MATMUL_DESC_FAST_ACCUM on for per-tensor
 *                   FP8, marked "cuBLASLt FAST_ACCUM" on each row: no promotion, so not at our
 *                   kernels' accuracy; its figure for reference. H200, 2026-11-27: 8192^3 +2.5
 *                   to +4% over its default)
 *                   [--pdl on|off] (on, the library's default: our GEMMs are launched with
 *                   programmatic dependent launch; cuBLASLt's are plain launches)
 *                   [--batch N] (N calls back to back between a timing's events, the time per
 *                   call; 1, the default: one call, the stream synchronized after it, where PDL
 *                   cannot show. Measured on an H100: single calls within -3%..+4% either way,
 *                   20 back to back 1.3-1.5 us a call faster with PDL on small-M shapes)
 *                   [--counters memset|zeroed] (zeroed: PTXQ_GEMM_COUNTERS_ZEROED from a desc's
 *                   second call on, no split-K counter memset between the calls)
 *                   [--a e4m3|e5m2|bf16] [--b e4m3|e5m2|bf16] [--out bf16|f16|f32] [--sweep deepseek]
 *                   [--data uniform|normal] (operand codes: uniform (default) or N(0,1) scaled
 *                   to E4M3's range per block, as DeepGEMM's tests quantize torch.randn)
 *                   [--flush MIB] (a memset of MIB MiB on the stream before each timed call, outside
 *                   its events: DeepGEMM's benchmark method, an 8 GB memset between calls, which
 *                   flushes L2 and leaves the SMs idle between GEMMs; 0, the default: none.
 *                   Measured on an H100: ours gains 0-1% from the pause, DeepGEMM's kernel 3-13%)
 *                   Each timing is sampled by NVML where the driver has it (bench_nvml.h): the
 *                   SM clock, power and whether the power cap held the clock down, per side.
 *                   [--moe contiguous|masked [--groups G --m M --n N --k K]] (grouped block-scaled
 *                   GEMMs, bench_moe below; without --groups DeepGEMM's grouped shapes; --tile-n
 *                   applies; masked --hint 1: m as desc.expected_rows; --spread S: groups of
 *                   m x U(1 - S, 1 + S) rows, 0.3 by default, 0 for exactly m; with --groups only)
 *   ptxq check gemm [--m M --n N --k K] [--scaling S] [--tile-n T] [--tile-m 128|192] [--cluster C] [--ctas C] [--sample R] [--seed S]
 *                   [--store 0|1|-1]
 *                   [--a e4m3|e5m2|bf16] [--b e4m3|e5m2|bf16] [--out bf16|f16|f32] [--batch L]
 *                   [--mx-path 0|1|2] [--sa-mmajor 1] [--sa-kpitch P] [--sb-nmajor 1]
 *                   [--grouping none|masked|contiguous] [--split-k S] [--bias bf16|f32]
 *                   [--beta B (with C)] [--alpha A]
 * Without --m: 8192^3 per-tensor (and row-wise), 4096 x 7168 x 16384 block-scaled, then the
 * DeepSeek-V3 layer shapes (block-scaled, M = 64, 128, 4096). Every row also prints the bytes that
 * must move (A, B, scales read once, D written once) as GB/s and as % of a device-to-device copy
 * measured in the same run: the figure that matters for the small-M (memory-bound) rows. Each
 * launch reads a different copy of A and B once their size is under 4x L2, so that L2 never
 * holds the previous launch's operands. */
#include "bench_gemm.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_nvml.h"
#include "bench_probe.h"
#include "gemm_ref.h"

#define PEAK_TFLOPS 1979.0
#define PEAK_TFLOPS_BF16 989.0

static int g_ctas;  /* --ctas: persistent grid cap (desc.ctas) */
static int g_tile_m; /* --tile-m: desc.tile_m (0, 128 or 192) */
static int g_split; /* --split-k: desc.split_k (0: the runtime's pick, with a workspace) */
static unsigned g_flags; /* --pdl off: PTXQ_GEMM_NO_PDL */
static int g_store[4], g_nstore = 1; /* --store: desc.store values, the first for the main row */
static int g_rounds = 1; /* --rounds: ours and cuBLASLt timed alternately this many times */
static uint64_t g_flush;      /* --flush: device memory zeroed before each timed call */
static size_t g_flush_words;  /* its 32-bit words (0: calls back to back) */
static bench_nvml *g_nvml; /* NVML's clock, power and clock-event reasons during each timing */
static bench_probe g_probe; /* the SM clock measured on the GPU during each timing */
/* dense tensor-core FLOP per SM per clock on sm_90 (the datasheet peaks at 1830 MHz, 132 SMs) */
#define FLOP_CLK_SM_FP8 8192.0
#define FLOP_CLK_SM_BF16 4096.0
static double g_flop_clk_sm = FLOP_CLK_SM_FP8;

/* --batch: calls launched back to back between a timing's two events (1: one call, the default) */
static int g_batch = 1;

typedef struct batch_call {
    int (*fn)(void *);
    void *arg;
} batch_call;

/* the spin lead before each timed call's start event (bench_spin): a single call's host
 * enqueue stays out of its time (found by review: 4-6 us a call on the M = 64/128 rows) */
static bench_spin g_spin;

static int run_batch(void *p) {
    const batch_call *b = p;
    for (int i = 0; i < g_batch; ++i)
        if (b->fn(b->arg)) return 1;
    return 0;
}

/* One timing: dev_time_ms, or with --flush the memset before each call (dev_time_flushed_ms);
 * with --batch N, N calls between the events and the time per call. */
static double time_ms(ptxq_dev *d, int (*fn)(void *), void *arg, int warmup, int reps) {
    batch_call b = {fn, arg};
    int (*call)(void *) = g_batch <= 1 ? fn : run_batch;
    void *carg = g_batch <= 1 ? arg : (void *)&b;
    double ms = g_flush_words || !g_spin.fn
                    ? dev_time_flushed_ms(d, call, carg, warmup, reps, g_flush, g_flush_words)
                    : dev_time_lead_ms(d, call, carg, warmup, reps, bench_spin_lead, &g_spin);
    return ms > 0 && g_batch > 1 ? ms / g_batch : ms;
}

/* dev_time_ms with the clock measured meanwhile. clk gets " [1540 MHz measured = 85.3% of the
 * tensor peak at that clock; NVML 1980 MHz ..., capped n/N]": the probe's SM clock (bench_probe.h)
 * and what `flop` in `ms` is of flop_clk_sm x SMs x that clock, then NVML's view (its clock is the
 * requested one); either part is left out where it is not available. */
static double time_clocked(ptxq_dev *d, int (*fn)(void *), void *arg, int warmup, int reps,
                           double flop, char *clk, size_t clkn) {
    clk[0] = 0;
    int on = g_nvml && bench_nvml_start(g_nvml, 1000) == 0;
    int probing = g_probe.d && bench_probe_start(&g_probe) == 0;
    double ms = time_ms(d, fn, arg, warmup, reps);
    bench_probe_result pr = {0};
    if (probing) bench_probe_stop(&g_probe, &pr);
    char nv[128] = "";
    if (on) {
        bench_clocks c;
        bench_nvml_stop(g_nvml, &c);
        bench_clocks_format(&c, nv, sizeof nv);
    }
    int k = 0;
    if (probing && pr.ok && ms > 0) {
        double peak = g_flop_clk_sm * (double)d->info.sm_count * pr.mhz * 1e6;
        k = snprintf(clk, clkn, " [%.0f MHz measured = %.1f%% of the tensor peak at that clock", pr.mhz,
                     100.0 * flop / (ms * 1e-3) / peak);
    } else if (probing) {
        k = snprintf(clk, clkn, " [clock not measured: %s", pr.why);
    }
    if (k > 0 && (size_t)k < clkn && nv[0]) /* nv is " [NVML ...]": continue the bracket */
        snprintf(clk + k, clkn - (size_t)k, "; %s", nv + 2);
    else if (k > 0 && (size_t)k < clkn)
        snprintf(clk + k, clkn - (size_t)k, "]");
    else if (nv[0])
        snprintf(clk, clkn, "%s", nv);
    return ms;
}

/* --alt: variants of the row's call; a field at ALT_UNSET keeps the row's value */
#define ALT_UNSET (-99)
typedef struct alt_cfg {
    int store, split, tile, cluster, mx, pdl, csplit, tm;
    char pipe[8];   /* "" keeps PTXQ_GEMM_PIPE as it is */
    char scales[8]; /* "warp": PTXQ_GEMM_SCALES=warp (BLOCK scales by the scale warp, not TMA) */
} alt_cfg;
static alt_cfg g_alt[8];
static int g_nalt;

static int parse_alts(const char *spec) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
        if (g_nalt == 8) return -1;
        alt_cfg *a = &g_alt[g_nalt++];
        *a = (alt_cfg){ALT_UNSET, ALT_UNSET, ALT_UNSET, ALT_UNSET, ALT_UNSET, ALT_UNSET, ALT_UNSET,
                       ALT_UNSET, "", ""};
        char *s2 = NULL;
        for (char *kv = strtok_r(item, ",", &s2); kv; kv = strtok_r(NULL, ",", &s2)) {
            char *eq = strchr(kv, '=');
            if (!eq) return -1;
            *eq = 0;
            const char *v = eq + 1;
            if (!strcmp(kv, "store")) a->store = atoi(v);
            else if (!strcmp(kv, "split")) a->split = atoi(v);
            else if (!strcmp(kv, "tile")) a->tile = atoi(v);
            else if (!strcmp(kv, "tm")) a->tm = atoi(v);
            else if (!strcmp(kv, "cluster")) a->cluster = atoi(v);
            else if (!strcmp(kv, "mx")) a->mx = atoi(v);
            else if (!strcmp(kv, "pdl")) a->pdl = atoi(v);
            else if (!strcmp(kv, "csplit")) a->csplit = atoi(v);
            else if (!strcmp(kv, "pipe")) snprintf(a->pipe, sizeof a->pipe, "%s", v);
            else if (!strcmp(kv, "scales")) snprintf(a->scales, sizeof a->scales, "%s", v);
            else return -1;
        }
    }
    return 0;
}

/* kernel name and split: "sk S" (every tile in S K ranges) or "tail T x S" (the last wave's T
 * tiles in S) */
static void plan_label(const ptxq_gemm_plan *p, char *out, size_t n) {
    if (p->dequant && n > 3) { /* MX through BF16 copies */
        ptxq_gemm_plan q = *p;
        q.dequant = 0;
        q.pdl = 1; /* said once, below */
        memcpy(out, "dq+", 3);
        plan_label(&q, out + 3, n - 3);
    } else if (p->splits > 1 && p->units > p->split_tiles * (unsigned)p->splits)
        snprintf(out, n, "%s tail%ux%d", p->kernel, p->split_tiles, p->splits);
    else if (p->splits > 1)
        snprintf(out, n, "%s sk%d%s", p->kernel, p->splits, p->cluster_split ? "cs" : "");
    else
        snprintf(out, n, "%s", p->kernel);
    size_t used = strlen(out);
    if (!p->pdl && used < n) snprintf(out + used, n - used, " nopdl");
}

/* apply alternative a to desc, and its pipe and scales overrides to the environment
 * (alt_env_restore puts the caller's PTXQ_GEMM_PIPE and PTXQ_GEMM_SCALES back) */
static void alt_apply(const alt_cfg *a, ptxq_gemm_desc *desc) {
    if (a->store != ALT_UNSET) desc->store = a->store;
    if (a->split != ALT_UNSET) desc->split_k = a->split;
    if (a->tile != ALT_UNSET) desc->tile_n = a->tile;
    if (a->tm != ALT_UNSET) desc->tile_m = a->tm;
    if (a->cluster != ALT_UNSET) desc->cluster = a->cluster;
    if (a->mx != ALT_UNSET) desc->mx_path = (ptxq_gemm_mx_path)a->mx;
    if (a->pdl != ALT_UNSET) {
        desc->flags &= ~PTXQ_GEMM_NO_PDL;
        if (!a->pdl) desc->flags |= PTXQ_GEMM_NO_PDL;
    }
    if (a->csplit != ALT_UNSET) {
        desc->flags &= ~PTXQ_GEMM_NO_CLUSTER_SPLIT;
        if (!a->csplit) desc->flags |= PTXQ_GEMM_NO_CLUSTER_SPLIT;
    }
    if (a->pipe[0]) setenv("PTXQ_GEMM_PIPE", a->pipe, 1);
    if (a->scales[0]) setenv("PTXQ_GEMM_SCALES", a->scales, 1);
}

/* the caller's values of the variables an --alt may override (has[i] 0: unset) */
static const char *const ALT_ENV[2] = {"PTXQ_GEMM_PIPE", "PTXQ_GEMM_SCALES"};
typedef struct alt_env {
    int has[2];
    char val[2][16];
} alt_env;

static alt_env alt_env_save(void) {
    alt_env e;
    memset(&e, 0, sizeof e);
    for (int i = 0; i < 2; ++i) {
        const char *v = getenv(ALT_ENV[i]);
        e.has[i] = v != NULL;
        if (v) snprintf(e.val[i], sizeof e.val[i], "%s", v);
    }
    return e;
}

static void alt_env_restore(const alt_env *e) {
    for (int i = 0; i < 2; ++i) {
        if (e->has[i]) setenv(ALT_ENV[i], e->val[i], 1);
        else unsetenv(ALT_ENV[i]);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- cuBLASLt through dlopen: the few entry points and enum values used (cublasLt.h) -------- */
typedef int lt_status;
typedef void *lt_handle, *lt_op, *lt_layout, *lt_pref;
typedef struct { uint64_t data[8]; } lt_algo;
typedef struct {
    lt_algo algo;
    size_t workspaceSize;
    lt_status state;
    float wavesCount;
    int reserved[4];
} lt_heur;
enum { LT_R_32F = 0, LT_R_16BF = 14, LT_R_8F_E4M3 = 28, LT_COMPUTE_32F = 68 };
enum { LT_DESC_TRANSA = 3, LT_DESC_TRANSB = 4, LT_DESC_A_SCALE = 17, LT_DESC_B_SCALE = 18,
       LT_DESC_FAST_ACCUM = 25, LT_DESC_A_SCALE_MODE = 31, LT_DESC_B_SCALE_MODE = 32 };
/* cublasLtMatmulMatrixScale_t: per-row vectors; 1 x 128 blocks along K; 128 x 128 blocks */
enum { LT_SCALE_OUTER_VEC_32F = 3, LT_SCALE_VEC128_32F = 4, LT_SCALE_BLK128x128_32F = 5 };
enum { LT_PREF_WORKSPACE = 1, LT_OP_N = 0, LT_OP_T = 1 };

typedef struct cublaslt {
    void *lib;
    char path[512];
    lt_status (*create)(lt_handle *);
    lt_status (*destroy)(lt_handle);
    lt_status (*op_create)(lt_op *, int, int);
    lt_status (*op_set)(lt_op, int, const void *, size_t);
    lt_status (*op_destroy)(lt_op);
    lt_status (*layout_create)(lt_layout *, int, uint64_t, uint64_t, int64_t);
    lt_status (*layout_destroy)(lt_layout);
    lt_status (*pref_create)(lt_pref *);
    lt_status (*pref_set)(lt_pref, int, const void *, size_t);
    lt_status (*pref_destroy)(lt_pref);
    lt_status (*heuristic)(lt_handle, lt_op, lt_layout, lt_layout, lt_layout, lt_layout, lt_pref, int,
                           lt_heur *, int *);
    lt_status (*matmul)(lt_handle, lt_op, const void *, const void *, lt_layout, const void *,
                        lt_layout, const void *, const void *, lt_layout, void *, lt_layout,
                        const lt_algo *, void *, size_t, void *);
} cublaslt;

static int lt_load(cublaslt *L) {
    memset(L, 0, sizeof *L);
    const char *names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
    for (int i = 0; i < 3 && !L->lib; ++i)
        if ((L->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL))) snprintf(L->path, sizeof L->path, "%s", names[i]);
    if (!L->lib) { /* the nvidia-cublas pip wheel */
        FILE *f = popen("python3 -c \"import nvidia.cublas,os;print(os.path.dirname(nvidia.cublas.__file__ "
                        "or list(nvidia.cublas.__path__)[0]))\" 2>/dev/null", "r");
        char dir[400] = "";
        if (f) {
            if (!fgets(dir, sizeof dir, f)) dir[0] = 0;
            pclose(f);
        }
        dir[strcspn(dir, "\n")] = 0;
        const char *sfx[] = {"lib/libcublasLt.so.13", "lib/libcublasLt.so.12", "lib/libcublasLt.so"};
        for (int i = 0; i < 3 && dir[0] && !L->lib; ++i) {
            snprintf(L->path, sizeof L->path, "%s/%s", dir, sfx[i]);
            L->lib = dlopen(L->path, RTLD_NOW | RTLD_LOCAL);
        }
    }
    if (!L->lib) return -1;
#define SYM(field, name) if (!(*(void **)&L->field = dlsym(L->lib, name))) return -1
    SYM(create, "cublasLtCreate");
    SYM(destroy, "cublasLtDestroy");
    SYM(op_create, "cublasLtMatmulDescCreate");
    SYM(op_set, "cublasLtMatmulDescSetAttribute");
    SYM(op_destroy, "cublasLtMatmulDescDestroy");
    SYM(layout_create, "cublasLtMatrixLayoutCreate");
    SYM(layout_destroy, "cublasLtMatrixLayoutDestroy");
    SYM(pref_create, "cublasLtMatmulPreferenceCreate");
    SYM(pref_set, "cublasLtMatmulPreferenceSetAttribute");
    SYM(pref_destroy, "cublasLtMatmulPreferenceDestroy");
    SYM(heuristic, "cublasLtMatmulAlgoGetHeuristic");
    SYM(matmul, "cublasLtMatmul");
#undef SYM
    return 0;
}

typedef struct lt_call {
    cublaslt *L;
    lt_handle h;
    lt_op op;
    lt_layout la, lb, lc;
    lt_algo algo;
    uint64_t A, B, D, ws;
    size_t ws_size;
    void *stream;
    float alpha, beta;
    uint64_t a_step, b_step; /* rotation through copies, as for our kernel */
    int copies, next;
} lt_call;

/* Row-major D[M,N] = A[M,K] . B[N,K]^T is column-major D^T[N,M] = B^T . A with B as cuBLAS's "A"
 * (K x N, op T) and A as its "B" (K x M, op N): the TN layout cuBLASLt's FP8 path requires. */
static int g_lt_fast; /* --lt-fast: cuBLASLt with CUBLASLT_MATMUL_DESC_FAST_ACCUM on */

static int lt_setup(lt_call *c, cublaslt *L, ptxq_dev *d, int64_t M, int64_t N, int64_t K,
                    uint64_t A, uint64_t B, uint64_t D, uint64_t sa, uint64_t sb,
                    ptxq_gemm_scaling sc, int bf16) {
    memset(c, 0, sizeof *c);
    c->L = L;
    c->A = B, c->B = A, c->D = D; /* cuBLAS's A is our B, its B our A */
    c->beta = 0;
    c->stream = d->stream;
    if (L->create(&c->h)) return -1;
    if (L->op_create(&c->op, LT_COMPUTE_32F, LT_R_32F)) return -1;
    int ta = LT_OP_T, tb = LT_OP_N;
    L->op_set(c->op, LT_DESC_TRANSA, &ta, sizeof ta);
    L->op_set(c->op, LT_DESC_TRANSB, &tb, sizeof tb);
    if (g_lt_fast && !bf16 && sc == PTXQ_GEMM_SCALE_TENSOR) { /* FP8 fast accumulation (int8_t
                                                                attribute): no promotion */
        int8_t fa = 1;
        if (L->op_set(c->op, LT_DESC_FAST_ACCUM, &fa, sizeof fa)) return -1;
    }
    /* the per-tensor scales go in as alpha = sa * sb (the same epilogue multiply as the
     * A/B scale-pointer attributes, which this cuBLASLt did not apply in a first run) */
    if (sc == PTXQ_GEMM_SCALE_TENSOR) {
        float hs[2];
        dev_download(d, &hs[0], sa, 4);
        dev_download(d, &hs[1], sb, 4);
        c->alpha = hs[0] * hs[1];
    } else {
        /* cuBLAS's A is our B: ROW its N-vector, BLOCK its 128 x 128 blocks; its B (our A):
         * ROW the M-vector, BLOCK 1 x 128 blocks (our a_scale M-major, as PyTorch passes it) */
        int ma = sc == PTXQ_GEMM_SCALE_ROW ? LT_SCALE_OUTER_VEC_32F : LT_SCALE_BLK128x128_32F;
        int mb = sc == PTXQ_GEMM_SCALE_ROW ? LT_SCALE_OUTER_VEC_32F : LT_SCALE_VEC128_32F;
        void *pa = (void *)(uintptr_t)sb, *pb = (void *)(uintptr_t)sa;
        if (L->op_set(c->op, LT_DESC_A_SCALE_MODE, &ma, sizeof ma) ||
            L->op_set(c->op, LT_DESC_B_SCALE_MODE, &mb, sizeof mb) ||
            L->op_set(c->op, LT_DESC_A_SCALE, &pa, sizeof pa) ||
            L->op_set(c->op, LT_DESC_B_SCALE, &pb, sizeof pb))
            return -1;
        c->alpha = 1.0f;
    }
    int ty = bf16 ? LT_R_16BF : LT_R_8F_E4M3;
    if (L->layout_create(&c->la, ty, (uint64_t)K, (uint64_t)N, K)) return -1;
    if (L->layout_create(&c->lb, ty, (uint64_t)K, (uint64_t)M, K)) return -1;
    if (L->layout_create(&c->lc, LT_R_16BF, (uint64_t)N, (uint64_t)M, N)) return -1;
    lt_pref pref;
    if (L->pref_create(&pref)) return -1;
    c->ws_size = 64u << 20;
    uint64_t wsz = c->ws_size;
    L->pref_set(pref, LT_PREF_WORKSPACE, &wsz, sizeof wsz);
    lt_heur hr;
    int n = 0;
    lt_status s = L->heuristic(c->h, c->op, c->la, c->lb, c->lc, c->lc, pref, 1, &hr, &n);
    L->pref_destroy(pref);
    if (s || n < 1) return -1;
    c->algo = hr.algo;
    c->ws = dev_alloc_aligned(d, c->ws_size, 256);
    return 0;
}

static int lt_run(void *p) {
    lt_call *c = p;
    uint64_t a = c->A + (uint64_t)c->next * c->a_step, b = c->B + (uint64_t)c->next * c->b_step;
    c->next = c->copies > 1 ? (c->next + 1) % c->copies : 0;
    return c->L->matmul(c->h, c->op, &c->alpha, (void *)(uintptr_t)a, c->la,
                        (void *)(uintptr_t)b, c->lb, &c->beta, (void *)(uintptr_t)c->D, c->lc,
                        (void *)(uintptr_t)c->D, c->lc, &c->algo, (void *)(uintptr_t)c->ws,
                        c->ws_size, c->stream) != 0;
}

static void lt_teardown(lt_call *c, ptxq_dev *d) {
    if (c->ws) dev_free(d, c->ws);
    if (c->la) c->L->layout_destroy(c->la);
    if (c->lb) c->L->layout_destroy(c->lb);
    if (c->lc) c->L->layout_destroy(c->lc);
    if (c->op) c->L->op_destroy(c->op);
    if (c->h) c->L->destroy(c->h);
}

/* ---- our kernel ------------------------------------------------------------------------------ */
typedef struct our_call {
    ptxq_dev *d;
    ptxq_gemm_desc desc;
    ptxq_tensor a, b, dd, sa, sb;
    uint64_t a0, b0, a_step, b_step; /* copy i of A at a0 + i * a_step (B likewise) */
    int copies, next;
    int primed; /* a call with this desc ran: its split-K counters are zero (--counters zeroed) */
} our_call;

/* --counters zeroed: every call after the first of a desc passes PTXQ_GEMM_COUNTERS_ZEROED (no
 * counter memset between split-K calls); whoever changes c->desc clears c->primed */
static int g_zeroed;

static int our_run(void *p) {
    our_call *c = p;
    c->a.data = c->a0 + (uint64_t)c->next * c->a_step;
    c->b.data = c->b0 + (uint64_t)c->next * c->b_step;
    c->next = (c->next + 1) % c->copies;
    ptxq_gemm_desc e = c->desc;
    if (g_zeroed && c->primed) e.flags |= PTXQ_GEMM_COUNTERS_ZEROED;
    c->primed = 1;
    return ptxq_gemm(c->d->ctx, &e, &c->a, &c->b, &c->dd, c->d->stream) != PTXQ_OK;
}

static bench_copy g_copy;          /* D2D copy measured once per run */
static ptxq_dtype g_at = PTXQ_E4M3, g_bt = PTXQ_E4M3, g_dt = PTXQ_BF16;
/* --data normal: operands from N(0, 1) scaled so that a 128-block's largest magnitude lands near
 * E4M3's 448 (as DeepGEMM's tests quantize torch.randn per 1x128 / 128x128 block), instead of
 * the default uniform codes (gemm_rand_e4m3). Power, and so the clock, could depend on the bits:
 * on an H100 (2026-11-26, two rounds each) it did not: 8192^3 per-tensor 1429.7 / 1428.8 TFLOPS
 * at 1544 MHz against 1431.4 / 1432.6 at 1545 with uniform codes, 4096 x 7168 x 16384
 * block-scaled 1303.5 / 1301.1 against 1303.4 / 1302.2, cuBLASLt alike. */
static int g_normal;

static int parse_fp8(const char *s, ptxq_dtype *o) {
    if (!strcmp(s, "e4m3")) *o = PTXQ_E4M3;
    else if (!strcmp(s, "e5m2")) *o = PTXQ_E5M2;
    else if (!strcmp(s, "bf16")) *o = PTXQ_BF16;
    else return -1;
    return 0;
}

static int parse_scaling(const char *s, ptxq_gemm_scaling *o) {
    if (!strcmp(s, "tensor")) *o = PTXQ_GEMM_SCALE_TENSOR;
    else if (!strcmp(s, "row")) *o = PTXQ_GEMM_SCALE_ROW;
    else if (!strcmp(s, "block")) *o = PTXQ_GEMM_SCALE_BLOCK;
    else if (!strcmp(s, "mx")) *o = PTXQ_GEMM_SCALE_MX;
    else return -1;
    return 0;
}

static const char *scaling_str(ptxq_gemm_scaling s) {
    return s == PTXQ_GEMM_SCALE_TENSOR ? "tensor" : s == PTXQ_GEMM_SCALE_ROW ? "row"
           : s == PTXQ_GEMM_SCALE_MX ? "mx" : "block";
}

/* Fills n bytes of device memory with random E4M3 codes (a 4 MiB random block, repeated). */
static void fill_fp8(ptxq_dev *d, uint64_t dst, size_t n, rng64 *r) {
    size_t blk = 4u << 20;
    uint8_t *h = malloc(blk);
    for (size_t i = 0; i < blk; ++i)
        h[i] = g_normal ? ptxq_e4m3_encode((float)(rng_normal(r) * (448.0 / 3.0)), 1)
                        : gemm_rand_e4m3(r);
    if (g_at == PTXQ_BF16) /* BF16 operands: the random E4M3 values as BF16 (exact) */
        for (size_t i = 0; i < blk; i += 2) {
            float f = (float)ptxq_e4m3_decode(h[i]);
            uint32_t u;
            memcpy(&u, &f, 4);
            h[i] = (uint8_t)(u >> 16), h[i + 1] = (uint8_t)(u >> 24);
        }
    for (size_t o = 0; o < n; o += blk) dev_upload(d, dst + o, h, n - o < blk ? n - o : blk);
    free(h);
}

/* UE8M0 codes 124..130 (scales 1/8 .. 8), as the quantizer produces for data near unit range. */
static void fill_ue8m0(ptxq_dev *d, uint64_t dst, size_t n, rng64 *r) {
    uint8_t *h = malloc(n + 1);
    for (size_t i = 0; i < n; ++i) h[i] = (uint8_t)(124 + rng_next(r) % 7);
    dev_upload(d, dst, h, n);
    free(h);
}

static void fill_f32(ptxq_dev *d, uint64_t dst, size_t n, rng64 *r) {
    float *h = malloc(n * 4 + 4);
    for (size_t i = 0; i < n; ++i) h[i] = (float)exp2(-2.0 + 4.0 * rng_uniform(r));
    dev_upload(d, dst, h, n * 4);
    free(h);
}

static int bench_one(ptxq_dev *d, cublaslt *L, int have_lt, int64_t M, int64_t N, int64_t K,
                     ptxq_gemm_scaling s, int tile_n, int group, int cluster, int reps) {
    rng64 r = {0x1234567ull + (uint64_t)K};
    int64_t nkb = (K + 127) / 128, nbn = (N + 127) / 128;
    int64_t es = g_dt == PTXQ_F32 ? 4 : 2;
    const int bf16 = g_at == PTXQ_BF16;
    const int64_t esz = bf16 ? 2 : 1; /* operand bytes per element */
    const double peak = bf16 ? PEAK_TFLOPS_BF16 : PEAK_TFLOPS;
    g_flop_clk_sm = bf16 ? FLOP_CLK_SM_BF16 : FLOP_CLK_SM_FP8;
    /* rotate copies of A and B until 4x L2 of other operands pass between two reads of one */
    size_t ab = (size_t)((M + N) * K * esz), l2 = (size_t)d->info.l2_bytes;
    int copies = ab >= 4 * l2 ? 1 : (int)((4 * l2) / ab + 1);
    if (copies > 64) copies = 64;
    size_t a_step = ((size_t)(M * K * esz) + 255) / 256 * 256, b_step = ((size_t)(N * K * esz) + 255) / 256 * 256;
    uint64_t A = dev_alloc(d, a_step * (size_t)copies), B = dev_alloc(d, b_step * (size_t)copies);
    uint64_t D = dev_alloc(d, (size_t)(M * N * es)), D2 = dev_alloc(d, (size_t)(M * N) * 2);
    const int mx = s == PTXQ_GEMM_SCALE_MX; /* UE8M0 bytes [M, K/32], [N, K/32] */
    size_t nsa = s == PTXQ_GEMM_SCALE_BLOCK ? (size_t)(M * nkb) : s == PTXQ_GEMM_SCALE_ROW ? (size_t)M
                 : mx ? (size_t)(M * (K / 32)) : 1;
    size_t nsb = s == PTXQ_GEMM_SCALE_BLOCK ? (size_t)(nbn * nkb) : s == PTXQ_GEMM_SCALE_ROW ? (size_t)N
                 : mx ? (size_t)(N * (K / 32)) : 1;
    const size_t ssz = mx ? 1 : 4;
    uint64_t SA = dev_alloc(d, nsa * ssz + 4), SB = dev_alloc(d, nsb * ssz + 4);
    fill_fp8(d, A, a_step * (size_t)copies, &r);
    fill_fp8(d, B, b_step * (size_t)copies, &r);
    if (mx) {
        fill_ue8m0(d, SA, nsa, &r);
        fill_ue8m0(d, SB, nsb, &r);
    } else {
        fill_f32(d, SA, nsa, &r);
        fill_f32(d, SB, nsb, &r);
    }
    our_call c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.desc.scaling = s;
    c.desc.tile_n = tile_n;
    c.desc.group_m = group;
    c.desc.cluster = cluster;
    c.desc.ctas = g_ctas;
    c.desc.tile_m = g_tile_m;
    c.a = ptxq_tensor_make(g_at, 2, (int64_t[]){M, K}, A);
    c.b = ptxq_tensor_make(g_bt, 2, (int64_t[]){N, K}, B);
    c.dd = ptxq_tensor_make(g_dt, 2, (int64_t[]){M, N}, D);
    c.a0 = A, c.b0 = B, c.a_step = a_step, c.b_step = b_step, c.copies = copies;
    if (s == PTXQ_GEMM_SCALE_BLOCK) {
        c.sa = ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){M, nkb}, SA);
        c.sa.stride[0] = 1; /* DeepGEMM's M-major layout */
        c.sa.stride[1] = M;
        c.sb = ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){nbn, nkb}, SB);
    } else if (s == PTXQ_GEMM_SCALE_ROW) {
        c.sa = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){M}, SA);
        c.sb = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){N}, SB);
    } else if (mx) {
        c.sa = ptxq_tensor_make(PTXQ_UE8M0, 2, (int64_t[]){M, K / 32}, SA);
        c.sb = ptxq_tensor_make(PTXQ_UE8M0, 2, (int64_t[]){N, K / 32}, SB);
    } else {
        c.sa = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){1}, SA);
        c.sb = ptxq_tensor_make(PTXQ_F32, 1, (int64_t[]){1}, SB);
    }
    c.desc.a_scale = &c.sa;
    c.desc.b_scale = &c.sb;
    c.desc.split_k = g_split;
    c.desc.flags = g_flags;
    c.desc.store = g_store[0];
    /* one workspace, as large as the row's call or any --alt variant needs */
    const alt_env env0 = alt_env_save();
    size_t wsb = 0;
    uint64_t WS = 0;
    for (int i = -1; i < g_nalt; ++i) {
        ptxq_gemm_desc dd = c.desc;
        size_t w = 0;
        if (i >= 0) alt_apply(&g_alt[i], &dd);
        if (ptxq_gemm_workspace_size(&dd, &c.a, &c.b, &c.dd, &w) == PTXQ_OK && w > wsb) wsb = w;
        alt_env_restore(&env0);
    }
    if (wsb) {
        WS = dev_alloc_aligned(d, wsb, 256);
        c.desc.workspace = WS;
        c.desc.workspace_bytes = wsb;
    }
    char kname[96] = "?";
    ptxq_gemm_plan plan;
    memset(&plan, 0, sizeof plan);
    if (ptxq_gemm_plan_for(d->ctx, &c.desc, &c.a, &c.b, &c.dd, &plan) == PTXQ_OK) {
        plan_label(&plan, kname, sizeof kname);
        /* MX through BF16 copies: its MMAs run at the BF16 rate (the tensor use at the clock) */
        if (plan.dequant) g_flop_clk_sm = FLOP_CLK_SM_BF16;
    }
    /* validate first: the float64 reference on fresh random data at this shape and descriptor
     * (sampled rows; every row for the poison), the same kernel as the timed one (found by review:
     * the bench only compared with cuBLASLt, after timing, without a bound). The --store / --alt
     * variants below are not checked. */
    gemm_cfg vc;
    memset(&vc, 0, sizeof vc);
    vc.M = M, vc.N = N, vc.K = K, vc.scaling = s, vc.tile_n = tile_n, vc.tile_m = g_tile_m;
    vc.sample_rows = 8;
    vc.sa_mmajor = s == PTXQ_GEMM_SCALE_BLOCK; /* as c.sa above */
    vc.cluster = cluster, vc.group_m = group, vc.a_type = g_at, vc.b_type = g_bt, vc.d_type = g_dt;
    vc.split_k = g_split, vc.store = g_store[0], vc.ctas = g_ctas, vc.flags = g_flags;
    gemm_result vr;
    memset(&vr, 0, sizeof vr);
    int vst = gemm_case_run(d, &vc, 0x5EEDull ^ (uint64_t)(M * 131 + N * 7 + K), &vr);
    int vbad = vst != PTXQ_OK || vr.bad || vr.unwritten || strcmp(vr.launched, plan.kernel);
    char vmsg[512];
    if (vbad)
        snprintf(vmsg, sizeof vmsg, "  CHECK FAILED (%s: %lld bad, %lld unwritten, checked %s, "
                 "timed %s%s%.200s)", ptxq_status_name(vst), (long long)vr.bad, (long long)vr.unwritten,
                 vr.launched, plan.kernel, vr.first_bad[0] ? "; " : "", vr.first_bad);
    else
        snprintf(vmsg, sizeof vmsg, "  check ok (%lld values, max err %.2g of S)",
                 (long long)vr.checked, vr.max_norm);
    double flop = 2.0 * (double)M * (double)N * (double)K;
    char oclk[256];
    double ms = time_clocked(d, our_run, &c, 3, reps, flop, oclk, sizeof oclk);
    if (ms <= 0) {
        fprintf(stderr, "gemm %s: %s\n", kname, ptxq_last_error());
        return 1;
    }
    double tf = flop / (ms * 1e9);
    char alt[1024] = "";
    for (int i = 1; i < g_nstore; ++i) { /* other epilogues, same inputs and process */
        c.desc.store = g_store[i];
        c.primed = 0;
        double ams = -1;
        if (ptxq_gemm_plan_for(d->ctx, &c.desc, &c.a, &c.b, &c.dd, &plan) == PTXQ_OK)
            ams = time_ms(d, our_run, &c, 3, reps);
        size_t used = strlen(alt);
        snprintf(alt + used, sizeof alt - used, "  [store %d: %s %.4f ms %.1f TFLOPS]", g_store[i],
                 plan.kernel, ams, ams > 0 ? flop / (ams * 1e9) : 0.0);
    }
    c.desc.store = g_store[0];
    c.primed = 0;
    for (int i = 0; i < g_nalt; ++i) { /* --alt variants, same inputs and process */
        ptxq_gemm_desc saved = c.desc;
        alt_apply(&g_alt[i], &c.desc);
        c.primed = 0;
        double ams = -1;
        char an[96] = "?";
        if (ptxq_gemm_plan_for(d->ctx, &c.desc, &c.a, &c.b, &c.dd, &plan) == PTXQ_OK) {
            plan_label(&plan, an, sizeof an);
            ams = time_ms(d, our_run, &c, 3, reps);
        }
        alt_env_restore(&env0);
        c.desc = saved;
        c.primed = 0;
        size_t used = strlen(alt);
        snprintf(alt + used, sizeof alt - used, "  [%s %.4f ms %.1f TFLOPS]", an, ams,
                 ams > 0 ? flop / (ams * 1e9) : 0.0);
    }
    double bytes = (double)((M + N) * K * esz + M * N * es) + (double)ssz * (double)(nsa + nsb);
    double gbps = bytes / (ms * 1e6);
    printf("gemm %-6s %5lldx%5lldx%5lld  %-30s %8.4f ms  %7.1f TFLOPS  %5.1f%% of %.0f  %6.0f GB/s "
           "%5.1f%% of copy", bf16 ? "bf16" : scaling_str(s), (long long)M, (long long)N, (long long)K, kname, ms, tf,
           100.0 * tf / peak, peak, gbps, g_copy.gbps > 0 ? 100.0 * gbps / g_copy.gbps : 0);
    fputs(vmsg, stdout);
    fputs(oclk, stdout);
    fputs(alt, stdout);
    if (mx) printf("  | no peer: cuBLASLt has no MXFP8 GEMM on sm_90");
    if (have_lt && !mx && g_at == g_bt && g_at != PTXQ_E5M2 && g_dt == PTXQ_BF16) {
        lt_call lc;
        if (lt_setup(&lc, L, d, M, N, K, A, B, D2, SA, SB, s, bf16) == 0) {
            lc.a_step = b_step, lc.b_step = a_step, lc.copies = copies; /* its A is our B */
            char lclk[256], rclk[256] = "";
            double lms = time_clocked(d, lt_run, &lc, 3, reps, flop, lclk, sizeof lclk);
            /* compare on copy 0 of the inputs: one more launch of each */
            lc.next = 0;
            c.next = 0;
            if (lms > 0 && (lt_run(&lc) || our_run(&c))) lms = -1;
            if (lms > 0 && g_rounds > 1) {
                /* rounds: the two libraries back to back, who goes first alternating; the ratio of
                 * each round (measured seconds apart, so under one clock state), then medians */
                double o[32], l[32], q[32];
                int n = g_rounds < 32 ? g_rounds : 32, i;
                o[0] = ms, l[0] = lms, q[0] = lms / ms;
                int rounds_on = g_nvml && bench_nvml_start(g_nvml, 1000) == 0;
                int rounds_probe = g_probe.d && bench_probe_start(&g_probe) == 0;
                for (i = 1; i < n; ++i) {
                    if (i % 2) l[i] = time_ms(d, lt_run, &lc, 1, reps);
                    o[i] = time_ms(d, our_run, &c, 1, reps);
                    if (!(i % 2)) l[i] = time_ms(d, lt_run, &lc, 1, reps);
                    if (o[i] <= 0 || l[i] <= 0) break;
                    q[i] = l[i] / o[i];
                }
                n = i;
                bench_probe_result rp = {0};
                if (rounds_probe) bench_probe_stop(&g_probe, &rp);
                if (rounds_on) {
                    bench_clocks rc;
                    bench_nvml_stop(g_nvml, &rc);
                    bench_clocks_format(&rc, rclk, sizeof rclk);
                }
                if (rp.ok) { /* the measured clock first, then NVML's bracket */
                    char nv[256];
                    snprintf(nv, sizeof nv, "%s", rclk);
                    int k = snprintf(rclk, sizeof rclk, " [%.0f MHz measured", rp.mhz);
                    if (k > 0 && (size_t)k < sizeof rclk)
                        snprintf(rclk + k, sizeof rclk - (size_t)k, "%s%.200s", nv[0] ? "; " : "]",
                                 nv[0] ? nv + 2 : "");
                }
                qsort(o, (size_t)n, sizeof *o, cmp_double);
                qsort(l, (size_t)n, sizeof *l, cmp_double);
                qsort(q, (size_t)n, sizeof *q, cmp_double);
                double om = o[n / 2], lm = l[n / 2], qm = n % 2 ? q[n / 2] : 0.5 * (q[n / 2 - 1] + q[n / 2]);
                printf("  | %d rounds: ours %.1f TFLOPS (%.1f-%.1f), cuBLASLt %.1f (%.1f-%.1f), ratio "
                       "median %.3fx (%.3f-%.3f)%s%s", n, flop / (om * 1e9), flop / (o[n - 1] * 1e9),
                       flop / (o[0] * 1e9), flop / (lm * 1e9), flop / (l[n - 1] * 1e9),
                       flop / (l[0] * 1e9), qm, q[0], q[n - 1], rclk[0] ? " both sides" : "", rclk);
                lc.next = 0;
                c.next = 0;
                if (lt_run(&lc) || our_run(&c)) lms = -1;
            }
            if (lms > 0) {
                double ltf = flop / (lms * 1e9);
                /* same inputs: compare the two outputs too (max |diff| / max |cublas|) */
                dev_sync(d);
                size_t n = (size_t)(M * N);
                uint16_t *h1 = malloc(n * 2), *h2 = malloc(n * 2);
                dev_download(d, h1, D, n * 2);
                dev_download(d, h2, D2, n * 2);
                double md = 0, mx = 0, mr = 0;
                size_t at = 0;
                for (size_t i = 0; i < n; i += 97) {
                    double x = ptxq_bf16_decode(h1[i]), y = ptxq_bf16_decode(h2[i]);
                    if (fabs(x - y) > md) md = fabs(x - y), at = i;
                    if (fabs(y) > mx) mx = fabs(y);
                    if (fabs(y) > 0 && fabs(x - y) / fabs(y) > mr) mr = fabs(x - y) / fabs(y);
                }
                printf("  | cuBLASLt%s %8.4f ms %7.1f TFLOPS%s  ratio %.3fx  (vs ours: max|diff|/max|D| "
                       "%.2g, max rel %.2g; worst [%zu,%zu] ours %.6g cublas %.6g)",
                       g_lt_fast && !bf16 && s == PTXQ_GEMM_SCALE_TENSOR ? " FAST_ACCUM" : "", lms, ltf,
                       lclk, tf / ltf,
                       mx > 0 ? md / mx : md, mr, at / (size_t)N, at % (size_t)N,
                       ptxq_bf16_decode(h1[at]), ptxq_bf16_decode(h2[at]));
                free(h1);
                free(h2);
            } else {
                printf("  | cuBLASLt: matmul failed");
            }
        } else {
            printf("  | cuBLASLt: no %s algorithm", bf16 ? "BF16" : "FP8");
        }
        lt_teardown(&lc, d);
    }
    printf("\n");
    fflush(stdout);
    dev_free(d, A);
    dev_free(d, B);
    dev_free(d, D);
    dev_free(d, D2);
    dev_free(d, SA);
    dev_free(d, SB);
    if (WS) dev_free(d, WS);
    return vbad;
}

/* --moe contiguous|masked: grouped block-scaled GEMMs as a mixture-of-experts layer runs them
 * (DeepGEMM's grouped benchmark shapes by default): G experts' B [G, N, K] with scales
 * [G, N/128, K/128]; contiguous: the experts' rows back to back, each group of m x U(0.7, 1.3)
 * rows (spread 0.3; 0: exactly m) padded to 128 (group_rows maps each row, -1 on padding); masked: A [G, cap, K] with
 * cap = m rounded up to 128 x 1.5 and m x U(0.7, 1.3) valid rows a group (spread 0.3; with
 * --groups, --spread S: U(1 - S, 1 + S)); with hint, m is the
 * width pick's hint (desc.expected_rows, as DeepGEMM's expected_m; without it the pick counts
 * the capacity: on these shapes the better pick on 5 of 6, bench/RESULTS.md). TFLOPS count the
 * valid rows only. Checked first by gemm_case_run on the same shape and group sizes (fresh
 * data, 8 sampled rows of each; padding and masked rows must stay poisoned), then timed; the
 * --store list times other epilogues in the same process (e.g. --store 0,-1: the TMA store
 * against the register stores; not checked). The calls pass no workspace: no split-K, the
 * check's call included. No peer: cuBLASLt has no grouped FP8 GEMM with these scales. */
/* a number, or bad when the text is not one (bench_moe then refuses it) */
static double strtod_or(const char *v, double bad) {
    char *end = NULL;
    double x = strtod(v, &end);
    return end != v && *end == 0 ? x : bad;
}

static int bench_moe(ptxq_dev *d, ptxq_gemm_grouping gm, int64_t G, int64_t m, int64_t N, int64_t K,
                     int tile_n, int hint, double spread, int reps) {
    rng64 r = {0x40E0ull + (uint64_t)(G * 7 + m * 3 + N + K)};
    const int contig = gm == PTXQ_GEMM_GROUP_CONTIGUOUS;
    int32_t sizes[256];
    int64_t valid = 0, Mtot = 0, cap = (m + 127) / 128 * 128 * 3 / 2;
    if (G < 1 || G > 256 || m < 1 || N < 1 || K < 128 || K % 128 || !(spread >= 0 && spread < 1)) {
        fprintf(stderr, "bench gemm --moe: 1..256 groups, m >= 1, K a multiple of 128, 0 <= spread < 1\n");
        return 1;
    }
    for (int64_t g = 0; g < G; ++g) {
        int64_t sz = (int64_t)((double)m * (1.0 - spread + 2.0 * spread * rng_uniform(&r)) + 0.5);
        if (!contig && sz > cap) sz = cap;
        sizes[g] = (int32_t)sz;
        valid += sz;
        Mtot += (sz + 127) / 128 * 128;
    }
    const int64_t rows = contig ? Mtot : G * cap, nkb = K / 128, nbn = (N + 127) / 128;
    /* validation: the same shape and sizes, gemm_case_run's own data */
    gemm_cfg vc;
    memset(&vc, 0, sizeof vc);
    vc.M = contig ? m : cap, vc.N = N, vc.K = K, vc.scaling = PTXQ_GEMM_SCALE_BLOCK;
    vc.batch = (int)G, vc.grouping = gm, vc.group_sizes = sizes, vc.scales_batched = 1;
    vc.tile_n = tile_n;
    vc.sa_mmajor = 1, vc.sample_rows = 8, vc.store = g_store[0], vc.flags = g_flags;
    vc.expected_rows = contig || !hint ? 0 : m;
    vc.no_ws = 1; /* as the timed call: no workspace, so no (tail) split either (found by review:
                     the check had one and could take a split the timed call cannot) */
    gemm_result vr;
    memset(&vr, 0, sizeof vr);
    int vst = gemm_case_run(d, &vc, 0x5EEDull ^ (uint64_t)(G * 131 + N * 7 + K), &vr);
    int vbad = vst != PTXQ_OK || vr.bad || vr.unwritten;
    /* the timed call's buffers */
    uint64_t A = dev_alloc(d, (size_t)(rows * K)), B = dev_alloc(d, (size_t)(G * N * K));
    uint64_t D = dev_alloc(d, (size_t)(rows * N * 2));
    uint64_t SA = dev_alloc(d, (size_t)(rows * nkb * 4)), SB = dev_alloc(d, (size_t)(G * nbn * nkb * 4));
    uint64_t GR = dev_alloc(d, (size_t)(contig ? Mtot : G) * 4);
    fill_fp8(d, A, (size_t)(rows * K), &r);
    fill_fp8(d, B, (size_t)(G * N * K), &r);
    fill_f32(d, SA, (size_t)(rows * nkb), &r);
    fill_f32(d, SB, (size_t)(G * nbn * nkb), &r);
    int32_t *map = malloc((size_t)(contig ? Mtot : G) * 4);
    if (contig) {
        int64_t row = 0;
        for (int64_t g = 0; g < G; ++g)
            for (int64_t i = 0; i < (sizes[g] + 127) / 128 * 128; ++i) map[row++] = i < sizes[g] ? (int32_t)g : -1;
    } else {
        memcpy(map, sizes, (size_t)G * 4);
    }
    dev_upload(d, GR, map, (size_t)(contig ? Mtot : G) * 4);
    free(map);
    our_call c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.desc.scaling = PTXQ_GEMM_SCALE_BLOCK;
    c.desc.grouping = gm;
    c.desc.tile_n = tile_n;
    c.desc.flags = g_flags;
    c.desc.store = g_store[0];
    c.b = ptxq_tensor_make(PTXQ_E4M3, 3, (int64_t[]){G, N, K}, B);
    c.sb = ptxq_tensor_make(PTXQ_F32, 3, (int64_t[]){G, nbn, nkb}, SB);
    ptxq_tensor grp;
    if (contig) {
        c.a = ptxq_tensor_make(PTXQ_E4M3, 2, (int64_t[]){Mtot, K}, A);
        c.dd = ptxq_tensor_make(PTXQ_BF16, 2, (int64_t[]){Mtot, N}, D);
        c.sa = ptxq_tensor_make(PTXQ_F32, 2, (int64_t[]){Mtot, nkb}, SA);
        c.sa.stride[0] = 1, c.sa.stride[1] = Mtot; /* M-major, as DeepGEMM's */
        grp = ptxq_tensor_make(PTXQ_I32, 1, (int64_t[]){Mtot}, GR);
    } else {
        c.a = ptxq_tensor_make(PTXQ_E4M3, 3, (int64_t[]){G, cap, K}, A);
        c.dd = ptxq_tensor_make(PTXQ_BF16, 3, (int64_t[]){G, cap, N}, D);
        c.sa = ptxq_tensor_make(PTXQ_F32, 3, (int64_t[]){G, cap, nkb}, SA);
        c.sa.stride[1] = 1, c.sa.stride[2] = cap; /* M-major per group */
        grp = ptxq_tensor_make(PTXQ_I32, 1, (int64_t[]){G}, GR);
    }
    c.desc.group_rows = &grp;
    c.desc.expected_rows = vc.expected_rows;
    c.desc.a_scale = &c.sa;
    c.desc.b_scale = &c.sb;
    c.a0 = A, c.b0 = B, c.copies = 1;
    char kname[96] = "?";
    ptxq_gemm_plan plan;
    memset(&plan, 0, sizeof plan);
    if (ptxq_gemm_plan_for(d->ctx, &c.desc, &c.a, &c.b, &c.dd, &plan) == PTXQ_OK) plan_label(&plan, kname, sizeof kname);
    if (!vbad && strcmp(vr.launched, plan.kernel)) vbad = 1;
    g_flop_clk_sm = FLOP_CLK_SM_FP8;
    double flop = 2.0 * (double)valid * (double)N * (double)K;
    char oclk[256];
    double ms = time_clocked(d, our_run, &c, 3, reps, flop, oclk, sizeof oclk);
    char alt[512] = "";
    for (int i = 1; i < g_nstore && ms > 0; ++i) {
        c.desc.store = g_store[i];
        double ams = -1;
        ptxq_gemm_plan ap;
        memset(&ap, 0, sizeof ap);
        if (ptxq_gemm_plan_for(d->ctx, &c.desc, &c.a, &c.b, &c.dd, &ap) == PTXQ_OK)
            ams = time_ms(d, our_run, &c, 3, reps);
        size_t used = strlen(alt);
        snprintf(alt + used, sizeof alt - used, "  [store %d: %s %.4f ms %.1f TFLOPS]", g_store[i],
                 ap.kernel, ams, ams > 0 ? flop / (ams * 1e9) : 0.0);
    }
    double bytes = (double)(valid * K + G * N * K + valid * N * 2) + 4.0 * (double)(valid * nkb + G * nbn * nkb);
    if (ms > 0)
        printf("gemm moe %-6s G %2lld m %5lld x %5lld x %5lld (%lld valid rows of %lld)  %-30s %8.4f ms  "
               "%7.1f TFLOPS  %5.1f%% of %.0f  %6.0f GB/s", contig ? "contig" : "masked", (long long)G,
               (long long)m, (long long)N, (long long)K, (long long)valid, (long long)rows, kname, ms,
               flop / (ms * 1e9), 100.0 * flop / (ms * 1e9) / PEAK_TFLOPS, PEAK_TFLOPS, bytes / (ms * 1e6));
    else
        printf("gemm moe %s: %s", contig ? "contig" : "masked", ptxq_last_error());
    if (vbad)
        printf("  CHECK FAILED (%s: %lld bad, %lld unwritten, checked %s, timed %s%s%.200s)",
               ptxq_status_name(vst), (long long)vr.bad, (long long)vr.unwritten, vr.launched,
               plan.kernel, vr.first_bad[0] ? "; " : "", vr.first_bad);
    else
        printf("  check ok (%lld values, %lld skipped rows, max err %.2g of S)", (long long)vr.checked,
               (long long)vr.skipped_rows, vr.max_norm);
    fputs(oclk, stdout);
    fputs(alt, stdout);
    printf("\n");
    fflush(stdout);
    dev_free(d, A);
    dev_free(d, B);
    dev_free(d, D);
    dev_free(d, SA);
    dev_free(d, SB);
    dev_free(d, GR);
    return vbad || ms <= 0;
}

int bench_gemm_main(int argc, char **argv) {
    ptxq_dev d;
    if (bench_open(&d)) return 1;
    cublaslt L;
    int have_lt = !bench_flag(argc, argv, "--no-cublas") && lt_load(&L) == 0;
    g_lt_fast = bench_flag(argc, argv, "--lt-fast");
    printf("device %s (%d SMs); dense peak FP8 %.0f, BF16 %.0f TFLOPS (H100/H200 SXM datasheet)\n",
           d.info.name, d.info.sm_count, PEAK_TFLOPS, PEAK_TFLOPS_BF16);
    printf("cuBLASLt: %s%s\n", have_lt ? L.path : "not found (tried libcublasLt.so.13/.12/.so and "
           "the nvidia-cublas pip package)", !have_lt ? "" : g_lt_fast ?
           " (FP8: the call's scaling; per-tensor with FAST_ACCUM ON (--lt-fast) = no promotion, "
           "less accurate than ours; BF16: FP32 compute; BF16 out, heuristic's first algorithm)" :
           " (FP8: the call's scaling, FAST_ACCUM off = promoted accumulation; BF16: FP32 compute; "
           "BF16 out, heuristic's first algorithm)");
    int reps = (int)bench_opt_int(argc, argv, "--reps", 20);
    int tile_n = (int)bench_opt_int(argc, argv, "--tile-n", 0);
    int group = (int)bench_opt_int(argc, argv, "--group", 0);
    int cluster = (int)bench_opt_int(argc, argv, "--cluster", 0);
    g_ctas = (int)bench_opt_int(argc, argv, "--ctas", 0);
    g_tile_m = (int)bench_opt_int(argc, argv, "--tile-m", 0);
    g_split = (int)bench_opt_int(argc, argv, "--split-k", 0);
    {
        const char *pdl = bench_opt(argc, argv, "--pdl", "on");
        if (strcmp(pdl, "on") && strcmp(pdl, "off")) {
            fprintf(stderr, "--pdl: on (the library's default: programmatic dependent launch) or off\n");
            return 2;
        }
        g_flags = strcmp(pdl, "off") ? 0u : PTXQ_GEMM_NO_PDL;
    }
    g_rounds = (int)bench_opt_int(argc, argv, "--rounds", 1);
    const char *data = bench_opt(argc, argv, "--data", "uniform");
    if (strcmp(data, "uniform") && strcmp(data, "normal")) {
        fprintf(stderr, "--data: uniform or normal, not '%s'\n", data);
        return 2;
    }
    g_normal = !strcmp(data, "normal");
    {
        const char *zc = bench_opt(argc, argv, "--counters", "memset");
        if (strcmp(zc, "memset") && strcmp(zc, "zeroed")) {
            fprintf(stderr, "--counters: memset (the runtime zeroes the split-K counters before each "
                            "call) or zeroed (PTXQ_GEMM_COUNTERS_ZEROED after a desc's first call)\n");
            return 2;
        }
        g_zeroed = !strcmp(zc, "zeroed");
    }
    g_batch = (int)bench_opt_int(argc, argv, "--batch", 1);
    if (g_batch < 1 || g_batch > 1000) {
        fprintf(stderr, "--batch: calls back to back per timing, 1 to 1000\n");
        return 2;
    }
    long long flush_mib = bench_opt_int(argc, argv, "--flush", 0);
    if (flush_mib < 0 || (size_t)flush_mib << 20 > d.info.global_mem_bytes / 2) {
        fprintf(stderr, "--flush: MiB of memset between calls, 0 to half the device memory (%zu MiB)\n",
                d.info.global_mem_bytes >> 21);
        return 2;
    }
    if (flush_mib > 0 && g_batch > 1) {
        fprintf(stderr, "--flush and --batch: one or the other (a pause before each call, or calls "
                        "back to back)\n");
        return 2;
    }
    if (g_batch > 1)
        printf("batch: %d calls back to back between the events of each timing (ours with "
               "programmatic dependent launch unless --pdl off; operand copies rotate from call to "
               "call); times are per call\n", g_batch);
    if (!flush_mib && bench_spin_open(&d, &g_spin, 30000) == 0)
        printf("lead: a 30 us one-warp spin kernel before each timed call's start event, so the call "
               "is enqueued before the events bracket it (its host time is not counted)\n");
    if (flush_mib > 0) {
        g_flush_words = (size_t)flush_mib << 18;
        g_flush = dev_alloc(&d, g_flush_words * 4);
        printf("flush: a %lld MiB memset on the stream before each timed call, outside its events "
               "(DeepGEMM's benchmark zeroes 8 GB between calls); times are then single calls after "
               "that pause, not back to back\n", flush_mib);
    }
    if (parse_alts(bench_opt(argc, argv, "--alt", ""))) {
        fprintf(stderr, "--alt: at most 8 ';'-separated lists of store|split|tile|tm|cluster|mx|pdl|pipe|scales=V\n");
        return 2;
    }
    {
        const char *sl = bench_opt(argc, argv, "--store", "0");
        g_nstore = 0;
        for (char *e; g_nstore < 4 && *sl; sl = *e == ',' ? e + 1 : e) {
            long v = strtol(sl, &e, 10);
            if (e == sl || v < -1 || v > 1) {
                fprintf(stderr, "--store: a list of 0, 1, -1\n");
                return 2;
            }
            g_store[g_nstore++] = (int)v;
        }
        if (!g_nstore) g_store[g_nstore++] = 0;
    }
    if (parse_fp8(bench_opt(argc, argv, "--a", "e4m3"), &g_at) ||
        parse_fp8(bench_opt(argc, argv, "--b", "e4m3"), &g_bt)) {
        fprintf(stderr, "--a/--b: e4m3, e5m2 or bf16 (both)\n");
        return 2;
    }
    const char *out = bench_opt(argc, argv, "--out", "bf16");
    g_dt = !strcmp(out, "f32") ? PTXQ_F32 : !strcmp(out, "f16") ? PTXQ_F16 : PTXQ_BF16;
    if (bench_copy_run(&d, (size_t)1 << 30, 10, &g_copy)) {
        fprintf(stderr, "bench gemm: the copy measurement failed\n");
        return 1;
    }
    printf("copy  1024 MiB D2D: %.3f ms, %.0f GB/s (read + write); operands %s x %s, D %s\n", g_copy.ms,
           g_copy.gbps, ptxq_dtype_name(g_at), ptxq_dtype_name(g_bt), out);
    {
        char why[256], pci[32];
        /* by PCI address only: NVML's device numbering need not be CUDA's */
        snprintf(why, sizeof why, "the driver gives no PCI address for the device");
        g_nvml = bench_pci_bus_id(&d, pci, sizeof pci) == 0 ? bench_nvml_open(pci, why, sizeof why)
                                                           : NULL;
        char pwhy[128] = "";
        int probe = bench_probe_open(&d, &g_probe, pwhy, sizeof pwhy) == 0;
        if (probe)
            printf("clocks: [M MHz measured = x%% of the tensor peak at that clock]: the SM clock over "
                   "each side's timing, from %%clock64 / %%globaltimer stamped on every SM right before "
                   "and after the timed launches (ptx/clock_stamp.ptx); peak = %.0f (FP8) or %.0f (BF16) "
                   "FLOP per SM per clock x %d SMs x that clock\n", FLOP_CLK_SM_FP8, FLOP_CLK_SM_BF16,
                   d.info.sm_count);
        else
            printf("clocks: not measured (%s)\n", pwhy);
        if (g_nvml)
            printf("        [NVML mean MHz min-max, W, capped n/N]: NVML sampled every 1 ms while each "
                   "side is timed. NVML's clock is the requested one (it read 1980 MHz where the probe "
                   "and ncu saw 1500-1540); power as NVML reports it (may be averaged over up to 1 s); "
                   "capped: samples with the power cap, a hardware slowdown or a thermal limit active\n");
        else
            printf("        NVML not sampled (%s)\n", why);
    }
    int rc = 0;
    const char *sweep = bench_opt(argc, argv, "--sweep", NULL);
    /* DeepSeek-V3 layer shapes (N, K), block-scaled 1x128 / 128x128, M = 64, 128, 4096 */
    static const int64_t ds[6][2] = {{2112, 7168}, {24576, 1536}, {32768, 512},
                                     {7168, 16384}, {4096, 7168}, {7168, 2048}};
    static const int64_t dsm[3] = {64, 128, 4096};
    const char *moe = bench_opt(argc, argv, "--moe", NULL);
    if (moe) {
        ptxq_gemm_grouping gm = !strcmp(moe, "contiguous") ? PTXQ_GEMM_GROUP_CONTIGUOUS
                                : !strcmp(moe, "masked") ? PTXQ_GEMM_GROUP_MASKED : PTXQ_GEMM_GROUP_NONE;
        if (gm == PTXQ_GEMM_GROUP_NONE) {
            fprintf(stderr, "--moe: contiguous or masked\n");
            return 2;
        }
        int hint = (int)bench_opt_int(argc, argv, "--hint", 0);
        if (bench_opt(argc, argv, "--groups", NULL)) {
            rc |= bench_moe(&d, gm, bench_opt_int(argc, argv, "--groups", 4), bench_opt_int(argc, argv, "--m", 8192),
                            bench_opt_int(argc, argv, "--n", 4096), bench_opt_int(argc, argv, "--k", 7168),
                            tile_n, hint, strtod_or(bench_opt(argc, argv, "--spread", "0.3"), -1.0), reps);
        } else if (gm == PTXQ_GEMM_GROUP_CONTIGUOUS) {
            /* DeepGEMM's contiguous shapes: (groups, m per group, N, K) */
            static const int64_t cs[4][4] = {{4, 8192, 4096, 7168}, {4, 8192, 7168, 2048},
                                             {8, 4096, 4096, 7168}, {8, 4096, 7168, 2048}};
            for (int i = 0; i < 4; ++i) rc |= bench_moe(&d, gm, cs[i][0], cs[i][1], cs[i][2], cs[i][3], tile_n, hint, 0.3, reps);
        } else {
            /* masked (decode): groups x expected rows, N, K */
            static const int64_t ms[6][4] = {{1, 1024, 4096, 7168}, {1, 1024, 7168, 2048},
                                             {2, 512, 4096, 7168}, {2, 512, 7168, 2048},
                                             {4, 256, 4096, 7168}, {4, 256, 7168, 2048}};
            for (int i = 0; i < 6; ++i) rc |= bench_moe(&d, gm, ms[i][0], ms[i][1], ms[i][2], ms[i][3], tile_n, hint, 0.3, reps);
        }
    } else if (sweep && !strcmp(sweep, "deepseek")) {
        for (int mi = 0; mi < 3; ++mi)
            for (int i = 0; i < 6; ++i)
                rc |= bench_one(&d, &L, have_lt, dsm[mi], ds[i][0], ds[i][1], PTXQ_GEMM_SCALE_BLOCK,
                                tile_n, group, cluster, reps);
    } else if (bench_opt(argc, argv, "--m", NULL)) {
        ptxq_gemm_scaling s = PTXQ_GEMM_SCALE_TENSOR;
        if (parse_scaling(bench_opt(argc, argv, "--scaling", "tensor"), &s)) {
            fprintf(stderr, "unknown --scaling\n");
            return 2;
        }
        rc |= bench_one(&d, &L, have_lt, bench_opt_int(argc, argv, "--m", 8192),
                        bench_opt_int(argc, argv, "--n", 8192), bench_opt_int(argc, argv, "--k", 8192),
                        s, tile_n, group, cluster, reps);
    } else {
        rc |= bench_one(&d, &L, have_lt, 8192, 8192, 8192, PTXQ_GEMM_SCALE_TENSOR, tile_n, group, cluster, reps);
        rc |= bench_one(&d, &L, have_lt, 8192, 8192, 8192, PTXQ_GEMM_SCALE_ROW, tile_n, group, cluster, reps);
        rc |= bench_one(&d, &L, have_lt, 4096, 7168, 16384, PTXQ_GEMM_SCALE_BLOCK, tile_n, group, cluster, reps);
        rc |= bench_one(&d, &L, have_lt, 4096, 7168, 16384, PTXQ_GEMM_SCALE_MX, 0, group, cluster, reps);
        { /* BF16 x BF16 (the MX dequantize path's GEMM) against cuBLASLt's BF16 GEMM */
            ptxq_dtype sa = g_at, sb = g_bt;
            g_at = g_bt = PTXQ_BF16;
            rc |= bench_one(&d, &L, have_lt, 8192, 8192, 8192, PTXQ_GEMM_SCALE_TENSOR, tile_n, group,
                            cluster, reps);
            g_at = sa, g_bt = sb;
        }
        printf("-- DeepSeek-V3 layer shapes, block-scaled (small M is memory-bound: read GB/s and %% of copy)\n");
        for (int mi = 0; mi < 3; ++mi)
            for (int i = 0; i < 6; ++i)
                rc |= bench_one(&d, &L, have_lt, dsm[mi], ds[i][0], ds[i][1], PTXQ_GEMM_SCALE_BLOCK,
                                tile_n, group, cluster, reps);
    }
    bench_nvml_close(g_nvml);
    g_nvml = NULL;
    bench_probe_close(&g_probe);
    bench_spin_close(&g_spin);
    if (g_flush) dev_free(&d, g_flush);
    g_flush = 0;
    g_flush_words = 0;
    dev_close(&d);
    return rc;
}

int check_gemm_main(int argc, char **argv) {
    ptxq_dev d;
    if (bench_open(&d)) return 1;
    gemm_cfg c = {.M = bench_opt_int(argc, argv, "--m", 1000),
                  .N = bench_opt_int(argc, argv, "--n", 1000),
                  .K = bench_opt_int(argc, argv, "--k", 512),
                  .scaling = PTXQ_GEMM_SCALE_TENSOR,
                  .tile_n = (int)bench_opt_int(argc, argv, "--tile-n", 0),
                  .tile_m = (int)bench_opt_int(argc, argv, "--tile-m", 0),
                  .sample_rows = (int)bench_opt_int(argc, argv, "--sample", 0),
                  .cluster = (int)bench_opt_int(argc, argv, "--cluster", 0),
                  .batch = (int)bench_opt_int(argc, argv, "--batch", 0),
                  .split_k = (int)bench_opt_int(argc, argv, "--split-k", 0),
                  .ctas = (int)bench_opt_int(argc, argv, "--ctas", 0),
                  .store = (int)bench_opt_int(argc, argv, "--store", 0),
                  .mx_path = (int)bench_opt_int(argc, argv, "--mx-path", 0),
                  .sa_mmajor = (int)bench_opt_int(argc, argv, "--sa-mmajor", 0),
                  .sa_kpitch = (int)bench_opt_int(argc, argv, "--sa-kpitch", 0),
                  .sb_nmajor = (int)bench_opt_int(argc, argv, "--sb-nmajor", 0)};
    if (parse_fp8(bench_opt(argc, argv, "--a", "e4m3"), &c.a_type) ||
        parse_fp8(bench_opt(argc, argv, "--b", "e4m3"), &c.b_type)) {
        fprintf(stderr, "--a/--b: e4m3, e5m2 or bf16 (both)\n");
        return 2;
    }
    const char *out = bench_opt(argc, argv, "--out", "bf16"), *gr = bench_opt(argc, argv, "--grouping", "none");
    const char *bias = bench_opt(argc, argv, "--bias", NULL), *beta = bench_opt(argc, argv, "--beta", NULL);
    c.d_type = !strcmp(out, "f32") ? PTXQ_F32 : !strcmp(out, "f16") ? PTXQ_F16 : PTXQ_BF16;
    c.grouping = !strcmp(gr, "masked") ? PTXQ_GEMM_GROUP_MASKED
                 : !strcmp(gr, "contiguous") ? PTXQ_GEMM_GROUP_CONTIGUOUS : PTXQ_GEMM_GROUP_NONE;
    if (bias) c.bias_type = !strcmp(bias, "f32") ? PTXQ_F32 : PTXQ_BF16;
    if (beta) c.with_c = 1, c.beta = (float)atof(beta);
    c.alpha = (float)atof(bench_opt(argc, argv, "--alpha", "0"));
    if (parse_scaling(bench_opt(argc, argv, "--scaling", "tensor"), &c.scaling)) {
        fprintf(stderr, "unknown --scaling\n");
        return 2;
    }
    gemm_result r;
    int st = gemm_case_run(&d, &c, (uint64_t)bench_opt_int(argc, argv, "--seed", 1), &r);
    printf("check gemm %s %lldx%lldx%lld (%s): status %s; %lld checked, %lld bad, %lld unwritten, max "
           "norm err %.3g, max rel err (well-conditioned, %lld) %.3g\n%s%s",
           scaling_str(c.scaling), (long long)c.M, (long long)c.N, (long long)c.K, r.kernel,
           ptxq_status_name(st), (long long)r.checked, (long long)r.bad, (long long)r.unwritten,
           r.max_norm, (long long)r.n_wc, r.max_rel_wc, r.first_bad, r.first_bad[0] ? "\n" : "");
    if (st != PTXQ_OK) printf("error: %s\n", r.error);
    dev_close(&d);
    return st != PTXQ_OK || r.bad || r.unwritten ? 1 : 0;
}
