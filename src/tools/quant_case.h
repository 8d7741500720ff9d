/* quant_case.h -- one quantization checked end to end on the device against quant_ref:
 * fresh random data, poisoned outputs (two runs, two poisons, so an unwritten element cannot
 * pass), padded strides whose padding must stay untouched, every element and scale compared.
 * Shared by tests/test_quant.c, `ptxq check quant` and the bench's validation step. */
#ifndef PTXQ_QUANT_CASE_H
#define PTXQ_QUANT_CASE_H

#include "devbuf.h"
#include "quant_ref.h"

/* quant_case.values: random data (never a zero block), or the special cases the scale rules
 * have (ptxq.h): zero spans of 128 elements and a zero row; those values times 2^-130 (scales at
 * their floors, f32 subnormal inputs; F16 inputs round them to 0); all zeros */
enum { QUANT_VALUES_RANDOM = 0, QUANT_VALUES_ZERO_BLOCKS = 1, QUANT_VALUES_TINY = 2,
       QUANT_VALUES_ZERO = 3 };

typedef struct quant_case {
    ptxq_quant_mode mode;
    ptxq_dtype in, out;
    int block;                  /* INT8_BLOCK only */
    int rank;                   /* 2..4 */
    int64_t shape[4];
    int64_t x_pad, q_pad;       /* extra elements per row in x / q (keep alignment: 8 / 16) */
    int64_t batch_pad;          /* rank >= 3: extra elements after each batch of rows in x and q
                                   (a multiple of 64), so that the rows do not collapse to one
                                   pitch and the kernels take their general (strided) path */
    int scale_mmajor;           /* strided scales stored with the rows dimension innermost */
    int x_bcast;                /* x's leading dimensions before the last one have stride 0: a
                                   broadcast batch (rank >= 3; every batch reads the same rows) */
    ptxq_scale_layout layout;
    int static_scale;           /* FP8_TENSOR: PTXQ_QUANT_STATIC_SCALE with a given scale */
    int write_amax;             /* with static_scale: also ask for amax */
    float static_value;         /* with static_scale: the scale (FP8_TENSOR) or global scale (NVFP4);
                                   0: 1.75 x the one the data would derive. Set, the case checks
                                   codes bit for bit and no NaN code, not the error bound */
    int values;                 /* QUANT_VALUES_*: what make_values draws */
    uint64_t seed;
} quant_case;

typedef struct quant_result {
    int64_t elements;
    int64_t code_mismatch;      /* codes that differ from the exact reference */
    int64_t scale_mismatch;     /* scales that differ (bitwise) */
    int64_t pad_touched;        /* bytes outside the tensor that changed */
    int amax_ok, gscale_ok;     /* per-tensor words match (1) or not checked (-1) */
    quant_err err;              /* dequantized vs float64 input */
    ptxq_status status;
    char msg[300];
} quant_result;

/* 0 if the kernel's output matched everywhere, 1 if not (details in r), -1 if the call failed. */
int quant_case_run(ptxq_dev *d, const quant_case *c, quant_result *r);
void quant_case_describe(const quant_case *c, char *buf, size_t n);

#endif
