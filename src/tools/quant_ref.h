/* quant_ref.h -- CPU reference of every quantization mode (tests, `ptxq check`, benches).
 *
 * Two references per call:
 *   - the exact one follows the kernel's f32 arithmetic step by step (IEEE division and
 *     multiplication in float, then the library's round-to-nearest-even codecs), so a correct
 *     kernel matches it code for code and scale for scale;
 *   - quant_ref_error() measures the dequantized result against the float64 input, to show the
 *     format's own error stays inside its bound (half a code step of the scaled value). */
#ifndef PTXQ_QUANT_REF_H
#define PTXQ_QUANT_REF_H

#include <stddef.h>
#include <stdint.h>

#include "ptxq.h"

/* A host image of a quantization problem: x is rows x K floats (the values the device sees,
 * already rounded to the input dtype), q codes rows x K (one byte per element, E2M1 codes in
 * the low nibble), scales rows x nk (f32 values, or the 8-bit codes as floats for UE8M0/UE4M3),
 * plus the per-tensor amax and global scale. */
typedef struct quant_host {
    ptxq_quant_mode mode;
    ptxq_dtype out;
    int block;       /* elements per scale: K for row modes, rows*K for tensor */
    int64_t rows, K, nk;
    float amax;      /* per-tensor modes */
    float gscale;    /* NVFP4 */
    float *scale;    /* rows x nk: f32 scale, or the code (0..255) for UE8M0 / UE4M3 */
    uint8_t *q;      /* rows x K codes */
} quant_host;

/* Allocates h->scale and h->q (free with quant_host_free). static_scale: FP8_TENSOR with a given
 * scale (PTXQ_QUANT_STATIC_SCALE), else < 0. */
int quant_ref(const float *x, int64_t rows, int64_t K, ptxq_quant_mode mode, ptxq_dtype out,
              int block, float static_scale, quant_host *h);
void quant_host_free(quant_host *h);

/* Block size of a mode (INT8_BLOCK: block), 0 for row modes, -1 for the per-tensor mode. */
int quant_mode_block(ptxq_quant_mode mode, int block);
/* Decoded value of code c of dtype out (I8 two's complement, E2M1 low nibble). */
double quant_decode(ptxq_dtype out, uint8_t c);
/* The dequantization multiplier of (row, block): scale * global for NVFP4, 2^(c-127) for MX. */
double quant_ref_multiplier(const quant_host *h, int64_t row, int64_t kb);

typedef struct quant_err {
    double max_rel_step; /* max |deq - x| / (code step at |x/scale|), must be <= 0.5 (+ rounding) */
    double rel_l2;       /* ||deq - x|| / ||x|| */
    int64_t over_bound;  /* elements past the bound (not saturated) */
} quant_err;
/* Compares h's dequantized values with x in float64. */
void quant_ref_error(const float *x, const quant_host *h, quant_err *e);

/* Rounds v to what an input of dtype t holds (BF16/F16 RNE, F32 as is). */
float quant_round_input(ptxq_dtype t, float v);

/* The byte offset of scale (m, k) in the 128x4 interleaved layout with nk scale columns. */
size_t quant_sf128_offset(int64_t m, int64_t k, int64_t nk);

#endif
