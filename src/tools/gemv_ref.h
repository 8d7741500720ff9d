/* gemv_ref.h -- block-scaled GEMV on the CPU (float64, on the decoded values) and one GEMV checked
 * end to end on the device against it: fresh random codes and scales, padded A rows, row-major,
 * M-major or 128x4 A scales, shared or batched x, y poisoned twice (two poisons, so an unwritten
 * element cannot pass) with padding between batches that must stay untouched.
 * Shared by tests/test_gemv.c, `ptxq check gemv` and the bench's validation step.
 *
 * The bound per output: the device accumulates in f32, so
 *   |y_dev - y_ref| <= (48 + 2 * ceil(chunks per row / 32)) * 2^-24 * sum_k |terms|
 *                      + half an ulp of y's dtype at |y|
 * (block sums of at most 32 products, two scale roundings, the lane's sequential block sums, an
 * 8-level tree, the per-tensor scales; a wrong element is about sum|terms| / K, far above it);
 * FP4 A with F16 x adds (nk + 16) * 2^-136 absolute: the tensor-core kernel's partial sums are
 * A's values times 2^-14, f32 subnormals for outputs under 2^-112 (gemv_bound says more). */
#ifndef PTXQ_GEMV_REF_H
#define PTXQ_GEMV_REF_H

#include <stddef.h>
#include <stdint.h>

#include "devbuf.h"
#include "ptxq.h"

/* A host image of a GEMV: codes one per byte (E2M1 in the low nibble), scales as codes. */
typedef struct gemv_problem {
    ptxq_gemv_format format;
    ptxq_dtype elem, sdtype; /* A's element and scale dtypes */
    ptxq_dtype xdtype;       /* elem (quantized x) or BF16 / F16 */
    int block;
    int64_t M, K, L, nk;
    int64_t xl;              /* rows of x: L, or 1 when shared by every batch */
    uint8_t *a;              /* [L][M][K] codes */
    uint8_t *sa;             /* [L][M][nk] codes */
    uint8_t *xq;             /* [xl][K] codes (quantized x) */
    uint8_t *sx;             /* [xl][nk] codes (quantized x) */
    uint16_t *xh;            /* [xl][K] BF16 / F16 bits */
    float ga, gx;            /* per-tensor scales (1 when not passed) */
} gemv_problem;

/* The element / scale dtypes and block of a format. */
void gemv_format_info(ptxq_gemv_format f, ptxq_dtype *elem, ptxq_dtype *sdtype, int *block);
const char *gemv_format_name(ptxq_gemv_format f);
/* Allocates and fills p's arrays with random codes (seeded); ga/gx random in [0.5, 1.5) if with_ga
 * / with_gx, else 1. */
void gemv_problem_make(gemv_problem *p, ptxq_gemv_format f, ptxq_dtype xdtype, int64_t M, int64_t K,
                       int64_t L, int x_shared, int with_ga, int with_gx, uint64_t seed);
void gemv_problem_free(gemv_problem *p);
/* y[L][M] and sum of |terms| per output, float64 on the decoded values. */
void gemv_ref(const gemv_problem *p, double *y, double *yabs);
/* The tolerance above for one output of dtype ydt. */
double gemv_bound(const gemv_problem *p, ptxq_dtype ydt, double ref, double yabs);

typedef struct gemv_case {
    ptxq_gemv_format format;
    ptxq_dtype x;             /* 0: A's element dtype (with scales), else BF16 / F16 */
    ptxq_dtype y;             /* F32, F16, BF16 */
    int64_t M, K, L;
    int64_t a_pad;            /* A row pitch: K rounded up to 16 bytes plus a_pad elements
                                 (a multiple of 32 for E2M1, 16 for E4M3) */
    int scales;               /* A scales: 0 row-major, 1 M-major (padded), 2 128x4 */
    int x_shared;             /* x is [K], shared by every batch */
    int globals;              /* pass a_global (and x_global for quantized x) */
    int rows_per_thread, k_warps; /* plan override, 0 = the runtime's choice */
    int pipelined;            /* desc.pipelined (0 = the runtime's choice) */
    int odd_scales;           /* A scales at an odd address, a quantized x's scales with K stride
                                 2: NVFP4's scale pairs are not aligned u16s (the slow loop) */
    int scale_offset;         /* bytes added to A's scale address (with odd_scales: + 1) */
    unsigned flags;           /* desc.flags (PTXQ_GEMV_NO_PDL, STATIC_WEIGHTS, INDEPENDENT) */
    int prefetch_trips;       /* desc.prefetch_trips (0: the runtime's) */
    uint64_t seed;
} gemv_case;

typedef struct gemv_result {
    int64_t outputs;
    int64_t wrong;            /* outputs past the bound (or NaN where ref is not) */
    int64_t pad_touched;      /* y bytes outside the tensor that changed */
    double worst;             /* max |dev - ref| / bound (<= 1 passes) */
    int64_t worst_at;         /* l * M + m of the worst */
    double worst_dev, worst_ref;
    ptxq_gemv_plan plan;
    ptxq_status status;
    char msg[300];
} gemv_result;

/* 0 if every output is within its bound, 1 if not (details in r), -1 if a call failed. */
int gemv_case_run(ptxq_dev *d, const gemv_case *c, gemv_result *r);
void gemv_case_describe(const gemv_case *c, char *buf, size_t n);

#endif
