/* sass.c -- find nvdisasm, disassemble cubins, count SASS instruction classes (see sass.h). */
#include "sass.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- cubin files ------------------------------------------------------------------------- */

int sass_cubin_file(const char *path, unsigned char **bytes, size_t *size, char *name, size_t namen,
                    char *err, size_t errn) {
    *bytes = NULL;
    *size = 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n <= 6 || strcmp(base + n - 6, ".cubin")) {
        snprintf(err, errn, "'%s' does not end in .cubin", path);
        return -1;
    }
    n -= 6;
    const char *dot = memchr(base, '.', n);
    if (dot && !strncmp(dot, ".sm_", 4)) n = (size_t)(dot - base); /* a target suffix */
    if (n == 0 || n >= namen) {
        snprintf(err, errn, "'%s': no kernel name in the file name", path);
        return -1;
    }
    memcpy(name, base, n);
    name[n] = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errn, "cannot open '%s'", path);
        return -1;
    }
    long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    unsigned char *buf = len > 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)len) : NULL;
    int ok = buf && fread(buf, 1, (size_t)len, f) == (size_t)len;
    fclose(f);
    if (!ok) {
        free(buf);
        snprintf(err, errn, "cannot read '%s' (or it is empty)", path);
        return -1;
    }
    *bytes = buf;
    *size = (size_t)len;
    return 0;
}

/* ---- finding nvdisasm --------------------------------------------------------------------- */

static int is_exec(const char *p) { return p && *p && access(p, X_OK) == 0; }

static int put_path(char *path, size_t n, const char *p) {
    if (!is_exec(p) || strlen(p) >= n) return -1;
    memcpy(path, p, strlen(p) + 1);
    return 0;
}

static int put_join(char *path, size_t n, const char *dir, const char *rest) {
    char buf[4096];
    int w = snprintf(buf, sizeof buf, "%s/%s", dir, rest);
    if (w < 0 || (size_t)w >= sizeof buf) return -1;
    return put_path(path, n, buf);
}

static int find_on_path(char *path, size_t n) {
    const char *env = getenv("PATH");
    if (!env) return -1;
    const char *p = env;
    while (*p) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        char dir[4096];
        if (len > 0 && len < sizeof dir) {
            memcpy(dir, p, len);
            dir[len] = 0;
            if (put_join(path, n, dir, "nvdisasm") == 0) return 0;
        }
        if (!colon) break;
        p = colon + 1;
    }
    return -1;
}

/* The pip wheel nvidia-cuda-nvdisasm: "nvidia" is a namespace package, so ask python3 where its
 * directories are. */
static int find_in_wheel(char *path, size_t n) {
    static const char cmd[] =
        "python3 -c \"import nvidia, os; print(next((p for d in nvidia.__path__ "
        "for s in ('cu13', 'cu12', 'cuda_nvdisasm') for p in [os.path.join(d, s, 'bin', "
        "'nvdisasm')] if os.access(p, os.X_OK)), ''))\" 2>/dev/null";
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    char line[4096] = {0};
    char *got = fgets(line, sizeof line, f);
    pclose(f);
    if (!got) return -1;
    line[strcspn(line, "\r\n")] = 0;
    return put_path(path, n, line);
}

int sass_find_nvdisasm(char *path, size_t n) {
    if (!path || n == 0) return -1;
    path[0] = 0;
    const char *env = getenv("PTXQ_NVDISASM");
    if (env && *env) return put_path(path, n, env);
    if (find_on_path(path, n) == 0) return 0;
    const char *root = getenv("CUDA_ROOT");
    if (root && *root && put_join(path, n, root, "bin/nvdisasm") == 0) return 0;
    if (put_path(path, n, "/usr/local/cuda/bin/nvdisasm") == 0) return 0;
    if (find_in_wheel(path, n) == 0) return 0;
    path[0] = 0;
    return -1;
}

const char *sass_nvdisasm_hint(void) {
    return "nvdisasm not found (looked at $PTXQ_NVDISASM, $PATH, $CUDA_ROOT/bin, "
           "/usr/local/cuda/bin and the python3 wheel); install it with "
           "`pip install nvidia-cuda-nvdisasm` or the CUDA toolkit, or set PTXQ_NVDISASM";
}

int sass_no_nvdisasm(void) {
    char path[4096];
    if (sass_find_nvdisasm(path, sizeof path) == 0) return 0;
    printf("[  SKIP    ] %s\n", sass_nvdisasm_hint());
    fflush(stdout);
    return 1;
}

/* ---- disassembling ------------------------------------------------------------------------ */

/* Looked up once: the wheel lookup starts a python3, and a table of kernels asks many times. */
static const char *nvdisasm_path(void) {
    static int looked;
    static char path[4096];
    if (!looked) {
        looked = 1;
        if (sass_find_nvdisasm(path, sizeof path) != 0) path[0] = 0;
    }
    return path[0] ? path : NULL;
}

/* s in single quotes for sh, each ' written as '\''. */
static int shell_quote(char *out, size_t n, const char *s) {
    size_t used = 0;
    if (n < 3) return -1;
    out[used++] = '\'';
    for (; *s; ++s) {
        const char *piece = *s == '\'' ? "'\\''" : NULL;
        size_t len = piece ? 4 : 1;
        if (used + len + 2 > n) return -1;
        if (piece) memcpy(out + used, piece, len);
        else out[used] = *s;
        used += len;
    }
    out[used++] = '\'';
    out[used] = 0;
    return 0;
}

static int write_temp(const unsigned char *data, size_t size, char *name, size_t n) {
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    int w = snprintf(name, n, "%s/ptxq_sass_XXXXXX", dir);
    if (w < 0 || (size_t)w >= n) return -1;
    int fd = mkstemp(name);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t k = write(fd, data + done, size - done);
        if (k <= 0) break;
        done += (size_t)k;
    }
    close(fd);
    if (done != size) unlink(name);
    return done == size ? 0 : -1;
}

/* All of f, NUL-terminated (malloc'd), or NULL. */
static char *read_all(FILE *f) {
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t k = fread(buf + len, 1, cap - len - 1, f);
        len += k;
        if (k == 0) break;
        if (cap - len - 1 > 0) continue;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) free(buf);
        buf = bigger;
        cap *= 2;
    }
    if (buf) buf[len] = 0;
    return buf;
}

/* The first line of text, for an error message. */
static void first_line(const char *text, char *out, size_t n) {
    size_t len = strcspn(text, "\n");
    if (len >= n) len = n - 1;
    memcpy(out, text, len);
    out[len] = 0;
}

/* Starts `tool -c file` with its output (stderr too) on a pipe. */
static FILE *nv_start(const char *tool, const char *file, char *err, size_t errn) {
    char qtool[4200], qfile[4200], cmd[8600];
    if (shell_quote(qtool, sizeof qtool, tool) || shell_quote(qfile, sizeof qfile, file)) {
        snprintf(err, errn, "nvdisasm: path too long");
        return NULL;
    }
    snprintf(cmd, sizeof cmd, "%s -c %s 2>&1", qtool, qfile);
    FILE *p = popen(cmd, "r");
    if (!p) snprintf(err, errn, "nvdisasm: popen failed");
    return p;
}

/* Reads the output of nv_start and waits for the process: the text, or NULL with err set. */
static char *nv_finish(FILE *p, const char *tool, char *err, size_t errn) {
    char *text = read_all(p);
    int st = pclose(p);
    if (text && st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0) return text;
    char line[300] = "";
    if (text) first_line(text, line, sizeof line);
    snprintf(err, errn, "%s -c failed (status %d): %s", tool, st, text ? line : "out of memory");
    free(text);
    return NULL;
}

/* err may be NULL or empty: then it points to a scratch buffer. */
static char *err_or_scratch(char *err, size_t *errn, char *scratch, size_t n) {
    if (err && *errn) return err;
    *errn = n;
    return scratch;
}

char *sass_disassemble(const unsigned char *cubin, size_t size, char *err, size_t errn) {
    char scratch[512];
    err = err_or_scratch(err, &errn, scratch, sizeof scratch);
    err[0] = 0;
    if (!cubin || size == 0) {
        snprintf(err, errn, "sass_disassemble: empty cubin");
        return NULL;
    }
    const char *tool = nvdisasm_path();
    if (!tool) {
        snprintf(err, errn, "%s", sass_nvdisasm_hint());
        return NULL;
    }
    char file[4096];
    if (write_temp(cubin, size, file, sizeof file) != 0) {
        snprintf(err, errn, "nvdisasm: cannot write a temporary cubin under $TMPDIR or /tmp");
        return NULL;
    }
    char *text = NULL;
    FILE *p = nv_start(tool, file, err, errn);
    if (p) text = nv_finish(p, tool, err, errn);
    unlink(file);
    return text;
}

/* ---- the histogram ------------------------------------------------------------------------ */

const char *sass_line_addr(const char *s, const char *end, unsigned long *addr) {
    while (s < end && (*s == ' ' || *s == '\t')) ++s;
    if (end - s < 5 || s[0] != '/' || s[1] != '*') return NULL;
    s += 2;
    const char *hex = s;
    unsigned long a = 0;
    for (; s < end && isxdigit((unsigned char)*s); ++s) {
        int c = (unsigned char)*s;
        a = a * 16 + (unsigned long)(isdigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    if (s == hex || end - s < 2 || s[0] != '*' || s[1] != '/') return NULL;
    if (addr) *addr = a;
    return s + 2;
}

/* The opcode of an instruction line ("LDG.E.128"), copied into op; 0 if not an instruction. */
static int line_opcode(const char *s, const char *end, char *op, size_t n) {
    s = sass_line_addr(s, end, NULL);
    if (!s) return 0;
    while (s < end && (*s == ' ' || *s == '\t')) ++s;
    if (s < end && *s == '@') {
        while (s < end && *s != ' ' && *s != '\t') ++s;
        while (s < end && (*s == ' ' || *s == '\t')) ++s;
    }
    size_t len = 0;
    while (s + len < end && (isalnum((unsigned char)s[len]) || s[len] == '_' || s[len] == '.'))
        ++len;
    if (len == 0 || len >= n || !isupper((unsigned char)s[0])) return 0;
    memcpy(op, s, len);
    op[len] = 0;
    return 1;
}

static int starts(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int ends(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Width index of a global access from its modifiers (".E.NA.128.CONSTANT" -> SASS_W128). */
static int access_width(const char *mods) {
    static const struct {
        const char *tok;
        int w;
    } k[] = {{"U8", SASS_W8},   {"S8", SASS_W8},   {"8", SASS_W8},    {"U16", SASS_W16},
             {"S16", SASS_W16}, {"16", SASS_W16},  {"32", SASS_W32},  {"64", SASS_W64},
             {"128", SASS_W128}, {"256", SASS_W256}};
    while (mods && *mods == '.') {
        ++mods;
        size_t len = strcspn(mods, ".");
        for (size_t i = 0; i < sizeof k / sizeof k[0]; ++i)
            if (strlen(k[i].tok) == len && !strncmp(mods, k[i].tok, len)) return k[i].w;
        mods += len;
    }
    return SASS_W32;
}

static int count_mma(const char *base, sass_hist *h) {
    if (!ends(base, "MMA") || strlen(base) < 4) return 0;
    static const struct {
        const char *name;
        size_t off;
    } k[] = {
        {"QGMMA", offsetof(sass_hist, qgmma)}, {"HGMMA", offsetof(sass_hist, hgmma)},
        {"IGMMA", offsetof(sass_hist, igmma)}, {"BGMMA", offsetof(sass_hist, bgmma)},
        {"HMMA", offsetof(sass_hist, hmma)},   {"IMMA", offsetof(sass_hist, imma)},
        {"DMMA", offsetof(sass_hist, dmma)},   {"BMMA", offsetof(sass_hist, bmma)},
        {"QMMA", offsetof(sass_hist, qmma)},   {"OMMA", offsetof(sass_hist, omma)},
    };
    int *slot = &h->mma_other;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; ++i)
        if (!strcmp(base, k[i].name)) slot = (int *)((char *)h + k[i].off);
    if (starts(base, "UTC")) slot = &h->utcmma;
    ++*slot;
    ++h->mma;
    return 1;
}

static int count_copy(const char *base, sass_hist *h) {
    if (!strcmp(base, "UTMALDG")) ++h->tma_ld;
    else if (!strcmp(base, "UTMASTG") || !strcmp(base, "UTMAREDG")) ++h->tma_st;
    else if (starts(base, "UTMA")) ++h->tma_other;
    else if (starts(base, "UBLK")) ++h->blkcp;
    else return 0;
    return 1;
}

static int count_memory(const char *base, const char *mods, sass_hist *h) {
    static const struct {
        const char *name;
        size_t off;
    } k[] = {
        {"LDSM", offsetof(sass_hist, ldsm)},     {"STSM", offsetof(sass_hist, stsm)},
        {"LDGSTS", offsetof(sass_hist, ldgsts)}, {"LDS", offsetof(sass_hist, lds)},
        {"STS", offsetof(sass_hist, sts)},       {"LDL", offsetof(sass_hist, ldl)},
        {"STL", offsetof(sass_hist, stl)},       {"LDTM", offsetof(sass_hist, ldtm)},
        {"STTM", offsetof(sass_hist, sttm)},
    };
    if (!strcmp(base, "LDG")) {
        ++h->ldg[access_width(mods)];
        return 1;
    }
    if (!strcmp(base, "STG")) {
        ++h->stg[access_width(mods)];
        return 1;
    }
    if (!strcmp(base, "CCTL") && strstr(mods, ".PF")) {
        ++h->pf;
        return 1;
    }
    for (size_t i = 0; i < sizeof k / sizeof k[0]; ++i) {
        if (strcmp(base, k[i].name)) continue;
        ++*(int *)((char *)h + k[i].off);
        return 1;
    }
    return 0;
}

static void count_misc(const char *base, sass_hist *h) {
    static const char *const cvts[] = {"F2F", "F2FP", "I2F", "I2FP", "F2I", "F2IP", "I2I", "I2IP"};
    if (!strcmp(base, "SHFL")) ++h->shfl;
    else if (!strcmp(base, "MUFU")) ++h->mufu;
    else if (!strcmp(base, "BAR")) ++h->bar;
    else if (starts(base, "SYNCS")) ++h->syncs;
    else if (!strcmp(base, "ACQBULK")) ++h->acqbulk;
    else if (!strcmp(base, "PREEXIT")) ++h->preexit;
    else if (!strcmp(base, "UCGABAR_ARV")) ++h->cgabar;
    for (size_t i = 0; i < sizeof cvts / sizeof cvts[0]; ++i)
        if (!strcmp(base, cvts[i])) ++h->cvt;
    if (!strcmp(base, "F2FP")) ++h->f2fp;
}

static void count_opcode(const char *op, sass_hist *h) {
    char base[64];
    size_t len = strcspn(op, ".");
    if (len >= sizeof base) len = sizeof base - 1;
    memcpy(base, op, len);
    base[len] = 0;
    ++h->total;
    if (count_mma(base, h) || count_copy(base, h) || count_memory(base, op + len, h)) return;
    count_misc(base, h);
}

void sass_histogram(const char *text, sass_hist *h) {
    memset(h, 0, sizeof *h);
    if (!text) return;
    const char *s = text;
    while (*s) {
        const char *end = strchr(s, '\n');
        if (!end) end = s + strlen(s);
        char op[128];
        if (line_opcode(s, end, op, sizeof op)) count_opcode(op, h);
        s = *end ? end + 1 : end;
    }
}

/* ---- loops -------------------------------------------------------------------------------- */

/* A label line ".L_x_12:" -> its name (without the ':') into name; 0 if not a label. */
static int line_label(const char *s, const char *end, char *name, size_t n) {
    while (s < end && (*s == ' ' || *s == '\t')) ++s;
    size_t len = 0;
    while (s + len < end && (isalnum((unsigned char)s[len]) || s[len] == '_' || s[len] == '.'))
        ++len;
    if (len == 0 || len >= n || s[0] != '.' || s + len >= end || s[len] != ':') return 0;
    memcpy(name, s, len);
    name[len] = 0;
    return 1;
}

/* The label a BRA line branches to, the name inside "`(...)" ("@P0 BRA `(.L_x_6) ;", also
 * "BRA.U !UP0, `(.L_x_1) ;" -> ".L_x_6", ".L_x_1"); 0 if none. */
static int bra_target(const char *s, const char *end, char *name, size_t n) {
    const char *p = s;
    while (p + 2 <= end && !(p[0] == '`' && p[1] == '(')) ++p;
    if (p + 2 > end) return 0;
    p += 2;
    size_t len = 0;
    while (p + len < end && (isalnum((unsigned char)p[len]) || p[len] == '_' || p[len] == '.'))
        ++len;
    if (len == 0 || len >= n) return 0;
    memcpy(name, p, len);
    name[len] = 0;
    return 1;
}

typedef struct sass_label {
    char name[32];
    int at; /* index of the instruction that follows it */
} sass_label;

/* Calls fn(s, end, index, arg) for every instruction line, index counting them from 0; stops
 * early where fn returns nonzero. */
static void each_insn(const char *text, int (*fn)(const char *, const char *, int, void *),
                      void *arg) {
    int i = 0;
    for (const char *s = text; *s;) {
        const char *end = strchr(s, '\n');
        if (!end) end = s + strlen(s);
        char op[128];
        if (line_opcode(s, end, op, sizeof op) && fn(s, end, i++, arg)) return;
        s = *end ? end + 1 : end;
    }
}

int sass_loops(const char *text, sass_loop *out, int max) {
    if (!text) return 0;
    /* pass 1: labels, by the index of the instruction that follows them */
    int nlab = 0, cap = 0, ninsn = 0;
    sass_label *lab = NULL;
    for (const char *s = text; *s;) {
        const char *end = strchr(s, '\n');
        if (!end) end = s + strlen(s);
        char op[128], name[32];
        if (line_opcode(s, end, op, sizeof op)) {
            ++ninsn;
        } else if (line_label(s, end, name, sizeof name)) {
            if (nlab == cap) {
                cap = cap ? 2 * cap : 64;
                sass_label *g = realloc(lab, (size_t)cap * sizeof *lab);
                if (!g) {
                    free(lab);
                    return -1;
                }
                lab = g;
            }
            memcpy(lab[nlab].name, name, sizeof name);
            lab[nlab++].at = ninsn;
        }
        s = *end ? end + 1 : end;
    }
    /* pass 2: a BRA to a label at or before it closes a loop [the label, the branch] */
    int n = 0, i = 0;
    for (const char *s = text; *s;) {
        const char *end = strchr(s, '\n');
        if (!end) end = s + strlen(s);
        char op[128], name[32];
        if (line_opcode(s, end, op, sizeof op)) {
            if (!strncmp(op, "BRA", 3) && (op[3] == 0 || op[3] == '.') &&
                bra_target(s, end, name, sizeof name)) {
                for (int j = 0; j < nlab; ++j) {
                    if (strcmp(lab[j].name, name) || lab[j].at > i) continue;
                    if (n < max) {
                        memset(&out[n], 0, sizeof out[n]);
                        out[n].first = lab[j].at;
                        out[n].length = i - lab[j].at + 1;
                        out[n].marker = -1;
                    }
                    ++n;
                    break;
                }
            }
            ++i;
        }
        s = *end ? end + 1 : end;
    }
    free(lab);
    return n;
}

typedef struct loads_walk {
    const char *marker;
    sass_loop *lp;
} loads_walk;

static int walk_loads(const char *s, const char *end, int i, void *arg) {
    loads_walk *w = arg;
    sass_loop *lp = w->lp;
    if (i < lp->first) return 0;
    if (i >= lp->first + lp->length) return 1;
    char op[128];
    line_opcode(s, end, op, sizeof op);
    if (lp->marker < 0 && starts(op, w->marker)) lp->marker = i - lp->first;
    if (starts(op, "LDG")) {
        ++lp->loads;
        lp->late += lp->marker >= 0;
    }
    return 0;
}

int sass_loop_loads(const char *text, const char *marker, sass_loop *out) {
    memset(out, 0, sizeof *out);
    if (!text || !marker || !*marker) return -1;
    int n = sass_loops(text, NULL, 0);
    if (n <= 0) return -1;
    sass_loop *lp = malloc((size_t)n * sizeof *lp);
    if (!lp) return -1;
    if (sass_loops(text, lp, n) != n) {
        free(lp);
        return -1;
    }
    int rc = -1;
    for (int j = 0; j < n && rc; ++j) {
        loads_walk w = {marker, &lp[j]};
        each_insn(text, walk_loads, &w);
        if (lp[j].marker >= 0) {
            *out = lp[j];
            rc = 0;
        }
    }
    free(lp);
    return rc;
}

/* instructions first..last: histogram (h), counts by base opcode (ops, up to max), and the
 * sequence of full opcodes (seq, up to maxseq; sass_range_opcodes) */
typedef struct tally_walk {
    int first, last;
    sass_hist *h;
    sass_op_count *ops;
    int max, n;
    sass_mnemonic *seq;
    int maxseq, nseq;
} tally_walk;

static int walk_tally(const char *s, const char *end, int i, void *arg) {
    tally_walk *w = arg;
    if (i < w->first) return 0;
    if (i > w->last) return 1;
    char op[128];
    line_opcode(s, end, op, sizeof op);
    if (w->h) count_opcode(op, w->h);
    if (w->seq && w->nseq < w->maxseq) {
        size_t l = strlen(op); /* cut at 31 characters */
        if (l >= sizeof w->seq[0].op) l = sizeof w->seq[0].op - 1;
        memcpy(w->seq[w->nseq].op, op, l);
        w->seq[w->nseq++].op[l] = 0;
    }
    size_t len = strcspn(op, ".");
    if (len >= sizeof w->ops[0].op) len = sizeof w->ops[0].op - 1;
    op[len] = 0;
    int j = 0;
    while (j < w->n && strcmp(w->ops[j].op, op)) ++j;
    if (j == w->n) {
        if (w->n == w->max) return 0; /* table full: an opcode first seen now goes uncounted by name */
        memcpy(w->ops[j].op, op, len + 1);
        w->ops[j].n = 0;
        ++w->n;
    }
    ++w->ops[j].n;
    return 0;
}

static int by_count(const void *a, const void *b) {
    const sass_op_count *x = a, *y = b;
    if (x->n != y->n) return y->n - x->n;
    return strcmp(x->op, y->op);
}

int sass_range_tally(const char *text, int first, int length, sass_hist *h, sass_op_count *ops,
                     int max) {
    if (h) memset(h, 0, sizeof *h);
    if (!ops) max = 0;
    if (!text || length <= 0) return 0;
    tally_walk w = {first, first + length - 1, h, ops, max < 0 ? 0 : max, 0, NULL, 0, 0};
    each_insn(text, walk_tally, &w);
    if (w.n) qsort(ops, (size_t)w.n, sizeof *ops, by_count);
    return w.n;
}

int sass_mma_loop(const char *text, sass_loop *out) {
    int n = sass_loops(text, NULL, 0);
    if (n <= 0) return -1;
    sass_loop *lp = malloc((size_t)n * sizeof *lp);
    if (!lp || sass_loops(text, lp, n) != n) {
        free(lp);
        return -1;
    }
    int best = -1;
    for (int j = 0; j < n; ++j) {
        sass_hist h;
        sass_range_tally(text, lp[j].first, lp[j].length, &h, NULL, 0);
        if (h.mma > 0 && (best < 0 || lp[j].length < lp[best].length)) best = j;
    }
    if (best >= 0) *out = lp[best];
    free(lp);
    return best >= 0 ? 0 : -1;
}

typedef struct insn_pick {
    int want;
    char *out;
    size_t n;
    int found;
} insn_pick;

static int pick_insn(const char *s, const char *end, int i, void *arg) {
    insn_pick *p = arg;
    if (i != p->want) return 0;
    s = sass_line_addr(s, end, NULL);
    while (s < end && (*s == ' ' || *s == '\t')) ++s;
    const char *semi = memchr(s, ';', (size_t)(end - s));
    size_t len = (size_t)((semi ? semi + 1 : end) - s);
    if (len >= p->n) len = p->n - 1;
    memcpy(p->out, s, len);
    p->out[len] = 0;
    p->found = 1;
    return 1;
}

int sass_insn_text(const char *text, int i, char *out, size_t n) {
    if (!text || !out || n == 0 || i < 0) return -1;
    insn_pick p = {i, out, n, 0};
    out[0] = 0;
    each_insn(text, pick_insn, &p);
    return p.found ? 0 : -1;
}

int sass_range_opcodes(const char *text, int first, int length, sass_mnemonic *ops, int max) {
    if (!text || !ops || length <= 0 || max <= 0) return 0;
    tally_walk w = {first, first + length - 1, NULL, NULL, 0, 0, ops, max, 0};
    each_insn(text, walk_tally, &w);
    return w.nseq;
}

int sass_hist_cubin(const unsigned char *cubin, size_t size, sass_hist *h, char *err, size_t errn) {
    char *text = sass_disassemble(cubin, size, err, errn);
    if (!text) {
        memset(h, 0, sizeof *h);
        return -1;
    }
    sass_histogram(text, h);
    free(text);
    return 0;
}

typedef struct nv_job {
    char file[4096];
    FILE *pipe;
} nv_job;

static int default_jobs(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 32 ? 32 : (int)n;
}

/* Starts job i of a batch; -1 (and err set) if it could not start. */
static int batch_start(nv_job *j, const char *tool, const unsigned char *cubin, size_t size,
                       char *err, size_t errn) {
    j->pipe = NULL;
    j->file[0] = 0;
    if (!cubin || size == 0) {
        snprintf(err, errn, "nvdisasm: empty cubin");
        return -1;
    }
    if (write_temp(cubin, size, j->file, sizeof j->file) != 0) {
        j->file[0] = 0;
        snprintf(err, errn, "nvdisasm: cannot write a temporary cubin under $TMPDIR or /tmp");
        return -1;
    }
    j->pipe = nv_start(tool, j->file, err, errn);
    return j->pipe ? 0 : -1;
}

/* Job j's listing (NULL on failure, err set); its temporary cubin removed. */
static char *batch_finish(nv_job *j, const char *tool, char *err, size_t errn) {
    char *text = j->pipe ? nv_finish(j->pipe, tool, err, errn) : NULL;
    if (j->file[0]) unlink(j->file);
    return text;
}

/* Disassembles n cubins, up to jobs nvdisasm processes at once, and hands each listing (NULL where
 * that cubin failed) to take(i, text, arg), which owns it. Returns the failures (n without
 * nvdisasm; err: the first failure). */
static int batch_run(int n, const unsigned char *const *cubins, const size_t *sizes, int jobs,
                     void (*take)(int, char *, void *), void *arg, char *err, size_t errn) {
    char scratch[512], e[512];
    err = err_or_scratch(err, &errn, scratch, sizeof scratch);
    err[0] = 0;
    const char *tool = nvdisasm_path();
    if (!tool) {
        snprintf(err, errn, "%s", sass_nvdisasm_hint());
        for (int i = 0; i < n; ++i) take(i, NULL, arg);
        return n;
    }
    if (jobs <= 0) jobs = default_jobs();
    nv_job *batch = calloc((size_t)jobs, sizeof *batch);
    if (!batch) {
        snprintf(err, errn, "nvdisasm: out of memory");
        for (int i = 0; i < n; ++i) take(i, NULL, arg);
        return n;
    }
    int failed = 0;
    for (int base = 0; base < n; base += jobs) {
        int k = n - base < jobs ? n - base : jobs;
        for (int i = 0; i < k; ++i) {
            int rc = batch_start(&batch[i], tool, cubins[base + i], sizes[base + i], e, sizeof e);
            if (rc != 0 && !err[0]) snprintf(err, errn, "%s", e);
        }
        for (int i = 0; i < k; ++i) {
            char *text = batch_finish(&batch[i], tool, e, sizeof e);
            if (!text && !err[0]) snprintf(err, errn, "%s", e);
            failed += text == NULL;
            take(base + i, text, arg);
        }
    }
    free(batch);
    return failed;
}

typedef struct hist_take {
    sass_hist *out;
    int *st;
} hist_take;

static void take_hist(int i, char *text, void *arg) {
    hist_take *t = arg;
    sass_histogram(text, &t->out[i]);
    if (t->st) t->st[i] = text ? 0 : -1;
    free(text);
}

int sass_hist_many(int n, const unsigned char *const *cubins, const size_t *sizes, sass_hist *out,
                   int *st, int jobs, char *err, size_t errn) {
    hist_take t = {out, st};
    return batch_run(n, cubins, sizes, jobs, take_hist, &t, err, errn);
}

static void take_text(int i, char *text, void *arg) { ((char **)arg)[i] = text; }

int sass_disassemble_many(int n, const unsigned char *const *cubins, const size_t *sizes,
                          char **texts, int jobs, char *err, size_t errn) {
    return batch_run(n, cubins, sizes, jobs, take_text, texts, err, errn);
}

int sass_ldg_total(const sass_hist *h) {
    int n = 0;
    for (int i = 0; i < SASS_NWIDTH; ++i) n += h->ldg[i];
    return n;
}

int sass_stg_total(const sass_hist *h) {
    int n = 0;
    for (int i = 0; i < SASS_NWIDTH; ++i) n += h->stg[i];
    return n;
}

/* " name n" for each nonzero MMA family. */
static void print_mma_families(const sass_hist *h, FILE *f) {
    const struct {
        const char *name;
        int n;
    } k[] = {{"qgmma", h->qgmma}, {"hgmma", h->hgmma}, {"igmma", h->igmma}, {"bgmma", h->bgmma},
             {"hmma", h->hmma},   {"imma", h->imma},   {"dmma", h->dmma},   {"bmma", h->bmma},
             {"qmma", h->qmma},   {"omma", h->omma},   {"utcmma", h->utcmma},
             {"other", h->mma_other}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; ++i)
        if (k[i].n) fprintf(f, " %s %d", k[i].name, k[i].n);
}

static void print_widths(const char *name, const int *w, FILE *f) {
    static const char *const bits[SASS_NWIDTH] = {"8", "16", "32", "64", "128", "256"};
    int any = 0;
    fprintf(f, " | %s", name);
    for (int i = 0; i < SASS_NWIDTH; ++i) {
        if (w[i]) fprintf(f, " %s:%d", bits[i], w[i]);
        any |= w[i];
    }
    if (!any) fprintf(f, " 0");
}

void sass_hist_print(const sass_hist *h, FILE *f) {
    fprintf(f, "insn %d | mma %d", h->total, h->mma);
    print_mma_families(h, f);
    fprintf(f, " | tma ld/st %d/%d", h->tma_ld, h->tma_st);
    if (h->tma_other || h->blkcp) fprintf(f, " other %d blkcp %d", h->tma_other, h->blkcp);
    fprintf(f, " | ldsm/stsm %d/%d", h->ldsm, h->stsm);
    print_widths("ldg", h->ldg, f);
    print_widths("stg", h->stg, f);
    if (h->ldgsts) fprintf(f, " | ldgsts %d", h->ldgsts);
    if (h->pf) fprintf(f, " | prefetch %d", h->pf);
    fprintf(f, " | lds/sts %d/%d | ldl/stl %d/%d", h->lds, h->sts, h->ldl, h->stl);
    if (h->ldtm || h->sttm) fprintf(f, " | ldtm/sttm %d/%d", h->ldtm, h->sttm);
    if (h->acqbulk || h->preexit) fprintf(f, " | pdl wait/signal %d/%d", h->acqbulk, h->preexit);
    if (h->cgabar) fprintf(f, " | cluster barriers %d", h->cgabar);
    fprintf(f, " | shfl %d mufu %d bar %d syncs %d cvt %d (f2fp %d)\n", h->shfl, h->mufu, h->bar,
            h->syncs, h->cvt, h->f2fp);
}
