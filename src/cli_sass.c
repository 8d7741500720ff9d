/* cli_sass.c -- `ptxq sass`: the SASS of an embedded cubin or a cubin file (nvdisasm), its loops,
 * control bits, a yield-hint research copy, and the K loops of two cubins compared.
 *
 *   ptxq sass KERNEL|FILE.cubin [--target T] [--loads OPCODE] [--loops] [--ctrl]
 *   ptxq sass KERNEL --yield OP:on|off[:FRAC]|OP:every:K --out FILE.cubin
 *   ptxq sass KERNEL|FILE.cubin --kloop KERNEL|FILE.cubin
 *   ptxq sass KERNEL|FILE.cubin --diff KERNEL|FILE.cubin
 *   ptxq sass --kloops DIR [--target T]
 */
#include <dirent.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "internal.h"
#include "ptxq.h"
#include "sass.h"
#include "sass_ctrl.h"

/* Device 0's cubin target, else sm_90a. Asks the driver for the compute capability only (found by
 * review: opening a ptxq context created a CUDA context on the GPU just for this). */
static void default_target(char *out, size_t n) {
    snprintf(out, n, "sm_90a");
    const char *why = NULL;
    const ptxq_cudrv *d = ptxq_cudrv_get(&why);
    CUdevice dev;
    int ma = 0, mi = 0;
    if (!d || d->cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        d->cuDeviceGetAttribute(&ma, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) ||
        d->cuDeviceGetAttribute(&mi, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
        return;
    const char *t = ptxq_target_for(ma, mi);
    if (t && *t) snprintf(out, n, "%s", t);
}

static void print_targets_of(const char *name, FILE *f) {
    ptxq_kernel_info k;
    int any = 0;
    for (int i = 0; i < ptxq_kernel_count(); ++i) {
        if (!cli_kernel_at(i, &k) || strcmp(k.name, name)) continue;
        fprintf(f, "%s%s", any ? ", " : "", k.target);
        any = 1;
    }
    fprintf(f, "\n");
}

typedef struct sass_opts {
    const char *name, *target, *loads;
    const char *kloop; /* --kloop OTHER: the K loops of name and OTHER compared */
    const char *diff;  /* --diff OTHER: the whole kernels compared */
    const char *kloops; /* --kloops DIR: every cubin there against the embedded kernel */
    int loops, ctrl;
    const char *yield, *out; /* --yield OP:on|off[:FRAC] or OP:every:K, --out FILE */
} sass_opts;

static int parse_sass_args(int argc, char **argv, sass_opts *o) {
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--loops")) {
            o->loops = 1;
            continue;
        }
        if (!strcmp(argv[i], "--ctrl")) {
            o->ctrl = 1;
            continue;
        }
        int r = cli_opt_value(argc, argv, &i, "--target", &o->target);
        if (r == 0) r = cli_opt_value(argc, argv, &i, "--loads", &o->loads);
        if (r == 0) r = cli_opt_value(argc, argv, &i, "--yield", &o->yield);
        if (r == 0) r = cli_opt_value(argc, argv, &i, "--out", &o->out);
        if (r == 0) r = cli_opt_value(argc, argv, &i, "--kloop", &o->kloop);
        if (r == 0) r = cli_opt_value(argc, argv, &i, "--diff", &o->diff);
        if (r == 0) r = cli_opt_value(argc, argv, &i, "--kloops", &o->kloops);
        if (r == 1) continue;
        if (r < 0) return -1;
        if (argv[i][0] == '-' || o->name) {
            fprintf(stderr, "ptxq sass: unexpected argument '%s'\n", argv[i]);
            return -1;
        }
        o->name = argv[i];
    }
    if (o->kloops) {
        if (o->name || o->kloop || o->diff || o->yield || o->out || o->loops || o->ctrl || o->loads) {
            fprintf(stderr, "ptxq sass: --kloops DIR takes no kernel and no option but --target\n");
            return -1;
        }
        return 0;
    }
    if (!o->name) {
        fprintf(stderr, "ptxq sass: which kernel? (see `ptxq kernels`)\n");
        return -1;
    }
    if ((o->kloop || o->diff) && (o->yield || o->loops || o->ctrl || o->loads || (o->kloop && o->diff))) {
        fprintf(stderr, "ptxq sass: --%s takes no other option but --target\n",
                o->kloop ? "kloop" : "diff");
        return -1;
    }
    if (!o->yield != !o->out) {
        fprintf(stderr, "ptxq sass: --yield and --out go together\n");
        return -1;
    }
    return 0;
}

typedef struct sass_opname {
    const char *name;
    unsigned op;
} sass_opname;

static const sass_opname k_run_ops[] = {
    {"ffma", SASS_OP_FFMA}, {"fadd", SASS_OP_FADD}, {"fmul", SASS_OP_FMUL}};

/* The listing with each instruction's control bits after it, then the hints of every run. */
static void print_ctrl(const char *text, const unsigned char *code, size_t len) {
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        int n = nl ? (int)(nl - line) : (int)strlen(line);
        unsigned long addr = 0;
        if (sass_line_addr(line, line + n, &addr) && addr % 16 == 0 && addr + 16 <= len) {
            sass_ctrl c;
            char buf[48];
            sass_ctrl_decode(code + addr, &c);
            sass_ctrl_format(&c, buf, sizeof buf);
            printf("%-96.*s // %s\n", n, line, buf);
        } else {
            printf("%.*s\n", n, line);
        }
        line += n + (nl ? 1 : 0);
    }
    printf("// runs of 32+ (y: yield hint, r: no yield and an operand cached, -: neither)\n");
    for (size_t k = 0; k < sizeof k_run_ops / sizeof k_run_ops[0]; ++k) {
        sass_run runs[32];
        int nr = sass_runs(code, len, k_run_ops[k].op, 32, runs, 32);
        for (int r = 0; r < nr && r < 32; ++r) {
            char hints[512];
            sass_run_hints(code, &runs[r], k_run_ops[k].op, hints, sizeof hints);
            printf("// %s run of %d at 0x%04x: %s\n", k_run_ops[k].name, runs[r].count,
                   runs[r].first * 16, hints);
        }
    }
}

/* --yield OP:on|off[:FRAC] or OP:every:K, --out FILE: write the rewritten copy. */
static int write_yield_copy(const ptxq_kernel_info *k, const char *spec, const char *out) {
    char opname[8] = "", mode[8] = "";
    double frac = 1.0;
    int used = 0, got = sscanf(spec, "%7[a-z]:%7[a-z]%n:%lf%n", opname, mode, &used, &frac, &used);
    if (spec[used]) got = -1; /* text after OP:MODE[:NUMBER] */
    unsigned op = 0;
    for (size_t i = 0; i < sizeof k_run_ops / sizeof k_run_ops[0]; ++i)
        if (!strcmp(opname, k_run_ops[i].name)) op = k_run_ops[i].op;
    int yield = !strcmp(mode, "on")      ? 1
                : !strcmp(mode, "off")   ? 0
                : !strcmp(mode, "every") ? 2
                                         : -1;
    if (yield == 2) { /* OP:every:K */
        yield = got == 3 && frac >= 2 && frac <= 64 && frac == (int)frac ? (int)frac : -1;
        frac = 1.0;
    }
    /* (written so that a NaN FRAC fails too: found by review) */
    if (got < 2 || !op || yield < 0 || !(frac >= 0 && frac <= 1)) {
        fprintf(stderr, "ptxq sass: --yield wants OP:on|off[:FRAC] or OP:every:K, OP ffma, fadd "
                        "or fmul, FRAC in 0..1, K in 2..64 (got '%s')\n", spec);
        return 2;
    }
    unsigned char *copy = malloc(k->cubin_size);
    if (!copy) return 1;
    memcpy(copy, k->cubin, k->cubin_size);
    int runs = 0;
    int changed = sass_rewrite_yield(copy, k->cubin_size, k->name, op, 32, frac, yield, &runs);
    int rc = 0;
    if (changed < 0) {
        fprintf(stderr, "ptxq sass: no code section for %s in its cubin\n", k->name);
        rc = 1;
    } else {
        FILE *f = fopen(out, "wb");
        if (!f || fwrite(copy, 1, k->cubin_size, f) != k->cubin_size) {
            fprintf(stderr, "ptxq sass: cannot write %s\n", out);
            rc = 1;
        }
        if (f && fclose(f) != 0) rc = 1;
        if (!rc)
            printf("%s: %d %s run%s of 32+, %d control word%s changed -> %s\n", k->name, runs,
                   opname, runs == 1 ? "" : "s", changed, changed == 1 ? "" : "s", out);
    }
    free(copy);
    return rc;
}

/* Every loop of the text: where it is, how deep, its histogram and its most frequent opcodes
 * (what a trip costs in issue slots, by instruction). */
static int print_loops(const char *text) {
    int n = sass_loops(text, NULL, 0);
    if (n < 0) return 1;
    if (n == 0) {
        printf("// no loops\n");
        return 0;
    }
    sass_loop *lp = malloc((size_t)n * sizeof *lp);
    if (!lp || sass_loops(text, lp, n) != n) {
        free(lp);
        return 1;
    }
    printf("// %d loop%s (instruction indices from 0; an inner loop is listed before the loop "
           "holding it)\n", n, n == 1 ? "" : "s");
    for (int j = 0; j < n; ++j) {
        int depth = 0, end = lp[j].first + lp[j].length;
        for (int i = 0; i < n; ++i)
            if (i != j && lp[i].first <= lp[j].first && lp[i].first + lp[i].length >= end &&
                lp[i].length > lp[j].length)
                ++depth;
        sass_hist h;
        sass_op_count ops[64];
        int nops = sass_range_tally(text, lp[j].first, lp[j].length, &h, ops, 64);
        printf("// loop %d: instructions %d..%d (%d), depth %d\n//   ", j, lp[j].first, end - 1,
               lp[j].length, depth);
        sass_hist_print(&h, stdout);
        printf("//  ");
        for (int i = 0; i < nops && i < 16; ++i) printf(" %s %d", ops[i].op, ops[i].n);
        printf("%s\n", nops > 16 ? " ..." : "");
    }
    free(lp);
    return 0;
}

static int cmd_sass_on(const ptxq_kernel_info *kp, const sass_opts *op);
static int cmd_compare(const ptxq_kernel_info *a, const ptxq_kernel_info *b, int whole);
static int cmd_kloops(const char *dir, const char *target);

/* The cubin `ptxq sass` names: an embedded kernel (its target, or this GPU's / sm_90a), or a
 * .cubin file (its bytes into *file, which the caller frees; k's strings point into fname). 0,
 * or 2 with a message printed. */
static int sass_subject(const char *name, const char *target, ptxq_kernel_info *out,
                        unsigned char **file, char *fname, size_t fnamen) {
    ptxq_kernel_info k;
    *file = NULL;
    if (ptxq_kernel_find(name, NULL, &k) != PTXQ_OK) {
        char ferr[512];
        size_t fsize = 0;
        size_t nl = strlen(name);
        if (nl < 6 || strcmp(name + nl - 6, ".cubin")) {
            fprintf(stderr, "ptxq sass: unknown kernel '%s' (see `ptxq kernels`; a cubin file's name "
                            "ends in .cubin)\n", name);
            return 2;
        }
        if (target) {
            fprintf(stderr, "ptxq sass: --target is for embedded kernels, not a cubin file\n");
            return 2;
        }
        if (sass_cubin_file(name, file, &fsize, fname, fnamen, ferr, sizeof ferr) != 0) {
            fprintf(stderr, "ptxq sass: %s\n", ferr);
            return 2;
        }
        /* the kernel's own name where the file holds one kernel (a renamed copy: y2.cubin),
         * else the file's */
        char kname[128];
        if (sass_cubin_kernel(*file, fsize, kname, sizeof kname) == 0)
            snprintf(fname, fnamen, "%s", kname);
        memset(&k, 0, sizeof k);
        k.name = fname;
        k.target = "(file)";
        k.origin = name;
        k.cubin = *file;
        k.cubin_size = fsize;
    } else {
        char dflt[16];
        if (!target) default_target(dflt, sizeof dflt);
        if (!target) target = dflt;
        if (ptxq_kernel_find(name, target, &k) != PTXQ_OK) {
            fprintf(stderr, "ptxq sass: kernel '%s' has no %s cubin; built for: ", name, target);
            print_targets_of(name, stderr);
            return 2;
        }
    }
    *out = k;
    return 0;
}

int cli_sass(int argc, char **argv) {
    sass_opts o;
    if (parse_sass_args(argc, argv, &o) != 0) return 2;
    if (o.kloops) return cmd_kloops(o.kloops, o.target);
    ptxq_kernel_info k, k2;
    unsigned char *file = NULL, *file2 = NULL; /* cubin files named on the command line */
    char fname[128], fname2[128];
    if (sass_subject(o.name, o.target, &k, &file, fname, sizeof fname) != 0) return 2;
    int rc;
    if (o.kloop || o.diff) {
        rc = sass_subject(o.kloop ? o.kloop : o.diff, o.target, &k2, &file2, fname2, sizeof fname2);
        if (rc == 0) rc = cmd_compare(&k, &k2, o.diff != NULL);
    } else {
        rc = cmd_sass_on(&k, &o);
    }
    free(file);
    free(file2);
    return rc;
}

/* Net change per base opcode ("IMAD.WIDE" counts as IMAD) over the edits, gains then losses,
 * each in the order first met: "IMAD +2, MOV -1". Past 256 distinct opcodes the rest go
 * uncounted (a whole-kernel diff met 60). */
static void print_op_deltas(const sass_edit *e, int ne, sass_mnemonic *const ops[2]) {
    enum { MAXOPS = 256 };
    sass_op_count d[MAXOPS];
    int nd = 0;
    for (int i = 0; i < ne; ++i) {
        const char *op = e[i].kind == '-' ? ops[0][e[i].ia].op : ops[1][e[i].ib].op;
        size_t len = strcspn(op, ".");
        if (len >= sizeof d[0].op) len = sizeof d[0].op - 1;
        int j = 0;
        while (j < nd && (strlen(d[j].op) != len || strncmp(d[j].op, op, len))) ++j;
        if (j == nd) {
            if (nd == MAXOPS) continue;
            memcpy(d[j].op, op, len);
            d[j].op[len] = 0;
            d[j].n = 0;
            ++nd;
        }
        d[j].n += e[i].kind == '-' ? -1 : 1;
    }
    printf("// net per opcode:");
    int any = 0;
    for (int pass = 0; pass < 2; ++pass) /* gains, then losses */
        for (int j = 0; j < nd; ++j)
            if (pass == 0 ? d[j].n > 0 : d[j].n < 0) {
                printf("%s %s %+d", any ? "," : "", d[j].op, d[j].n);
                any = 1;
            }
    printf("%s\n", any ? "" : " none (the same opcodes, moved)");
}

/* Two cubins compared: the range of each (the K loop, or every instruction), its opcodes and MMA
 * count, and the edit script from the first to the second. */
typedef struct sass_compare {
    char *text[2];
    sass_loop lp[2];
    sass_mnemonic *ops[2];
    int n[2], mma[2];
    int ne;       /* edits: 0 when the opcode sequences are equal */
    sass_edit *e; /* all ne of them */
} sass_compare;

static void compare_free(sass_compare *c) {
    for (int s = 0; s < 2; ++s) {
        free(c->text[s]);
        free(c->ops[s]);
    }
    free(c->e);
    memset(c, 0, sizeof *c);
}

/* The comparison of two listings (c takes them over and frees them with itself) of the kernels
 * named a and b: whole = 0, the shortest MMA loop (the K loop) of each; 1, every instruction. 0,
 * or with the reason in err (c freed): -2 when a's listing has no K loop (a kernel without MMA:
 * --kloops skips it), -1 on any other failure. */
static int compare_texts(char *ta, char *tb, const char *a, const char *b, int whole, sass_compare *c,
                         char *err, size_t errn) {
    const char *names[2] = {a, b};
    memset(c, 0, sizeof *c);
    c->text[0] = ta, c->text[1] = tb;
    for (int s = 0; s < 2; ++s) {
        sass_hist h;
        if (!c->text[s]) {
            snprintf(err, errn, "no listing of %s", names[s]);
            goto fail;
        }
        if (whole) {
            sass_histogram(c->text[s], &h);
            c->lp[s].first = 0, c->lp[s].length = h.total;
        } else if (sass_mma_loop(c->text[s], &c->lp[s]) != 0) {
            snprintf(err, errn, "no loop of %s holds a tensor-core MMA", names[s]);
            compare_free(c);
            return s == 0 ? -2 : -1;
        } else {
            sass_range_tally(c->text[s], c->lp[s].first, c->lp[s].length, &h, NULL, 0);
        }
        c->mma[s] = h.mma;
        int len = c->lp[s].length;
        c->ops[s] = malloc((size_t)(len > 0 ? len : 1) * sizeof *c->ops[s]);
        if (!c->ops[s]) goto oom;
        c->n[s] = sass_range_opcodes(c->text[s], c->lp[s].first, len, c->ops[s], len);
    }
    c->ne = sass_diff_opcodes(c->ops[0], c->n[0], c->ops[1], c->n[1], NULL, 0);
    if (c->ne < 0) {
        snprintf(err, errn, "not compared: past their common start and end the %s differ over more "
                 "than %d instructions (or memory ran out)", whole ? "kernels" : "loops",
                 SASS_DIFF_MAX);
        goto fail;
    }
    if (c->ne == 0) return 0;
    c->e = malloc((size_t)c->ne * sizeof *c->e);
    if (c->e && sass_diff_opcodes(c->ops[0], c->n[0], c->ops[1], c->n[1], c->e, c->ne) == c->ne)
        return 0;
oom:
    snprintf(err, errn, "out of memory");
fail:
    compare_free(c);
    return -1;
}

/* compare_texts on the two cubins, disassembled two at once */
static int compare_run(const ptxq_kernel_info *a, const ptxq_kernel_info *b, int whole,
                       sass_compare *c, char *err, size_t errn) {
    const unsigned char *cubins[2] = {a->cubin, b->cubin};
    size_t sizes[2] = {a->cubin_size, b->cubin_size};
    char *texts[2] = {NULL, NULL};
    if (sass_disassemble_many(2, cubins, sizes, texts, 2, err, errn) != 0) {
        free(texts[0]);
        free(texts[1]);
        memset(c, 0, sizeof *c);
        return -1;
    }
    return compare_texts(texts[0], texts[1], a->name, b->name, whole, c, err, errn);
}

/* --kloop (whole = 0): the shortest MMA loop (the K loop) of each cubin, --diff (whole = 1): every
 * instruction. Their sizes, then the opcode edits from the first to the second (each with its
 * instruction as it reads, registers included) and the net change per opcode; exit status 0
 * when the opcode sequences are equal, 1 when they differ, 2 on trouble (as cmp). */
static int cmd_compare(const ptxq_kernel_info *a, const ptxq_kernel_info *b, int whole) {
    const ptxq_kernel_info *ks[2] = {a, b};
    enum { SHOWN = 64 };
    sass_compare c;
    char err[1024];
    if (compare_run(a, b, whole, &c, err, sizeof err) != 0) {
        fprintf(stderr, "ptxq sass: %s\n", err);
        return 2;
    }
    for (int s = 0; s < 2; ++s)
        if (whole)
            printf("// %s %s (%s): %d instructions, %d MMA\n", ks[s]->name, ks[s]->target,
                   ks[s]->origin, c.lp[s].length, c.mma[s]);
        else
            printf("// %s %s (%s): K loop at instruction %d, %d instructions, %d MMA\n",
                   ks[s]->name, ks[s]->target, ks[s]->origin, c.lp[s].first, c.lp[s].length,
                   c.mma[s]);
    if (c.ne == 0) {
        printf("// opcode sequences equal\n");
        compare_free(&c);
        return 0;
    }
    printf("// opcode sequences differ: %d edits (- the first's instruction, + the second's; "
           "indices from the %s's start)\n", c.ne, whole ? "kernel" : "loop");
    print_op_deltas(c.e, c.ne, c.ops);
    for (int i = 0; i < c.ne && i < SHOWN; ++i) {
        int s = c.e[i].kind == '-' ? 0 : 1, at = s ? c.e[i].ib : c.e[i].ia;
        char insn[160];
        if (sass_insn_text(c.text[s], c.lp[s].first + at, insn, sizeof insn) != 0)
            snprintf(insn, sizeof insn, "%s", c.ops[s][at].op);
        printf("%c %5d %s\n", c.e[i].kind, at, insn);
    }
    if (c.ne > SHOWN) printf("// ... %d more\n", c.ne - SHOWN);
    compare_free(&c);
    return 1;
}

/* One cubin of --kloops' directory: its file, bytes and kernel name, the embedded kernel of that
 * name, and why it is not compared (empty when it is; error: why is a failure, not a skip). */
typedef struct kloop_pair {
    char *path;
    unsigned char *bytes;
    size_t size;
    char name[128];
    ptxq_kernel_info k;
    char why[256];
    int error;
} kloop_pair;

static int by_path(const void *x, const void *y) {
    return strcmp(((const kloop_pair *)x)->path, ((const kloop_pair *)y)->path);
}

static void free_pairs(kloop_pair *f, int n) {
    for (int i = 0; i < n; ++i) {
        free(f[i].path);
        free(f[i].bytes);
    }
    free(f);
}

/* The regular files of dir whose names end in .cubin, sorted by path, into *out (*n of them).
 * 0, or -1 with a message printed. */
static int list_cubins(const char *dir, kloop_pair **out, int *n) {
    *out = NULL, *n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "ptxq sass: cannot open directory %s\n", dir);
        return -1;
    }
    kloop_pair *f = NULL;
    int nf = 0, cap = 0, oom = 0;
    for (struct dirent *de; !oom && (de = readdir(d)) != NULL;) {
        size_t l = strlen(de->d_name);
        if (l < 7 || strcmp(de->d_name + l - 6, ".cubin")) continue;
        size_t pl = strlen(dir) + l + 2;
        char *path = malloc(pl);
        struct stat st;
        if (!path) {
            oom = 1;
            break;
        }
        snprintf(path, pl, "%s/%s", dir, de->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) { /* a directory named x.cubin, say */
            free(path);
            continue;
        }
        if (nf == cap) {
            cap = cap ? 2 * cap : 64;
            kloop_pair *g = realloc(f, (size_t)cap * sizeof *f);
            if (!g) {
                free(path);
                oom = 1;
                break;
            }
            f = g;
        }
        memset(&f[nf], 0, sizeof f[nf]);
        f[nf++].path = path;
    }
    closedir(d);
    if (oom) {
        fprintf(stderr, "ptxq sass: out of memory\n");
        free_pairs(f, nf);
        return -1;
    }
    if (nf > 1) qsort(f, (size_t)nf, sizeof *f, by_path);
    *out = f, *n = nf;
    return 0;
}

/* --kloops DIR: for every .cubin in DIR (another build's kernels, as PTXQ_KERNEL_DIR takes them)
 * whose kernel is embedded for target (default: this GPU's, else sm_90a) and has a K loop, this
 * build's K loop against the file's: a line each (the file's name after the kernel's where they
 * differ), then a count. Every listing is made first, up to one nvdisasm a CPU at once. Files
 * with no embedded kernel of their name or no K loop are listed as skipped. Exit 0 when every
 * compared pair is equal, 1 when any differs, 2 when a file or listing failed or nothing was
 * compared. */
static int cmd_kloops(const char *dir, const char *target) {
    char dflt[16];
    if (!target) default_target(dflt, sizeof dflt);
    if (!target) target = dflt;
    kloop_pair *f;
    int nf;
    if (list_cubins(dir, &f, &nf) != 0) return 2;
    /* the pairs' cubins, the embedded one first: 2 per compared pair */
    const unsigned char **cubins = calloc((size_t)(2 * nf + 1), sizeof *cubins);
    size_t *sizes = calloc((size_t)(2 * nf + 1), sizeof *sizes);
    char **texts = calloc((size_t)(2 * nf + 1), sizeof *texts);
    int *slot = calloc((size_t)(nf + 1), sizeof *slot), nc = 0, rc = 2;
    if (!cubins || !sizes || !texts || !slot) {
        fprintf(stderr, "ptxq sass: out of memory\n");
        goto done;
    }
    for (int i = 0; i < nf; ++i) {
        kloop_pair *p = &f[i];
        char err[1024], kname[128];
        slot[i] = -1;
        if (sass_cubin_file(p->path, &p->bytes, &p->size, p->name, sizeof p->name, err,
                            sizeof err) != 0) {
            snprintf(p->why, sizeof p->why, "%.250s", err);
            p->error = 1;
            continue;
        }
        if (sass_cubin_kernel(p->bytes, p->size, kname, sizeof kname) == 0)
            snprintf(p->name, sizeof p->name, "%s", kname);
        if (ptxq_kernel_find(p->name, target, &p->k) != PTXQ_OK) {
            snprintf(p->why, sizeof p->why, "skipped: no %s kernel of that name here", target);
            continue;
        }
        slot[i] = nc;
        cubins[2 * nc] = p->k.cubin, sizes[2 * nc] = p->k.cubin_size;
        cubins[2 * nc + 1] = p->bytes, sizes[2 * nc + 1] = p->size;
        ++nc;
    }
    char err[1024];
    if (nc > 0 && sass_disassemble_many(2 * nc, cubins, sizes, texts, 0, err, sizeof err) != 0)
        fprintf(stderr, "ptxq sass: %s\n", err);
    int equal = 0, differ = 0, resized = 0, skipped = 0, failed = 0;
    printf("// K loops (shortest loop holding an MMA) of this build's %s kernels against %s\n",
           target, dir);
    printf("%-44s %13s %13s %6s\n", "kernel", "this build", "file", "edits");
    for (int i = 0; i < nf; ++i) {
        kloop_pair *p = &f[i];
        const char *base = strrchr(p->path, '/') ? strrchr(p->path, '/') + 1 : p->path;
        char label[300];
        size_t nl = strlen(p->name);
        /* the file's name too where it is not the kernel's ("x.cubin", "x.sm_90a.cubin") */
        if (strncmp(base, p->name, nl) || (strcmp(base + nl, ".cubin") && strncmp(base + nl, ".sm_", 4)))
            snprintf(label, sizeof label, "%s (%s)", p->name, base);
        else
            snprintf(label, sizeof label, "%s", p->name);
        if (slot[i] < 0) {
            printf("%-44s %s\n", label, p->why);
            p->error ? ++failed : ++skipped;
            continue;
        }
        sass_compare c;
        int cr = compare_texts(texts[2 * slot[i]], texts[2 * slot[i] + 1], p->k.name, p->path, 0,
                               &c, err, sizeof err);
        if (cr != 0) {
            printf("%-44s %s%s\n", label, cr == -2 ? "skipped: " : "", err);
            cr == -2 ? ++skipped : ++failed;
            continue;
        }
        char here[32], there[32];
        snprintf(here, sizeof here, "%d @%d", c.lp[0].length, c.lp[0].first);
        snprintf(there, sizeof there, "%d @%d", c.lp[1].length, c.lp[1].first);
        printf("%-44s %13s %13s %6d%s\n", label, here, there, c.ne,
               c.lp[0].length != c.lp[1].length ? "  size differs" : "");
        c.ne == 0 ? ++equal : ++differ;
        resized += c.lp[0].length != c.lp[1].length;
        compare_free(&c);
    }
    printf("// %d compared: %d equal, %d differ (%d of them in size); %d skipped, %d failed\n",
           equal + differ, equal, differ, resized, skipped, failed);
    rc = failed || equal + differ == 0 ? 2 : differ ? 1 : 0;
done:
    free_pairs(f, nf);
    free(cubins);
    free(sizes);
    free(texts); /* each listing was freed above, or went to compare_texts, which freed it */
    free(slot);
    return rc;
}

/* ptxq sass on one cubin (embedded, or a file: k->target "(file)") */
static int cmd_sass_on(const ptxq_kernel_info *kp, const sass_opts *op) {
    ptxq_kernel_info k = *kp;
    sass_opts o = *op;
    const char *loads = o.loads;
    int loops = o.loops;
    if (o.yield) return write_yield_copy(&k, o.yield, o.out);
    size_t code_off = 0, code_len = 0;
    if (o.ctrl && sass_cubin_code(k.cubin, k.cubin_size, k.name, &code_off, &code_len) != 0) {
        fprintf(stderr, "ptxq sass: no code section for %s in its cubin\n", k.name);
        return 1;
    }
    char err[1024];
    char *text = sass_disassemble(k.cubin, k.cubin_size, err, sizeof err);
    if (!text) {
        fprintf(stderr, "ptxq sass: %s\n", err);
        return 1;
    }
    sass_hist h;
    sass_histogram(text, &h);
    printf("// %s %s (%zu-byte cubin, %s)\n", k.name, k.target, k.cubin_size, k.origin);
    if (!loops && o.ctrl)
        print_ctrl(text, k.cubin + code_off, code_len);
    else if (!loops)
        fputs(text, stdout);
    printf("// ");
    sass_hist_print(&h, stdout);
    int rc = loops ? print_loops(text) : 0;
    if (loads) {
        /* a streaming loop whose loads all precede its first compute instruction waits on
         * memory once a trip; loads after it mean ptxas sank them below the compute */
        sass_loop lp;
        if (sass_loop_loads(text, loads, &lp) == 0) {
            printf("// loop at instruction %d: %d instructions, %d LDG, %d of them after the first "
                   "%s (at +%d)\n", lp.first, lp.length, lp.loads, lp.late, loads, lp.marker);
        } else {
            printf("// no loop holds an instruction starting with %s\n", loads);
            rc = 1;
        }
    }
    free(text);
    return rc;
}
