/* codec.c -- host encoders and decoders for the element types of ptxq.h.
 *
 * Every narrow float format here is "sign | exponent | mantissa" with subnormals, so one routine,
 * round_mag(), rounds a float magnitude to any of them, and the per-format functions only say
 * what NaN and overflow become. Rounding works on the integer bits of the float rather than with
 * FPU arithmetic: the result then does not depend on the caller's rounding mode, and there is no
 * double rounding through an intermediate format.
 *
 * Decoding goes through ldexpf(), which is exact here: every value of every format below is a
 * float (the smallest, F16's 2^-24 and UE8M0's 2^-127, included).
 */
#include "ptxq.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static uint32_t f2u(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float u2f(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

#define F32_ABS 0x7FFFFFFFu
#define F32_INF 0x7F800000u

/* Round a float magnitude a (the bits without the sign; finite or infinite, not NaN) to nearest,
 * ties to even, in a format with mbits (< 23) mantissa bits and exponent bias `bias`. Returns the
 * code magnitude, (biased exponent << mbits) | mantissa, with no upper limit: anything above the
 * format's largest finite code is overflow (an infinite a always lands there) and the caller
 * decides what that becomes. Codes of one sign are ordered like their values, so a mantissa that
 * rounds up to 2^mbits carries into the exponent by plain addition, and rounding up from the
 * largest subnormal gives the smallest normal the same way. */
static uint32_t round_mag(uint32_t a, int mbits, int bias)
{
    int emin = 1 - bias; /* exponent of the smallest normal; subnormals share its scale */
    uint32_t sig = a & 0x7FFFFFu;
    int e; /* a = sig * 2^(e - 23) */
    if ((a >> 23) == 0) {
        e = -126; /* float subnormal: no implicit bit */
    } else {
        sig |= 0x800000u;
        e = (int)(a >> 23) - 127;
    }
    /* The quantum of the target at a's exponent is 2^(te - mbits); below emin it stops shrinking. */
    int te = e > emin ? e : emin;
    /* Bits of sig below that quantum: at least 23 - mbits > 0, since te >= e. */
    int shift = (te - mbits) - (e - 23);
    uint32_t q;
    if (shift > 24) {
        q = 0; /* sig < 2^24 <= half a quantum */
    } else {
        uint32_t rem = sig & ((1u << shift) - 1), half = 1u << (shift - 1);
        q = sig >> shift;
        if (rem > half || (rem == half && (q & 1)))
            q++;
    }
    /* e >= emin: q in [2^mbits, 2^(mbits+1)] holds the implicit bit, and since the biased exponent
     * is e + bias = te - emin + 1, adding q to (te - emin) << mbits gives the code. e < emin: the
     * exponent field is 0 and q <= 2^mbits is the code. One formula covers both. */
    return ((uint32_t)(te - emin) << mbits) + q;
}

/* Value of a code magnitude: a subnormal (exponent field 0) is m * 2^(1 - bias - mbits); a normal
 * puts back the implicit bit. */
static float decode_mag(uint32_t mag, int mbits, int bias)
{
    uint32_t e = mag >> mbits, m = mag & ((1u << mbits) - 1);
    if (e == 0)
        return ldexpf((float)m, 1 - bias - mbits);
    return ldexpf((float)(m | 1u << mbits), (int)e - bias - mbits);
}

/* Set the sign bit (neg is 0 or 1) with bits, so that -0 and NaNs get it too. */
static float with_sign(float v, uint32_t neg)
{
    return u2f(f2u(v) | neg << 31);
}

/* ---- E4M3: bias 7, 3 mantissa bits, no infinity, S.1111.111 is NaN, max 448 (0x7E) ---------- */

uint8_t ptxq_e4m3_encode(float x, int saturate)
{
    uint32_t u = f2u(x), sign = (u >> 24) & 0x80, a = u & F32_ABS;
    if (a > F32_INF)
        return (uint8_t)(sign | 0x7F);
    uint32_t m = round_mag(a, 3, 7);
    /* m == 0x7F would be 480, which is the NaN code. So 464 (the tie between 448 and 480) stays
     * 448, and anything above it overflows: to 448 when saturating, else to NaN (OCP: E4M3 has no
     * infinity). Infinite input lands here too. */
    if (m > 0x7E)
        m = saturate ? 0x7E : 0x7F;
    return (uint8_t)(sign | m);
}

float ptxq_e4m3_decode(uint8_t code)
{
    uint32_t mag = code & 0x7Fu, neg = code >> 7;
    if (mag == 0x7F)
        return with_sign(u2f(0x7FC00000u), neg);
    return with_sign(decode_mag(mag, 3, 7), neg);
}

/* ---- E5M2: bias 15, 2 mantissa bits, IEEE-like (0x7C inf, 0x7D..0x7F NaN), max 57344 -------- */

uint8_t ptxq_e5m2_encode(float x, int saturate)
{
    uint32_t u = f2u(x), sign = (u >> 24) & 0x80, a = u & F32_ABS;
    /* Quiet NaN (mantissa MSB set) keeping the next payload bit, as cuda_fp8.hpp does: a quiet
     * E5M2 NaN survives decode/encode unchanged. */
    if (a > F32_INF)
        return (uint8_t)(sign | 0x7E | ((a >> 21) & 1));
    uint32_t m = round_mag(a, 2, 15);
    /* Overflow (>= 61440: the tie between 57344 and 65536 goes to the even code 0x7C) and
     * infinite input: infinity, or the largest finite value when saturating. */
    if (m > 0x7B)
        m = saturate ? 0x7B : 0x7C;
    return (uint8_t)(sign | m);
}

float ptxq_e5m2_decode(uint8_t code)
{
    uint32_t mag = code & 0x7Fu, neg = code >> 7;
    if (mag >= 0x7C) /* infinity, or NaN with its 2 payload bits at the top of the float's */
        return with_sign(u2f(F32_INF | (mag & 3) << 21), neg);
    return with_sign(decode_mag(mag, 2, 15), neg);
}

/* ---- E2M1: bias 1, 1 mantissa bit, no inf/NaN: 0 .5 1 1.5 2 3 4 6 -------------------------- */

uint8_t ptxq_e2m1_encode(float x)
{
    uint32_t u = f2u(x), sign = (u >> 28) & 8, a = u & F32_ABS;
    /* Always saturating; NaN becomes +-6 like cvt.rn.satfinite.e2m1x2.f32 on sm_100. */
    if (a > F32_INF)
        return (uint8_t)(sign | 7);
    uint32_t m = round_mag(a, 1, 1);
    if (m > 7)
        m = 7;
    return (uint8_t)(sign | m);
}

float ptxq_e2m1_decode(uint8_t code4)
{
    /* Only the low nibble is the code: callers may pass a whole byte of a packed pair. */
    return with_sign(decode_mag(code4 & 7u, 1, 1), (code4 >> 3) & 1u);
}

/* ---- UE4M3: E4M3 without the sign bit ----------------------------------------------------- */

uint8_t ptxq_ue4m3_encode(float x)
{
    uint32_t u = f2u(x);
    if ((u & F32_ABS) > F32_INF)
        return 0x7F;
    if (u >> 31) /* -0, negatives and -inf: a scale cannot be negative */
        return 0;
    return ptxq_e4m3_encode(x, 1);
}

float ptxq_ue4m3_decode(uint8_t code)
{
    /* Bit 7 is not part of the format; it is ignored rather than read as a sign. */
    uint32_t mag = code & 0x7Fu;
    if (mag == 0x7F)
        return u2f(0x7FC00000u);
    return decode_mag(mag, 3, 7);
}

/* ---- UE8M0: 2^(code - 127), 255 is NaN ---------------------------------------------------- */

uint8_t ptxq_ue8m0_encode(float x)
{
    uint32_t u = f2u(x);
    if ((u & F32_ABS) > F32_INF)
        return 0xFF;
    if (u >> 31 || u == 0)
        return 0;
    /* For a normal float, floor(log2 x) + 127 is its biased exponent field. A float subnormal
     * has field 0 and floor(log2 x) <= -127, which clamps to code 0 anyway; infinity (field 255)
     * clamps to 254. */
    uint32_t e = u >> 23;
    return (uint8_t)(e > 254 ? 254 : e);
}

float ptxq_ue8m0_decode(uint8_t code)
{
    if (code == 0xFF)
        return u2f(0x7FC00000u);
    if (code == 0)
        return u2f(0x00400000u); /* 2^-127 is a float subnormal: mantissa MSB only */
    return u2f((uint32_t)code << 23);
}

/* ---- BF16: the top half of a float -------------------------------------------------------- */

uint16_t ptxq_bf16_encode(float x)
{
    uint32_t u = f2u(x), sign = (u >> 16) & 0x8000, a = u & F32_ABS;
    if (a > F32_INF) /* keep sign and the top of the payload, force the quiet bit */
        return (uint16_t)((u >> 16) | 0x40);
    /* Same exponent range as float: the top values overflow by rounding up to exactly 0x7F80,
     * infinity (as IEEE RNE does), and infinite input comes out as 0x7F80 too, so no clamp. */
    return (uint16_t)(sign | round_mag(a, 7, 127));
}

float ptxq_bf16_decode(uint16_t bits)
{
    return u2f((uint32_t)bits << 16);
}

/* ---- F16: IEEE binary16 ------------------------------------------------------------------- */

uint16_t ptxq_f16_encode(float x)
{
    uint32_t u = f2u(x), sign = (u >> 16) & 0x8000, a = u & F32_ABS;
    if (a > F32_INF) /* quiet NaN keeping the top 9 payload bits */
        return (uint16_t)(sign | 0x7E00 | ((a >> 13) & 0x3FF));
    uint32_t m = round_mag(a, 10, 15);
    if (m > 0x7BFF) /* >= 65520 (ties to the even code, infinity) and infinite input */
        m = 0x7C00;
    return (uint16_t)(sign | m);
}

float ptxq_f16_decode(uint16_t bits)
{
    uint32_t mag = bits & 0x7FFFu, neg = (uint32_t)bits >> 15;
    if (mag >= 0x7C00) /* infinity or NaN, payload moved to the top of the float's */
        return with_sign(u2f(F32_INF | (mag & 0x3FF) << 13), neg);
    return with_sign(decode_mag(mag, 10, 15), neg);
}

/* ---- dtypes ------------------------------------------------------------------------------- */

int ptxq_dtype_bits(ptxq_dtype t)
{
    switch (t) {
    case PTXQ_F32: return 32;
    case PTXQ_F16: return 16;
    case PTXQ_BF16: return 16;
    case PTXQ_E4M3: return 8;
    case PTXQ_E5M2: return 8;
    case PTXQ_E2M1: return 4;
    case PTXQ_UE8M0: return 8;
    case PTXQ_UE4M3: return 8;
    case PTXQ_I8: return 8;
    case PTXQ_I32: return 32;
    }
    return 0; /* outside the enum: the switch has no default so -Wswitch flags a new dtype */
}

const char *ptxq_dtype_name(ptxq_dtype t)
{
    switch (t) {
    case PTXQ_F32: return "f32";
    case PTXQ_F16: return "f16";
    case PTXQ_BF16: return "bf16";
    case PTXQ_E4M3: return "e4m3";
    case PTXQ_E5M2: return "e5m2";
    case PTXQ_E2M1: return "e2m1";
    case PTXQ_UE8M0: return "ue8m0";
    case PTXQ_UE4M3: return "ue4m3";
    case PTXQ_I8: return "i8";
    case PTXQ_I32: return "i32";
    }
    return "unknown"; /* never NULL, so it can go straight into a message */
}
