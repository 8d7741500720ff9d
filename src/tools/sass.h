/* sass.h -- SASS of the embedded cubins, through nvdisasm: find the tool, disassemble a cubin,
 * count instruction classes (tools and tests only; not part of libptxq).
 *
 * The histogram reads the text `nvdisasm -c` prints, where every instruction is one line:
 * an address comment (slash-star, hex digits, star-slash: "0320" between them), an optional
 * predicate (@P0, @!UP1), the opcode with its dot-separated modifiers, operands, ';':
 *     <addr>   @!P0 UTMALDG.2D [UR4], [UR12] ;
 * Everything else (directives, labels, section headers, encodings) is ignored. Opcodes are
 * classified by their base name, the part before the first '.', so HFMA2.MMA is an HFMA2 and not
 * a tensor-core MMA. Targets: sm_90a (wgmma: QGMMA/HGMMA/IGMMA/BGMMA), sm_100a (tcgen05.mma:
 * UTCQMMA/UTCHMMA/UTCIMMA/UTCOMMA/...), sm_120a (mma.sync forms: HMMA/IMMA/QMMA/OMMA). */
#ifndef PTXQ_SASS_H
#define PTXQ_SASS_H

#include <stddef.h>
#include <stdio.h>

/* Index of a global access width in sass_hist.ldg / .stg. */
enum {
    SASS_W8 = 0,   /* .U8 / .S8 */
    SASS_W16 = 1,  /* .U16 / .S16 */
    SASS_W32 = 2,  /* no width modifier */
    SASS_W64 = 3,  /* .64 */
    SASS_W128 = 4, /* .128 */
    SASS_W256 = 5, /* .256 (sm_100 and later) */
    SASS_NWIDTH = 6
};

typedef struct sass_hist {
    int total; /* instruction lines */

    /* tensor-core MMAs: mma is the sum of the families below */
    int mma;
    int qgmma, hgmma, igmma, bgmma; /* sm_90 warpgroup MMA (wgmma.mma_async) */
    int hmma, imma, dmma, bmma;     /* warp-level mma.sync */
    int qmma, omma;                 /* sm_120 FP8/FP6/FP4 (incl. block-scaled) mma.sync */
    int utcmma;                     /* sm_100 tcgen05.mma: UTC*MMA (UTCQMMA, UTCHMMA, ...) */
    int mma_other;                  /* any other opcode whose base name ends in "MMA" */

    /* bulk copies */
    int tma_ld;    /* UTMALDG */
    int tma_st;    /* UTMASTG, UTMAREDG */
    int tma_other; /* UTMAPF, UTMACCTL, UTMACMDFLUSH, ... */
    int blkcp;     /* UBLKCP, UBLKRED, UBLKPF (non-tensor bulk copies) */

    /* memory */
    int ldsm, stsm;
    int ldg[SASS_NWIDTH], stg[SASS_NWIDTH]; /* global loads / stores by width */
    int ldgsts;                             /* cp.async */
    int lds, sts;
    int ldl, stl;  /* local memory: spills and stack arrays */
    int pf;        /* CCTL.*.PF*: prefetch.global.L1/L2 */
    int ldtm, sttm; /* tcgen05.ld / tcgen05.st (tensor memory, sm_100) */

    /* the rest */
    int shfl;
    int mufu;
    int bar;   /* BAR */
    int syncs; /* SYNCS.* (mbarrier) */
    int acqbulk, preexit; /* griddepcontrol.wait / .launch_dependents (PDL) */
    int cgabar; /* UCGABAR_ARV: barrier.cluster.arrive */
    int cvt;   /* F2F, F2FP, I2F, I2FP, F2I, F2IP, I2I, I2IP */
    int f2fp;  /* of which F2FP (packed conversions, e.g. to FP8/FP4) */
} sass_hist;

/* Finds nvdisasm, in this order: $PTXQ_NVDISASM (if set and non-empty it is the only candidate, so
 * PTXQ_NVDISASM=none hides the tool); `nvdisasm` on $PATH; $CUDA_ROOT/bin/nvdisasm;
 * /usr/local/cuda/bin/nvdisasm; the pip wheel nvidia-cuda-nvdisasm (<site-packages>/nvidia/cu13/bin,
 * also cu12/ and cuda_nvdisasm/ layouts), located by asking python3. Writes the path into
 * path[0..n) and returns 0, or returns -1. */
int sass_find_nvdisasm(char *path, size_t n);

/* The message to show where nvdisasm is absent (how to install it). */
const char *sass_nvdisasm_hint(void);

/* For tests: 1 (after printing "[  SKIP    ] " and the hint) when no nvdisasm is found, so the
 * caller calls cmocka's skip(); 0 when there is one. */
int sass_no_nvdisasm(void);

/* Disassembles a cubin with `nvdisasm -c` (the tool is looked up once per process). Returns the
 * text (malloc'd, the caller frees it), or NULL with a message in err[0..errn). */
char *sass_disassemble(const unsigned char *cubin, size_t size, char *err, size_t errn);

/* A cubin file (a PTXQ_KERNEL_DIR override, ptxas -o, a --yield copy): its bytes (malloc'd,
 * *size of them) and its kernel's entry name, the file name without its directory, ".cubin" and
 * a ".sm_XXa" target suffix ("dir/gemm_x.sm_90a.cubin" -> "gemm_x"). 0, or -1 with err set (not a
 * readable, non-empty file whose name ends in .cubin). */
int sass_cubin_file(const char *path, unsigned char **bytes, size_t *size, char *name, size_t namen,
                    char *err, size_t errn);

/* Histograms of n cubins, with up to jobs nvdisasm processes at once (jobs <= 0: one per online
 * CPU, at most 32): nvdisasm takes about half a second per cubin, mostly start-up. out[i] is
 * zeroed where cubin i failed; st (may be NULL) gets 0 or -1 per cubin; err the first failure.
 * Returns the number of failures (n if nvdisasm is absent). */
int sass_hist_many(int n, const unsigned char *const *cubins, const size_t *sizes, sass_hist *out,
                   int *st, int jobs, char *err, size_t errn);
/* The listings of n cubins as sass_disassemble makes them, up to jobs nvdisasm processes at once
 * (as sass_hist_many): texts[i] malloc'd (the caller frees it), NULL where cubin i failed.
 * Returns the number of failures; err the first. */
int sass_disassemble_many(int n, const unsigned char *const *cubins, const size_t *sizes,
                          char **texts, int jobs, char *err, size_t errn);

/* If s..end is an instruction line, its address (the hex in the leading comment, bytes from the
 * start of the kernel's code) into *addr (may be NULL) and where the text after that comment
 * starts; NULL otherwise. */
const char *sass_line_addr(const char *s, const char *end, unsigned long *addr);

/* Counts the instruction classes of the text (h is zeroed first). */
void sass_histogram(const char *text, sass_hist *h);

/* sass_disassemble + sass_histogram. 0 on success, -1 with err set. */
int sass_hist_cubin(const unsigned char *cubin, size_t size, sass_hist *h, char *err, size_t errn);

/* Where a loop's global loads sit (sass_loop_loads): a loop is a backward branch (BRA to a label
 * at or before it) and the instructions from that label to the branch. */
typedef struct sass_loop {
    int first;  /* index of the loop's first instruction, counting instruction lines from 0 */
    int length; /* instructions in the loop, the branch included */
    int marker; /* offset in the loop of the first instruction whose opcode starts with marker */
    int loads;  /* LDG instructions in the loop */
    int late;   /* of which after the marker instruction */
} sass_loop;

/* The first loop (in text order of its branch) holding an instruction whose opcode starts with
 * marker (e.g. "IDP", "FFMA"), and where its LDGs sit relative to the first such instruction: a
 * streaming loop whose loads all come before its first compute instruction issues every load of
 * a trip before waiting on any of them. 0 with *out filled, or -1 when no loop holds marker. */
int sass_loop_loads(const char *text, const char *marker, sass_loop *out);

/* Every loop of the text, in the order of their branches (an inner loop before the loop that
 * holds it): first and length filled, marker -1, loads and late 0. Fills up to max entries and
 * returns how many loops there are (out may be NULL with max 0 to count them), -1 on no memory. */
int sass_loops(const char *text, sass_loop *out, int max);

/* Instructions first .. first + length - 1 (indices as in sass_loop): their histogram into h (if
 * not NULL) and a count per base opcode ("IMAD.WIDE.U32" counts as IMAD) into ops, most frequent
 * first (ties by name); returns the number of distinct opcodes stored, at most max: an opcode
 * first seen when ops is full is left out of it (h still counts it). ops may be NULL (max 0). */
typedef struct sass_op_count {
    char op[16];
    int n;
} sass_op_count;
int sass_range_tally(const char *text, int first, int length, sass_hist *h, sass_op_count *ops,
                     int max);

/* The shortest loop holding a tensor-core MMA (sass_hist.mma > 0): a GEMM's K loop. 0 with *out
 * filled as by sass_loops, or -1 when no loop holds one (or no memory). */
int sass_mma_loop(const char *text, sass_loop *out);

/* The opcodes of instructions first .. first + length - 1, modifiers kept and the predicate
 * dropped ("@!P0 IMAD.WIDE.U32 ..." -> "IMAD.WIDE.U32"); returns how many were stored (at most
 * max). */
typedef struct sass_mnemonic {
    char op[32];
} sass_mnemonic;
int sass_range_opcodes(const char *text, int first, int length, sass_mnemonic *ops, int max);

/* An edit script from opcode sequence a to b through their longest common subsequence: each
 * entry an opcode of a only (kind '-', its index ia) or of b only ('+', ib), in order. Returns
 * the number of entries (0: equal sequences), storing the first max; -1 when, past the opcodes
 * the two share at their start and at their end, either is longer than SASS_DIFF_MAX, or
 * memory runs out. (sass_diff.c) */
#define SASS_DIFF_MAX 16384
typedef struct sass_edit {
    char kind;
    int ia, ib;
} sass_edit;
int sass_diff_opcodes(const sass_mnemonic *a, int na, const sass_mnemonic *b, int nb, sass_edit *out,
                      int max);

/* Instruction i (indices as in sass_loop) as it reads after its address, from the predicate or
 * opcode to the ';' ("@!P0 IMAD.WIDE.U32 R8, R3, 0x10, R8 ;"), into out (cut to n - 1
 * characters); 0, or -1 when the text has no instruction i. */
int sass_insn_text(const char *text, int i, char *out, size_t n);

/* Sums of ldg[] / stg[]. */
int sass_ldg_total(const sass_hist *h);
int sass_stg_total(const sass_hist *h);

/* One compact line, newline-terminated; access widths and MMA families only where nonzero:
 * "insn 384 | mma 0 | tma ld/st 0/0 | ldsm/stsm 0/0 | ldg 128:2 | stg 8:2 64:2 | ... | cvt 20 (f2fp 8)". */
void sass_hist_print(const sass_hist *h, FILE *f);

#endif
