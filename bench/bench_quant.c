/* bench_quant.c -- quantization: validate against the CPU reference, then time, then the napkin
 * math. Bandwidth-bound kernels, so the figure of merit is GB/s of the bytes that must move
 * (input read once, codes and scales written once) against a device-to-device copy measured in
 * the same run. Per-tensor modes read the input twice (amax pass, then quantize): their line also
 * shows the traffic actually moved.
 *
 *   ptxq bench quant [--rows R] [--k K] [--in bf16|f16|f32] [--mode all|NAME] [--reps N]
 *                    [--layout 128x4]
 *   ptxq check quant --mode NAME [--in T] [--rows R] [--k K] [--layout 128x4] [--seed S]
 * NAME: tensor, tensor_st, row, block, mx8, nvfp4, nvfp4_st, i8row, i8block32, i8block64,
 * i8block128 (_st: PTXQ_QUANT_STATIC_SCALE, the one-pass delayed-scaling form). --layout 128x4:
 * the modes that have it (mx8, nvfp4, nvfp4_st) with PTXQ_SCALE_128x4 scales, plus the time of a
 * memset of the same scale bytes (the stream operation the kernels' own padding stores replaced
 * in the forty-third session). */
#include "bench_quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "quant_case.h"

typedef struct mode_row {
    const char *name;
    ptxq_quant_mode mode;
    ptxq_dtype out;
    int block;
    int is_static; /* PTXQ_QUANT_STATIC_SCALE: one pass */
} mode_row;

static const mode_row k_modes[] = {
    {"tensor", PTXQ_QUANT_FP8_TENSOR, PTXQ_E4M3, 0, 0},
    {"tensor_st", PTXQ_QUANT_FP8_TENSOR, PTXQ_E4M3, 0, 1},
    {"row", PTXQ_QUANT_FP8_ROW, PTXQ_E4M3, 0, 0},
    {"block", PTXQ_QUANT_FP8_BLOCK, PTXQ_E4M3, 0, 0},
    {"mx8", PTXQ_QUANT_MXFP8, PTXQ_E4M3, 0, 0},
    {"nvfp4", PTXQ_QUANT_NVFP4, PTXQ_E2M1, 0, 0},
    {"nvfp4_st", PTXQ_QUANT_NVFP4, PTXQ_E2M1, 0, 1},
    {"i8row", PTXQ_QUANT_INT8_ROW, PTXQ_I8, 0, 0},
    {"i8block32", PTXQ_QUANT_INT8_BLOCK, PTXQ_I8, 32, 0},
    {"i8block64", PTXQ_QUANT_INT8_BLOCK, PTXQ_I8, 64, 0},
    {"i8block128", PTXQ_QUANT_INT8_BLOCK, PTXQ_I8, 128, 0},
};
#define N_MODES (int)(sizeof k_modes / sizeof k_modes[0])

static ptxq_dtype parse_in(const char *s) {
    return !strcmp(s, "f16") ? PTXQ_F16 : !strcmp(s, "f32") ? PTXQ_F32 : PTXQ_BF16;
}

static const mode_row *find_mode(const char *s) {
    for (int i = 0; i < N_MODES; ++i)
        if (!strcmp(k_modes[i].name, s)) return &k_modes[i];
    return NULL;
}

int check_quant_main(int argc, char **argv) {
    const mode_row *m = find_mode(bench_opt(argc, argv, "--mode", "mx8"));
    if (!m) {
        fprintf(stderr, "check quant: unknown --mode\n");
        return 2;
    }
    ptxq_dev d;
    if (bench_open(&d)) return 2;
    quant_case c;
    memset(&c, 0, sizeof c);
    c.mode = m->mode;
    c.out = m->out;
    c.block = m->block;
    c.in = parse_in(bench_opt(argc, argv, "--in", "bf16"));
    c.rank = 2;
    c.shape[0] = bench_opt_int(argc, argv, "--rows", 1000);
    c.shape[1] = bench_opt_int(argc, argv, "--k", 4096);
    c.layout = !strcmp(bench_opt(argc, argv, "--layout", ""), "128x4") ? PTXQ_SCALE_128x4
                                                                         : PTXQ_SCALE_STRIDED;
    c.seed = (uint64_t)bench_opt_int(argc, argv, "--seed", (long long)time(NULL));
    c.static_scale = m->is_static;
    quant_result r;
    char desc[200];
    quant_case_describe(&c, desc, sizeof desc);
    int rc = quant_case_run(&d, &c, &r);
    printf("%s\n  codes wrong %lld / %lld, scales wrong %lld, padding touched %lld, amax %s, "
           "global scale %s\n  dequantized vs float64: max %.3f code steps (bound 0.5), rel L2 "
           "%.3e, past bound %lld\n  %s\n",
           desc, (long long)r.code_mismatch, (long long)r.elements, (long long)r.scale_mismatch,
           (long long)r.pad_touched, r.amax_ok < 0 ? "n/a" : r.amax_ok ? "exact" : "WRONG",
           r.gscale_ok < 0 ? "n/a" : r.gscale_ok ? "exact" : "WRONG", r.err.max_rel_step,
           r.err.rel_l2, (long long)r.err.over_bound,
           rc == 0 ? "PASS" : rc < 0 ? r.msg : "FAIL");
    dev_close(&d);
    return rc == 0 ? 0 : 1;
}

typedef struct quant_launch {
    ptxq_dev *d;
    ptxq_quant_desc desc;
    ptxq_tensor x, q, s;
} quant_launch;

static int do_quant(void *p) {
    quant_launch *L = p;
    return ptxq_quantize(L->d->ctx, &L->desc, &L->x, &L->q, &L->s, L->d->stream) != PTXQ_OK;
}

typedef struct dequant_launch {
    ptxq_dev *d;
    ptxq_tensor q, y;
    uint64_t scale;
} dequant_launch;

typedef struct memset_launch {
    ptxq_dev *d;
    uint64_t ptr;
    size_t bytes;
} memset_launch;

static int do_memset(void *p) {
    memset_launch *M = p;
    return M->d->drv->cuMemsetD8Async(M->ptr, 0, M->bytes, M->d->stream) != CUDA_SUCCESS;
}

static int do_dequant(void *p) {
    dequant_launch *D = p;
    return ptxq_dequantize_fp8(D->d->ctx, &D->q, D->scale, &D->y, D->d->stream) != PTXQ_OK;
}

int bench_quant_main(int argc, char **argv) {
    int64_t rows = bench_opt_int(argc, argv, "--rows", 16384);
    int64_t K = bench_opt_int(argc, argv, "--k", 8192);
    int reps = (int)bench_opt_int(argc, argv, "--reps", 30);
    ptxq_dtype in = parse_in(bench_opt(argc, argv, "--in", "bf16"));
    const char *only = bench_opt(argc, argv, "--mode", "all");
    int sf128 = !strcmp(bench_opt(argc, argv, "--layout", ""), "128x4");
    ptxq_dev d;
    if (bench_open(&d)) return 2;
    int esz = ptxq_dtype_bits(in) / 8;
    size_t xbytes = (size_t)(rows * K * esz);
    bench_copy cp;
    bench_copy_run(&d, xbytes, reps, &cp);
    double sheet = bench_datasheet_gbps(d.info.name);
    printf("device %s (%s, %d SMs), input %s %lld x %lld (%.1f MiB)\n", d.info.name, d.info.target,
           d.info.sm_count, ptxq_dtype_name(in), (long long)rows, (long long)K, xbytes / 1048576.0);
    printf("copy  %.1f MiB D2D: %.3f ms, %.0f GB/s (read + write)%s", xbytes / 1048576.0, cp.ms,
           cp.gbps, sheet > 0 ? "" : "\n");
    if (sheet > 0) printf(" = %.0f%% of the %.0f GB/s datasheet\n", 100 * cp.gbps / sheet, sheet);

    /* device data: random bf16/f16/f32 with per-row magnitudes, made on the host once */
    uint64_t dx = dev_alloc(&d, xbytes), dq = dev_alloc(&d, (size_t)(rows * K)),
             ds = dev_alloc(&d, (size_t)(rows * (K / 16) * 4 + (rows + 127) * (K / 16 + 3) + 64)),
             dw = dev_alloc(&d, 64);
    {
        unsigned char *hx = malloc(xbytes);
        rng64 g = {12345};
        for (int64_t r = 0; r < rows; ++r) {
            float mag = ldexpf(1.0f, (int)(rng_next(&g) % 13) - 6);
            for (int64_t k = 0; k < K; ++k) {
                float v = ((float)(rng_next(&g) >> 40) * (1.0f / 16777216.0f) - 0.5f) * mag;
                size_t i = (size_t)(r * K + k);
                if (in == PTXQ_F32) memcpy(hx + i * 4, &v, 4);
                else {
                    uint16_t h = in == PTXQ_BF16 ? ptxq_bf16_encode(v) : ptxq_f16_encode(v);
                    memcpy(hx + i * 2, &h, 2);
                }
            }
        }
        dev_upload(&d, dx, hx, xbytes);
        free(hx);
    }
    printf("\n%-11s %-8s %9s %9s %8s %8s %10s  %s\n", "mode", "check", "time(us)", "GB/s", "%copy",
           "%sheet", "traffic", "bytes (in + codes + scales)");
    int fails = 0;
    char summary[N_MODES][160];
    int ns = 0;
    for (int i = 0; i < N_MODES; ++i) {
        const mode_row *m = &k_modes[i];
        if (strcmp(only, "all") && strcmp(only, m->name)) continue;
        if (sf128 && m->mode != PTXQ_QUANT_MXFP8 && m->mode != PTXQ_QUANT_NVFP4) continue;
        ptxq_scale_layout layout = sf128 ? PTXQ_SCALE_128x4 : PTXQ_SCALE_STRIDED;
        /* 1. validate this kernel on a slice against the CPU reference */
        quant_case c;
        memset(&c, 0, sizeof c);
        c.mode = m->mode;
        c.out = m->out;
        c.block = m->block;
        c.in = in;
        c.rank = 2;
        c.shape[0] = 257;
        c.shape[1] = K;
        c.static_scale = m->is_static;
        c.layout = layout;
        c.seed = (uint64_t)time(NULL) + (uint64_t)i;
        quant_result res;
        int bad = quant_case_run(&d, &c, &res);
        fails += bad != 0;
        /* 2. time the full size */
        quant_launch L;
        memset(&L, 0, sizeof L);
        L.d = &d;
        L.desc.mode = m->mode;
        L.desc.out_dtype = m->out;
        L.desc.block = m->block;
        L.desc.scale_layout = layout;
        int64_t xs[2] = {rows, K};
        L.x = ptxq_tensor_make(in, 2, xs, dx);
        L.q = ptxq_tensor_make(m->out, 2, xs, dq);
        size_t sbytes = 0;
        ptxq_quant_scale_shape(&L.desc, &L.x, &L.s, &sbytes);
        L.s.data = ds;
        if ((m->mode == PTXQ_QUANT_FP8_TENSOR || m->mode == PTXQ_QUANT_NVFP4) && !m->is_static)
            L.desc.amax = dw;
        if (m->mode == PTXQ_QUANT_NVFP4) L.desc.global_scale = dw + 16;
        if (m->is_static) {
            /* a delayed-scaling scale: amax of the data (|v| <= 32) over the format's range */
            float sc = m->mode == PTXQ_QUANT_NVFP4 ? 32.0f / 2688.0f : 32.0f / 448.0f;
            L.desc.flags = PTXQ_QUANT_STATIC_SCALE;
            dev_upload(&d, m->mode == PTXQ_QUANT_NVFP4 ? dw + 16 : ds, &sc, sizeof sc);
        }
        double ms = dev_time_ms(&d, do_quant, &L, 3, reps);
        /* 3. napkin math */
        size_t qbytes = (size_t)(rows * K * ptxq_dtype_bits(m->out) / 8);
        size_t must = xbytes + qbytes + sbytes;
        size_t moved = must + (L.desc.amax ? xbytes : 0); /* the amax pass reads x again */
        double gbps = ms > 0 ? must / (ms * 1e6) : 0;
        snprintf(summary[ns], sizeof summary[ns], "%-11s %-8s %9.1f %9.0f %7.1f%% %7.1f%% %9.0f%%  %.1f + %.1f + %.2f MiB",
                 m->name, bad ? "FAIL" : "ok", ms * 1e3, gbps, 100 * gbps / cp.gbps,
                 sheet > 0 ? 100 * gbps / sheet : 0.0, 100.0 * (moved / (ms * 1e6)) / cp.gbps,
                 xbytes / 1048576.0, qbytes / 1048576.0, sbytes / 1048576.0);
        printf("%s\n", summary[ns++]);
        if (sf128) {
            memset_launch M = {&d, ds, sbytes};
            double mms = dev_time_ms(&d, do_memset, &M, 3, reps);
            printf("%-11s %-8s %9.1f %9s %8s %8s %10s  memset of the %.2f MiB of 128x4 scales alone\n",
                   "  memset", "", mms * 1e3, "", "", "", "", sbytes / 1048576.0);
        }
    }
    /* the inverse, through the hand-written kernel: E4M3 codes (dq) + scale -> BF16 (reuses dx) */
    if (!strcmp(only, "all") || !strcmp(only, "dequant")) {
        dequant_launch D = {&d, {0}, {0}, ds};
        int64_t xs[2] = {rows, K};
        D.q = ptxq_tensor_make(PTXQ_E4M3, 2, xs, dq);
        D.y = ptxq_tensor_make(PTXQ_BF16, 2, xs, dx);
        float one = 1.0f / 64.0f;
        dev_upload(&d, ds, &one, sizeof one);
        /* 1. validate the timed shape: random E4M3 codes (NaN codes 0x7F / 0xFF left out), every
         * output element against bf16(decode(q) * scale) on the CPU */
        size_t n = (size_t)(rows * K);
        uint8_t *hq = malloc(n);
        uint16_t *hy = malloc(n * 2);
        rng64 g = {(uint64_t)time(NULL)};
        for (size_t i = 0; i < n; ++i) {
            hq[i] = (uint8_t)(rng_next(&g) >> 56);
            if ((hq[i] & 0x7F) == 0x7F) hq[i] ^= 1;
        }
        dev_upload(&d, dq, hq, n);
        int64_t wrong = 0;
        if (do_dequant(&D)) {
            wrong = (int64_t)n;
        } else {
            dev_sync(&d);
            dev_download(&d, hy, dx, n * 2);
            for (size_t i = 0; i < n; ++i)
                wrong += hy[i] != ptxq_bf16_encode(ptxq_e4m3_decode(hq[i]) * one);
        }
        if (wrong) printf("dequant: %lld of %zu elements wrong\n", (long long)wrong, n);
        fails += wrong != 0;
        free(hq);
        free(hy);
        /* 2. time */
        double ms = dev_time_ms(&d, do_dequant, &D, 3, reps);
        double must = (double)(rows * K) * 3.0, gbps = ms > 0 ? must / (ms * 1e6) : 0;
        printf("%-11s %-8s %9.1f %9.0f %7.1f%% %7.1f%% %9.0f%%  %.1f codes -> %.1f MiB bf16 (every element checked)\n",
               "dequant", wrong ? "FAIL" : "ok", ms * 1e3, gbps, 100 * gbps / cp.gbps,
               sheet > 0 ? 100 * gbps / sheet : 0.0, 100 * gbps / cp.gbps, rows * K / 1048576.0,
               rows * K * 2 / 1048576.0);
    }
    printf("\n%%copy: GB/s of the bytes that must move over the copy's GB/s; traffic: the same for the"
           " bytes actually moved\n(per-tensor modes read the input twice).\n");
    dev_free(&d, dx);
    dev_free(&d, dq);
    dev_free(&d, ds);
    dev_free(&d, dw);
    dev_close(&d);
    return fails ? 1 : 0;
}
