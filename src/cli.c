/* cli.c -- the `ptxq` command: what the library holds, what this machine can run, the SASS of the
 * embedded cubins, and the bench / check entry points of each kernel family.
 *
 *   ptxq info                                     library, build and device report
 *   ptxq kernels [--target T] [--family F] [--no-sass]
 *   ptxq sass ...                                 cli_sass.c
 *   ptxq bench FAMILY [args...]                   bench/bench_<family>.c
 *   ptxq check FAMILY [args...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_gemm.h"
#include "bench_quant.h"
#include "cli.h"
#include "devbuf.h"
#include "internal.h"
#include "ptxq.h"
#include "sass.h"

#ifdef PTXQ_HAVE_GEMV
/* bench/bench_gemv.c; declared here so the CLI does not depend on that header's name. */
int bench_gemv_main(int argc, char **argv);
int check_gemv_main(int argc, char **argv);
#endif

#ifdef PTXQ_HAVE_GEMV
static const char k_family_names[] = "quant, gemv, gemm";
#else
static const char k_family_names[] = "quant, gemm";
#endif

static void usage(FILE *f) {
    fprintf(f,
            "usage: ptxq COMMAND [args]\n"
            "\n"
            "  info                          library, build targets, device, kernel overrides\n"
            "  kernels [--target T] [--family F] [--no-sass]\n"
            "                                every embedded cubin: launch shape, ptxas report and\n"
            "                                (with nvdisasm) an instruction histogram\n"
            "  sass KERNEL|FILE.cubin [--target T] [--loads OPCODE] [--loops] [--ctrl]\n"
            "                                SASS of an embedded cubin (default target: the\n"
            "                                device's, else sm_90a) or of a cubin file (a\n"
            "                                PTXQ_KERNEL_DIR override: its kernel is the file\n"
            "                                name without .cubin / .sm_XXa); --loads: where\n"
            "                                the LDGs of the first loop holding OPCODE (e.g. IDP,\n"
            "                                FFMA) sit;\n"
            "                                --loops: no listing, each loop's instruction count,\n"
            "                                histogram and most frequent opcodes instead;\n"
            "                                --ctrl: each instruction's control bits (wait mask,\n"
            "                                scoreboards, yield hint, stall, operand reuse) and\n"
            "                                the hints of every FFMA/FADD/FMUL run of 32 or more\n"
            "  sass KERNEL --yield OP:on|off[:FRAC]|OP:every:K --out FILE.cubin\n"
            "                                research: a cubin copy with the yield hint set\n"
            "                                (and operand reuse cleared) or cleared on the first\n"
            "                                FRAC (default 1) of every run of 32+ OP (ffma, fadd,\n"
            "                                fmul), or set on every K-th and cleared on the rest;\n"
            "                                load it with PTXQ_KERNEL_DIR to time it\n"
            "  sass KERNEL|FILE.cubin --kloop KERNEL|FILE.cubin\n"
            "                                the K loops (shortest loop holding an MMA) of two\n"
            "                                cubins and the opcode edits between them; exit 0\n"
            "                                when equal, 1 when not\n"
            "  sass KERNEL|FILE.cubin --diff KERNEL|FILE.cubin\n"
            "                                the same for the whole kernels: each edit with its\n"
            "                                instruction, the net change per opcode\n"
            "  sass --kloops DIR [--target T]\n"
            "                                each DIR/*.cubin's K loop against this build's\n"
            "                                kernel of that name: sizes and edits, a line each\n"
            "  bench FAMILY [args]           benchmark a kernel family (FAMILY: %s)\n"
            "  check FAMILY [args]           check a kernel family against the CPU reference\n"
            "  help                          this text\n"
            "\n"
            "environment: PTXQ_KERNEL_DIR (kernel overrides), PTXQ_NVDISASM (nvdisasm binary)\n",
            k_family_names);
}

/* ---- registry helpers --------------------------------------------------------------------- */

int cli_kernel_at(int i, ptxq_kernel_info *k) { return ptxq_kernel_get(i, k) == PTXQ_OK; }

/* Whether entry i is the first with its name (entries repeat per target). */
static int first_of_name(int i) {
    ptxq_kernel_info a, b;
    if (!cli_kernel_at(i, &a)) return 0;
    for (int j = 0; j < i; ++j)
        if (cli_kernel_at(j, &b) && !strcmp(a.name, b.name)) return 0;
    return 1;
}

/* Whether entry i is the first with its target. */
static int first_of_target(int i) {
    ptxq_kernel_info a, b;
    if (!cli_kernel_at(i, &a)) return 0;
    for (int j = 0; j < i; ++j)
        if (cli_kernel_at(j, &b) && !strcmp(a.target, b.target)) return 0;
    return 1;
}

static int count_target(const char *target) {
    int n = 0;
    ptxq_kernel_info k;
    for (int i = 0; i < ptxq_kernel_count(); ++i)
        n += cli_kernel_at(i, &k) && !strcmp(k.target, target);
    return n;
}

static void print_built_targets(void) {
    ptxq_kernel_info k;
    int any = 0;
    printf("built targets:   ");
    for (int i = 0; i < ptxq_kernel_count(); ++i) {
        if (!first_of_target(i) || !cli_kernel_at(i, &k)) continue;
        printf("%s%s (%d kernels)", any ? ", " : "", k.target, count_target(k.target));
        any = 1;
    }
    printf("%s\n", any ? "" : "none");
}

/* ---- info --------------------------------------------------------------------------------- */

static void print_library(void) {
    int v = ptxq_version();
    printf("libptxq:         %d.%d.%d\n", v / 10000, v / 100 % 100, v % 100);
    print_built_targets();
    printf("embedded:        %d cubins\n", ptxq_kernel_count());
}

static void print_driver_version(int v) {
    printf("driver:          CUDA %d.%d (%d)\n", v / 1000, v % 1000 / 10, v);
}

static void print_device(const ptxq_device_info *d) {
    print_driver_version(d->driver_version);
    printf("device %d:        %s\n", d->ordinal, d->name);
    printf("compute:         %d.%d, %d SMs\n", d->cc_major, d->cc_minor, d->sm_count);
    printf("memory:          %.1f GiB, L2 %.1f MiB, DRAM %.0f GB/s (clock x bus width)\n",
           (double)d->global_mem_bytes / (1 << 30), (double)d->l2_bytes / (1 << 20), d->dram_gbps);
    printf("target used:     %s\n", d->target[0] ? d->target : "none");
    int n = d->target[0] ? count_target(d->target) : 0;
    printf("runnable here:   %d of %d kernels\n", n, ptxq_kernel_count());
}

/* Without a context (no cubin target for the device, say), what the driver alone can tell. */
static void probe_driver(void) {
    const char *why = NULL;
    const ptxq_cudrv *drv = ptxq_cudrv_get(&why);
    int v = 0, count = 0, major = 0, minor = 0;
    CUdevice dev;
    char name[128] = "";
    if (!drv) return;
    if (drv->cuDriverGetVersion(&v) == CUDA_SUCCESS) print_driver_version(v);
    if (drv->cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 1) return;
    if (drv->cuDeviceGet(&dev, 0) != CUDA_SUCCESS) return;
    drv->cuDeviceGetName(name, (int)sizeof name, dev);
    drv->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    drv->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    printf("device 0:        %s (compute %d.%d)\n", name, major, minor);
}

static void print_overrides(void) {
    const char *dir = getenv("PTXQ_KERNEL_DIR");
    printf("PTXQ_KERNEL_DIR: %s\n", dir && *dir ? dir : "(unset)");
    if (!dir || !*dir) return;
    int found = 0, toolong = 0;
    ptxq_kernel_info k;
    char path[PTXQ_OVERRIDE_PATH_MAX];
    for (int i = 0; i < ptxq_kernel_count(); ++i) {
        if (!first_of_name(i) || !cli_kernel_at(i, &k)) continue;
        toolong += ptxq_override_too_long(k.name);
        if (!ptxq_override_path(k.name, path, sizeof path)) continue;
        printf("  override %s -> %s\n", k.name, path);
        ++found;
        /* a PTX override's header against the build's launch values (src/registry.c): the
         * header line is at the top, so the first 4 KiB hold it */
        size_t pl = strlen(path);
        FILE *f = pl > 4 && !strcmp(path + pl - 4, ".ptx") ? fopen(path, "rb") : NULL;
        if (f) {
            char head[4097];
            size_t n = fread(head, 1, sizeof head - 1, f);
            fclose(f);
            head[n] = 0;
            if (ptxq_override_check(k.name, k.threads, k.dynamic_smem, head) != PTXQ_OK)
                printf("    refused at load: %s\n", ptxq_last_error());
        }
    }
    printf("  %d overridden kernel%s\n", found, found == 1 ? "" : "s");
    if (toolong)
        printf("  warning: the path is too long for %d kernel%s (\"<dir>/<kernel>.cubin\" over 4095 "
               "bytes): their loads fail\n", toolong, toolong == 1 ? "" : "s");
}

static int cmd_info(int argc, char **argv) {
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "ptxq info: no arguments expected\n");
        return 2;
    }
    print_library();
    ptxq_dev dev;
    char why[512] = "";
    int rc = dev_open(&dev, why, sizeof why);
    if (rc == 0) {
        print_device(&dev.info);
        dev_close(&dev);
    } else {
        printf("device:          none: %s\n", why);
        probe_driver();
    }
    print_overrides();
    return 0;
}

/* ---- kernels ------------------------------------------------------------------------------ */

typedef struct kernels_opts {
    const char *target, *family;
    int sass;
} kernels_opts;

int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **out) {
    if (strcmp(argv[*i], name) != 0) return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "ptxq: %s needs a value\n", name);
        return -1;
    }
    *out = argv[++*i];
    return 1;
}

static int parse_kernels_opts(int argc, char **argv, kernels_opts *o) {
    o->target = o->family = NULL;
    o->sass = 1;
    for (int i = 1; i < argc; ++i) {
        int r = cli_opt_value(argc, argv, &i, "--target", &o->target);
        if (r == 0) r = cli_opt_value(argc, argv, &i, "--family", &o->family);
        if (r == 0 && !strcmp(argv[i], "--no-sass")) {
            o->sass = 0;
            r = 1;
        }
        if (r == 1) continue;
        if (r == 0) fprintf(stderr, "ptxq kernels: unknown argument '%s'\n", argv[i]);
        return -1;
    }
    return 0;
}

/* 1 if some embedded kernel is built for target t */
static int target_built(const char *t) {
    ptxq_kernel_info k;
    for (int i = 0; i < ptxq_kernel_count(); ++i)
        if (cli_kernel_at(i, &k) && !strcmp(k.target, t)) return 1;
    return 0;
}

/* The entries that pass the filters; returns how many (k has ptxq_kernel_count() slots). */
static int select_kernels(const kernels_opts *o, ptxq_kernel_info *k) {
    int n = 0;
    for (int i = 0; i < ptxq_kernel_count(); ++i) {
        if (!cli_kernel_at(i, &k[n])) continue;
        if (o->target && strcmp(k[n].target, o->target)) continue;
        if (o->family && strcmp(k[n].family, o->family)) continue;
        ++n;
    }
    return n;
}

static int name_width(const ptxq_kernel_info *k, int n) {
    int w = 6;
    for (int i = 0; i < n; ++i)
        if ((int)strlen(k[i].name) > w) w = (int)strlen(k[i].name);
    return w;
}

static void print_kernels_header(int w, int with_sass) {
    printf("%-*s %-8s %5s %6s %4s %6s %9s %5s %5s", w, "kernel", "target", "thr", "dsmem", "regs",
           "ssmem", "spill s/l", "stack", "C7510");
    if (with_sass)
        printf(" | %4s %7s %4s %6s %7s %4s %7s %4s", "mma", "tma l/s", "ldsm", "ldg128", "ldg-oth",
               "stg", "ldl/stl", "shfl");
    printf("\n");
}

static void print_hist_columns(const sass_hist *h) {
    char tma[24], local[24];
    snprintf(tma, sizeof tma, "%d/%d", h->tma_ld, h->tma_st);
    snprintf(local, sizeof local, "%d/%d", h->ldl, h->stl);
    printf(" | %4d %7s %4d %6d %7d %4d %7s %4d", h->mma, tma, h->ldsm, h->ldg[SASS_W128],
           sass_ldg_total(h) - h->ldg[SASS_W128], sass_stg_total(h), local, h->shfl);
}

static void print_kernel_row(const ptxq_kernel_info *k, int w, const sass_hist *h, int hist_ok) {
    char spill[24];
    snprintf(spill, sizeof spill, "%d/%d", k->spill_stores, k->spill_loads);
    printf("%-*s %-8s %5d %6d %4d %6d %9s %5d %5s", w, k->name, k->target, k->threads,
           k->dynamic_smem, k->registers, k->static_smem, spill, k->stack_frame,
           k->wgmma_serialized ? "yes" : "-");
    if (h && hist_ok) print_hist_columns(h);
    if (h && !hist_ok) printf(" | (nvdisasm failed)");
    printf("\n");
}

/* Histograms of the n selected cubins into h, st; returns the failures. */
static int kernels_hist(const ptxq_kernel_info *k, int n, sass_hist *h, int *st, char *err,
                        size_t errn) {
    const unsigned char **cubin = calloc((size_t)n + 1, sizeof *cubin);
    size_t *size = calloc((size_t)n + 1, sizeof *size);
    if (!cubin || !size) {
        free(cubin);
        free(size);
        snprintf(err, errn, "out of memory");
        return n;
    }
    for (int i = 0; i < n; ++i) {
        cubin[i] = k[i].cubin;
        size[i] = k[i].cubin_size;
    }
    fprintf(stderr, "ptxq: disassembling %d cubin%s with nvdisasm...\n", n, n == 1 ? "" : "s");
    int failed = sass_hist_many(n, cubin, size, h, st, 0, err, errn);
    free(cubin);
    free(size);
    return failed;
}

static void print_kernels_table(const ptxq_kernel_info *k, int n, const sass_hist *h,
                                const int *st) {
    int w = name_width(k, n);
    print_kernels_header(w, h != NULL);
    for (int i = 0; i < n; ++i)
        print_kernel_row(&k[i], w, h ? &h[i] : NULL, st ? st[i] == 0 : 0);
    printf("%d kernel%s\n", n, n == 1 ? "" : "s");
}

static int cmd_kernels(int argc, char **argv) {
    kernels_opts o;
    if (parse_kernels_opts(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    if (o.target && !target_built(o.target)) { /* (was "0 kernels", exit 0: found by review) */
        char built[128];
        ptxq_built_targets(built, sizeof built);
        fprintf(stderr, "ptxq kernels: no kernels for target '%s'; this build has %s\n", o.target,
                built);
        return 2;
    }
    int total = ptxq_kernel_count();
    ptxq_kernel_info *k = calloc((size_t)total + 1, sizeof *k);
    sass_hist *h = calloc((size_t)total + 1, sizeof *h);
    int *st = calloc((size_t)total + 1, sizeof *st);
    if (!k || !h || !st) {
        fprintf(stderr, "ptxq kernels: out of memory\n");
        free(k);
        free(h);
        free(st);
        return 1;
    }
    int n = select_kernels(&o, k);
    char path[4096], err[512] = "";
    int have = o.sass && n > 0 && sass_find_nvdisasm(path, sizeof path) == 0;
    int failed = have ? kernels_hist(k, n, h, st, err, sizeof err) : 0;
    print_kernels_table(k, n, have ? h : NULL, have ? st : NULL);
    if (o.sass && !have && n > 0) printf("note: no instruction histogram: %s\n", sass_nvdisasm_hint());
    if (failed) printf("note: nvdisasm failed on %d cubin%s: %s\n", failed, failed == 1 ? "" : "s", err);
    free(k);
    free(h);
    free(st);
    return failed ? 1 : 0;
}

/* ---- bench / check ------------------------------------------------------------------------ */

typedef int (*family_main)(int argc, char **argv);

typedef struct family_cmd {
    const char *name;
    family_main bench, check;
} family_cmd;

static const family_cmd k_families[] = {
    {"quant", bench_quant_main, check_quant_main},
#ifdef PTXQ_HAVE_GEMV
    {"gemv", bench_gemv_main, check_gemv_main},
#endif
    {"gemm", bench_gemm_main, check_gemm_main},
};

/* argv[0] is "bench" or "check", argv[1] the family; the family's main gets argv + 1. */
static int cmd_family(int argc, char **argv, int check) {
    if (argc < 2) {
        fprintf(stderr, "ptxq %s: which family?\n", argv[0]);
        usage(stderr);
        return 2;
    }
    for (size_t i = 0; i < sizeof k_families / sizeof k_families[0]; ++i) {
        if (strcmp(argv[1], k_families[i].name)) continue;
        family_main fn = check ? k_families[i].check : k_families[i].bench;
        return fn(argc - 1, argv + 1);
    }
    fprintf(stderr, "ptxq %s: unknown family '%s'\n", argv[0], argv[1]);
    usage(stderr);
    return 2;
}

/* ---- main --------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "kernels")) return cmd_kernels(argc - 1, argv + 1);
    if (!strcmp(cmd, "sass")) return cli_sass(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench")) return cmd_family(argc - 1, argv + 1, 0);
    if (!strcmp(cmd, "check")) return cmd_family(argc - 1, argv + 1, 1);
    fprintf(stderr, "ptxq: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
