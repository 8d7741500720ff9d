/* quant_ref.c -- CPU reference for quantization (see quant_ref.h).
 *
 * The exact reference repeats the kernel's f32 steps (gen/quant.py): IEEE float division and
 * multiplication (C float arithmetic on x86-64 SSE is exactly that), then the library's codecs,
 * whose round-to-nearest-even saturating forms are what cvt.rn.satfinite does. */
#include "quant_ref.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static float fmax_of(ptxq_dtype out) {
    return out == PTXQ_E4M3 ? 448.0f : out == PTXQ_E5M2 ? 57344.0f : 127.0f;
}

int quant_mode_block(ptxq_quant_mode mode, int block) {
    switch (mode) {
    case PTXQ_QUANT_FP8_TENSOR: return -1;
    case PTXQ_QUANT_FP8_ROW: case PTXQ_QUANT_INT8_ROW: return 0;
    case PTXQ_QUANT_FP8_BLOCK: return 128;
    case PTXQ_QUANT_MXFP8: return 32;
    case PTXQ_QUANT_NVFP4: return 16;
    case PTXQ_QUANT_INT8_BLOCK: return block;
    }
    return 0;
}

float quant_round_input(ptxq_dtype t, float v) {
    if (t == PTXQ_BF16) return ptxq_bf16_decode(ptxq_bf16_encode(v));
    if (t == PTXQ_F16) return ptxq_f16_decode(ptxq_f16_encode(v));
    return v;
}

static uint8_t encode(ptxq_dtype out, float y) {
    switch (out) {
    case PTXQ_E4M3: return ptxq_e4m3_encode(y, 1);
    case PTXQ_E5M2: return ptxq_e5m2_encode(y, 1);
    case PTXQ_E2M1: {
        /* via f16; the sign is that of h < 0 (sm_90a kernel rule: -0 and NaN encode unsigned) */
        float h = ptxq_f16_decode(ptxq_f16_encode(y));
        return (uint8_t)((ptxq_e2m1_encode(fabsf(h)) & 7) | (h < 0.0f ? 8 : 0));
    }
    default: break;
    }
    /* cvt.rni.sat.s8.f32: nearest even integer, clamped; NaN -> 0 */
    if (isnan(y)) return 0;
    float r = nearbyintf(y); /* default rounding mode: to nearest even */
    if (r > 127.0f) r = 127.0f;
    if (r < -128.0f) r = -128.0f;
    return (uint8_t)(int8_t)r;
}

double quant_decode(ptxq_dtype out, uint8_t c) {
    switch (out) {
    case PTXQ_E4M3: return ptxq_e4m3_decode(c);
    case PTXQ_E5M2: return ptxq_e5m2_decode(c);
    case PTXQ_E2M1: return ptxq_e2m1_decode(c & 15);
    default: return (double)(int8_t)c;
    }
}

static float absmax(const float *x, int64_t n) {
    float m = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        float a = fabsf(x[i]);
        if (a > m) m = a;
    }
    return m;
}

/* scale = a / fmax, inv = amax > 0 ? fmax / a : 0, a = amax raised to fmax * 2^-126 where it is
 * positive and below (gen/quant.py, fp8_scale) */
static void fp8_scale(float amax, float fmax, float *scale, float *inv) {
    float floor = ldexpf(fmax, -126);
    float a = amax > 0.0f && amax < floor ? floor : amax;
    *scale = a / fmax;
    *inv = amax > 0.0f ? fmax / a : 0.0f;
}

static float bits_to_float(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t float_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

int quant_ref(const float *x, int64_t rows, int64_t K, ptxq_quant_mode mode, ptxq_dtype out,
              int block, float static_scale, quant_host *h) {
    memset(h, 0, sizeof *h);
    int B = quant_mode_block(mode, block);
    h->mode = mode;
    h->out = out;
    h->rows = rows;
    h->K = K;
    h->block = B > 0 ? B : B == 0 ? (int)K : (int)(rows * K);
    h->nk = B > 0 ? K / B : 1;
    int64_t nscale = B < 0 ? 1 : rows * h->nk;
    h->scale = calloc((size_t)(nscale > 0 ? nscale : 1), sizeof *h->scale);
    h->q = malloc((size_t)(rows * K > 0 ? rows * K : 1));
    if (!h->scale || !h->q) return -1;
    float fmax = fmax_of(out);

    if (mode == PTXQ_QUANT_FP8_TENSOR) {
        float scale, inv;
        h->amax = absmax(x, rows * K);
        if (static_scale >= 0.0f) {
            scale = static_scale;
            inv = scale > 0.0f ? fminf(1.0f / scale, FLT_MAX) : 0.0f;
        } else {
            fp8_scale(h->amax, fmax, &scale, &inv);
        }
        h->scale[0] = scale;
        for (int64_t i = 0; i < rows * K; ++i) h->q[i] = encode(out, x[i] * inv);
        return 0;
    }
    if (mode == PTXQ_QUANT_NVFP4) {
        h->amax = absmax(x, rows * K);
        if (static_scale >= 0.0f) {
            h->gscale = static_scale;
        } else {
            float g = h->amax / (6.0f * 448.0f), gmin = ldexpf(1.0f, -117);
            h->gscale = g > 0.0f && g < gmin ? gmin : g;
        }
    }
    int64_t bs = B > 0 ? B : K;
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t kb = 0; kb < h->nk; ++kb) {
            const float *xb = x + r * K + kb * bs;
            uint8_t *qb = h->q + r * K + kb * bs;
            float am = absmax(xb, bs), scale = 0.0f, inv = 0.0f;
            if (mode == PTXQ_QUANT_MXFP8) {
                int emax = out == PTXQ_E4M3 ? 8 : 15;
                int e = (int)((float_bits(am) >> 23) & 0xFF);
                int code = e - emax < 0 ? 0 : e - emax;
                if (e == 255) code = 255;
                scale = (float)code;
                inv = code == 255 ? NAN : bits_to_float((uint32_t)(254 - code) << 23);
            } else if (mode == PTXQ_QUANT_NVFP4) {
                float g = h->gscale;
                float inv6g = fminf(1.0f / (g * 6.0f), FLT_MAX);
                float s = am * inv6g;
                if (!(g > 0.0f)) s = 0.0f;
                uint8_t code = ptxq_e4m3_encode(s, 1);
                float den = ptxq_e4m3_decode(code) * g;
                inv = den > 0.0f ? fminf(1.0f / den, FLT_MAX) : 0.0f;
                scale = (float)code;
            } else {
                fp8_scale(am, fmax, &scale, &inv);
            }
            h->scale[r * h->nk + kb] = scale;
            for (int64_t i = 0; i < bs; ++i) qb[i] = encode(out, xb[i] * inv);
        }
    }
    return 0;
}

void quant_host_free(quant_host *h) {
    free(h->scale);
    free(h->q);
    memset(h, 0, sizeof *h);
}

double quant_ref_multiplier(const quant_host *h, int64_t row, int64_t kb) {
    if (h->mode == PTXQ_QUANT_FP8_TENSOR) return h->scale[0];
    double s = h->scale[row * h->nk + kb];
    if (h->mode == PTXQ_QUANT_MXFP8) return ldexp(1.0, (int)s - 127);
    if (h->mode == PTXQ_QUANT_NVFP4) return ptxq_e4m3_decode((uint8_t)s) * (double)h->gscale;
    return s;
}

/* distance between neighbouring codes around magnitude a (in code units) */
static double code_step(ptxq_dtype out, double a) {
    int e;
    switch (out) {
    case PTXQ_E4M3:
        if (a < ldexp(1.0, -6)) return ldexp(1.0, -9);
        frexp(a, &e);
        return ldexp(1.0, e - 1 - 3);
    case PTXQ_E5M2:
        if (a < ldexp(1.0, -14)) return ldexp(1.0, -16);
        frexp(a, &e);
        return ldexp(1.0, e - 1 - 2);
    case PTXQ_E2M1:
        if (a < 1.0) return 0.5;
        frexp(a, &e);
        return ldexp(1.0, e - 1 - 1);
    default:
        return 1.0;
    }
}

void quant_ref_error(const float *x, const quant_host *h, quant_err *e) {
    memset(e, 0, sizeof *e);
    double fmax = h->out == PTXQ_E2M1 ? 6.0 : fmax_of(h->out);
    double num = 0, den = 0;
    int64_t bs = h->mode == PTXQ_QUANT_FP8_TENSOR ? h->K : h->K / h->nk;
    for (int64_t r = 0; r < h->rows; ++r) {
        for (int64_t k = 0; k < h->K; ++k) {
            double mult = quant_ref_multiplier(h, r, h->mode == PTXQ_QUANT_FP8_TENSOR ? 0 : k / bs);
            double xv = x[r * h->K + k];
            double deq = quant_decode(h->out, h->q[r * h->K + k]) * mult;
            double err = fabs(deq - xv);
            num += err * err;
            den += xv * xv;
            if (mult == 0.0) {
                if (deq != 0.0) e->over_bound++;
                continue;
            }
            double v = fabs(xv) / mult;
            if (v > fmax) continue; /* saturated: the format cannot do better */
            double rel = err / (code_step(h->out, v) * mult);
            if (rel > e->max_rel_step) e->max_rel_step = rel;
            /* half a step, plus the f32 rounding of x * inv (relative 2^-23 of v) */
            /* NVFP4 rounds x * inv to f16 before E2M1: up to half an f16 ulp (2^-11 relative)
             * more, which only matters next to an E2M1 midpoint */
            double extra = v * (h->out == PTXQ_E2M1 ? 4.9e-4 : 1.2e-7) / code_step(h->out, v);
            /* (negated: a NaN code or scale must count, not pass every comparison) */
            if (!(rel <= 0.5 + 1e-5 + extra)) e->over_bound++;
        }
    }
    e->rel_l2 = den > 0 ? sqrt(num / den) : sqrt(num);
}

size_t quant_sf128_offset(int64_t m, int64_t k, int64_t nk) {
    int64_t kb4 = (nk + 3) / 4;
    return (size_t)(((m / 128) * kb4 + k / 4) * 512 + (m % 32) * 16 + ((m / 32) % 4) * 4 + k % 4);
}
