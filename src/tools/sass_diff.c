/* sass_diff.c -- an edit script between two SASS opcode sequences (sass.h sass_diff_opcodes):
 * the longest common subsequence by dynamic programming over (na + 1) x (nb + 1) lengths, then
 * the walk back from the end. Used by `ptxq sass A --kloop B` to show what ptxas changed in a
 * K loop between two builds (a move of two instructions reads as two edits, not as a new loop). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sass.h"

/* L[i][j] of the (na + 1) x (nb + 1) table, rows w = nb + 1 wide */
static uint16_t *cell(uint16_t *L, size_t w, int i, int j) { return L + (size_t)i * w + (size_t)j; }

int sass_diff_opcodes(const sass_mnemonic *a, int na, const sass_mnemonic *b, int nb, sass_edit *out,
                      int max) {
    if (na < 0 || nb < 0 || na > SASS_DIFF_MAX || nb > SASS_DIFF_MAX) return -1;
    const size_t w = (size_t)nb + 1;
    /* L[i][j]: the LCS length of a[i..] and b[j..] (at most SASS_DIFF_MAX: fits 16 bits) */
    uint16_t *L = calloc(((size_t)na + 1) * w, sizeof *L);
    if (!L) return -1;
    for (int i = na - 1; i >= 0; --i)
        for (int j = nb - 1; j >= 0; --j) {
            uint16_t down = *cell(L, w, i + 1, j), right = *cell(L, w, i, j + 1);
            *cell(L, w, i, j) = !strcmp(a[i].op, b[j].op) ? (uint16_t)(*cell(L, w, i + 1, j + 1) + 1)
                                : down > right                ? down
                                                              : right;
        }
    int n = 0, i = 0, j = 0;
    while (i < na || j < nb) {
        sass_edit e = {0, i, j};
        if (i < na && j < nb && !strcmp(a[i].op, b[j].op)) {
            ++i, ++j;
            continue;
        }
        /* drop from a where that keeps the longest common subsequence, else add from b */
        if (i < na && (j == nb || *cell(L, w, i + 1, j) >= *cell(L, w, i, j + 1))) {
            e.kind = '-';
            ++i;
        } else {
            e.kind = '+';
            ++j;
        }
        if (out && n < max) out[n] = e;
        ++n;
    }
    free(L);
    return n;
}
