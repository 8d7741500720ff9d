/* bench_gemv.c -- block-scaled GEMV: validate against the float64 CPU reference, then time, then
 * the napkin math. Bandwidth-bound: the figure of merit is GB/s of the bytes that must move (A,
 * its scales and x read once, y written once) against a device-to-device copy measured in the
 * same run, and the time that copy bandwidth would need for those bytes. Every plan a row times
 * is first checked against that reference at the row's M and K (L cut to 2^28 elements of A) with
 * its kernel forced (check_plan): the row says "ok" only for the kernel it times.
 *
 * DRAM, not L2: the smaller shapes are 10-60 MB, about the L2 size, so each timed batch rotates
 * through enough copies of A and its scales that the data touched between two reads of the same
 * copy exceeds 4x L2 (at least 2 copies). x and y stay put (x is meant to be L2-resident).
 * Launches are back to back on one stream; the time per call is a batch's time over its calls
 * (median of --reps batches). Under each shape, a chain of copies with the same traffic per call
 * (half the bytes read, half written, rotated the same way, launched the same way) says what a
 * copy of that size reaches: the ramp and the gap between calls are in both. The target and
 * %copy stay against the large copy.
 *
 *   ptxq bench gemv [--format all|nvfp4|mxfp4|mxfp8] [--x same|bf16|f16] [--y f16|bf16|f32]
 *                   [--shape M,K,L] [--reps N] [--sweep] [--rows-per-thread R] [--k-warps W]
 *                   [--pdl off|on|early|indep[,...]] [--prefetch T[,...]] [--pipelined P[,...]]
 *                   [--batch N] [--graph] [--read CTAS/LOADS[/THREADS][,...]]
 *                   [--scales rowmajor|128x4]
 *     --scales: A's scale layout, row-major [L][M][K/B] (default) or PTXQ_SCALE_128x4 (the
 *     hackathon's and ptxq_quantize's tiled layout; the bytes that must move stay L * M * K/B).
 *     --pdl: launch without PDL, with PDL (the default: wait before any load), or with PDL and
 *     PTXQ_GEMV_STATIC_WEIGHTS (A's L2 prefetch before the wait; legal here: nothing writes A).
 *     With --graph, on GPUs with 4 TB/s of DRAM or more, and on grids of at most two waves, "on"
 *     puts the L2 prefetch before the wait too (ptxq_gemv does while the stream is captured; the
 *     plan does from 4 TB/s and up to two waves), so "on" and "early" differ only for the ring
 *     kernel there. indep: PDL with PTXQ_GEMV_INDEPENDENT (no wait; legal here with y rotated
 *     like A: no call reads what another writes), the operating point of several GEMVs of one
 *     x written earlier.
 *     --prefetch: desc.prefetch_trips (0 = the runtime's depth, -1 = none). Lists time every
 *     combination, each on its own row, in the same process against the same copy figure.
 *     --pipelined: desc.pipelined (0 = the runtime's choice, 1 = the software-pipelined kernel,
 *     2 = the bulk-copy ring kernel, or for the tensor-core kernel its cp.async ring twin, -1 =
 *     the plain one; "s" / "b" / "r" after the grid marks the pipelined / ring / tensor-core
 *     ring kernel, "v" the NVFP4 twin that loads 128x4 scales as vectors).
 *     --batch: calls per timed batch (default 32; at least the copies of A). --graph: capture a
 *     batch into a CUDA graph once and time graph launches (no host work between kernels);
 *     otherwise the row ends with the host's enqueue time per call.
 *     Under each shape, after the copy chain: the read-only floor, a chain of launches of the
 *     hand-written ptx/read_stream.ptx that read the GEMV's bytes and do nothing else (PDL, same
 *     rotation). --read: its grid, loads in flight per thread and CTA size (default 0/8/256: 12
 *     CTAs of 256 per SM, 8 loads; THREADS 32, 64, 128 or 256; a list times each; off: none).
 *   ptxq check gemv [--format F] [--x T] [--y T] [--m M] [--k K] [--l L]
 *                   [--scales rowmajor|mmajor|128x4] [--x-shared] [--globals] [--pad N]
 *                   [--rows-per-thread R] [--k-warps W] [--pipelined P] [--seed S]
 * Shapes (M, K, L) by default: the NVFP4 GEMV hackathon's three and a larger one. */
#include "bench_gemv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "gemv_ref.h"

static int parse_format(const char *s, ptxq_gemv_format *f) {
    if (!strcmp(s, "nvfp4")) *f = PTXQ_GEMV_NVFP4;
    else if (!strcmp(s, "mxfp4")) *f = PTXQ_GEMV_MXFP4;
    else if (!strcmp(s, "mxfp8")) *f = PTXQ_GEMV_MXFP8;
    else return -1;
    return 0;
}

/* "same" -> 0 (A's dtype), "bf16", "f16"; -1 if unknown. */
static int parse_x(const char *s, ptxq_dtype *t) {
    if (!strcmp(s, "same")) *t = (ptxq_dtype)0;
    else if (!strcmp(s, "bf16")) *t = PTXQ_BF16;
    else if (!strcmp(s, "f16")) *t = PTXQ_F16;
    else return -1;
    return 0;
}

static int parse_y(const char *s, ptxq_dtype *t) {
    if (!strcmp(s, "f16")) *t = PTXQ_F16;
    else if (!strcmp(s, "bf16")) *t = PTXQ_BF16;
    else if (!strcmp(s, "f32")) *t = PTXQ_F32;
    else return -1;
    return 0;
}

static void print_result(const char *desc, const gemv_result *r, int rc) {
    printf("%s\n  plan %s: %d rows/thread, %d warps along K, %d rows/CTA, grid %u, %d regs, "
           "%d CTAs/SM\n  outputs past the bound %lld / %lld, y padding touched %lld, worst "
           "%.3f of the bound (at %lld: device %.9g, reference %.9g)\n  %s%s%s\n",
           desc, r->plan.kernel, r->plan.rows_per_thread, r->plan.k_warps, r->plan.rows_per_cta,
           r->plan.grid, r->plan.registers, r->plan.ctas_per_sm, (long long)r->wrong,
           (long long)r->outputs, (long long)r->pad_touched, r->worst, (long long)r->worst_at,
           r->worst_dev, r->worst_ref, rc == 0 ? "PASS" : rc < 0 ? "ERROR: " : "FAIL",
           rc < 0 ? ptxq_status_name(r->status) : "", rc < 0 ? r->msg : "");
}

int check_gemv_main(int argc, char **argv) {
    gemv_case c;
    memset(&c, 0, sizeof c);
    if (parse_format(bench_opt(argc, argv, "--format", "nvfp4"), &c.format) ||
        parse_x(bench_opt(argc, argv, "--x", "same"), &c.x) ||
        parse_y(bench_opt(argc, argv, "--y", "f16"), &c.y)) {
        fprintf(stderr, "check gemv: --format nvfp4|mxfp4|mxfp8, --x same|bf16|f16, --y f16|bf16|f32\n");
        return 2;
    }
    c.M = bench_opt_int(argc, argv, "--m", 1000);
    c.K = bench_opt_int(argc, argv, "--k", 4096);
    c.L = bench_opt_int(argc, argv, "--l", 1);
    const char *sc = bench_opt(argc, argv, "--scales", "rowmajor");
    c.scales = !strcmp(sc, "mmajor") ? 1 : !strcmp(sc, "128x4") ? 2 : 0;
    c.x_shared = bench_flag(argc, argv, "--x-shared");
    c.globals = bench_flag(argc, argv, "--globals");
    c.a_pad = bench_opt_int(argc, argv, "--pad", 0);
    c.rows_per_thread = (int)bench_opt_int(argc, argv, "--rows-per-thread", 0);
    c.k_warps = (int)bench_opt_int(argc, argv, "--k-warps", 0);
    c.pipelined = (int)bench_opt_int(argc, argv, "--pipelined", 0);
    c.seed = (uint64_t)bench_opt_int(argc, argv, "--seed", (long long)time(NULL));
    ptxq_dev d;
    if (bench_open(&d)) return 2;
    gemv_result r;
    char desc[256];
    gemv_case_describe(&c, desc, sizeof desc);
    int rc = gemv_case_run(&d, &c, &r);
    print_result(desc, &r, rc);
    dev_close(&d);
    return rc == 0 ? 0 : 1;
}

/* ---- timing ----------------------------------------------------------------------------- */

typedef struct gemv_launch {
    ptxq_dev *d;
    ptxq_gemv_desc desc;
    ptxq_tensor a, as, x, xs, y;
    int quant_x;
    int copies, batch;
    uint64_t a0, as0;       /* copy i at a0 + i * a_stride */
    size_t a_stride, as_stride;
    uint64_t y0;            /* with y_stride: copy i of y at y0 + i * y_stride (indep mode) */
    size_t y_stride;
} gemv_launch;

static int do_batch(void *p) {
    gemv_launch *G = p;
    for (int i = 0; i < G->batch; ++i) {
        int c = i % G->copies;
        G->a.data = G->a0 + (uint64_t)c * G->a_stride;
        G->as.data = G->as0 + (uint64_t)c * G->as_stride;
        if (G->desc.flags & PTXQ_GEMV_INDEPENDENT) G->y.data = G->y0 + (uint64_t)c * G->y_stride;
        if (ptxq_gemv(G->d->ctx, &G->desc, &G->a, &G->as, &G->x, G->quant_x ? &G->xs : NULL,
                      &G->y, G->d->stream) != PTXQ_OK) {
            fprintf(stderr, "gemv: %s\n", ptxq_last_error());
            return 1;
        }
    }
    return 0;
}

typedef struct graph_launch {
    const ptxq_cudrv *drv;
    CUgraphExec exec;
    CUstream stream;
} graph_launch;

static int do_graph(void *p) {
    graph_launch *g = p;
    return g->drv->cuGraphLaunch(g->exec, g->stream) != CUDA_SUCCESS;
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* ms per batch: launches enqueued one by one (and the host's enqueue time per call), or the batch
 * captured once into a CUDA graph and launched as one (no host work between the kernels). */
static double time_batch(ptxq_dev *d, gemv_launch *G, int reps, int graph, double *host_us) {
    *host_us = 0;
    if (!graph) {
        double ms = dev_time_ms(d, do_batch, G, 2, reps);
        double t0 = now_us();
        int bad = do_batch(G);
        *host_us = (now_us() - t0) / G->batch;
        dev_sync(d);
        return bad ? -1 : ms;
    }
    const ptxq_cudrv *D = d->drv;
    CUgraph g = NULL;
    graph_launch gl = {D, NULL, d->stream};
    dev_sync(d);
    if (D->cuStreamBeginCapture(d->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) != CUDA_SUCCESS)
        return -1;
    int bad = do_batch(G);
    if (D->cuStreamEndCapture(d->stream, &g) != CUDA_SUCCESS || bad) return -1;
    double ms = -1;
    if (D->cuGraphInstantiateWithFlags(&gl.exec, g, 0) == CUDA_SUCCESS) {
        ms = dev_time_ms(d, do_graph, &gl, 2, reps);
        D->cuGraphExecDestroy(gl.exec);
    }
    D->cuGraphDestroy(g);
    return ms;
}

typedef struct shape3 { int64_t M, K, L; } shape3;

static const shape3 k_shapes[] = {
    {7168, 16384, 1}, {4096, 7168, 8}, {7168, 2048, 4}, {16384, 16384, 4},
};

static size_t round256(size_t v) { return (v + 255) / 256 * 256; }

#define MAX_MODES 8
typedef struct bench_modes {
    int npdl, npf, npers, batch, graph;
    int pers[MAX_MODES];     /* desc.pipelined */
    unsigned pdl[MAX_MODES]; /* desc.flags */
    int pf[MAX_MODES];       /* desc.prefetch_trips */
    int nread;
    unsigned read_ctas[MAX_MODES];  /* grids of the read-only floor (0: 12 CTAs per SM) */
    unsigned read_loads[MAX_MODES]; /* its loads per thread per trip, 1..8 */
    unsigned read_threads[MAX_MODES]; /* its CTA size: 256 (default), 128, 64 or 32 */
    int sf128;               /* --scales 128x4: A's scales in PTXQ_SCALE_128x4 */
} bench_modes;

/* The mark after the grid: "s" pipelined twin, "b" bulk-copy ring, "r" the tensor-core kernel's
 * cp.async ring twin, "v" scale-vector twin. */
static const char *twin_mark(const ptxq_gemv_plan *p) {
    size_t n = strlen(p->kernel);
    if (p->pipelined) return p->pipelined == 2 ? "b" : p->pipelined == 3 ? "r" : "s";
    return n > 0 && p->kernel[n - 1] == 'v' ? "v" : " ";
}

static const char *pdl_name(unsigned flags) {
    return (flags & PTXQ_GEMV_NO_PDL)           ? "off"
           : (flags & PTXQ_GEMV_INDEPENDENT)      ? "indep"
           : (flags & PTXQ_GEMV_STATIC_WEIGHTS) ? "early"
                                                  : "on";
}

/* Times one (format, shape) with the plan the runtime picks (or each plan with --sweep), once per
 * launch mode. */
/* desc.pipelined that makes the runtime pick plan p's kernel again (its twin, or the plain one) */
static int pipelined_of(const ptxq_gemv_plan *p) {
    size_t n = strlen(p->kernel);
    if (p->pipelined == 3) return 2; /* the tensor-core ring twin ("_tcr") */
    if (p->pipelined) return p->pipelined;
    return n > 0 && p->kernel[n - 1] == 'v' ? 0 : -1;
}

/* Elements of A the check below multiplies on the CPU at most (about a second of host time;
 * (16384,16384,4) is checked at L = 1, 2^28). */
#define CHECK_ELEMS ((int64_t)1 << 28)

/* The float64 check of the plan a row times: the same format, M, K and kernel (rows, k-warps,
 * twin forced as planned), fresh random data, L cut to what CHECK_ELEMS allows. 0 passed, 1 wrong
 * outputs (or another kernel ran), -1 the call failed; *vr and desc say what ran. */
static int check_plan(ptxq_dev *d, ptxq_gemv_format f, ptxq_dtype xt, ptxq_dtype yt, shape3 s,
                      const bench_modes *md, const ptxq_gemv_plan *plan, gemv_case *c,
                      gemv_result *vr) {
    memset(c, 0, sizeof *c);
    c->format = f;
    c->x = xt;
    c->y = yt;
    c->M = s.M;
    c->K = s.K;
    c->L = s.L;
    while (c->L > 1 && c->L * c->M * c->K > CHECK_ELEMS) c->L--;
    c->globals = f == PTXQ_GEMV_NVFP4;
    c->scales = md->sf128 ? 2 : 0;
    c->rows_per_thread = plan->rows_per_thread;
    c->k_warps = plan->k_warps;
    c->pipelined = pipelined_of(plan);
    c->seed = (uint64_t)time(NULL) ^ (uint64_t)(s.M * 31 + s.K);
    int rc = gemv_case_run(d, c, vr);
    if (rc == 0 && strcmp(vr->plan.kernel, plan->kernel)) {
        snprintf(vr->msg, sizeof vr->msg, "checked %s, timed %s", vr->plan.kernel, plan->kernel);
        rc = 1;
    }
    return rc;
}

static int bench_one(ptxq_dev *d, ptxq_gemv_format f, ptxq_dtype xt, ptxq_dtype yt, shape3 s,
                     int reps, int sweep, int force_r, int force_k, const bench_copy *cp,
                     const bench_modes *md) {
    ptxq_dtype elem, sdt;
    int blk;
    gemv_format_info(f, &elem, &sdt, &blk);
    int quant_x = xt == 0;
    ptxq_dtype xd = quant_x ? elem : xt;
    int64_t M = s.M, K = s.K, L = s.L, nk = K / blk;

    /* 1. each plan timed below is first checked against the float64 reference (check_plan) */
    gemv_case c;
    gemv_result vr;
    char checked[24][64]; /* plans already checked (kernel, rows, k-warps, twin) and their result */
    int cres[24], nchecked = 0;

    /* 2. device data: `copies` instances of A + scales, then x, x scales, y */
    size_t a_bytes = (size_t)(L * M * K * ptxq_dtype_bits(elem) / 8);
    /* 128x4: whole 128-row x 4-block tiles of 512 bytes per batch (the bytes that must move are
     * still counted as L * M * nk) */
    size_t as_need = (size_t)(L * M * nk);
    size_t as_bytes = md->sf128 ? (size_t)(L * ((M + 127) / 128) * ((nk + 3) / 4) * 512) : as_need;
    size_t x_bytes = (size_t)(L * K * ptxq_dtype_bits(xd) / 8), xs_bytes = quant_x ? (size_t)(L * nk) : 0;
    size_t y_bytes = (size_t)(L * M * ptxq_dtype_bits(yt) / 8);
    size_t inst = round256(a_bytes) + round256(as_bytes);
    size_t want = 4 * d->info.l2_bytes;
    int copies = (int)((want + inst - 1) / inst);
    if (copies < 2) copies = 2;
    size_t cap = d->info.global_mem_bytes / 3;
    while (copies > 2 && (size_t)copies * inst > cap) copies--;
    /* indep rows: y rotated with A, copies of at least 4 (calls that may overlap write apart;
     * the other rows of the process then rotate A over those copies too) */
    int indep = 0;
    for (int i = 0; i < md->npdl; ++i) indep |= (md->pdl[i] & PTXQ_GEMV_INDEPENDENT) != 0;
    if (indep && copies < 4) copies = 4;
    gemv_launch G;
    memset(&G, 0, sizeof G);
    G.d = d;
    G.copies = copies;
    /* whole rounds of the copies: a batch that stopped part way would start the next one on a
     * copy read only (batch % copies) calls earlier (found by review) */
    G.batch = (md->batch > copies ? md->batch + copies - 1 : copies) / copies * copies;
    G.a_stride = round256(a_bytes);
    G.as_stride = round256(as_bytes);
    G.a0 = dev_alloc(d, G.a_stride * (size_t)copies);
    G.as0 = dev_alloc(d, G.as_stride * (size_t)copies);
    dev_fill(d, G.a0, 0x5B, G.a_stride * (size_t)copies); /* arbitrary finite codes */
    dev_fill(d, G.as0, f == PTXQ_GEMV_NVFP4 ? 0x38 : 0x7F, G.as_stride * (size_t)copies); /* 1.0 */
    uint64_t dx = dev_alloc(d, x_bytes + 16), dxs = dev_alloc(d, xs_bytes + 16);
    G.y_stride = indep ? round256(y_bytes + 16) : 0;
    uint64_t dy = dev_alloc(d, indep ? G.y_stride * (size_t)G.copies : y_bytes + 16);
    uint64_t dg = dev_alloc(d, 16);
    G.y0 = dy;
    dev_fill(d, dx, quant_x ? 0x5B : 0x3C, x_bytes);
    dev_fill(d, dxs, f == PTXQ_GEMV_NVFP4 ? 0x38 : 0x7F, xs_bytes + 16);
    float one = 1.0f;
    dev_upload(d, dg, &one, 4);
    int64_t ash[3] = {L, M, K}, ssh[3] = {L, M, nk}, xsh[2] = {L, K}, xssh[2] = {L, nk}, ysh[2] = {L, M};
    G.a = ptxq_tensor_make(elem, 3, ash, G.a0);
    if (md->sf128) {
        int64_t sh1[1] = {(int64_t)as_bytes};
        G.as = ptxq_tensor_make(sdt, 1, sh1, G.as0);
        G.desc.a_scale_layout = PTXQ_SCALE_128x4;
    } else {
        G.as = ptxq_tensor_make(sdt, 3, ssh, G.as0);
    }
    G.x = ptxq_tensor_make(xd, 2, xsh, dx);
    G.xs = ptxq_tensor_make(sdt, 2, xssh, dxs);
    G.y = ptxq_tensor_make(yt, 2, ysh, dy);
    G.quant_x = quant_x;
    G.desc.format = f;
    G.desc.a_global = f == PTXQ_GEMV_NVFP4 ? dg : 0;
    size_t must = a_bytes + as_need + x_bytes + xs_bytes + y_bytes;
    double bound_us = (double)must / (cp->gbps * 1e3);
    char xname[8];
    snprintf(xname, sizeof xname, "%s", quant_x ? gemv_format_name(f) : ptxq_dtype_name(xt));
    int fails = 0;
    /* 16: the tensor-core kernel (FP4 A with BF16/F16 x; the sweep skips it where it does not
     * exist) */
    static const int rs[4] = {4, 2, 1, 16}, ks[4] = {1, 2, 4, 8};
    int nmodes = md->npdl * md->npf * md->npers;
    for (int i = 0; i < (sweep ? 16 : 1) * nmodes; ++i) {
        int pi = i % nmodes, j = i / nmodes;
        G.desc.rows_per_thread = sweep ? rs[j / 4] : force_r;
        G.desc.k_warps = sweep ? ks[j % 4] : force_k;
        G.desc.flags = md->pdl[pi / (md->npf * md->npers)];
        G.desc.prefetch_trips = md->pf[pi / md->npers % md->npf];
        G.desc.pipelined = md->pers[pi % md->npers];
        ptxq_gemv_plan plan;
        if (ptxq_gemv_plan_for(d->ctx, &G.desc, &G.a, &G.as, &G.x, quant_x ? &G.xs : NULL, &G.y,
                               &plan) != PTXQ_OK) {
            if (sweep && G.desc.rows_per_thread == 16) continue;
            printf("  plan failed: %s\n", ptxq_last_error());
            fails++;
            break;
        }
        char key[64];
        snprintf(key, sizeof key, "%s r%d k%d p%d", plan.kernel, plan.rows_per_thread, plan.k_warps,
                 plan.pipelined);
        int bad = 2; /* not yet checked */
        for (int q = 0; q < nchecked && bad == 2; ++q)
            if (!strcmp(checked[q], key)) bad = cres[q];
        if (bad == 2) {
            bad = check_plan(d, f, xt, yt, s, md, &plan, &c, &vr);
            if (bad) {
                char desc[256];
                gemv_case_describe(&c, desc, sizeof desc);
                print_result(desc, &vr, bad);
                if (vr.msg[0] && bad > 0) printf("  %s\n", vr.msg);
                fails++;
            }
            if (nchecked < 24) {
                snprintf(checked[nchecked], sizeof checked[0], "%s", key);
                cres[nchecked++] = bad;
            }
        }
        double host_us = 0;
        double ms = time_batch(d, &G, reps, md->graph, &host_us);
        double us = ms > 0 ? ms * 1e3 / G.batch : -1;
        double gbps = us > 0 ? (double)must / (us * 1e3) : 0;
        char pdl[16];
        snprintf(pdl, sizeof pdl, "%s%s", pdl_name(G.desc.flags),
                 plan.pdl || (G.desc.flags & PTXQ_GEMV_NO_PDL) ? "" : "(n/a)");
        printf("%-6s %-6s %-4s %6lld %6lld %2lld  %-5s  %9.2f %8.0f %9.2f %6.1f%%  r%d k%-2d %-5s "
               "pf%-2d %6u%s %3d  %.1f+%.1f MiB x%d, %d calls%s, host %.1f us/call\n",
               gemv_format_name(f), xname, ptxq_dtype_name(yt), (long long)M, (long long)K,
               (long long)L, bad == 0 ? "ok" : bad < 0 ? "ERROR" : "FAIL", us, gbps, bound_us,
               100.0 * gbps / cp->gbps, plan.rows_per_thread, plan.k_warps, pdl,
               plan.prefetch_trips, plan.grid, twin_mark(&plan), plan.registers, a_bytes / 1048576.0,
               as_bytes / 1048576.0, copies, G.batch, md->graph ? " in a graph" : "", host_us);
        if (us <= 0) fails++;
    }
    dev_free(d, G.a0);
    dev_free(d, G.as0);
    dev_free(d, dx);
    dev_free(d, dxs);
    dev_free(d, dy);
    dev_free(d, dg);
    /* the same traffic as one copy call (must / 2 read + must / 2 written), chained like the
     * GEMV calls: what a copy of this size reaches, ramp and launch gaps included (context for
     * small shapes; %copy above stays against the large copy) */
    bench_copy cc;
    if (bench_copy_chain(d, must / 2, G.batch, reps, &cc) == 0)
        printf("  same-traffic copy chain: %.2f us per copy of %.1f MiB, %.0f GB/s = %.1f%% of the "
               "large copy\n", cc.ms * 1e3, cc.bytes / 1048576.0, cc.gbps, 100.0 * cc.gbps / cp->gbps);
    /* the read-only floor: the same bytes read (nothing decoded, nothing written), chained the
     * same way with PDL: what a plain streaming read reaches on its grid (a reference, not a
     * bound: the GEMV's row walk beats it on the largest shape on the H100) */
    for (int i = 0; i < md->nread; ++i) {
        char why[128];
        if (bench_read_chain(d, must, G.batch, reps, md->read_ctas[i], md->read_loads[i],
                             md->read_threads[i], &cc, why, sizeof why)) {
            printf("  read-only floor: not measured (%s)\n", why);
            break;
        }
        unsigned ctas = md->read_ctas[i] ? md->read_ctas[i] : 12u * (unsigned)d->info.sm_count;
        printf("  read-only floor (ptx/read_stream, %u CTAs of %u x %u loads): %.2f us per read of "
               "%.1f MiB, %.0f GB/s = %.1f%% of the large copy\n", ctas, md->read_threads[i],
               md->read_loads[i], cc.ms * 1e3, cc.bytes / 1048576.0, cc.gbps,
               100.0 * cc.gbps / cp->gbps);
    }
    return fails;
}

int bench_gemv_main(int argc, char **argv) {
    const char *fs = bench_opt(argc, argv, "--format", "all");
    ptxq_dtype xt, yt;
    ptxq_gemv_format only = PTXQ_GEMV_NVFP4;
    if ((strcmp(fs, "all") && parse_format(fs, &only)) ||
        parse_x(bench_opt(argc, argv, "--x", "same"), &xt) ||
        parse_y(bench_opt(argc, argv, "--y", "f16"), &yt)) {
        fprintf(stderr, "bench gemv: --format all|nvfp4|mxfp4|mxfp8, --x same|bf16|f16, "
                        "--y f16|bf16|f32\n");
        return 2;
    }
    int reps = (int)bench_opt_int(argc, argv, "--reps", 20);
    int sweep = bench_flag(argc, argv, "--sweep");
    int force_r = (int)bench_opt_int(argc, argv, "--rows-per-thread", 0);
    int force_k = (int)bench_opt_int(argc, argv, "--k-warps", 0);
    bench_modes md;
    memset(&md, 0, sizeof md);
    md.batch = (int)bench_opt_int(argc, argv, "--batch", 32);
    {
        const char *sl = bench_opt(argc, argv, "--scales", "rowmajor");
        if (strcmp(sl, "rowmajor") && strcmp(sl, "128x4")) {
            fprintf(stderr, "bench gemv: --scales rowmajor|128x4\n");
            return 2;
        }
        md.sf128 = !strcmp(sl, "128x4");
    }
    md.graph = bench_flag(argc, argv, "--graph");
    {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", bench_opt(argc, argv, "--pdl", "on"));
        for (char *t = strtok(buf, ","); t && md.npdl < MAX_MODES; t = strtok(NULL, ",")) {
            if (!strcmp(t, "off")) md.pdl[md.npdl++] = PTXQ_GEMV_NO_PDL;
            else if (!strcmp(t, "on")) md.pdl[md.npdl++] = 0;
            else if (!strcmp(t, "early")) md.pdl[md.npdl++] = PTXQ_GEMV_STATIC_WEIGHTS;
            else if (!strcmp(t, "indep")) md.pdl[md.npdl++] = PTXQ_GEMV_INDEPENDENT;
            else {
                fprintf(stderr, "bench gemv: --pdl off|on|early|indep[,...]\n");
                return 2;
            }
        }
        snprintf(buf, sizeof buf, "%s", bench_opt(argc, argv, "--prefetch", "0"));
        for (char *t = strtok(buf, ","); t && md.npf < MAX_MODES; t = strtok(NULL, ","))
            md.pf[md.npf++] = atoi(t);
        snprintf(buf, sizeof buf, "%s", bench_opt(argc, argv, "--pipelined", "0"));
        for (char *t = strtok(buf, ","); t && md.npers < MAX_MODES; t = strtok(NULL, ","))
            md.pers[md.npers++] = atoi(t);
        snprintf(buf, sizeof buf, "%s", bench_opt(argc, argv, "--read", "0/8"));
        for (char *t = strcmp(buf, "off") ? strtok(buf, ",") : NULL; t && md.nread < MAX_MODES;
             t = strtok(NULL, ",")) {
            char *slash = strchr(t, '/');
            char *slash2 = slash ? strchr(slash + 1, '/') : NULL;
            unsigned loads = slash ? (unsigned)strtoul(slash + 1, NULL, 0) : 8u;
            unsigned thr = slash2 ? (unsigned)strtoul(slash2 + 1, NULL, 0) : 256u;
            md.read_ctas[md.nread] = (unsigned)strtoul(t, NULL, 0);
            md.read_threads[md.nread] = thr == 32 || thr == 64 || thr == 128 ? thr : 256u;
            md.read_loads[md.nread++] = loads >= 1 && loads <= 8 ? loads : 8u;
        }
        if (!md.npdl || !md.npf || !md.npers || md.batch < 1) {
            fprintf(stderr, "bench gemv: --pdl, --prefetch and --batch need values\n");
            return 2;
        }
    }
    shape3 shapes[4];
    int nshapes = 4;
    memcpy(shapes, k_shapes, sizeof shapes);
    const char *sh = bench_opt(argc, argv, "--shape", NULL);
    if (sh) {
        long long m, k, l;
        if (sscanf(sh, "%lld,%lld,%lld", &m, &k, &l) != 3 || m < 1 || k < 0 || l < 1) {
            fprintf(stderr, "bench gemv: --shape M,K,L\n");
            return 2;
        }
        shapes[0] = (shape3){m, k, l};
        nshapes = 1;
    }
    ptxq_dev d;
    if (bench_open(&d)) return 2;
    bench_copy cp;
    size_t cbytes = (size_t)256 << 20;
    if (bench_copy_run(&d, cbytes, reps, &cp)) {
        fprintf(stderr, "bench gemv: the copy measurement failed\n");
        dev_close(&d);
        return 1;
    }
    double sheet = bench_datasheet_gbps(d.info.name);
    printf("device %s (%s, %d SMs, L2 %.0f MiB)\n", d.info.name, d.info.target, d.info.sm_count,
           d.info.l2_bytes / 1048576.0);
    printf("copy  %.0f MiB D2D: %.3f ms, %.0f GB/s (read + write)", cbytes / 1048576.0, cp.ms, cp.gbps);
    if (sheet > 0) printf(" = %.0f%% of the %.0f GB/s datasheet", 100 * cp.gbps / sheet, sheet);
    printf("\nDRAM-bound timing: each batch rotates through copies of A + scales (xN below) so that "
           "the data between two reads of one copy exceeds 4 x L2; launches back to back, time per "
           "call = batch time / calls, median of %d batches.\n", reps);
    printf("pdl: off = plain launches; on = programmatic dependent launch, every load after the "
           "wait (the default; in a graph, from 4 TB/s or on grids of at most two waves A's L2 "
           "prefetch goes before it); early = on + "
           "PTXQ_GEMV_STATIC_WEIGHTS (A's L2 prefetch before the wait); indep = on + "
           "PTXQ_GEMV_INDEPENDENT (no wait; y rotated with A). pfN: L2 prefetch depth "
           "in trips.\n");
    printf("A's scales: %s\n", md.sf128 ? "PTXQ_SCALE_128x4 (--scales 128x4)" : "row-major [L][M][K/B]");
    printf("GB/s: bytes that must move (A + A scales + x [+ x scales] + y) per second. bound: those "
           "bytes at the copy's GB/s. %%copy: GB/s over the copy's GB/s (target >= 90%%).\n\n");
    printf("%-6s %-6s %-4s %6s %6s %2s  %-5s  %9s %8s %9s %7s  %-6s %-5s %-4s %6s %3s  %s\n",
           "format", "x", "y", "M", "K", "L", "check", "time(us)", "GB/s", "bound(us)", "%copy",
           "plan", "pdl", "pf", "grid", "reg", "A + scales, copies, calls per batch");
    int fails = 0;
    for (int fi = 0; fi < 3; ++fi) {
        ptxq_gemv_format f = (ptxq_gemv_format)(PTXQ_GEMV_NVFP4 + fi);
        if (strcmp(fs, "all") && f != only) continue;
        for (int si = 0; si < nshapes; ++si)
            fails += bench_one(&d, f, xt, yt, shapes[si], reps, sweep, force_r, force_k, &cp, &md);
    }
    printf("\nplan rN kW: N rows per thread, W warps of the 8 in a CTA along K (--sweep times all); "
           "r16: the tensor-core kernel (16 rows a warp; FP4 A with BF16/F16 x).\n");
    dev_close(&d);
    return fails ? 1 : 0;
}
