/* sass_ctrl.c -- SASS control bits from a cubin's code (see sass_ctrl.h). */
#include "sass_ctrl.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t rd64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
    return v;
}

static void wr64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) p[i] = (unsigned char)(v & 0xFF);
}

static uint32_t rd32(const unsigned char *p) { return (uint32_t)rd64(p) & 0xFFFFFFFFu; }

static unsigned rd16(const unsigned char *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }

#define CTRL_NO_YIELD ((uint64_t)1 << 45)
#define CTRL_REUSE ((uint64_t)0xF << 58)

unsigned sass_opcode(const unsigned char *insn) { return (unsigned)(rd64(insn) & 0xFFF); }

void sass_ctrl_decode(const unsigned char *insn, sass_ctrl *c) {
    uint64_t hi = rd64(insn + 8);
    int wb = (int)(hi >> 46 & 7), rb = (int)(hi >> 49 & 7);
    c->stall = (int)(hi >> 41 & 0xF);
    c->yield = !(hi & CTRL_NO_YIELD);
    c->wbar = wb == 7 ? -1 : wb;
    c->rbar = rb == 7 ? -1 : rb;
    c->wait = (int)(hi >> 52 & 0x3F);
    c->reuse = (int)(hi >> 58 & 0xF);
}

int sass_ctrl_format(const sass_ctrl *c, char *buf, size_t n) {
    char wait[7], reuse[12] = "";
    for (int i = 0; i < 6; ++i) wait[i] = c->wait >> i & 1 ? (char)('0' + i) : '-';
    wait[6] = 0;
    if (c->reuse) {
        int k = snprintf(reuse, sizeof reuse, " reuse:");
        for (int i = 0; i < 4 && k < (int)sizeof reuse - 1; ++i)
            if (c->reuse >> i & 1) reuse[k++] = (char)('a' + i);
        reuse[k] = 0;
    }
    char rb[3] = "R-", wb[3] = "W-";
    if (c->rbar >= 0) rb[1] = (char)('0' + c->rbar);
    if (c->wbar >= 0) wb[1] = (char)('0' + c->wbar);
    return snprintf(buf, n, "B%s:%s:%s:%c:S%02d%s", wait, rb, wb, c->yield ? 'Y' : '-', c->stall,
                    reuse);
}

/* Walks the ".text.*" sections of an ELF64 cubin: the one named ".text.<name>" (name non-NULL),
 * or (name NULL) the only one, whose kernel name then goes to out. 0 found, -1 not. */
static int find_code(const unsigned char *cubin, size_t size, const char *name, size_t *off,
                     size_t *len, char *out, size_t outn) {
    if (!cubin || size < 64 || memcmp(cubin, "\177ELF", 4) || cubin[4] != 2) return -1;
    uint64_t shoff = rd64(cubin + 0x28);
    unsigned shentsize = rd16(cubin + 0x3A), shnum = rd16(cubin + 0x3C),
             shstrndx = rd16(cubin + 0x3E);
    if (shentsize < 64 || shstrndx >= shnum || shoff > size ||
        (uint64_t)shnum * shentsize > size - shoff)
        return -1;
    const unsigned char *strsh = cubin + shoff + (size_t)shstrndx * shentsize;
    uint64_t stroff = rd64(strsh + 0x18), strsize = rd64(strsh + 0x20);
    if (stroff > size || strsize > size - stroff) return -1;
    size_t want = name ? strlen(name) : 0;
    int ntext = 0;
    uint64_t one_off = 0, one_len = 0;
    const char *one = NULL;
    size_t one_room = 0;
    for (unsigned i = 0; i < shnum; ++i) {
        const unsigned char *sh = cubin + shoff + (size_t)i * shentsize;
        uint32_t nm = rd32(sh);
        uint64_t o = rd64(sh + 0x18), l = rd64(sh + 0x20);
        if (nm >= strsize) continue;
        const char *s = (const char *)cubin + stroff + nm;
        size_t room = (size_t)(strsize - nm);
        if (room < 7 || memcmp(s, ".text.", 6)) continue;
        if (!name) {
            ++ntext;
            one_off = o, one_len = l, one = s + 6, one_room = room - 6;
            continue;
        }
        if (room < 6 + want + 1 || memcmp(s + 6, name, want) || s[6 + want] != 0) continue;
        if (o > size || l > size - o) return -1;
        *off = (size_t)o;
        *len = (size_t)l;
        return 0;
    }
    if (name || ntext != 1 || one_off > size || one_len > size - one_off) return -1;
    const char *z = memchr(one, 0, one_room);
    size_t n = z ? (size_t)(z - one) : 0;
    if (!z || n == 0 || n >= outn) return -1; /* unterminated, empty or too long */
    memcpy(out, one, n + 1);
    *off = (size_t)one_off;
    *len = (size_t)one_len;
    return 0;
}

int sass_cubin_code(const unsigned char *cubin, size_t size, const char *name, size_t *off,
                    size_t *len) {
    if (!name) return -1;
    return find_code(cubin, size, name, off, len, NULL, 0);
}

int sass_cubin_kernel(const unsigned char *cubin, size_t size, char *name, size_t n) {
    size_t off, len;
    return find_code(cubin, size, NULL, &off, &len, name, n);
}

int sass_runs(const unsigned char *code, size_t len, unsigned op, int min_len, sass_run *out,
              int max) {
    int n = 0, first = -1, count = 0, last = -1, gap = 0;
    int ninsn = (int)(len / 16);
    for (int i = 0; i <= ninsn; ++i) {
        int hit = i < ninsn && sass_opcode(code + 16 * (size_t)i) == op;
        if (hit) {
            if (first < 0) first = i;
            ++count;
            last = i;
            gap = 0;
            continue;
        }
        if (first < 0) continue;
        if (i < ninsn && ++gap <= 2) continue;
        if (count >= min_len) {
            if (n < max && out) out[n] = (sass_run){first, count, last + 1};
            ++n;
        }
        first = -1;
        count = 0;
        gap = 0;
    }
    return n;
}

void sass_run_hints(const unsigned char *code, const sass_run *run, unsigned op, char *buf,
                    size_t n) {
    size_t k = 0;
    for (int i = run->first; i < run->end && k + 1 < n; ++i) {
        const unsigned char *p = code + 16 * (size_t)i;
        if (sass_opcode(p) != op) continue;
        sass_ctrl c;
        sass_ctrl_decode(p, &c);
        buf[k++] = c.yield ? 'y' : c.reuse ? 'r' : '-';
    }
    if (n) buf[k] = 0;
}

int sass_rewrite_yield(unsigned char *cubin, size_t size, const char *name, unsigned op,
                       int min_len, double frac, int yield, int *runs) {
    size_t off, len;
    if (runs) *runs = 0;
    if (sass_cubin_code(cubin, size, name, &off, &len) != 0) return -1;
    unsigned char *code = cubin + off;
    int nr = sass_runs(code, len, op, min_len, NULL, 0);
    if (runs) *runs = nr;
    if (nr == 0) return 0;
    sass_run list[64];
    if (nr > 64) nr = 64;
    sass_runs(code, len, op, min_len, list, nr);
    int changed = 0;
    for (int r = 0; r < nr; ++r) {
        int take = (int)(list[r].count * frac + 0.5), seen = 0;
        for (int i = list[r].first; i < list[r].end && seen < take; ++i) {
            unsigned char *p = code + 16 * (size_t)i;
            if (sass_opcode(p) != op) continue;
            ++seen;
            uint64_t hi = rd64(p + 8);
            /* yield >= 2: the last instruction of every group of that many yields */
            int on = yield >= 2 ? seen % yield == 0 : yield;
            uint64_t nhi = on ? hi & ~CTRL_NO_YIELD & ~CTRL_REUSE : hi | CTRL_NO_YIELD;
            if (nhi == hi) continue;
            wr64(p + 8, nhi);
            ++changed;
        }
    }
    return changed;
}
