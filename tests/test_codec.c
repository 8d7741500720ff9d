/* test_codec.c -- exhaustive tests of the host codecs in ptxq.h.
 *
 * The library rounds on integer bits; these tests use nothing of that. Every code is decoded and
 * compared with the textbook formula (-1)^s * 2^(e - bias) * (1 + m / 2^mbits) evaluated in double,
 * and every encoder is compared with a reference that searches a table of those values for the
 * nearest one (ties to the even code). The table has one extra entry past the largest finite
 * value, max + ulp, which is where IEEE's "round as if the exponent were unbounded" puts the next
 * grid point: landing on it is overflow. Rule tests (saturation, NaN, sign, subnormals) then pin
 * the special cases with literal values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ptxq.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static uint32_t bits_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* A code mismatch names the input, so a failure says which float broke. */
#define CHECK_CODE(got, want, x)                                                                  \
    do {                                                                                          \
        unsigned g_ = (unsigned)(got), w_ = (unsigned)(want);                                     \
        float x_ = (x);                                                                           \
        if (g_ != w_)                                                                             \
            fail_msg("%s: input %a (0x%08x): got 0x%x, want 0x%x", #got, (double)x_, bits_of(x_), \
                     g_, w_);                                                                     \
    } while (0)

/* A decoded value must equal want exactly, sign of zero included. */
#define CHECK_VALUE(got, want, code)                                                              \
    do {                                                                                          \
        float g_ = (got);                                                                         \
        double w_ = (want);                                                                       \
        if ((double)g_ != w_ || !!signbit(g_) != !!signbit(w_))                                   \
            fail_msg("%s: code 0x%x: got %a, want %a", #got, (unsigned)(code), (double)g_, w_);   \
    } while (0)

#define CHECK_NAN(got, neg, code)                                                                 \
    do {                                                                                          \
        float g_ = (got);                                                                         \
        if (!isnan(g_) || !!signbit(g_) != !!(neg))                                               \
            fail_msg("%s: code 0x%x: got %a, want %sNaN", #got, (unsigned)(code), (double)g_,     \
                     (neg) ? "-" : "+");                                                          \
    } while (0)

/* Value of code magnitude mag in a sign|exponent|mantissa format, from the definition. */
static double ref_value(unsigned mag, int mbits, int bias)
{
    unsigned e = mag >> mbits, m = mag & ((1u << mbits) - 1);
    double frac = (double)m / pow(2.0, mbits);
    if (e == 0)
        return frac * pow(2.0, 1 - bias);
    return (1.0 + frac) * pow(2.0, (double)e - bias);
}

/* tab[0..n-1]: values of the finite magnitudes 0..n-1; tab[n]: the next grid point (max + ulp). */
static double *make_table(unsigned n, int mbits, int bias)
{
    double *tab = test_malloc((n + 1) * sizeof *tab);
    for (unsigned i = 0; i <= n; i++)
        tab[i] = ref_value(i, mbits, bias);
    /* Past the last finite code the grid continues with the same step. */
    tab[n] = tab[n - 1] + (tab[n - 1] - tab[n - 2]);
    return tab;
}

/* Index of the table entry nearest to a >= 0, ties to the even index; n means overflow. */
static unsigned ref_nearest(const double *tab, unsigned n, double a)
{
    if (a >= tab[n])
        return n;
    unsigned lo = 0, hi = n; /* tab[lo] <= a < tab[hi] */
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (tab[mid] <= a)
            lo = mid;
        else
            hi = mid;
    }
    /* Exact in double: a is a float and tab[lo], tab[hi] are its neighbours on a coarser grid. */
    double dlo = a - tab[lo], dhi = tab[hi] - a;
    if (dlo < dhi)
        return lo;
    if (dhi < dlo)
        return hi;
    return (lo & 1) ? hi : lo;
}

/* Reference encoding of a non-NaN x: nearest magnitude, overflow replaced by ovf, sign added. */
static unsigned ref_encode(const double *tab, unsigned n, float x, unsigned signbit, unsigned ovf)
{
    unsigned m = ref_nearest(tab, n, fabs((double)x));
    if (m == n)
        m = ovf;
    return (signbit(x) ? signbit : 0) | m;
}

/* Deterministic generator (splitmix64), state owned by the caller. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A random float with random sign and mantissa and an exponent uniform in [elo, ehi]; exponents
 * below -126 give the float subnormals of that binade's range. */
static float rng_float(uint64_t *s, int elo, int ehi)
{
    uint64_t r = rng_next(s);
    int e = elo + (int)(r % (uint64_t)(ehi - elo + 1));
    uint32_t mant = (uint32_t)(r >> 32) & 0x7FFFFFu, sign = (uint32_t)(r >> 63) << 31;
    if (e >= -126)
        return float_of(sign | (uint32_t)(e + 127) << 23 | mant);
    /* subnormal binade [2^e, 2^(e+1)): leading bit at position e + 149 */
    uint32_t lead = 1u << (e + 149);
    return float_of(sign | lead | (mant & (lead - 1)));
}

/* Inputs for the sweep tests: every 4099th float bit pattern (all exponents, NaN, inf), then
 * random floats around the format's range. Returns 0 when done. */
#define SWEEP_STRIDE 4099u
#define SWEEP_RANDOM 300000u
typedef struct sweep {
    uint64_t i, rng;
    int elo, ehi;
} sweep;

static int sweep_next(sweep *w, float *x)
{
    uint64_t nstride = (0xFFFFFFFFull / SWEEP_STRIDE) + 1;
    if (w->i < nstride) {
        *x = float_of((uint32_t)(w->i * SWEEP_STRIDE));
    } else if (w->i < nstride + SWEEP_RANDOM) {
        *x = rng_float(&w->rng, w->elo, w->ehi);
    } else {
        return 0;
    }
    w->i++;
    return 1;
}

/* Encoders behind one signature, for the shared midpoint check. */
typedef unsigned (*encoder)(float);
static unsigned enc_e4m3(float x) { return ptxq_e4m3_encode(x, 0); }
static unsigned enc_e4m3_sat(float x) { return ptxq_e4m3_encode(x, 1); }
static unsigned enc_e5m2(float x) { return ptxq_e5m2_encode(x, 0); }
static unsigned enc_e5m2_sat(float x) { return ptxq_e5m2_encode(x, 1); }
static unsigned enc_e2m1(float x) { return ptxq_e2m1_encode(x); }
static unsigned enc_ue4m3(float x) { return ptxq_ue4m3_encode(x); }
static unsigned enc_bf16(float x) { return ptxq_bf16_encode(x); }
static unsigned enc_f16(float x) { return ptxq_f16_encode(x); }

/* Between every two consecutive finite magnitudes i, i+1 (values from the formula, not from the
 * decoder): the midpoint goes to the even code, the next float above it to i+1, the one below to
 * i; mirrored for negative inputs when the format has a sign bit. */
static void check_midpoints(encoder enc, const double *tab, unsigned maxmag, unsigned signbit)
{
    for (unsigned i = 0; i < maxmag; i++) {
        double mid = (tab[i] + tab[i + 1]) / 2;
        float f = (float)mid;
        assert_true((double)f == mid); /* exactly representable, so the test means what it says */
        float up = nextafterf(f, INFINITY), down = nextafterf(f, 0.0f);
        unsigned even = (i & 1) ? i + 1 : i;
        CHECK_CODE(enc(f), even, f);
        CHECK_CODE(enc(up), i + 1, up);
        CHECK_CODE(enc(down), i, down);
        if (signbit) {
            CHECK_CODE(enc(-f), signbit | even, -f);
            CHECK_CODE(enc(-up), signbit | (i + 1), -up);
            CHECK_CODE(enc(-down), signbit | i, -down);
        }
    }
}

static const float NaNp = NAN;

static float neg_nan(void)
{
    return float_of(bits_of(NaNp) | 0x80000000u);
}

/* ---- dtypes ------------------------------------------------------------------------------- */

static void test_dtype_bits_and_names(void **state)
{
    (void)state;
    static const struct {
        ptxq_dtype t;
        int bits;
        const char *name;
    } all[] = {
        {PTXQ_F32, 32, "f32"},    {PTXQ_F16, 16, "f16"},     {PTXQ_BF16, 16, "bf16"},
        {PTXQ_E4M3, 8, "e4m3"},   {PTXQ_E5M2, 8, "e5m2"},    {PTXQ_E2M1, 4, "e2m1"},
        {PTXQ_UE8M0, 8, "ue8m0"}, {PTXQ_UE4M3, 8, "ue4m3"},  {PTXQ_I8, 8, "i8"},
        {PTXQ_I32, 32, "i32"},
    };
    size_t n = sizeof all / sizeof all[0];
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(ptxq_dtype_bits(all[i].t), all[i].bits);
        assert_non_null(ptxq_dtype_name(all[i].t));
        assert_string_equal(ptxq_dtype_name(all[i].t), all[i].name);
    }
    /* Values outside the enum: 0 bits and a name that is none of the real ones. */
    static const int bad[] = {0, -1, 11, 99, 1 << 20};
    for (size_t j = 0; j < sizeof bad / sizeof bad[0]; j++) {
        ptxq_dtype t = (ptxq_dtype)bad[j];
        assert_int_equal(ptxq_dtype_bits(t), 0);
        const char *name = ptxq_dtype_name(t);
        assert_non_null(name);
        for (size_t i = 0; i < n; i++)
            assert_string_not_equal(name, all[i].name);
    }
}

/* ---- E4M3 --------------------------------------------------------------------------------- */

static void test_e4m3_decode_all(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 256; c++) {
        unsigned mag = c & 0x7F, neg = c >> 7;
        if (mag == 0x7F) {
            CHECK_NAN(ptxq_e4m3_decode((uint8_t)c), neg, c);
            continue;
        }
        double v = ref_value(mag, 3, 7);
        CHECK_VALUE(ptxq_e4m3_decode((uint8_t)c), neg ? -v : v, c);
    }
    /* Anchors from the OCP spec, independent of ref_value. */
    assert_true(ptxq_e4m3_decode(0x7E) == 448.0f);
    assert_true(ptxq_e4m3_decode(0xFE) == -448.0f);
    assert_true(ptxq_e4m3_decode(0x38) == 1.0f);
    assert_true(ptxq_e4m3_decode(0x08) == 0x1p-6f);
    assert_true(ptxq_e4m3_decode(0x07) == 0x1.cp-7f);
    assert_true(ptxq_e4m3_decode(0x01) == 0x1p-9f);
    assert_true(ptxq_e4m3_decode(0x78) == 256.0f); /* exponent 15 is finite in E4M3 */
}

static void test_e4m3_roundtrip(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 256; c++) {
        float v = ptxq_e4m3_decode((uint8_t)c);
        /* one NaN per sign, so NaN codes come back exactly too */
        CHECK_CODE(ptxq_e4m3_encode(v, 0), c, v);
        CHECK_CODE(ptxq_e4m3_encode(v, 1), c, v);
    }
}

static void test_e4m3_midpoints(void **state)
{
    (void)state;
    double *tab = make_table(0x7F, 3, 7);
    assert_true(tab[0x7F] == 480.0);
    check_midpoints(enc_e4m3, tab, 0x7E, 0x80);
    check_midpoints(enc_e4m3_sat, tab, 0x7E, 0x80);
    test_free(tab);
}

static void test_e4m3_overflow_rules(void **state)
{
    (void)state;
    /* (448, 464) rounds to 448. 464, the tie between 448 (0x7E) and the next grid point 480
     * (0x7F, the NaN code) goes to the even code 0x7E, as RNE and cuda_fp8.hpp do; anything above
     * 464 overflows. */
    static const float to_max[] = {448.0f, 448.5f, 460.0f, 463.99997f, 464.0f};
    for (size_t i = 0; i < sizeof to_max / sizeof to_max[0]; i++) {
        float x = to_max[i];
        for (int sat = 0; sat < 2; sat++) {
            CHECK_CODE(ptxq_e4m3_encode(x, sat), 0x7E, x);
            CHECK_CODE(ptxq_e4m3_encode(-x, sat), 0xFE, -x);
        }
    }
    const float over[] = {nextafterf(464.0f, INFINITY), 470.0f, 480.0f, 512.0f, 1e6f, FLT_MAX,
                          INFINITY};
    for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
        float x = over[i];
        CHECK_CODE(ptxq_e4m3_encode(x, 0), 0x7F, x); /* OCP: no infinity, overflow is NaN */
        CHECK_CODE(ptxq_e4m3_encode(-x, 0), 0xFF, -x);
        CHECK_CODE(ptxq_e4m3_encode(x, 1), 0x7E, x); /* saturating: +-448, infinity included */
        CHECK_CODE(ptxq_e4m3_encode(-x, 1), 0xFE, -x);
    }
    for (int sat = 0; sat < 2; sat++) {
        CHECK_CODE(ptxq_e4m3_encode(NaNp, sat), 0x7F, NaNp);
        CHECK_CODE(ptxq_e4m3_encode(neg_nan(), sat), 0xFF, neg_nan());
        CHECK_CODE(ptxq_e4m3_encode(float_of(0x7F800001u), sat), 0x7F, float_of(0x7F800001u));
        CHECK_CODE(ptxq_e4m3_encode(0.0f, sat), 0x00, 0.0f);
        CHECK_CODE(ptxq_e4m3_encode(-0.0f, sat), 0x80, -0.0f);
    }
    /* Any non-zero argument means saturate. */
    CHECK_CODE(ptxq_e4m3_encode(1e6f, 7), 0x7E, 1e6f);
}

static void test_e4m3_subnormals(void **state)
{
    (void)state;
    for (unsigned m = 0; m < 8; m++) {
        CHECK_VALUE(ptxq_e4m3_decode((uint8_t)m), m * 0x1p-9, m);
        CHECK_VALUE(ptxq_e4m3_decode((uint8_t)(0x80 | m)), -(m * 0x1p-9), 0x80 | m);
    }
    CHECK_CODE(ptxq_e4m3_encode(0x1p-9f, 0), 0x01, 0x1p-9f);
    CHECK_CODE(ptxq_e4m3_encode(0x1p-10f, 0), 0x00, 0x1p-10f); /* tie 0 | 1 -> 0 */
    CHECK_CODE(ptxq_e4m3_encode(0x1.000002p-10f, 0), 0x01, 0x1.000002p-10f);
    CHECK_CODE(ptxq_e4m3_encode(-0x1p-10f, 0), 0x80, -0x1p-10f); /* rounds to -0 */
    CHECK_CODE(ptxq_e4m3_encode(0x3p-10f, 0), 0x02, 0x3p-10f);   /* tie 1 | 2 -> 2 */
    CHECK_CODE(ptxq_e4m3_encode(0x5p-10f, 0), 0x02, 0x5p-10f);   /* tie 2 | 3 -> 2 */
    CHECK_CODE(ptxq_e4m3_encode(0xfp-10f, 0), 0x08, 0xfp-10f);   /* tie 7 | 8 -> smallest normal */
    CHECK_CODE(ptxq_e4m3_encode(0x1p-6f, 0), 0x08, 0x1p-6f);
    CHECK_CODE(ptxq_e4m3_encode(FLT_TRUE_MIN, 0), 0x00, FLT_TRUE_MIN);
    CHECK_CODE(ptxq_e4m3_encode(-FLT_TRUE_MIN, 1), 0x80, -FLT_TRUE_MIN);
    CHECK_CODE(ptxq_e4m3_encode(FLT_MIN, 0), 0x00, FLT_MIN);
}

static void test_e4m3_sweep(void **state)
{
    (void)state;
    double *tab = make_table(0x7F, 3, 7);
    sweep w = {0, 1, -14, 10};
    float x;
    while (sweep_next(&w, &x)) {
        if (isnan(x)) {
            unsigned s = signbit(x) ? 0x80 : 0;
            CHECK_CODE(ptxq_e4m3_encode(x, 0), s | 0x7F, x);
            CHECK_CODE(ptxq_e4m3_encode(x, 1), s | 0x7F, x);
            continue;
        }
        CHECK_CODE(ptxq_e4m3_encode(x, 0), ref_encode(tab, 0x7F, x, 0x80, 0x7F), x);
        CHECK_CODE(ptxq_e4m3_encode(x, 1), ref_encode(tab, 0x7F, x, 0x80, 0x7E), x);
    }
    test_free(tab);
}

/* ---- E5M2 --------------------------------------------------------------------------------- */

static void test_e5m2_decode_all(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 256; c++) {
        unsigned mag = c & 0x7F, neg = c >> 7;
        if (mag > 0x7C) {
            CHECK_NAN(ptxq_e5m2_decode((uint8_t)c), neg, c);
            continue;
        }
        double v = mag == 0x7C ? INFINITY : ref_value(mag, 2, 15);
        CHECK_VALUE(ptxq_e5m2_decode((uint8_t)c), neg ? -v : v, c);
    }
    assert_true(ptxq_e5m2_decode(0x7B) == 57344.0f);
    assert_true(ptxq_e5m2_decode(0xFB) == -57344.0f);
    assert_true(ptxq_e5m2_decode(0x3C) == 1.0f);
    assert_true(ptxq_e5m2_decode(0x04) == 0x1p-14f);
    assert_true(ptxq_e5m2_decode(0x01) == 0x1p-16f);
    assert_true(isinf(ptxq_e5m2_decode(0xFC)) && ptxq_e5m2_decode(0xFC) < 0);
}

static void test_e5m2_roundtrip(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 256; c++) {
        unsigned mag = c & 0x7F, s = c & 0x80;
        float v = ptxq_e5m2_decode((uint8_t)c);
        if (mag < 0x7C) {
            CHECK_CODE(ptxq_e5m2_encode(v, 0), c, v);
            CHECK_CODE(ptxq_e5m2_encode(v, 1), c, v);
        } else if (mag == 0x7C) {
            CHECK_CODE(ptxq_e5m2_encode(v, 0), c, v);      /* infinity stays */
            CHECK_CODE(ptxq_e5m2_encode(v, 1), s | 0x7B, v); /* or saturates */
        } else {
            for (int sat = 0; sat < 2; sat++) {
                unsigned got = ptxq_e5m2_encode(v, sat);
                if ((got & 0x80) != s || (got & 0x7F) <= 0x7C)
                    fail_msg("e5m2 NaN code 0x%x encodes to 0x%x, not a NaN of its sign", c, got);
                /* a quiet NaN (mantissa MSB set) comes back unchanged */
                if (mag & 2)
                    CHECK_CODE(got, c, v);
            }
        }
    }
}

static void test_e5m2_midpoints(void **state)
{
    (void)state;
    double *tab = make_table(0x7C, 2, 15);
    assert_true(tab[0x7C] == 65536.0);
    check_midpoints(enc_e5m2, tab, 0x7B, 0x80);
    check_midpoints(enc_e5m2_sat, tab, 0x7B, 0x80);
    test_free(tab);
}

static void test_e5m2_overflow_rules(void **state)
{
    (void)state;
    /* Below 61440 (midpoint of 57344 and 65536) stays 57344. */
    const float to_max[] = {57344.0f, 60000.0f, nextafterf(61440.0f, 0.0f)};
    for (size_t i = 0; i < sizeof to_max / sizeof to_max[0]; i++) {
        float x = to_max[i];
        for (int sat = 0; sat < 2; sat++) {
            CHECK_CODE(ptxq_e5m2_encode(x, sat), 0x7B, x);
            CHECK_CODE(ptxq_e5m2_encode(-x, sat), 0xFB, -x);
        }
    }
    /* 61440 ties to the even code 0x7C: infinity; saturating gives 57344. */
    const float over[] = {61440.0f, 65536.0f, 1e9f, FLT_MAX, INFINITY};
    for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
        float x = over[i];
        CHECK_CODE(ptxq_e5m2_encode(x, 0), 0x7C, x);
        CHECK_CODE(ptxq_e5m2_encode(-x, 0), 0xFC, -x);
        CHECK_CODE(ptxq_e5m2_encode(x, 1), 0x7B, x);
        CHECK_CODE(ptxq_e5m2_encode(-x, 1), 0xFB, -x);
    }
    for (int sat = 0; sat < 2; sat++) {
        unsigned p = ptxq_e5m2_encode(NaNp, sat), n = ptxq_e5m2_encode(neg_nan(), sat);
        assert_true(p > 0x7C && p <= 0x7F);
        assert_true(n > 0xFC && n <= 0xFF);
        CHECK_CODE(ptxq_e5m2_encode(0.0f, sat), 0x00, 0.0f);
        CHECK_CODE(ptxq_e5m2_encode(-0.0f, sat), 0x80, -0.0f);
    }
}

static void test_e5m2_subnormals(void **state)
{
    (void)state;
    for (unsigned m = 0; m < 4; m++)
        CHECK_VALUE(ptxq_e5m2_decode((uint8_t)m), m * 0x1p-16, m);
    CHECK_CODE(ptxq_e5m2_encode(0x1p-16f, 0), 0x01, 0x1p-16f);
    CHECK_CODE(ptxq_e5m2_encode(0x1p-17f, 0), 0x00, 0x1p-17f);  /* tie 0 | 1 -> 0 */
    CHECK_CODE(ptxq_e5m2_encode(0x3p-17f, 0), 0x02, 0x3p-17f);  /* tie 1 | 2 -> 2 */
    CHECK_CODE(ptxq_e5m2_encode(0x7p-17f, 0), 0x04, 0x7p-17f);  /* tie 3 | 4 -> smallest normal */
    CHECK_CODE(ptxq_e5m2_encode(-0x3p-16f, 1), 0x83, -0x3p-16f); /* largest subnormal */
    CHECK_CODE(ptxq_e5m2_encode(FLT_TRUE_MIN, 0), 0x00, FLT_TRUE_MIN);
    CHECK_CODE(ptxq_e5m2_encode(-FLT_TRUE_MIN, 0), 0x80, -FLT_TRUE_MIN);
}

static void test_e5m2_sweep(void **state)
{
    (void)state;
    double *tab = make_table(0x7C, 2, 15);
    sweep w = {0, 2, -22, 18};
    float x;
    while (sweep_next(&w, &x)) {
        if (isnan(x)) {
            unsigned s = signbit(x) ? 0x80 : 0;
            for (int sat = 0; sat < 2; sat++) {
                unsigned got = ptxq_e5m2_encode(x, sat);
                if ((got & 0x80) != s || (got & 0x7F) <= 0x7C)
                    fail_msg("e5m2_encode(NaN 0x%08x) = 0x%x, not a NaN of its sign", bits_of(x),
                             got);
            }
            continue;
        }
        CHECK_CODE(ptxq_e5m2_encode(x, 0), ref_encode(tab, 0x7C, x, 0x80, 0x7C), x);
        CHECK_CODE(ptxq_e5m2_encode(x, 1), ref_encode(tab, 0x7C, x, 0x80, 0x7B), x);
    }
    test_free(tab);
}

/* ---- E2M1 --------------------------------------------------------------------------------- */

static void test_e2m1_decode_all(void **state)
{
    (void)state;
    static const double values[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    for (unsigned c = 0; c < 16; c++) {
        double v = ref_value(c & 7, 1, 1);
        assert_true(v == values[c & 7]); /* the formula agrees with the spec's table */
        CHECK_VALUE(ptxq_e2m1_decode((uint8_t)c), (c & 8) ? -v : v, c);
    }
    /* Only the low nibble counts. */
    for (unsigned c = 16; c < 256; c++)
        CHECK_VALUE(ptxq_e2m1_decode((uint8_t)c), (double)ptxq_e2m1_decode((uint8_t)(c & 15)), c);
}

static void test_e2m1_roundtrip(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 16; c++) {
        float v = ptxq_e2m1_decode((uint8_t)c);
        CHECK_CODE(ptxq_e2m1_encode(v), c, v); /* 0x8 (-0) included */
    }
}

static void test_e2m1_midpoints(void **state)
{
    (void)state;
    double *tab = make_table(8, 1, 1);
    assert_true(tab[8] == 8.0);
    check_midpoints(enc_e2m1, tab, 7, 8);
    test_free(tab);
    /* The same ties, spelled out. */
    static const struct {
        float x;
        unsigned code;
    } ties[] = {{0.25f, 0x0}, {0.75f, 0x2}, {1.25f, 0x2}, {1.75f, 0x4},
                {2.5f, 0x4},  {3.5f, 0x6},  {5.0f, 0x6}};
    for (size_t i = 0; i < sizeof ties / sizeof ties[0]; i++) {
        CHECK_CODE(ptxq_e2m1_encode(ties[i].x), ties[i].code, ties[i].x);
        CHECK_CODE(ptxq_e2m1_encode(-ties[i].x), 8 | ties[i].code, -ties[i].x);
    }
}

static void test_e2m1_saturation(void **state)
{
    (void)state;
    const float six[] = {nextafterf(5.0f, INFINITY), 5.5f, 6.0f, 7.0f, 8.0f, 1e30f, FLT_MAX,
                         INFINITY};
    for (size_t i = 0; i < sizeof six / sizeof six[0]; i++) {
        CHECK_CODE(ptxq_e2m1_encode(six[i]), 0x7, six[i]);
        CHECK_CODE(ptxq_e2m1_encode(-six[i]), 0xF, -six[i]);
    }
    CHECK_CODE(ptxq_e2m1_encode(nextafterf(5.0f, 0.0f)), 0x6, nextafterf(5.0f, 0.0f));
    /* NaN -> +-6 with its sign, as the sm_100 cvt does. */
    CHECK_CODE(ptxq_e2m1_encode(NaNp), 0x7, NaNp);
    CHECK_CODE(ptxq_e2m1_encode(neg_nan()), 0xF, neg_nan());
    CHECK_CODE(ptxq_e2m1_encode(0.0f), 0x0, 0.0f);
    CHECK_CODE(ptxq_e2m1_encode(-0.0f), 0x8, -0.0f);
    CHECK_CODE(ptxq_e2m1_encode(-0.1f), 0x8, -0.1f); /* rounds to -0 */
    CHECK_CODE(ptxq_e2m1_encode(FLT_TRUE_MIN), 0x0, FLT_TRUE_MIN);
}

static void test_e2m1_sweep(void **state)
{
    (void)state;
    double *tab = make_table(8, 1, 1);
    sweep w = {0, 3, -4, 5};
    float x;
    while (sweep_next(&w, &x)) {
        unsigned want = isnan(x) ? (signbit(x) ? 0xF : 0x7) : ref_encode(tab, 8, x, 8, 7);
        CHECK_CODE(ptxq_e2m1_encode(x), want, x); /* also: never above 0xF */
    }
    test_free(tab);
}

/* ---- UE4M3 -------------------------------------------------------------------------------- */

static void test_ue4m3_decode_all(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 0x7F; c++)
        CHECK_VALUE(ptxq_ue4m3_decode((uint8_t)c), ref_value(c, 3, 7), c);
    CHECK_NAN(ptxq_ue4m3_decode(0x7F), 0, 0x7F);
    assert_true(ptxq_ue4m3_decode(0x7E) == 448.0f);
    assert_true(ptxq_ue4m3_decode(0x01) == 0x1p-9f);
    /* Bit 7 is not part of the format and is ignored (never read as a sign). */
    for (unsigned c = 0x80; c < 0x100; c++) {
        float v = ptxq_ue4m3_decode((uint8_t)c);
        if (c == 0xFF)
            CHECK_NAN(v, 0, c);
        else
            CHECK_VALUE(v, ref_value(c & 0x7F, 3, 7), c);
    }
}

static void test_ue4m3_roundtrip(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 0x80; c++) {
        float v = ptxq_ue4m3_decode((uint8_t)c);
        CHECK_CODE(ptxq_ue4m3_encode(v), c, v); /* 0x7F: NaN -> 0x7F */
    }
}

static void test_ue4m3_midpoints(void **state)
{
    (void)state;
    double *tab = make_table(0x7F, 3, 7);
    check_midpoints(enc_ue4m3, tab, 0x7E, 0); /* positive only: negatives are checked below */
    test_free(tab);
}

static void test_ue4m3_rules(void **state)
{
    (void)state;
    const float zero[] = {-0.0f, -FLT_TRUE_MIN, -0x1p-9f, -1.0f, -448.0f, -1e30f, -INFINITY};
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
        CHECK_CODE(ptxq_ue4m3_encode(zero[i]), 0x00, zero[i]);
    const float max[] = {448.0f, 464.0f, nextafterf(464.0f, INFINITY), 480.0f, 1e30f, INFINITY};
    for (size_t i = 0; i < sizeof max / sizeof max[0]; i++)
        CHECK_CODE(ptxq_ue4m3_encode(max[i]), 0x7E, max[i]);
    CHECK_CODE(ptxq_ue4m3_encode(NaNp), 0x7F, NaNp);
    CHECK_CODE(ptxq_ue4m3_encode(neg_nan()), 0x7F, neg_nan());
    CHECK_CODE(ptxq_ue4m3_encode(0.0f), 0x00, 0.0f);
    CHECK_CODE(ptxq_ue4m3_encode(0x1p-10f), 0x00, 0x1p-10f);
    CHECK_CODE(ptxq_ue4m3_encode(0x3p-10f), 0x02, 0x3p-10f);
}

static void test_ue4m3_sweep(void **state)
{
    (void)state;
    double *tab = make_table(0x7F, 3, 7);
    sweep w = {0, 4, -14, 10};
    float x;
    while (sweep_next(&w, &x)) {
        unsigned want;
        if (isnan(x))
            want = 0x7F;
        else if (signbit(x))
            want = 0;
        else
            want = ref_encode(tab, 0x7F, x, 0, 0x7E);
        CHECK_CODE(ptxq_ue4m3_encode(x), want, x);
    }
    test_free(tab);
}

/* ---- UE8M0 -------------------------------------------------------------------------------- */

static void test_ue8m0_decode_all(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 255; c++)
        CHECK_VALUE(ptxq_ue8m0_decode((uint8_t)c), pow(2.0, (double)c - 127), c);
    CHECK_NAN(ptxq_ue8m0_decode(255), 0, 255);
    assert_int_equal(bits_of(ptxq_ue8m0_decode(0)), 0x00400000u); /* 2^-127, a float subnormal */
    assert_true(ptxq_ue8m0_decode(127) == 1.0f);
    assert_true(ptxq_ue8m0_decode(254) == 0x1p127f);
}

/* floor(log2 x) + 127 clamped to [0, 254]; x <= 0 -> 0; NaN -> 255. */
static unsigned ref_ue8m0(float x)
{
    if (isnan(x))
        return 255;
    if (!(x > 0))
        return 0;
    if (isinf(x))
        return 254;
    int e;
    (void)frexp((double)x, &e); /* x = f * 2^e, f in [0.5, 1): floor(log2 x) = e - 1 */
    int c = e - 1 + 127;
    return c < 0 ? 0 : c > 254 ? 254 : (unsigned)c;
}

static void test_ue8m0_encode(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 255; c++) {
        float p = (float)pow(2.0, (double)c - 127);
        CHECK_CODE(ptxq_ue8m0_encode(p), c, p);
        /* rounding is toward zero in the exponent: anything in [2^k, 2^(k+1)) gives k */
        float above = nextafterf(p, INFINITY), below = nextafterf(p, 0.0f);
        CHECK_CODE(ptxq_ue8m0_encode(above), c, above);
        CHECK_CODE(ptxq_ue8m0_encode(p * 1.5f), c, p * 1.5f);
        CHECK_CODE(ptxq_ue8m0_encode(below), c == 0 ? 0 : c - 1, below);
    }
    const float zero[] = {0.0f, -0.0f, -FLT_TRUE_MIN, -1.0f, -FLT_MAX, -INFINITY, FLT_TRUE_MIN,
                          0x1p-140f};
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
        CHECK_CODE(ptxq_ue8m0_encode(zero[i]), 0, zero[i]);
    CHECK_CODE(ptxq_ue8m0_encode(0x1p-126f), 1, 0x1p-126f);
    CHECK_CODE(ptxq_ue8m0_encode(1.0f), 127, 1.0f);
    CHECK_CODE(ptxq_ue8m0_encode(1.9999999f), 127, 1.9999999f);
    CHECK_CODE(ptxq_ue8m0_encode(2.0f), 128, 2.0f);
    CHECK_CODE(ptxq_ue8m0_encode(FLT_MAX), 254, FLT_MAX);
    CHECK_CODE(ptxq_ue8m0_encode(INFINITY), 254, INFINITY);
    CHECK_CODE(ptxq_ue8m0_encode(NaNp), 255, NaNp);
    CHECK_CODE(ptxq_ue8m0_encode(neg_nan()), 255, neg_nan());
}

static void test_ue8m0_sweep(void **state)
{
    (void)state;
    sweep w = {0, 5, -149, 127};
    float x;
    while (sweep_next(&w, &x))
        CHECK_CODE(ptxq_ue8m0_encode(x), ref_ue8m0(x), x);
}

/* ---- BF16 and F16 ------------------------------------------------------------------------- */

/* 16-bit formats with exponent field width ebits: exponent all ones is inf (m == 0) or NaN. */
static void check_decode16(float (*dec)(uint16_t), int ebits, int mbits, int bias)
{
    unsigned emax = (1u << ebits) - 1;
    for (unsigned c = 0; c < 0x10000; c++) {
        unsigned mag = c & 0x7FFF, neg = c >> 15, e = mag >> mbits;
        float got = dec((uint16_t)c);
        if (e == emax && (mag & ((1u << mbits) - 1))) {
            CHECK_NAN(got, neg, c);
            continue;
        }
        double v = e == emax ? INFINITY : ref_value(mag, mbits, bias);
        CHECK_VALUE(got, neg ? -v : v, c);
    }
}

/* Every non-NaN code comes back; NaN stays NaN of its sign, quiet (quiet_bit set), and a quiet NaN
 * comes back unchanged. */
static void check_roundtrip16(uint16_t (*enc)(float), float (*dec)(uint16_t), unsigned inf,
                              unsigned quiet_bit)
{
    for (unsigned c = 0; c < 0x10000; c++) {
        float v = dec((uint16_t)c);
        unsigned got = enc(v);
        if ((c & 0x7FFF) <= inf) {
            CHECK_CODE(got, c, v);
            continue;
        }
        if ((got & 0x8000) != (c & 0x8000) || (got & 0x7FFF) <= inf || !(got & quiet_bit))
            fail_msg("NaN code 0x%04x encodes to 0x%04x, not a quiet NaN of its sign", c, got);
        if (c & quiet_bit)
            CHECK_CODE(got, c, v);
    }
}

static void check_nan16(unsigned got, float x, unsigned inf, unsigned quiet_bit)
{
    unsigned s = signbit(x) ? 0x8000 : 0;
    if ((got & 0x8000) != s || (got & 0x7FFF) <= inf || !(got & quiet_bit))
        fail_msg("encode(NaN 0x%08x) = 0x%04x, not a quiet NaN of its sign", bits_of(x), got);
}

/* Sweep plus >= 100000 random floats (half fully random bit patterns, half near the range). */
static void check_sweep16(uint16_t (*enc)(float), unsigned inf, unsigned quiet_bit, int mbits,
                          int bias, int elo, int ehi, uint64_t seed)
{
    double *tab = make_table(inf, mbits, bias);
    sweep w = {0, seed, elo, ehi};
    float x;
    while (sweep_next(&w, &x)) {
        if (isnan(x))
            check_nan16(enc(x), x, inf, quiet_bit);
        else
            CHECK_CODE(enc(x), ref_encode(tab, inf, x, 0x8000, inf), x);
    }
    uint64_t rng = seed * 7919;
    for (unsigned i = 0; i < 200000; i++) {
        x = float_of((uint32_t)rng_next(&rng));
        if (isnan(x))
            check_nan16(enc(x), x, inf, quiet_bit);
        else
            CHECK_CODE(enc(x), ref_encode(tab, inf, x, 0x8000, inf), x);
    }
    test_free(tab);
}

static void test_bf16_decode_all(void **state)
{
    (void)state;
    check_decode16(ptxq_bf16_decode, 8, 7, 127);
    assert_true(ptxq_bf16_decode(0x3F80) == 1.0f);
    assert_true(ptxq_bf16_decode(0x7F7F) == 0x1.fep127f);
    assert_true(ptxq_bf16_decode(0x0001) == 0x1p-133f);
}

static void test_bf16_roundtrip(void **state)
{
    (void)state;
    check_roundtrip16(ptxq_bf16_encode, ptxq_bf16_decode, 0x7F80, 0x40);
}

static void test_bf16_midpoints(void **state)
{
    (void)state;
    double *tab = make_table(0x7F80, 7, 127);
    assert_true(tab[0x7F80] == 0x1p128);
    check_midpoints(enc_bf16, tab, 0x7F7F, 0x8000);
    test_free(tab);
}

static void test_bf16_rules(void **state)
{
    (void)state;
    /* Between the largest finite bf16 and 2^128 the tie goes to the even code: infinity. */
    const float top = 0x1.ffp127f; /* midpoint of 0x1.fep127 and 2^128 */
    CHECK_CODE(ptxq_bf16_encode(top), 0x7F80, top);
    CHECK_CODE(ptxq_bf16_encode(nextafterf(top, 0.0f)), 0x7F7F, nextafterf(top, 0.0f));
    CHECK_CODE(ptxq_bf16_encode(FLT_MAX), 0x7F80, FLT_MAX);
    CHECK_CODE(ptxq_bf16_encode(-FLT_MAX), 0xFF80, -FLT_MAX);
    CHECK_CODE(ptxq_bf16_encode(INFINITY), 0x7F80, INFINITY);
    CHECK_CODE(ptxq_bf16_encode(-INFINITY), 0xFF80, -INFINITY);
    CHECK_CODE(ptxq_bf16_encode(-0.0f), 0x8000, -0.0f);
    CHECK_CODE(ptxq_bf16_encode(FLT_MIN), 0x0080, FLT_MIN);
    CHECK_CODE(ptxq_bf16_encode(0x1p-133f), 0x0001, 0x1p-133f);  /* smallest subnormal */
    CHECK_CODE(ptxq_bf16_encode(0x1p-134f), 0x0000, 0x1p-134f);  /* tie 0 | 1 -> 0 */
    CHECK_CODE(ptxq_bf16_encode(0x3p-134f), 0x0002, 0x3p-134f);  /* tie 1 | 2 -> 2 */
    CHECK_CODE(ptxq_bf16_encode(FLT_TRUE_MIN), 0x0000, FLT_TRUE_MIN);
    CHECK_CODE(ptxq_bf16_encode(1.00390625f), 0x3F80, 1.00390625f); /* tie 1 | 1+2^-7 -> 1 */
    CHECK_CODE(ptxq_bf16_encode(1.01171875f), 0x3F82, 1.01171875f); /* tie odd | even -> even */
    check_nan16(ptxq_bf16_encode(NaNp), NaNp, 0x7F80, 0x40);
    check_nan16(ptxq_bf16_encode(neg_nan()), neg_nan(), 0x7F80, 0x40);
    /* A signalling NaN whose payload lies only in the low 16 bits must not become infinity. */
    check_nan16(ptxq_bf16_encode(float_of(0x7F800001u)), float_of(0x7F800001u), 0x7F80, 0x40);
    check_nan16(ptxq_bf16_encode(float_of(0xFF80FFFFu)), float_of(0xFF80FFFFu), 0x7F80, 0x40);
}

static void test_bf16_random(void **state)
{
    (void)state;
    check_sweep16(ptxq_bf16_encode, 0x7F80, 0x40, 7, 127, -149, 127, 6);
}

static void test_f16_decode_all(void **state)
{
    (void)state;
    check_decode16(ptxq_f16_decode, 5, 10, 15);
    assert_true(ptxq_f16_decode(0x3C00) == 1.0f);
    assert_true(ptxq_f16_decode(0x7BFF) == 65504.0f);
    assert_true(ptxq_f16_decode(0x0400) == 0x1p-14f);
    assert_true(ptxq_f16_decode(0x0001) == 0x1p-24f);
    assert_true(ptxq_f16_decode(0x83FF) == -0x3ffp-24f);
}

static void test_f16_roundtrip(void **state)
{
    (void)state;
    check_roundtrip16(ptxq_f16_encode, ptxq_f16_decode, 0x7C00, 0x200);
}

static void test_f16_midpoints(void **state)
{
    (void)state;
    double *tab = make_table(0x7C00, 10, 15);
    assert_true(tab[0x7C00] == 65536.0);
    check_midpoints(enc_f16, tab, 0x7BFF, 0x8000);
    test_free(tab);
}

static void test_f16_rules(void **state)
{
    (void)state;
    /* 65520 (midpoint of 65504 and 65536) ties to the even code 0x7C00: overflow to infinity. */
    CHECK_CODE(ptxq_f16_encode(65504.0f), 0x7BFF, 65504.0f);
    CHECK_CODE(ptxq_f16_encode(65519.996f), 0x7BFF, 65519.996f);
    CHECK_CODE(ptxq_f16_encode(65520.0f), 0x7C00, 65520.0f);
    CHECK_CODE(ptxq_f16_encode(-65520.0f), 0xFC00, -65520.0f);
    const float big[] = {65536.0f, 1e6f, FLT_MAX, INFINITY};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        CHECK_CODE(ptxq_f16_encode(big[i]), 0x7C00, big[i]);
        CHECK_CODE(ptxq_f16_encode(-big[i]), 0xFC00, -big[i]);
    }
    CHECK_CODE(ptxq_f16_encode(-0.0f), 0x8000, -0.0f);
    CHECK_CODE(ptxq_f16_encode(0x1p-24f), 0x0001, 0x1p-24f); /* smallest subnormal */
    CHECK_CODE(ptxq_f16_encode(0x1p-25f), 0x0000, 0x1p-25f); /* tie 0 | 1 -> 0 */
    CHECK_CODE(ptxq_f16_encode(0x1.000002p-25f), 0x0001, 0x1.000002p-25f);
    CHECK_CODE(ptxq_f16_encode(0x3p-25f), 0x0002, 0x3p-25f);
    CHECK_CODE(ptxq_f16_encode(0x7ffp-25f), 0x0400, 0x7ffp-25f); /* tie 0x3FF | 0x400 -> normal */
    CHECK_CODE(ptxq_f16_encode(0x1p-14f), 0x0400, 0x1p-14f);
    CHECK_CODE(ptxq_f16_encode(FLT_MIN), 0x0000, FLT_MIN);
    CHECK_CODE(ptxq_f16_encode(-FLT_TRUE_MIN), 0x8000, -FLT_TRUE_MIN);
    CHECK_CODE(ptxq_f16_encode(0x1.002p0f), 0x3C00, 0x1.002p0f); /* tie 1 | 1+2^-10 -> 1 */
    CHECK_CODE(ptxq_f16_encode(0x1.006p0f), 0x3C02, 0x1.006p0f); /* tie odd | even -> even */
    check_nan16(ptxq_f16_encode(NaNp), NaNp, 0x7C00, 0x200);
    check_nan16(ptxq_f16_encode(neg_nan()), neg_nan(), 0x7C00, 0x200);
    check_nan16(ptxq_f16_encode(float_of(0x7F800001u)), float_of(0x7F800001u), 0x7C00, 0x200);
    check_nan16(ptxq_f16_encode(float_of(0xFF800001u)), float_of(0xFF800001u), 0x7C00, 0x200);
}

static void test_f16_random(void **state)
{
    (void)state;
    check_sweep16(ptxq_f16_encode, 0x7C00, 0x200, 10, 15, -27, 17, 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_bits_and_names),
        cmocka_unit_test(test_e4m3_decode_all),
        cmocka_unit_test(test_e4m3_roundtrip),
        cmocka_unit_test(test_e4m3_midpoints),
        cmocka_unit_test(test_e4m3_overflow_rules),
        cmocka_unit_test(test_e4m3_subnormals),
        cmocka_unit_test(test_e4m3_sweep),
        cmocka_unit_test(test_e5m2_decode_all),
        cmocka_unit_test(test_e5m2_roundtrip),
        cmocka_unit_test(test_e5m2_midpoints),
        cmocka_unit_test(test_e5m2_overflow_rules),
        cmocka_unit_test(test_e5m2_subnormals),
        cmocka_unit_test(test_e5m2_sweep),
        cmocka_unit_test(test_e2m1_decode_all),
        cmocka_unit_test(test_e2m1_roundtrip),
        cmocka_unit_test(test_e2m1_midpoints),
        cmocka_unit_test(test_e2m1_saturation),
        cmocka_unit_test(test_e2m1_sweep),
        cmocka_unit_test(test_ue4m3_decode_all),
        cmocka_unit_test(test_ue4m3_roundtrip),
        cmocka_unit_test(test_ue4m3_midpoints),
        cmocka_unit_test(test_ue4m3_rules),
        cmocka_unit_test(test_ue4m3_sweep),
        cmocka_unit_test(test_ue8m0_decode_all),
        cmocka_unit_test(test_ue8m0_encode),
        cmocka_unit_test(test_ue8m0_sweep),
        cmocka_unit_test(test_bf16_decode_all),
        cmocka_unit_test(test_bf16_roundtrip),
        cmocka_unit_test(test_bf16_midpoints),
        cmocka_unit_test(test_bf16_rules),
        cmocka_unit_test(test_bf16_random),
        cmocka_unit_test(test_f16_decode_all),
        cmocka_unit_test(test_f16_roundtrip),
        cmocka_unit_test(test_f16_midpoints),
        cmocka_unit_test(test_f16_rules),
        cmocka_unit_test(test_f16_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
