/* cli_sass.c -- `ptxq sass`: the SASS of an embedded cubin or a cubin file (nvdisasm), its loops,
 * control bits, a yield-hint research copy, and the K loops of two cubins compared.
 *
 *   ptxq sass KERNEL|FILE.cubin [--target T] [--loads OPCODE] [--loops] [--ctrl]
 *   ptxq sass KERNEL --yield OP:on|off[:FRAC]|OP:every:K --out FILE.cubin
 *   ptxq sass KERNEL|FILE.cubin --kloop KERNEL|FILE.cubin
 *   ptxq sass KERNEL|FILE.cubin --diff KERNEL|FILE.cubin
 */
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
        if (r == 1) continue;
        if (r < 0) return -1;
        if (argv[i][0] == '-' || o->name) {
            fprintf(stderr, "ptxq sass: unexpected argument '%s'\n", argv[i]);
            return -1;
        }
        o->name = argv[i];
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

/* --kloop (whole = 0): the shortest MMA loop (the K loop) of each cubin, --diff (whole = 1): every
 * instruction. Their sizes, then the opcode edits from the first to the second (each with its
 * instruction as it reads, registers included) and the net change per opcode; exit status 0
 * when the opcode sequences are equal, 1 when they differ, 2 on trouble (as cmp). */
static int cmd_compare(const ptxq_kernel_info *a, const ptxq_kernel_info *b, int whole) {
    const ptxq_kernel_info *ks[2] = {a, b};
    char *text[2] = {NULL, NULL};
    sass_loop lp[2];
    sass_mnemonic *ops[2] = {NULL, NULL};
    int n[2] = {0, 0}, rc = 2;
    enum { SHOWN = 64 };
    sass_edit *e = NULL;
    for (int s = 0; s < 2; ++s) {
        char err[1024];
        text[s] = sass_disassemble(ks[s]->cubin, ks[s]->cubin_size, err, sizeof err);
        if (!text[s]) {
            fprintf(stderr, "ptxq sass: %s\n", err);
            goto done;
        }
        sass_hist h;
        if (whole) {
            sass_histogram(text[s], &h);
            lp[s].first = 0, lp[s].length = h.total;
        } else if (sass_mma_loop(text[s], &lp[s]) != 0) {
            fprintf(stderr, "ptxq sass: no loop of %s holds a tensor-core MMA\n", ks[s]->name);
            goto done;
        }
        ops[s] = malloc((size_t)(lp[s].length > 0 ? lp[s].length : 1) * sizeof *ops[s]);
        if (!ops[s]) goto done;
        n[s] = sass_range_opcodes(text[s], lp[s].first, lp[s].length, ops[s], lp[s].length);
        sass_range_tally(text[s], lp[s].first, lp[s].length, &h, NULL, 0);
        if (whole)
            printf("// %s %s (%s): %d instructions, %d MMA\n", ks[s]->name, ks[s]->target,
                   ks[s]->origin, lp[s].length, h.mma);
        else
            printf("// %s %s (%s): K loop at instruction %d, %d instructions, %d MMA\n",
                   ks[s]->name, ks[s]->target, ks[s]->origin, lp[s].first, lp[s].length, h.mma);
    }
    int ne = sass_diff_opcodes(ops[0], n[0], ops[1], n[1], NULL, 0);
    if (ne < 0) {
        fprintf(stderr, "ptxq sass: not compared: past their common start and end the %s differ "
                        "over more than %d instructions (or memory ran out)\n",
                whole ? "kernels" : "loops", SASS_DIFF_MAX);
        goto done;
    }
    if (ne == 0) {
        printf("// opcode sequences equal\n");
        rc = 0;
        goto done;
    }
    e = malloc((size_t)ne * sizeof *e);
    if (!e || sass_diff_opcodes(ops[0], n[0], ops[1], n[1], e, ne) != ne) {
        fprintf(stderr, "ptxq sass: out of memory\n");
        goto done;
    }
    printf("// opcode sequences differ: %d edits (- the first's instruction, + the second's; "
           "indices from the %s's start)\n", ne, whole ? "kernel" : "loop");
    print_op_deltas(e, ne, ops);
    for (int i = 0; i < ne && i < SHOWN; ++i) {
        int s = e[i].kind == '-' ? 0 : 1, at = s ? e[i].ib : e[i].ia;
        char insn[160];
        if (sass_insn_text(text[s], lp[s].first + at, insn, sizeof insn) != 0)
            snprintf(insn, sizeof insn, "%s", ops[s][at].op);
        printf("%c %5d %s\n", e[i].kind, at, insn);
    }
    if (ne > SHOWN) printf("// ... %d more\n", ne - SHOWN);
    rc = 1;
done:
    for (int s = 0; s < 2; ++s) {
        free(text[s]);
        free(ops[s]);
    }
    free(e);
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
