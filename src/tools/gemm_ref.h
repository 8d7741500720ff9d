/* gemm_ref.h -- FP8 and BF16 GEMM cases for the tests, `ptxq check gemm` and the bench: random E4M3
 * (E5M2, BF16) inputs and F32 (UE8M0) scales, a float64 CPU reference from the very same values and
 * scales, and the checks.
 *
 * Tolerance (per element, with S = |alpha| sum_k |scale * a_k * b_k|, the scale-weighted sum of
 * absolute products, E = |alpha * scaled product| + |beta * c| + |bias| and ref the float64 result):
 *     |d - ref| <= u * |ref| + GEMM_TOL_NORM * S + 2^-20 * E + sub
 *   * u |ref| + sub: D's rounding, half an ulp at worst: u = 2^-8 (BF16), 2^-11 (F16), 2^-24
 *     (F32), and below D's normal range half the subnormal step, sub = 2^-134, 2^-25, 2^-150;
 *   * GEMM_TOL_NORM * S: Hopper's FP8 wgmma truncates the 32 products of a k32 step to multiples of
 *     2^(emax-13) and the step's sum to 14 significant bits (NOTES.md section 7). Per step that is
 *     at most about 33 * 2^-13 = 4e-3 of the step's sum of |products| (when one product dominates);
 *     promotion into FP32 every 128 K keeps the steps from compounding;
 *   * 2^-20 E: the FP32 epilogue (a handful of roundings of terms up to E, 2^-24 each).
 * BF16 operands (a_type = b_type = BF16): the tensor core multiplies exactly and accumulates in
 * FP32, so the S term is K * 2^-23 (one rounding of a partial sum <= S per add) instead.
 * Layout or descriptor bugs give errors of order S, so the bound still catches them. The case also
 * reports the largest normalised error |d-ref|/S and the relative error on well-conditioned
 * outputs (|ref| >= S/2), the figures comparable to cuBLASLt's ~1e-4. */
#ifndef PTXQ_GEMM_REF_H
#define PTXQ_GEMM_REF_H

#include <stdint.h>

#include "devbuf.h"

#define GEMM_TOL_NORM 4.0e-3

typedef struct gemm_cfg {
    int64_t M, N, K;
    ptxq_gemm_scaling scaling;
    int tile_n;        /* 0: the runtime's choice */
    int tile_m;        /* 0: the runtime's choice; 192: the three-warpgroup kernels */
    int sample_rows;   /* 0: check every row's values; else this many random rows (+ first, last),
                          and (plain calls) every row for the poison: all must be written */
    int pad_a, pad_d;  /* extra elements per row of A/B (multiple of 16) and of D (rounded up to an even row stride) */
    int sa_mmajor;     /* BLOCK: a_scale M-major (strides {1, M}) instead of row-major */
    int sa_kpitch;     /* BLOCK, row-major a_scale: elements per row (0: ceil(K/128), packed);
                          the padding is random and must not be read as a scale */
    int sb_nmajor;     /* BLOCK: b_scale N-major (strides {1, ceil(N/128)}) instead of row-major */
    int cluster;       /* desc.cluster: 0 (runtime), 1 or 2 */
    int group_m;       /* desc.group_m: the raster's M tiles a group (0: the runtime's) */
    /* beyond the plain case (0 = off / default) */
    ptxq_dtype a_type, b_type;  /* 0 = E4M3; E4M3 or E5M2, or both BF16 */
    ptxq_dtype d_type;          /* 0 = BF16; BF16, F16 or F32 */
    int batch;                  /* NONE: L > 1 batches of a rank-3 GEMM; MASKED/CONTIGUOUS: groups */
    int b_shared;               /* NONE batch: one rank-2 B for every batch */
    ptxq_gemm_grouping grouping;
    int64_t expected_rows;      /* desc.expected_rows (masked groups: the width pick's hint) */
    const int32_t *group_sizes; /* grouped: each group's rows (contiguous: padded to 128 after it;
                                   masked: its count, <= M), instead of random ones; batch entries */
    int with_c;                 /* D = alpha * AB + beta * C (C random, d's dtype) */
    float alpha, beta;          /* desc.alpha (0 = 1), desc.beta */
    ptxq_dtype bias_type;       /* 0 = no bias; BF16 or F32 */
    int bias_batched;           /* bias [Lb, N] instead of [N] */
    int scales_batched;         /* one scale set per batch (A) and per batch of B */
    int c_is_d;                 /* with_c: C is d itself (in place) */
    int split_k;                /* desc.split_k; a workspace (poisoned) is given whenever the call
                                   wants one */
    int store;                  /* desc.store: 0 (runtime), 1 (TMA store where allowed), -1 */
    int ctas;                   /* desc.ctas: persistent grid cap (0 = one CTA per SM) */
    int unit_scales;            /* TENSOR: NULL a_scale and b_scale (1.0) */
    int mx_path;                /* desc.mx_path (MX: 0 auto, 1 promote, 2 dequantize) */
    int odd_bstride;            /* one batch (batch <= 1): A, B and D as rank-3 [1, M, K], [1, N, K],
                                   [1, M, N] with odd batch strides, which the call must not use */
    int want_sm;                /* test check: 1 the kernel must load BLOCK scales by TMA ("_sm"),
                                   -1 it must not (the scale warp's any strides) */
    unsigned flags;             /* desc.flags (e.g. PTXQ_GEMM_NO_CLUSTER_SPLIT) */
    int no_ws;                  /* no workspace even where the call would use one */
    int want_cs;                /* test check: 1 the split must be summed across a cluster
                                   (plan.cluster_split), -1 not */
    int want_splits;            /* test check: the plan's splits (0: any) */
} gemm_cfg;

typedef struct gemm_result {
    int64_t checked;       /* elements whose value was compared */
    int64_t bad;           /* outside the tolerance */
    int64_t unwritten;     /* still the poison pattern (rows that must be written) */
    int64_t skipped_rows;  /* rows that must stay untouched (masked / padding rows), all checked */
    double max_norm;       /* max |d - ref| / S */
    double max_rel_wc;     /* max relative error where |ref| >= S / 2 */
    int64_t n_wc;
    char first_bad[256];
    char error[256];       /* ptxq_last_error() right after a call that failed */
    char kernel[64];       /* ptxq_gemm_kernel_for's name */
    char launched[64];     /* the kernel of ptxq_gemm_plan_for on d's device (what ran) */
    int splits;            /* the plan's K ranges per split tile (1: none) */
    unsigned split_tiles;  /* and how many tiles were split */
    int dequant;           /* MX: the call went through BF16 copies (plan.dequant) */
    int cluster_split;     /* split-K summed across a cluster (plan.cluster_split) */
} gemm_result;

/* Runs one case on d's stream (allocates, fills, launches, downloads, frees). Returns the
 * ptxq_gemm status (PTXQ_OK when it ran) and fills *res. */
int gemm_case_run(ptxq_dev *d, const gemm_cfg *cfg, uint64_t seed, gemm_result *res);

/* Random E4M3 code, never zero and never NaN: |value| spread over 2^-2..2^2, mostly positive
 * (values in [-1, 3) before scaling) so that many outputs are well-conditioned. */
uint8_t gemm_rand_e4m3(rng64 *r);
/* A random F32 scale, log-uniform in [2^lo_log2, 2^hi_log2) (the cases' A and B scales). */
float gemm_rand_scale(rng64 *r, double lo_log2, double hi_log2);

#endif
