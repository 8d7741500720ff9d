/* sass_diff.c -- an edit script between two SASS opcode sequences (sass.h sass_diff_opcodes):
 * the common start and end set aside (some longest common subsequence always keeps them), then
 * the longest common subsequence of what is left: by dynamic programming over a table of
 * (na + 1) x (nb + 1) lengths where that is at most 4 M cells, else split in two by Hirschberg's
 * method (rows of nb + 1 lengths, no table) until the parts are that small. Used by
 * `ptxq sass A --kloop B` (the K loops) and `--diff B` (whole kernels) to show what ptxas changed
 * between two builds (a move of two instructions reads as two edits, not as a new loop). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sass.h"

/* Where the edits go: the first max stored, all counted. */
typedef struct diff_out {
    sass_edit *out;
    int max, n;
} diff_out;

static void emit(diff_out *o, char kind, int ia, int ib) {
    if (o->out && o->n < o->max) o->out[o->n] = (sass_edit){kind, ia, ib};
    ++o->n;
}

static int same(const sass_mnemonic *x, const sass_mnemonic *y) { return !strcmp(x->op, y->op); }

/* An opcode and where it sits in a ++ b, for interning */
typedef struct op_ref {
    const char *op;
    int at;
} op_ref;

static int by_op(const void *x, const void *y) {
    return strcmp(((const op_ref *)x)->op, ((const op_ref *)y)->op);
}

/* The opcodes as small integers, equal strings equal ids: ids[0..ma) for a, ids[ma..ma + mb) for
 * b; the passes below, O(ma x mb), then compare ints, not strings. NULL without memory. */
static int *intern(const sass_mnemonic *a, int ma, const sass_mnemonic *b, int mb) {
    const int n = ma + mb;
    op_ref *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    int *ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
    if (!r || !ids) {
        free(r);
        free(ids);
        return NULL;
    }
    for (int i = 0; i < n; ++i) r[i] = (op_ref){i < ma ? a[i].op : b[i - ma].op, i};
    qsort(r, (size_t)n, sizeof *r, by_op);
    for (int i = 0, id = 0; i < n; ++i) {
        if (i > 0 && strcmp(r[i].op, r[i - 1].op)) ++id;
        ids[r[i].at] = id;
    }
    free(r);
    return ids;
}

/* L[i][j] of the (na + 1) x (nb + 1) table, rows w = nb + 1 wide */
static uint16_t *cell(uint16_t *L, size_t w, int i, int j) { return L + (size_t)i * w + (size_t)j; }

/* The whole table (at most TABLE_CELLS cells), then the walk from the start; edits of a[0..ma)
 * -> b[0..mb) with indices offset by ao / bo. 0, or -1 without memory. */
enum { TABLE_CELLS = 1 << 22 };
static int table_diff(const int *a, int ma, const int *b, int mb, int ao, int bo, diff_out *o) {
    const size_t w = (size_t)mb + 1;
    /* L[i][j]: the LCS length of a[i..] and b[j..] (fits 16 bits: at most TABLE_CELLS cells) */
    uint16_t *L = calloc(((size_t)ma + 1) * w, sizeof *L);
    if (!L) return -1;
    for (int i = ma - 1; i >= 0; --i)
        for (int j = mb - 1; j >= 0; --j) {
            uint16_t down = *cell(L, w, i + 1, j), right = *cell(L, w, i, j + 1);
            *cell(L, w, i, j) = a[i] == b[j] ? (uint16_t)(*cell(L, w, i + 1, j + 1) + 1)
                                : down > right ? down
                                               : right;
        }
    int i = 0, j = 0;
    while (i < ma || j < mb) {
        if (i < ma && j < mb && a[i] == b[j]) {
            ++i, ++j;
            continue;
        }
        /* drop from a where that keeps the longest common subsequence, else add from b */
        if (i < ma && (j == mb || *cell(L, w, i + 1, j) >= *cell(L, w, i, j + 1)))
            emit(o, '-', ao + i++, bo + j);
        else
            emit(o, '+', ao + i, bo + j++);
    }
    free(L);
    return 0;
}

/* LCS lengths of a[0..ma) against every prefix b[0..j) into f[0..mb] (dir 1), or of a[0..ma)
 * against every suffix b[j..mb) into f[j] (dir -1, both sequences read from their ends); t is
 * scratch of mb + 1. */
static void lcs_row(const int *a, int ma, const int *b, int mb, int dir, int *f, int *t) {
    memset(f, 0, ((size_t)mb + 1) * sizeof *f);
    for (int i = 0; i < ma; ++i) {
        const int x = dir > 0 ? a[i] : a[ma - 1 - i];
        t[0] = 0;
        for (int j = 1; j <= mb; ++j) {
            const int y = dir > 0 ? b[j - 1] : b[mb - j];
            t[j] = x == y ? f[j - 1] + 1 : f[j] > t[j - 1] ? f[j] : t[j - 1];
        }
        memcpy(f, t, ((size_t)mb + 1) * sizeof *f);
    }
    if (dir < 0) /* f[k] was for the last k of b: turn it into f[j] for b[j..mb) */
        for (int j = 0, k = mb; j < k; ++j, --k) {
            int v = f[j];
            f[j] = f[k];
            f[k] = v;
        }
}

/* Hirschberg: split a in half, find where b splits so that the two halves' LCS lengths sum to
 * the whole's, recurse; linear space (rows of mb + 1), the table once a part is small. */
static int split_diff(const int *a, int ma, const int *b, int mb, int ao, int bo, diff_out *o,
                      int *rows) {
    if ((size_t)(ma + 1) * (size_t)(mb + 1) <= TABLE_CELLS) return table_diff(a, ma, b, mb, ao, bo, o);
    int h = ma / 2;
    int *f = rows, *g = rows + mb + 1, *t = rows + 2 * ((size_t)mb + 1);
    lcs_row(a, h, b, mb, 1, f, t);
    lcs_row(a + h, ma - h, b, mb, -1, g, t);
    int k = 0;
    for (int j = 1; j <= mb; ++j)
        if (f[j] + g[j] > f[k] + g[k]) k = j;
    if (split_diff(a, h, b, k, ao, bo, o, rows) != 0) return -1;
    return split_diff(a + h, ma - h, b + k, mb - k, ao + h, bo + k, o, rows);
}

int sass_diff_opcodes(const sass_mnemonic *a, int na, const sass_mnemonic *b, int nb, sass_edit *out,
                      int max) {
    if (na < 0 || nb < 0) return -1;
    /* p equal opcodes at the start, q at the end: only the middle is compared */
    int p = 0, q = 0;
    while (p < na && p < nb && same(&a[p], &b[p])) ++p;
    while (q < na - p && q < nb - p && same(&a[na - 1 - q], &b[nb - 1 - q])) ++q;
    const int ma = na - p - q, mb = nb - p - q;
    if (ma > SASS_DIFF_MAX || mb > SASS_DIFF_MAX) return -1;
    diff_out o = {out, max, 0};
    int *ids = intern(a + p, ma, b + p, mb);
    int *rows = malloc(3 * ((size_t)mb + 1) * sizeof *rows);
    int rc = ids && rows ? split_diff(ids, ma, ids + ma, mb, p, p, &o, rows) : -1;
    free(ids);
    free(rows);
    return rc != 0 ? -1 : o.n;
}
