/* tensor.c -- tensor descriptors: construction, size, the checks every family shares. */
#include <string.h>

#include "internal.h"

ptxq_tensor ptxq_tensor_make(ptxq_dtype t, int rank, const int64_t *shape, uint64_t data) {
    ptxq_tensor r;
    memset(&r, 0, sizeof r);
    r.dtype = t;
    r.rank = rank;
    r.data = data;
    if (rank < 1 || rank > PTXQ_MAX_RANK || !shape) return r;
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; --i) {
        r.shape[i] = shape[i];
        r.stride[i] = s;
        /* (a product past 64 bits leaves the outer strides 0: such a shape is refused by every
         * call, 2^48 elements at most, and no signed overflow happens here; found by review) */
        if (__builtin_mul_overflow(s, shape[i], &s)) s = 0;
    }
    return r;
}

/* 0 for an empty tensor, 1 otherwise (a nonnegative shape is assumed) */
static int nonempty(const ptxq_tensor *t) {
    for (int i = 0; i < t->rank; ++i)
        if (t->shape[i] == 0) return 0;
    return 1;
}

size_t ptxq_tensor_bytes(const ptxq_tensor *t) {
    if (!t || t->rank < 1 || t->rank > PTXQ_MAX_RANK || ptxq_dtype_bits(t->dtype) == 0) return 0;
    for (int i = 0; i < t->rank; ++i)
        if (t->shape[i] < 0 || t->stride[i] < 0) return 0;
    if (!nonempty(t)) return 0;
    int64_t span = 1, ext; /* elements from the first to one past the last */
    for (int i = 0; i < t->rank; ++i) {
        if (t->shape[i] == 1) continue;
        /* past 2^56 elements (no tensor a call accepts) the answer is 0, as for a malformed one,
         * not a wrapped size (found by review) */
        if (__builtin_mul_overflow(t->shape[i] - 1, t->stride[i], &ext) ||
            __builtin_add_overflow(span, ext, &span) || span >= ((int64_t)1 << 56))
            return 0;
    }
    return (size_t)((span * ptxq_dtype_bits(t->dtype) + 7) / 8);
}

int ptxq_check_tensor(const ptxq_tensor *t, const char *what, int need_data) {
    if (!t) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "%s: tensor is NULL", what);
    if (ptxq_dtype_bits(t->dtype) == 0)
        return ptxq_fail(PTXQ_ERR_DTYPE, "%s: unknown dtype %d", what, (int)t->dtype);
    if (t->rank < 1 || t->rank > PTXQ_MAX_RANK)
        return ptxq_fail(PTXQ_ERR_SHAPE, "%s: rank %d not in 1..%d", what, t->rank, PTXQ_MAX_RANK);
    for (int i = 0; i < t->rank; ++i) {
        if (t->shape[i] < 0)
            return ptxq_fail(PTXQ_ERR_SHAPE, "%s: shape[%d] = %lld is negative", what, i,
                             (long long)t->shape[i]);
        if (t->stride[i] < 0)
            return ptxq_fail(PTXQ_ERR_STRIDE, "%s: stride[%d] = %lld is negative", what, i,
                             (long long)t->stride[i]);
    }
    /* Every size the families derive (element counts, spans, byte strides, products of them)
     * stays far inside 64 bits: at most 2^48 elements and a span of addressed elements below
     * 2^48. Found by review: a stride near 2^62 wrapped D's byte pitch to a smaller one (rows
     * overlapping), and broadcast shapes near 2^32 x 2^32 made a negative row count. */
    const int64_t lim = (int64_t)1 << 48;
    int64_t count = 1, span = 1;
    for (int i = 0; i < t->rank; ++i) {
        if (t->shape[i] >= lim)
            return ptxq_fail(PTXQ_ERR_SHAPE, "%s: shape[%d] = %lld is 2^48 or more", what, i,
                             (long long)t->shape[i]);
        if (t->shape[i] == 0) count = 0;
    }
    for (int i = 0; i < t->rank && count; ++i) {
        int64_t ext;
        if (t->shape[i] == 1) continue; /* its stride is never used */
        if (__builtin_mul_overflow(count, t->shape[i], &count) || count >= lim)
            return ptxq_fail(PTXQ_ERR_SHAPE, "%s: 2^48 elements or more (at shape[%d] = %lld)", what,
                             i, (long long)t->shape[i]);
        if (t->stride[i] >= lim || __builtin_mul_overflow(t->shape[i] - 1, t->stride[i], &ext) ||
            __builtin_add_overflow(span, ext, &span) || span >= lim)
            return ptxq_fail(PTXQ_ERR_STRIDE, "%s: addresses span 2^48 elements or more "
                             "(stride[%d] = %lld)", what, i, (long long)t->stride[i]);
    }
    if (need_data && !t->data && nonempty(t))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "%s: data pointer is NULL", what);
    return PTXQ_OK;
}

int ptxq_check_disjoint(const ptxq_tensor *t, const char *what) {
    /* the dimensions of size > 1 by increasing stride: each stride must reach past all that the
     * smaller ones address (a sufficient condition; a few interleaved layouts that never share
     * an element are refused too) */
    int idx[PTXQ_MAX_RANK], n = 0;
    /* NOTE: no elements, nothing to overlap: an empty [L, 0] y (a GEMV of M = 0, which enqueues
     * nothing) has stride 0 along L under ptxq_tensor_make, and was refused (found by a test) */
    for (int i = 0; i < t->rank; ++i)
        if (t->shape[i] == 0) return PTXQ_OK;
    for (int i = 0; i < t->rank; ++i) {
        if (t->shape[i] <= 1) continue;
        int j = n++;
        while (j > 0 && t->stride[idx[j - 1]] > t->stride[i]) {
            idx[j] = idx[j - 1];
            --j;
        }
        idx[j] = i;
    }
    int64_t reach = 1;
    for (int j = 0; j < n; ++j) {
        int i = idx[j];
        if (t->stride[i] < reach)
            return ptxq_fail(PTXQ_ERR_STRIDE, "%s: elements overlap (stride[%d] = %lld, the "
                             "dimensions inside it span %lld elements)", what, i,
                             (long long)t->stride[i], (long long)reach);
        reach += (t->shape[i] - 1) * t->stride[i];
    }
    return PTXQ_OK;
}

/* 1 if the leading dimensions of t step by one uniform row pitch, the stride of the last of
 * them (row r starts at r * stride[rank - 2]): each leading dimension of size > 1 must step by
 * that pitch times the sizes after it. A size-1 dimension's stride says nothing and is skipped,
 * but it does not carry the chain: comparing with the next dimension's stride alone let x of
 * shape [2, 1, 3, K] and strides (0, 0, K, 1) (a broadcast batch) pass, and the kernels' flat
 * path then read a whole batch past x's end (found by review, 2026-11-26). */
int ptxq_rows_collapse(const ptxq_tensor *t) {
    if (t->rank < 3 || ptxq_shape_product(t->shape, t->rank) == 0) return 1; /* no rows to step */
    int64_t span = t->stride[t->rank - 2] * t->shape[t->rank - 2];
    for (int i = t->rank - 3; i >= 0; --i) {
        if (t->shape[i] > 1 && t->stride[i] != span) return 0;
        span *= t->shape[i];
    }
    return 1;
}

int64_t ptxq_shape_product(const int64_t *shape, int n) {
    for (int i = 0; i < n; ++i)
        if (shape[i] == 0) return 0;
    int64_t r = 1;
    for (int i = 0; i < n; ++i)
        if (__builtin_mul_overflow(r, shape[i], &r)) return INT64_MAX;
    return r;
}

int ptxq_bytes_overlap(uint64_t a, size_t na, uint64_t b, size_t nb) {
    if (!na || !nb) return 0;
    return a < b + nb && b < a + na;
}

/* floor(n / d) for d > 0 */
static int64_t floor_div(int64_t n, int64_t d) { return n / d - (n % d != 0 && n < 0); }

/* t as R rows of one byte pitch: its rows (the leading indices), the pitch and the bytes a row
 * spans from its start; 0 where t is not such (rank 1, leading dimensions that do not step by
 * one pitch, a pitch of a fraction of a byte, rows longer than the pitch). */
static int row_view(const ptxq_tensor *t, int64_t *rows, int64_t *pitch, int64_t *len) {
    int r = t->rank, bits = ptxq_dtype_bits(t->dtype);
    if (r < 2 || !ptxq_rows_collapse(t)) return 0;
    *rows = ptxq_shape_product(t->shape, r - 1);
    int64_t n = t->shape[r - 1];
    if (*rows <= 1 || *rows == INT64_MAX || n < 1 || t->stride[r - 2] * bits % 8) return 0;
    *pitch = t->stride[r - 2] * bits / 8;
    *len = ((n - 1) * t->stride[r - 1] * bits + bits + 7) / 8;
    return *pitch > 0 && *len <= *pitch;
}

int ptxq_tensors_overlap(const ptxq_tensor *a, const ptxq_tensor *b) {
    size_t na = ptxq_tensor_bytes(a), nb = ptxq_tensor_bytes(b);
    if (!ptxq_bytes_overlap(a->data, na, b->data, nb)) return 0;
    int64_t ra, pa, la, rb, pb, lb;
    if (!row_view(a, &ra, &pa, &la) || !row_view(b, &rb, &pb, &lb) || ra != rb || pa != pb) return 1;
    /* rows i of a and j of b meet iff -lb < d + (j - i) * p < la, d = b's base - a's (the spans
     * overlap, so |d| is below 2^56); is there such a j - i in [-(rows - 1), rows - 1]? */
    int64_t d = (int64_t)(b->data - a->data);
    int64_t lo = floor_div(-lb - d, pa) + 1, hi = -floor_div(d - la, pa) - 1;
    if (lo < -(ra - 1)) lo = -(ra - 1);
    if (hi > ra - 1) hi = ra - 1;
    return lo <= hi;
}
