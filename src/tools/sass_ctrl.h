/* sass_ctrl.h -- the scheduling control bits of SASS, read from and written into a cubin's code
 * directly (no nvdisasm): what ptxas decided about stalls, warp switching, scoreboards and
 * operand reuse, which nvdisasm prints only as ".reuse" (tools and tests only; not libptxq).
 *
 * Encoding (sm_90a, and the same 128-bit layout on sm_100a and sm_120a): an instruction is two
 * little-endian 64-bit words; the low 12 bits of the first are the opcode with its operand form
 * (0x223 FFMA R, R, R, R; 0x221 FADD R, R, R; 0x220 FMUL R, R, R), bits 12-15 the guard predicate.
 * The second word's bits 41-62 hold the control fields:
 *   41-44 stall cycles before this warp's next instruction; 45 yield hint, stored inverted
 *   (0 = the scheduler may switch to another warp after this instruction); 46-48 the scoreboard
 *   the result sets (7 = none); 49-51 the scoreboard the source read sets (7 = none); 52-57 the
 *   scoreboards waited on before issue; 58-61 operand reuse of source slots a, b, c, d.
 * ptxas gives a long FP32 run (the GEMM promotion) alternating yield hints and sets operand reuse
 * only on instructions without the yield hint (bench/RESULTS.md, tenth session: rewriting the
 * hints of the promotion runs either way made the GEMM slower). */
#ifndef PTXQ_SASS_CTRL_H
#define PTXQ_SASS_CTRL_H

#include <stddef.h>

enum { SASS_OP_FMUL = 0x220, SASS_OP_FADD = 0x221, SASS_OP_FFMA = 0x223 };

typedef struct sass_ctrl {
    int stall; /* 0..15 */
    int yield; /* 1: may switch warps after this instruction */
    int wbar;  /* scoreboard set on the write, 0..5, or -1 */
    int rbar;  /* scoreboard set on the source read, 0..5, or -1 */
    int wait;  /* mask of scoreboards waited on, 6 bits */
    int reuse; /* bit 0: slot a, 1: b, 2: c, 3: d */
} sass_ctrl;

/* The opcode field (low 12 bits) of the instruction at insn[0..16). */
unsigned sass_opcode(const unsigned char *insn);

void sass_ctrl_decode(const unsigned char *insn, sass_ctrl *c);

/* CuAssembler-like text, "B--2---:R-:W1:Y:S01" (wait mask, read and write scoreboards, Y when
 * the yield hint is set, stall), then " reuse:ab" when any operand is cached. Returns the length
 * written (snprintf's rule). */
int sass_ctrl_format(const sass_ctrl *c, char *buf, size_t n);

/* The code of kernel `name` in an ELF64 cubin: its section ".text.<name>". Returns 0 with the
 * section's byte offset and length in the file, -1 if the cubin is not ELF64 or has no such
 * section. */
int sass_cubin_code(const unsigned char *cubin, size_t size, const char *name, size_t *off,
                    size_t *len);
/* The kernel of a one-kernel ELF64 cubin (its only ".text.<name>" section) into name (n bytes):
 * 0, or -1 if the cubin is not ELF64, has no or several code sections, or the name does not fit.
 * For a cubin file whose file name is not its kernel's (a --yield copy saved as y2.cubin; found
 * by review). */
int sass_cubin_kernel(const unsigned char *cubin, size_t size, char *name, size_t n);

/* A run: at least min_len instructions with opcode op, at most 2 other instructions in a row
 * between two of them. Fills up to max runs (first instruction index, number of op instructions,
 * index one past the last) and returns how many runs the code has. */
typedef struct sass_run {
    int first, count, end;
} sass_run;
int sass_runs(const unsigned char *code, size_t len, unsigned op, int min_len, sass_run *out,
              int max);

/* One letter per op instruction of the run: 'y' yield hint set, 'r' no yield and an operand
 * cached, '-' neither; buf gets count letters and a NUL (truncated to n - 1). */
void sass_run_hints(const unsigned char *code, const sass_run *run, unsigned op, char *buf,
                    size_t n);

/* Research rewrite of the hints of the first frac (0..1) of the op instructions of every run of
 * at least min_len in kernel `name` of a writable cubin copy: yield = 1 sets the yield hint and
 * clears the operand-reuse flags (a warp that may be switched out keeps no reuse cache, as ptxas
 * has it); yield = 0 clears the yield hint and leaves reuse alone; yield = K >= 2 sets it on the
 * last instruction of every K (as yield = 1) and clears it on the others. Only control bits
 * change, so the results stay the same; the timing does not (load the copy through
 * PTXQ_KERNEL_DIR).
 * Returns the number of instructions changed, or -1 (no such kernel). *runs gets the run count. */
int sass_rewrite_yield(unsigned char *cubin, size_t size, const char *name, unsigned op,
                       int min_len, double frac, int yield, int *runs);

#endif
