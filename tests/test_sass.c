/* test_sass.c -- the SASS histogram on hand-written text (runs everywhere), then every embedded
 * "quant" cubin disassembled with nvdisasm: 128-bit global loads present (the dequantizer: 64-bit
 * loads (and the scale's 32-bit one) and 128-bit stores only), no local memory, and on
 * sm_90a no tensor-core MMA. Without nvdisasm the cubin tests are skipped, visibly, with the reason.
 * The control-bit reader (sass_ctrl.h) on literal words and synthetic code everywhere, and against
 * nvdisasm's listing of real cubins of each target where nvdisasm exists.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptxq.h"
#include "sass.h"
#include "sass_ctrl.h"

/* ---- the parser on literal text ----------------------------------------------------------- */

/* nvdisasm -c output as it looks on sm_90a, plus lines that must not count. */
static const char k_sm90[] =
    "\t.headerflags\t@\"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90\"\n"
    "//--------------------- .text.k --------------------------\n"
    "\t.section\t.text.k,\"ax\",@progbits\n"
    "        .global         k\n"
    "k:\n"
    ".text.k:\n"
    "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
    "        /*0010*/                   S2R R13, SR_TID.X ;\n"
    "        /*0020*/               @P0 EXIT ;\n"
    "        /*0030*/                   LDG.E.NA.128.CONSTANT R4, desc[UR6][R2.64] ;\n"
    "        /*0040*/              @!P1 LDG.E.128 R8, desc[UR6][R2.64+0x10] ;\n"
    "        /*0050*/                   LDG.E.64 R10, desc[UR6][R2.64] ;\n"
    "        /*0060*/                   LDG.E R12, desc[UR6][R2.64] ;\n"
    "        /*0070*/                   LDG.E.LTC128B R13, desc[UR6][R2.64] ;\n"
    "        /*0080*/                   LDG.E.U8 R14, desc[UR6][R2.64] ;\n"
    "        /*0090*/                   LDG.E.S16.CONSTANT R15, desc[UR6][R2.64] ;\n"
    "        /*00a0*/                   LDG.E.EF.LTC128B.128 R16, desc[UR6][R2.64] ;\n"
    "        /*00b0*/                   STG.E.U8 desc[UR6][R2.64], R5 ;\n"
    "        /*00c0*/              @!UP1 STG.E.64 desc[UR6][R2.64], R6 ;\n"
    "        /*00d0*/                   STG.E desc[UR6][R2.64], R7 ;\n"
    "        /*00e0*/                   UTMALDG.2D [UR8], [UR4] ;\n"
    "        /*00f0*/                   UTMASTG.2D [UR4], [UR8] ;\n"
    "        /*0100*/                   UTMACCTL.PF [UR4] ;\n"
    "        /*0110*/                   SYNCS.ARRIVE.TRANS64.RED.A1T0 RZ, [UR8+0x100], RZ ;\n"
    "        /*0120*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR8+0x100], R0 ;\n"
    "        /*0130*/                   WARPGROUP.ARRIVE ;\n"
    "        /*0140*/                   QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR8], R24, gsb0 ;\n"
    "        /*0150*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR12], R24, gsb0 ;\n"
    "        /*0160*/                   HFMA2.MMA R3, -RZ, RZ, 0, 0 ;\n"
    "        /*0170*/                   LDSM.16.M88.4 R4, [R2] ;\n"
    "        /*0180*/                   STSM.16.M88.4 [R2], R4 ;\n"
    "        /*0190*/                   LDS.128 R8, [R2] ;\n"
    "        /*01a0*/                   STS [R2], R8 ;\n"
    "        /*01b0*/                   STL [R1], R8 ;\n"
    "        /*01c0*/                   LDL R8, [R1] ;\n"
    "        /*01d0*/                   LDL.64 R8, [R1+0x8] ;\n"
    "        /*01e0*/                   SHFL.BFLY PT, R3, R2, 0x1, 0x1f ;\n"
    "        /*01f0*/                   MUFU.RCP R0, R3 ;\n"
    "        /*0200*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;\n"
    "        /*0210*/                   F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C R0, R2, R3, RZ ;\n"
    "        /*0220*/                   I2F.U32.RP R0, UR5 ;\n"
    "        /*0230*/                   F2I.FTZ.U32.TRUNC.NTZ R0, R0 ;\n"
    "        /*0240*/                   BRA `(.L_x_1) ;\n"
    ".L_x_1:\n"
    "        /*0250*/                   EXIT ;\n"
    "                                                                /* 0x000fea0003800000 */\n"
    "// LDG.E.128 in a comment does not count\n"
    "\t.text.k:LDG.E.128\n";

static void test_hist_sm90(void **state) {
    (void)state;
    sass_hist h;
    sass_histogram(k_sm90, &h);
    assert_int_equal(h.total, 38);
    assert_int_equal(h.ldg[SASS_W128], 3);
    assert_int_equal(h.ldg[SASS_W64], 1);
    assert_int_equal(h.ldg[SASS_W32], 2); /* LDG.E and LDG.E.LTC128B */
    assert_int_equal(h.ldg[SASS_W16], 1);
    assert_int_equal(h.ldg[SASS_W8], 1);
    assert_int_equal(h.ldg[SASS_W256], 0);
    assert_int_equal(sass_ldg_total(&h), 8);
    assert_int_equal(h.stg[SASS_W8], 1);
    assert_int_equal(h.stg[SASS_W64], 1);
    assert_int_equal(h.stg[SASS_W32], 1);
    assert_int_equal(sass_stg_total(&h), 3);
    assert_int_equal(h.tma_ld, 1);
    assert_int_equal(h.tma_st, 1);
    assert_int_equal(h.tma_other, 1);
    assert_int_equal(h.syncs, 2);
    assert_int_equal(h.mma, 2); /* HFMA2.MMA is not one */
    assert_int_equal(h.qgmma, 1);
    assert_int_equal(h.hgmma, 1);
    assert_int_equal(h.hmma, 0);
    assert_int_equal(h.ldsm, 1);
    assert_int_equal(h.stsm, 1);
    assert_int_equal(h.lds, 1);
    assert_int_equal(h.sts, 1);
    assert_int_equal(h.ldl, 2);
    assert_int_equal(h.stl, 1);
    assert_int_equal(h.shfl, 1);
    assert_int_equal(h.mufu, 1);
    assert_int_equal(h.bar, 1);
    assert_int_equal(h.cvt, 3);
    assert_int_equal(h.f2fp, 1);
}

/* sm_100a: tcgen05 MMAs, tensor memory, bulk copies, 256-bit loads. */
static const char k_sm100[] =
    "        /*0000*/                   UTCQMMA.2CTA gdesc[UR4], gdesc[UR6], tmem[UR8], tmem[UR10], "
    "idesc[UR11], UPT ;\n"
    "        /*0010*/              @UP0 UTCHMMA gdesc[UR4], gdesc[UR6], tmem[UR8], tmem[UR10], "
    "idesc[UR11], UPT ;\n"
    "        /*0020*/                   UTCBAR [UR4], URZ ;\n"
    "        /*0030*/                   LDTM.x16 R4, tmem[UR4] ;\n"
    "        /*0040*/                   STTM.x16 tmem[UR4], R4 ;\n"
    "        /*0050*/                   UBLKCP.S.G [UR4], [UR6], UR8 ;\n"
    "        /*0060*/                   UTMALDG.3D.2CTA [UR8], [UR4] ;\n"
    "        /*0070*/                   UTMAREDG.2D.ADD [UR4], [UR8] ;\n"
    "        /*0080*/                   LDG.E.ENL2.256.CONSTANT R4, R8, desc[UR6][R2.64] ;\n"
    "        /*0090*/                   STG.E.ENL2.256 desc[UR6][R2.64], R4, R8 ;\n"
    "        /*00a0*/                   LDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR6][R4.64] ;\n"
    "        /*00b0*/              @!P0 CCTL.E.PF2 [R10] ;\n"
    "        /*00c0*/                   ACQBULK ;\n"
    "        /*00d0*/               @P5 PREEXIT ;\n"
    "        /*00e0*/                   UCGABAR_ARV ;\n"
    "        /*00f0*/                   UCGABAR_WAIT ;\n";

static void test_hist_sm100(void **state) {
    (void)state;
    sass_hist h;
    sass_histogram(k_sm100, &h);
    assert_int_equal(h.total, 16);
    assert_int_equal(h.cgabar, 1); /* barrier.cluster.arrive (the wait is not counted) */
    assert_int_equal(h.pf, 1); /* prefetch.global.L2 */
    assert_int_equal(h.acqbulk, 1); /* griddepcontrol.wait */
    assert_int_equal(h.preexit, 1); /* griddepcontrol.launch_dependents */
    assert_int_equal(h.mma, 2);
    assert_int_equal(h.utcmma, 2);
    assert_int_equal(h.mma_other, 0);
    assert_int_equal(h.ldtm, 1);
    assert_int_equal(h.sttm, 1);
    assert_int_equal(h.blkcp, 1);
    assert_int_equal(h.tma_ld, 1);
    assert_int_equal(h.tma_st, 1);
    assert_int_equal(h.ldg[SASS_W256], 1);
    assert_int_equal(h.stg[SASS_W256], 1);
    assert_int_equal(sass_ldg_total(&h), 1); /* LDGSTS is not an LDG */
    assert_int_equal(h.ldgsts, 1);
}

/* sm_120a: warp-level MMAs, FP8/FP4 forms included. */
static const char k_sm120[] =
    "        /*0000*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;\n"
    "        /*0010*/                   IMMA.16832.S8.S8 R4, R8, R12, R4 ;\n"
    "        /*0020*/                   QMMA.16832.F32.E4M3.E4M3 R4, R8, R12, R4 ;\n"
    "        /*0030*/          @!PT     QMMA.SF.16832.F32.E4M3.E4M3.E8 R4, R8, R12, R4, R16, R17 ;\n"
    "        /*0040*/                   OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X R4, R8, R12, R4 ;\n"
    "        /*0050*/                   DMMA.884 R4, R8, R12, R4 ;\n"
    "        /*0060*/                   IGMMA.64x64x32.S32.S8.S8 R24, gdesc[UR4], R24 ;\n"
    "        /*0070*/                   XMMA R4, R8 ;\n";

static void test_hist_sm120(void **state) {
    (void)state;
    sass_hist h;
    sass_histogram(k_sm120, &h);
    assert_int_equal(h.total, 8);
    assert_int_equal(h.mma, 8);
    assert_int_equal(h.hmma, 1);
    assert_int_equal(h.imma, 1);
    assert_int_equal(h.qmma, 2);
    assert_int_equal(h.omma, 1);
    assert_int_equal(h.dmma, 1);
    assert_int_equal(h.igmma, 1);
    assert_int_equal(h.mma_other, 1); /* an unknown *MMA still counts */
}

static void test_hist_not_instructions(void **state) {
    (void)state;
    sass_hist h;
    memset(&h, 0x55, sizeof h);
    sass_histogram(NULL, &h);
    assert_int_equal(h.total, 0);
    memset(&h, 0x55, sizeof h);
    sass_histogram("", &h);
    assert_int_equal(h.total, 0);
    assert_int_equal(h.ldg[SASS_W128], 0);
    sass_histogram("/*0000*/\n/**/ LDG.E.128 R4 ;\n/*00x0*/ LDG.E.128 R4 ;\n"
                   "/* 0x000fe200078e00ff */\n  LDG.E.128 R4, [R2] ;\n/*0010*/ ;\n",
                   &h);
    assert_int_equal(h.total, 0);
    /* no trailing newline, CRLF line ends */
    sass_histogram("  /*0000*/ LDG.E.128 R4, [R2] ;\r\n  /*0010*/ LDL R8, [R1] ;", &h);
    assert_int_equal(h.total, 2);
    assert_int_equal(h.ldg[SASS_W128], 1);
    assert_int_equal(h.ldl, 1);
}

static void test_hist_print(void **state) {
    (void)state;
    sass_hist h;
    sass_histogram(k_sm90, &h);
    FILE *f = tmpfile();
    assert_non_null(f);
    sass_hist_print(&h, f);
    char line[1024] = {0};
    rewind(f);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    size_t len = strlen(line);
    assert_true(len > 1 && line[len - 1] == '\n');
    assert_non_null(strstr(line, "insn 38"));
    assert_non_null(strstr(line, "mma 2 qgmma 1 hgmma 1"));
    assert_non_null(strstr(line, "128:3"));
    assert_non_null(strstr(line, "ldl/stl 2/1"));
}

/* Loops and where their loads sit: two loops, the first without the marker; a forward branch
 * is not a loop; the second loop has one load before its first IDP and one after. */
static void test_loop_loads(void **state) {
    (void)state;
    static const char text[] =
        "        /*0000*/                   MOV R1, c[0x0][0x28] ;\n"
        ".L_x_0:\n"
        "        /*0010*/                   IADD3 R2, R2, 0x1, RZ ;\n"
        "        /*0020*/                   LDG.E.128 R4, desc[UR4][R8.64] ;\n"
        "        /*0030*/               @P0 BRA `(.L_x_0) ;\n"
        "        /*0040*/               @P1 BRA `(.L_x_2) ;\n"
        ".L_x_1:\n"
        "        /*0050*/                   LDG.E.NA.LTC256B.128.CONSTANT R12, desc[UR4][R10.64] ;\n"
        "        /*0060*/                   PRMT R14, R3, R12, R5 ;\n"
        "        /*0070*/                   IDP.4A.S8.S8 R16, R14, R4, R16 ;\n"
        "        /*0080*/                   LDG.E.NA.U16.CONSTANT R18, desc[UR4][R10.64] ;\n"
        "        /*0090*/                   IDP.4A.S8.S8 R16, R18, R4, R16 ;\n"
        "        /*00a0*/              @!P2 BRA `(.L_x_1) ;\n"
        ".L_x_2:\n"
        "        /*00b0*/                   EXIT ;\n";
    sass_loop lp;
    assert_int_equal(sass_loop_loads(text, "IDP", &lp), 0);
    assert_int_equal(lp.first, 5);
    assert_int_equal(lp.length, 6);
    assert_int_equal(lp.marker, 2);
    assert_int_equal(lp.loads, 2);
    assert_int_equal(lp.late, 1);
    assert_int_equal(sass_loop_loads(text, "IADD3", &lp), 0); /* the first loop */
    assert_int_equal(lp.first, 1);
    assert_int_equal(lp.length, 3);
    assert_int_equal(lp.loads, 1);
    assert_int_equal(lp.late, 1);
    /* a uniform conditional back edge (BRA.U with a predicate operand) closes a loop too */
    static const char uni[] =
        ".L_x_7:\n"
        "        /*0000*/                   LDG.E.128 R4, desc[UR4][R8.64] ;\n"
        "        /*0010*/                   FFMA R2, R4, R5, R2 ;\n"
        "        /*0020*/                   BRA.U !UP0, `(.L_x_7) ;\n";
    assert_int_equal(sass_loop_loads(uni, "FFMA", &lp), 0);
    assert_int_equal(lp.length, 3);
    assert_int_equal(lp.loads, 1);
    assert_int_equal(lp.late, 0);
    assert_int_equal(sass_loop_loads(text, "HMMA", &lp), -1);
    assert_int_equal(sass_loop_loads(text, "", &lp), -1);
    assert_int_equal(sass_loop_loads(NULL, "IDP", &lp), -1);
}

/* Every loop, inner before outer, and a per-opcode tally of a range. */
static void test_loops(void **state) {
    (void)state;
    static const char text[] =
        "        /*0000*/                   MOV R1, c[0x0][0x28] ;\n"
        ".L_x_0:\n"
        "        /*0010*/                   IADD3 R2, R2, 0x1, RZ ;\n"
        ".L_x_1:\n"
        "        /*0020*/                   LDG.E.128 R4, desc[UR4][R8.64] ;\n"
        "        /*0030*/                   IMAD.WIDE.U32 R8, R3, 0x10, R8 ;\n"
        "        /*0040*/                   IMAD R3, R3, 0x2, RZ ;\n"
        "        /*0050*/               @P0 BRA `(.L_x_1) ;\n"
        "        /*0060*/               @P1 BRA `(.L_x_0) ;\n"
        "        /*0070*/               @P2 BRA `(.L_x_3) ;\n"
        ".L_x_3:\n"
        "        /*0080*/                   EXIT ;\n";
    sass_loop lp[3];
    assert_int_equal(sass_loops(text, NULL, 0), 2);
    assert_int_equal(sass_loops(text, lp, 3), 2);
    assert_int_equal(lp[0].first, 2); /* the inner loop's branch comes first */
    assert_int_equal(lp[0].length, 4);
    assert_int_equal(lp[0].marker, -1);
    assert_int_equal(lp[1].first, 1);
    assert_int_equal(lp[1].length, 6);
    memset(lp, 0x55, sizeof lp);
    assert_int_equal(sass_loops(text, lp, 1), 2); /* counts both, fills one */
    assert_int_equal(lp[0].first, 2);
    assert_int_equal(lp[1].first, 0x55555555);
    assert_int_equal(sass_loops(NULL, lp, 3), 0);

    sass_hist h;
    sass_op_count ops[8];
    int n = sass_range_tally(text, 2, 4, &h, ops, 8);
    assert_int_equal(n, 3);
    assert_string_equal(ops[0].op, "IMAD"); /* IMAD.WIDE.U32 counts as IMAD */
    assert_int_equal(ops[0].n, 2);
    assert_string_equal(ops[1].op, "BRA"); /* ties by name */
    assert_int_equal(ops[1].n, 1);
    assert_string_equal(ops[2].op, "LDG");
    assert_int_equal(h.total, 4);
    assert_int_equal(h.ldg[SASS_W128], 1);
    /* a full table keeps the opcodes seen first; the histogram still counts everything */
    assert_int_equal(sass_range_tally(text, 2, 4, &h, ops, 1), 1);
    assert_string_equal(ops[0].op, "LDG");
    assert_int_equal(h.total, 4);
    assert_int_equal(sass_range_tally(text, 2, 4, &h, NULL, 0), 0); /* the histogram only */
    assert_int_equal(h.total, 4);
    assert_int_equal(sass_range_tally(text, 0, 0, &h, ops, 8), 0);
    assert_int_equal(h.total, 0);
}

/* 1 if edit script e (n entries, from sass_diff_opcodes) keeps the same sequence of a and of b */
static int script_keeps_common(const sass_mnemonic *a, int na, const sass_mnemonic *b, int nb,
                               const sass_edit *e, int n) {
    char *ka = malloc((size_t)na + 1), *kb = malloc((size_t)nb + 1);
    memset(ka, 1, (size_t)na + 1);
    memset(kb, 1, (size_t)nb + 1);
    for (int i = 0; i < n; ++i) {
        if (e[i].kind == '-') ka[e[i].ia] = 0;
        if (e[i].kind == '+') kb[e[i].ib] = 0;
    }
    int ok = 1, i = 0, j = 0;
    for (;; ++i, ++j) {
        while (i < na && !ka[i]) ++i;
        while (j < nb && !kb[j]) ++j;
        if (i >= na || j >= nb) {
            ok = ok && i >= na && j >= nb;
            break;
        }
        if (strcmp(a[i].op, b[j].op)) ok = 0;
    }
    free(ka);
    free(kb);
    return ok;
}

/* `ptxq sass A --kloop B`: the shortest loop holding an MMA (not a longer one around it, not a
 * shorter one without MMA), its opcodes with modifiers and no predicate, and the edit script
 * between two such sequences (a swap of two instructions: four edits; equal: none). */
static void test_kloop(void **state) {
    (void)state;
    static const char text[] =
        ".L_x_0:\n"
        "        /*0000*/                   IADD3 R2, R2, 0x1, RZ ;\n"
        ".L_x_1:\n"
        "        /*0010*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R3 ;\n"
        "        /*0020*/                   QGMMA.64x192x32.F32.E4M3.E4M3 R24, gdesc[UR8], R24, gsb0 ;\n"
        "        /*0030*/               @!P1 IMAD.WIDE.U32 R8, R3, 0x10, R8 ;\n"
        "        /*0040*/               @P0 BRA `(.L_x_1) ;\n"
        ".L_x_2:\n"
        "        /*0050*/                   FADD R4, R4, R5 ;\n"
        "        /*0060*/               @P2 BRA `(.L_x_2) ;\n"
        "        /*0070*/               @P1 BRA `(.L_x_0) ;\n"
        "        /*0080*/                   EXIT ;\n";
    sass_loop lp;
    assert_int_equal(sass_mma_loop(text, &lp), 0);
    assert_int_equal(lp.first, 1);
    assert_int_equal(lp.length, 4);
    sass_mnemonic ops[8];
    assert_int_equal(sass_range_opcodes(text, lp.first, lp.length, ops, 8), 4);
    assert_string_equal(ops[0].op, "SYNCS.PHASECHK.TRANS64.TRYWAIT");
    assert_string_equal(ops[1].op, "QGMMA.64x192x32.F32.E4M3.E4M3");
    assert_string_equal(ops[2].op, "IMAD.WIDE.U32");
    assert_string_equal(ops[3].op, "BRA");
    assert_int_equal(sass_range_opcodes(text, lp.first, lp.length, ops, 2), 2); /* at most max */
    assert_int_equal(sass_mma_loop("        /*0000*/                   EXIT ;\n", &lp), -1);

    sass_mnemonic a[4] = {{"MOV"}, {"QGMMA"}, {"IMAD.U32"}, {"BRA"}};
    sass_mnemonic b[4] = {{"IMAD.U32"}, {"QGMMA"}, {"MOV"}, {"BRA"}};
    sass_edit e[8];
    assert_int_equal(sass_diff_opcodes(a, 4, a, 4, e, 8), 0);
    int n = sass_diff_opcodes(a, 4, b, 4, e, 8);
    assert_int_equal(n, 4);
    /* what the script keeps of a and of b is the same sequence (a longest common one, of 2) */
    int keep_a[4] = {1, 1, 1, 1}, keep_b[4] = {1, 1, 1, 1}, minus = 0, plus = 0;
    for (int i = 0; i < n; ++i) {
        if (e[i].kind == '-') keep_a[e[i].ia] = 0, ++minus;
        if (e[i].kind == '+') keep_b[e[i].ib] = 0, ++plus;
    }
    assert_int_equal(minus, 2);
    assert_int_equal(plus, 2);
    for (int i = 0, j = 0; i < 4 || j < 4; ++i, ++j) {
        while (i < 4 && !keep_a[i]) ++i;
        while (j < 4 && !keep_b[j]) ++j;
        assert_int_equal(i < 4, j < 4);
        if (i < 4) assert_string_equal(a[i].op, b[j].op);
    }
    assert_int_equal(sass_diff_opcodes(a, 4, b, 0, e, 8), 4); /* all of a dropped */
    assert_int_equal(e[3].kind, '-');
    assert_int_equal(e[3].ia, 3);
    assert_int_equal(sass_diff_opcodes(a, 4, b, 4, e, 1), 4); /* counts all, stores one */

    /* long sequences: what the two share at the start and at the end stays out of the table, so
     * kernels far longer than SASS_DIFF_MAX compare where they differ little; a middle longer
     * than that is refused */
    enum { LONG = 3 * SASS_DIFF_MAX };
    sass_mnemonic *x = calloc(LONG, sizeof *x), *y = calloc(LONG + 1, sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    for (int i = 0; i < LONG; ++i) {
        snprintf(x[i].op, sizeof x[i].op, "OP%d", i % 7);
        y[i] = x[i];
    }
    snprintf(y[4000].op, sizeof y[4000].op, "MOV"); /* one opcode changed ... */
    memmove(y + 5001, y + 5000, (LONG - 5000) * sizeof *y); /* ... and one inserted */
    snprintf(y[5000].op, sizeof y[5000].op, "NOP");
    n = sass_diff_opcodes(x, LONG, y, LONG + 1, e, 8);
    assert_int_equal(n, 3); /* - x[4000], + y[4000], + y[5000] (the first two in either order) */
    int plus_at_5000 = 0, minus_at_4000 = 0;
    for (int i = 0; i < n; ++i) {
        if (e[i].kind == '+' && e[i].ib == 5000) plus_at_5000 = 1;
        if (e[i].kind == '-' && e[i].ia == 4000) minus_at_4000 = 1;
    }
    assert_true(plus_at_5000 && minus_at_4000);
    /* a middle of 3000 x 3000 (9 M cells: no table, Hirschberg's split): every 10th opcode
     * changed, so 300 dropped and 300 added at the least */
    for (int i = 0; i < 3000; ++i) {
        y[i] = x[i];
        if (i % 10 == 5) snprintf(y[i].op, sizeof y[i].op, "MOV");
    }
    sass_edit *big = calloc(2500, sizeof *big);
    assert_non_null(big);
    n = sass_diff_opcodes(x, 3000, y, 3000, big, 2500);
    assert_int_equal(n, 600);
    assert_true(script_keeps_common(x, 3000, y, 3000, big, n));
    for (int i = 1; i < n; ++i) /* in order along both sequences */
        assert_true(big[i].ia >= big[i - 1].ia && big[i].ib >= big[i - 1].ib);
    /* unequal lengths through the split: y is x[0..4000) with every 8th opcode dropped and
     * every 16th of the rest changed (a 4000 x 3500 middle, 14 M cells): at least the 500
     * dropped plus 219 x 2 for the changed ones */
    int ny = 0, changed = 0;
    for (int i = 0; i < 4000; ++i) {
        if (i % 8 == 7) continue;
        y[ny] = x[i];
        if (ny % 16 == 1) snprintf(y[ny].op, sizeof y[ny].op, "MOV"), ++changed;
        ++ny;
    }
    assert_int_equal(ny, 3500);
    n = sass_diff_opcodes(x, 4000, y, 3500, big, 2500);
    assert_int_equal(n, 500 + 2 * changed); /* no MOV in x: the LCS is the 3500 - changed others */
    assert_true(script_keeps_common(x, 4000, y, 3500, big, n));
    free(big);
    for (int i = 0; i < LONG; ++i) snprintf(y[i].op, sizeof y[i].op, "OP%d", i % 5);
    assert_int_equal(sass_diff_opcodes(x, LONG, y, LONG, e, 8), -1);
    free(x);
    free(y);

    char insn[64];
    assert_int_equal(sass_insn_text(text, 3, insn, sizeof insn), 0);
    assert_string_equal(insn, "@!P1 IMAD.WIDE.U32 R8, R3, 0x10, R8 ;");
    assert_int_equal(sass_insn_text(text, 0, insn, 6), 0); /* cut to n - 1 */
    assert_string_equal(insn, "IADD3");
    assert_int_equal(sass_insn_text(text, 9, insn, sizeof insn), -1); /* 9 instructions: 0..8 */
}

/* A cubin file named on `ptxq sass`'s command line: bytes as written, the kernel name from the
 * file name (directory, ".cubin" and a ".sm_XXa" suffix dropped), clear refusals otherwise. */
static void test_cubin_file(void **state) {
    (void)state;
    char dir[] = "/tmp/ptxq_cubin_XXXXXX";
    assert_non_null(mkdtemp(dir));
    const unsigned char data[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0xa5, 0x5a};
    static const char *const files[] = {"gemm_x.sm_90a.cubin", "read_stream.cubin", ".cubin",
                                        "empty.cubin", "a.ptx"};
    static const char *const names[] = {"gemm_x", "read_stream", NULL, NULL, NULL};
    char path[256], name[64], err[256];
    for (int i = 0; i < 5; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        if (i != 3) assert_int_equal(fwrite(data, 1, sizeof data, f), sizeof data);
        fclose(f);
        unsigned char *bytes = NULL;
        size_t size = 1;
        err[0] = 0;
        int rc = sass_cubin_file(path, &bytes, &size, name, sizeof name, err, sizeof err);
        if (names[i]) {
            assert_int_equal(rc, 0);
            assert_string_equal(name, names[i]);
            assert_int_equal(size, sizeof data);
            assert_memory_equal(bytes, data, sizeof data);
        } else {
            assert_int_equal(rc, -1);
            assert_null(bytes);
            assert_true(err[0] != 0);
        }
        free(bytes);
        remove(path);
    }
    snprintf(path, sizeof path, "%s/missing.cubin", dir);
    unsigned char *bytes = NULL;
    size_t size = 0;
    assert_int_equal(sass_cubin_file(path, &bytes, &size, name, sizeof name, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
    rmdir(dir);
}

/* PTXQ_NVDISASM is the only candidate when set. */
static void test_find_env(void **state) {
    (void)state;
    char *saved = getenv("PTXQ_NVDISASM") ? strdup(getenv("PTXQ_NVDISASM")) : NULL;
    char path[4096];
    setenv("PTXQ_NVDISASM", "/nonexistent/nvdisasm", 1);
    assert_int_equal(sass_find_nvdisasm(path, sizeof path), -1);
    setenv("PTXQ_NVDISASM", "/bin/sh", 1);
    assert_int_equal(sass_find_nvdisasm(path, sizeof path), 0);
    assert_string_equal(path, "/bin/sh");
    assert_int_equal(sass_find_nvdisasm(path, 4), -1); /* does not fit */
    if (saved) setenv("PTXQ_NVDISASM", saved, 1);
    else unsetenv("PTXQ_NVDISASM");
    free(saved);
}

/* ---- the embedded quant cubins ------------------------------------------------------------ */

static void test_disassemble_errors(void **state) {
    (void)state;
    if (sass_no_nvdisasm()) skip();
    char err[512] = "";
    static const unsigned char junk[] = "not an ELF file";
    char *text = sass_disassemble(junk, sizeof junk, err, sizeof err);
    assert_null(text);
    assert_non_null(strstr(err, "nvdisasm"));
    assert_null(sass_disassemble(NULL, 0, err, sizeof err));
}

/* sass_disassemble_many: each listing as sass_disassemble makes it, in order, with up to 2
 * nvdisasm at once over 5 slots; the junk and empty slots come back NULL, the first failure in
 * err, and the failures counted. */
static void test_disassemble_many(void **state) {
    (void)state;
    if (sass_no_nvdisasm()) skip();
    static const char *const names[3] = {"quant_i8rowl_bf16_s8", "gemm_e4m3_e4m3_tensor_n192_tsg",
                                         "dequant_fp8_bf16"};
    static const unsigned char junk[] = "not an ELF file";
    const unsigned char *cubins[5];
    size_t sizes[5];
    ptxq_kernel_info k[3];
    for (int i = 0; i < 3; ++i) {
        if (ptxq_kernel_find(names[i], "sm_90a", &k[i]) != PTXQ_OK) fail_msg("no %s", names[i]);
    }
    cubins[0] = k[0].cubin, sizes[0] = k[0].cubin_size;
    cubins[1] = junk, sizes[1] = sizeof junk;
    cubins[2] = k[1].cubin, sizes[2] = k[1].cubin_size;
    cubins[3] = NULL, sizes[3] = 0;
    cubins[4] = k[2].cubin, sizes[4] = k[2].cubin_size;
    char *texts[5], err[512] = "";
    assert_int_equal(sass_disassemble_many(5, cubins, sizes, texts, 2, err, sizeof err), 2);
    assert_non_null(strstr(err, "nvdisasm"));
    assert_null(texts[1]);
    assert_null(texts[3]);
    for (int i = 0; i < 5; i += 2) {
        char *one = sass_disassemble(cubins[i], sizes[i], err, sizeof err);
        assert_non_null(one);
        assert_non_null(texts[i]);
        assert_string_equal(texts[i], one);
        free(one);
        free(texts[i]);
    }
}

typedef struct quant_set {
    int n;
    ptxq_kernel_info *info;
    const unsigned char **cubin;
    size_t *size;
} quant_set;

static void quant_set_load(quant_set *s) {
    int count = ptxq_kernel_count();
    s->n = 0;
    s->info = calloc((size_t)count + 1, sizeof *s->info);
    s->cubin = calloc((size_t)count + 1, sizeof *s->cubin);
    s->size = calloc((size_t)count + 1, sizeof *s->size);
    assert_true(s->info && s->cubin && s->size);
    for (int i = 0; i < count; ++i) {
        ptxq_kernel_info k;
        assert_int_equal(ptxq_kernel_get(i, &k), PTXQ_OK);
        if (strcmp(k.family, "quant") != 0) continue;
        s->info[s->n] = k;
        s->cubin[s->n] = k.cubin;
        s->size[s->n] = k.cubin_size;
        ++s->n;
    }
}

static void quant_set_free(quant_set *s) {
    free(s->info);
    free(s->cubin);
    free(s->size);
}

/* One kernel's checks; returns the number of violations (each printed). */
static int check_quant_kernel(const ptxq_kernel_info *k, const sass_hist *h) {
    int bad = 0;
    if (h->total == 0) {
        print_error("%s %s: no instructions parsed\n", k->name, k->target);
        ++bad;
    }
    if (!strncmp(k->name, "dequant_", 8)) {
        /* the dequantizer's units are 8 codes in, 16 bytes out (whole sectors a store
         * instruction: ptx/dequant_fp8_bf16.ptx): 64-bit loads, 128-bit stores, nothing narrower */
        if (h->ldg[SASS_W64] == 0 || h->stg[SASS_W128] == 0 ||
            sass_ldg_total(h) != h->ldg[SASS_W64] + h->ldg[SASS_W32] ||
            sass_stg_total(h) != h->stg[SASS_W128]) {
            print_error("%s %s: %d 64-bit LDG of %d, %d 128-bit STG of %d\n", k->name, k->target,
                        h->ldg[SASS_W64], sass_ldg_total(h), h->stg[SASS_W128], sass_stg_total(h));
            ++bad;
        }
    } else if (h->ldg[SASS_W128] == 0) {
        print_error("%s %s: no 128-bit global load (LDG.*.128)\n", k->name, k->target);
        ++bad;
    }
    if (h->ldl != 0 || h->stl != 0) {
        print_error("%s %s: local memory: %d LDL, %d STL\n", k->name, k->target, h->ldl, h->stl);
        ++bad;
    }
    if (!strcmp(k->target, "sm_90a") && h->mma != 0) {
        print_error("%s %s: %d tensor-core MMAs in a quantization kernel\n", k->name, k->target,
                    h->mma);
        ++bad;
    }
    return bad;
}

static void test_quant_cubins(void **state) {
    (void)state;
    if (sass_no_nvdisasm()) skip();
    quant_set s;
    quant_set_load(&s);
    if (s.n == 0) {
        quant_set_free(&s);
        fail_msg("the registry has no kernel of family \"quant\"");
        return;
    }
    sass_hist *h = calloc((size_t)s.n, sizeof *h);
    int *st = calloc((size_t)s.n, sizeof *st);
    assert_true(h && st);
    char err[512] = "";
    int failed = sass_hist_many(s.n, s.cubin, s.size, h, st, 0, err, sizeof err);
    int bad = 0;
    for (int i = 0; i < s.n; ++i) {
        if (st[i] != 0) continue;
        bad += check_quant_kernel(&s.info[i], &h[i]);
    }
    print_message("[  INFO    ] %d quant cubins disassembled, %d failed, %d violations\n", s.n,
                  failed, bad);
    free(h);
    free(st);
    quant_set_free(&s);
    if (failed) fail_msg("nvdisasm failed on %d cubins: %s", failed, err);
    assert_int_equal(bad, 0);
}

/* One cubin through sass_disassemble: the text names the kernel's section. */
static void test_quant_text(void **state) {
    (void)state;
    if (sass_no_nvdisasm()) skip();
    quant_set s;
    quant_set_load(&s);
    if (s.n == 0) {
        quant_set_free(&s);
        fail_msg("the registry has no kernel of family \"quant\"");
        return;
    }
    char err[512] = "";
    char *text = sass_disassemble(s.cubin[0], s.size[0], err, sizeof err);
    if (!text) {
        fail_msg("%s %s: %s", s.info[0].name, s.info[0].target, err);
        quant_set_free(&s);
        return;
    }
    char section[256];
    snprintf(section, sizeof section, ".text.%s", s.info[0].name);
    assert_non_null(strstr(text, section));
    sass_hist h;
    sass_histogram(text, &h);
    assert_true(h.total > 0);
    free(text);
    quant_set_free(&s);
}

static const char *const k_bench_targets[] = {"sm_90a", "sm_100a", "sm_120a"};

/* The SASS of an embedded kernel (malloc'd), or NULL after failing the test. */
static char *embedded_sass(const char *name, const char *target) {
    ptxq_kernel_info k;
    if (ptxq_kernel_find(name, target, &k) != PTXQ_OK) {
        fail_msg("no %s cubin for %s", name, target);
        return NULL;
    }
    char err[512] = "";
    char *text = sass_disassemble(k.cubin, k.cubin_size, err, sizeof err);
    if (!text) fail_msg("%s %s: %s", name, target, err);
    return text;
}

/* The bench's clock_stamp kernel on every target: it reads the SM clock and the global timer
 * (what bench_probe divides), stores one 16-byte record, and uses no local memory. */
static void test_clock_stamp(void **state) {
    (void)state;
    if (sass_no_nvdisasm()) skip();
    for (int t = 0; t < 3; ++t) {
        char *text = embedded_sass("clock_stamp", k_bench_targets[t]);
        if (!text) return;
        assert_non_null(strstr(text, "SR_CLOCKLO"));
        assert_non_null(strstr(text, "SR_GLOBALTIMERLO"));
        assert_non_null(strstr(text, "STG.E.128"));
        assert_null(strstr(text, "LDL"));
        assert_null(strstr(text, "STL"));
        free(text);
    }
}

/* The bench's spin lead (ptx/spin_ns.ptx) on every target: it re-reads the global timer in a loop
 * and touches no memory (global or local), so it cannot disturb what is timed after it. */
static void test_spin_ns(void **state) {
    (void)state;
    if (sass_no_nvdisasm()) skip();
    for (int t = 0; t < 3; ++t) {
        char *text = embedded_sass("spin_ns", k_bench_targets[t]);
        if (!text) return;
        const char *first = strstr(text, "SR_GLOBALTIMERLO");
        assert_non_null(first);
        assert_non_null(strstr(first + 1, "SR_GLOBALTIMERLO")); /* the read inside the loop */
        assert_non_null(strstr(text, " BRA "));
        assert_null(strstr(text, "LDG"));
        assert_null(strstr(text, "STG"));
        assert_null(strstr(text, "LDL"));
        assert_null(strstr(text, "STL"));
        free(text);
    }
}

/* The bench's read-only floor (ptx/read_stream.ptx) means what it says only if every trip issues
 * its 8 loads, 16 bytes each and L1-bypassing, before it waits on any: all 8 LDG.128 of the loop
 * come before its first LOP3 (the fold), and nothing spills. */
static void test_read_stream(void **state) {
    (void)state;
    if (sass_no_nvdisasm()) skip();
    for (int t = 0; t < 3; ++t) {
        char *text = embedded_sass("read_stream", k_bench_targets[t]);
        if (!text) return;
        sass_loop lp;
        if (sass_loop_loads(text, "LOP3", &lp) != 0) {
            free(text);
            fail_msg("read_stream %s: no loop holds the fold", k_bench_targets[t]);
            return;
        }
        sass_hist h;
        sass_histogram(text, &h);
        int na = 0; /* L1::no_allocate loads: LDG.E.NA... */
        for (const char *q = text; (q = strstr(q, "LDG.E.NA")) != NULL; ++q) na++;
        free(text);
        assert_int_equal(lp.loads, 8);
        assert_int_equal(lp.late, 0);
        assert_int_equal(h.ldg[SASS_W128], 8);
        assert_int_equal(sass_ldg_total(&h), 8);
        assert_int_equal(na, 8);
        assert_int_equal(h.ldl + h.stl, 0);
    }
}

/* ---- control bits (sass_ctrl.h) ------------------------------------------------------------ */

static void put_insn(unsigned char *p, uint64_t lo, uint64_t hi) {
    for (int i = 0; i < 8; ++i) {
        p[i] = (unsigned char)(lo >> 8 * i);
        p[8 + i] = (unsigned char)(hi >> 8 * i);
    }
}

/* Words copied from nvdisasm -hex of gemm_e4m3_e4m3_block_n192_ts_sm (sm_90a, ptxas 13.0). */
static void test_ctrl_decode(void **state) {
    (void)state;
    unsigned char insn[16];
    sass_ctrl c;
    char buf[48];
    /* FFMA R206, R24, R208, R206: stall 1, may yield, nothing cached */
    put_insn(insn, 0x000000d018ce7223ull, 0x000fc200000000ceull);
    assert_int_equal(sass_opcode(insn), SASS_OP_FFMA);
    sass_ctrl_decode(insn, &c);
    assert_int_equal(c.stall, 1);
    assert_int_equal(c.yield, 1);
    assert_int_equal(c.wbar, -1);
    assert_int_equal(c.rbar, -1);
    assert_int_equal(c.wait, 0);
    assert_int_equal(c.reuse, 0);
    sass_ctrl_format(&c, buf, sizeof buf);
    assert_string_equal(buf, "B------:R-:W-:Y:S01");
    /* FFMA R20, R30, R210.reuse, R20: no yield, operand b cached */
    put_insn(insn, 0x000000d21e147223ull, 0x080fe20000000014ull);
    sass_ctrl_decode(insn, &c);
    assert_int_equal(c.yield, 0);
    assert_int_equal(c.reuse, 2);
    sass_ctrl_format(&c, buf, sizeof buf);
    assert_string_equal(buf, "B------:R-:W-:-:S01 reuse:b");
    /* FADD R4, R24, R4 */
    put_insn(insn, 0x0000000418047221ull, 0x000fc20000000000ull);
    assert_int_equal(sass_opcode(insn), SASS_OP_FADD);
    /* @!P4 SYNCS.ARRIVE.TRANS64.A1T0 RZ, [R219+URZ+0x20], RZ: its source read sets scoreboard 1 */
    put_insn(insn, 0x000020ffdbffc9a7ull, 0x0003e2000810003full);
    sass_ctrl_decode(insn, &c);
    assert_int_equal(c.rbar, 1);
    assert_int_equal(c.wbar, -1);
    assert_int_equal(c.yield, 0);
    /* every field at once: wait on 0 and 5, read 2, write 3, stall 15, reuse a and c */
    uint64_t hi = (uint64_t)15 << 41 | (uint64_t)3 << 46 | (uint64_t)2 << 49 |
                  (uint64_t)0x21 << 52 | (uint64_t)5 << 58;
    put_insn(insn, 0x7223, hi);
    sass_ctrl_decode(insn, &c);
    sass_ctrl_format(&c, buf, sizeof buf);
    assert_string_equal(buf, "B0----5:R2:W3:Y:S15 reuse:ac");
}

/* The address of an instruction line, as --ctrl and the histogram read it. */
static void test_line_addr(void **state) {
    (void)state;
    const char *l = "        /*1aA0*/                   FFMA R206, R24, R208, R206 ;";
    unsigned long a = 0;
    const char *rest = sass_line_addr(l, l + strlen(l), &a);
    assert_non_null(rest);
    assert_int_equal(a, 0x1aa0);
    assert_true(strncmp(rest, "                   FFMA", 23) == 0);
    static const char *const no[] = {"//---- .text.k ----", "/*zz*/ FFMA R1, R2, R3, R4 ;",
                                     "/*0010 FFMA", ".L_x_72:", "        /**/ NOP ;"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; ++i)
        assert_null(sass_line_addr(no[i], no[i] + strlen(no[i]), &a));
    /* the line ends where end says, not at its NUL */
    assert_null(sass_line_addr(l, l + 12, &a));
}

/* Runs: gaps of up to two other instructions join, three split; the rewrite touches only the
 * control word, and only of run instructions. */
static void test_ctrl_runs_rewrite(void **state) {
    (void)state;
    enum { N = 90 };
    unsigned char code[N * 16];
    /* 20 FFMA, 2 IMAD, 20 FFMA, 3 IMAD, 40 FFMA, 5 FFMA-free */
    int kind[N];
    for (int i = 0; i < N; ++i)
        kind[i] = i < 20 || (i >= 22 && i < 42) || (i >= 45 && i < 85);
    for (int i = 0; i < N; ++i)
        put_insn(code + 16 * i, kind[i] ? 0x7223u | (uint64_t)i << 16 : 0x7224u,
                 0x000fe20000000000ull | (i % 2 ? 0x0800000000000000ull : 0));
    sass_run r[4];
    assert_int_equal(sass_runs(code, sizeof code, SASS_OP_FFMA, 32, r, 4), 2);
    assert_int_equal(r[0].first, 0);
    assert_int_equal(r[0].count, 40);
    assert_int_equal(r[0].end, 42);
    assert_int_equal(r[1].first, 45);
    assert_int_equal(r[1].count, 40);
    assert_int_equal(r[1].end, 85);
    assert_int_equal(sass_runs(code, sizeof code, SASS_OP_FFMA, 41, r, 4), 0);
    char hints[64];
    sass_run_hints(code, &r[1], SASS_OP_FFMA, hints, sizeof hints);
    assert_int_equal(strlen(hints), 40);
    assert_int_equal(hints[0], 'r'); /* instruction 45: odd, reuse set, no yield */
    assert_int_equal(hints[1], '-');
}

/* nvdisasm's listing and the decoded words agree on every instruction of real cubins: ".reuse"
 * printed exactly where a reuse flag is set, and the register forms of FFMA, FADD and FMUL
 * exactly where the opcode field says so. */
static int is_reg_operand(const char *t, int n) {
    while (n > 0 && (*t == '-' || *t == '|' || *t == ' ')) ++t, --n;
    if (n < 2 || t[0] != 'R') return 0;
    return t[1] == 'Z' || (t[1] >= '0' && t[1] <= '9');
}

static int all_reg_operands(const char *ops, int n) {
    int any = 0;
    while (n > 0) {
        const char *comma = memchr(ops, ',', (size_t)n);
        int len = comma ? (int)(comma - ops) : n;
        if (!is_reg_operand(ops, len)) return 0;
        any = 1;
        ops += len + (comma ? 1 : 0);
        n -= len + (comma ? 1 : 0);
    }
    return any;
}

typedef struct ctrl_check {
    int insns, reuse, fops, bad;
} ctrl_check;

static void ctrl_vs_listing(const char *name, const char *target, ctrl_check *cc) {
    ptxq_kernel_info k;
    memset(cc, 0, sizeof *cc);
    if (ptxq_kernel_find(name, target, &k) != PTXQ_OK) {
        fail_msg("no kernel %s for %s", name, target);
        return;
    }
    size_t off, len;
    assert_int_equal(sass_cubin_code(k.cubin, k.cubin_size, k.name, &off, &len), 0);
    char err[512] = "";
    char *text = sass_disassemble(k.cubin, k.cubin_size, err, sizeof err);
    if (!text) {
        fail_msg("%s %s: %s", name, target, err);
        return;
    }
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char *p = line, *end;
        while (*p == ' ' || *p == '\t') ++p;
        unsigned long addr = 0;
        if (p[0] == '/' && p[1] == '*' && (addr = strtoul(p + 2, &end, 16), end > p + 2) &&
            end[0] == '*' && end[1] == '/') {
            const unsigned char *insn = k.cubin + off + addr;
            assert_true(addr + 16 <= len);
            sass_ctrl c;
            sass_ctrl_decode(insn, &c);
            ++cc->insns;
            int text_reuse = strstr(end, ".reuse") != NULL;
            if (text_reuse != (c.reuse != 0)) {
                print_error("%s %s 0x%04lx: listing %s reuse, control word %x: %s\n", name,
                            target, addr, text_reuse ? "has" : "has no", c.reuse, p);
                ++cc->bad;
            }
            cc->reuse += text_reuse;
            char *q = end + 2;
            while (*q == ' ') ++q;
            if (*q == '@') {
                while (*q && *q != ' ') ++q;
                while (*q == ' ') ++q;
            }
            char op[24] = "";
            int ol = 0;
            while (q[ol] && q[ol] != ' ' && q[ol] != ';' && ol < 23) ++ol;
            memcpy(op, q, (size_t)ol);
            char *dot = strchr(op, '.');
            if (dot) *dot = 0;
            char *semi = strchr(q + ol, ';');
            int reg_form = semi && all_reg_operands(q + ol, (int)(semi - (q + ol)));
            unsigned want = !reg_form             ? 0
                            : !strcmp(op, "FFMA") ? SASS_OP_FFMA
                            : !strcmp(op, "FADD") ? SASS_OP_FADD
                            : !strcmp(op, "FMUL") ? SASS_OP_FMUL
                                                  : 0;
            unsigned got = sass_opcode(insn);
            int got_f = got == SASS_OP_FFMA || got == SASS_OP_FADD || got == SASS_OP_FMUL;
            if (want ? got != want : got_f) {
                print_error("%s %s 0x%04lx: opcode field 0x%03x for: %s\n", name, target, addr, got,
                            p);
                ++cc->bad;
            }
            cc->fops += want != 0;
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
}

static void test_ctrl_listing(void **state) {
    (void)state;
    if (sass_no_nvdisasm()) skip();
    static const char *const cases[][2] = {
        {"gemm_e4m3_e4m3_block_n192_ts_sm", "sm_90a"},
        {"gemm_e4m3_e4m3_tensor_n192_ts_c2", "sm_90a"},
        {"quant_fp8row_f32_e4m3", "sm_100a"},
        {"quant_mx8_bf16_e4m3", "sm_120a"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        ctrl_check cc;
        ctrl_vs_listing(cases[i][0], cases[i][1], &cc);
        print_message("[  INFO    ] %s %s: %d instructions, %d with reuse, %d FFMA/FADD/FMUL, "
                      "%d mismatches\n", cases[i][0], cases[i][1], cc.insns, cc.reuse, cc.fops,
                      cc.bad);
        assert_int_equal(cc.bad, 0);
        assert_true(cc.reuse > 0 && cc.fops > 0);
    }
}

/* The research rewrite on the block-scaled GEMM: the promotion run's FFMAs all yield afterwards
 * (none caches an operand), and the listing is the same but for ".reuse". */
static char *strip_reuse(char *s) {
    char *w = s;
    for (char *r = s; *r;) {
        if (!strncmp(r, ".reuse", 6)) {
            r += 6;
            continue;
        }
        *w++ = *r++;
    }
    *w = 0;
    return s;
}

static void test_ctrl_rewrite_cubin(void **state) {
    (void)state;
    if (sass_no_nvdisasm()) skip();
    ptxq_kernel_info k;
    assert_int_equal(ptxq_kernel_find("gemm_e4m3_e4m3_block_n192_ts_sm", "sm_90a", &k), PTXQ_OK);
    unsigned char *copy = malloc(k.cubin_size);
    assert_non_null(copy);
    memcpy(copy, k.cubin, k.cubin_size);
    size_t off, len;
    assert_int_equal(sass_cubin_code(copy, k.cubin_size, k.name, &off, &len), 0);
    sass_run r[8];
    int nr = sass_runs(copy + off, len, SASS_OP_FFMA, 32, r, 8);
    assert_true(nr >= 1 && nr <= 8);
    int no_yield = 0;
    for (int j = 0; j < nr; ++j)
        for (int i = r[j].first; i < r[j].end; ++i) {
            sass_ctrl c;
            sass_ctrl_decode(copy + off + 16 * i, &c);
            no_yield += sass_opcode(copy + off + 16 * i) == SASS_OP_FFMA && !c.yield;
        }
    int runs = 0;
    int changed = sass_rewrite_yield(copy, k.cubin_size, k.name, SASS_OP_FFMA, 32, 1.0, 1, &runs);
    assert_int_equal(runs, nr);
    assert_int_equal(changed, no_yield);
    assert_true(changed > 0);
    for (int j = 0; j < nr; ++j)
        for (int i = r[j].first; i < r[j].end; ++i) {
            sass_ctrl c;
            if (sass_opcode(copy + off + 16 * i) != SASS_OP_FFMA) continue;
            sass_ctrl_decode(copy + off + 16 * i, &c);
            assert_int_equal(c.yield, 1);
            assert_int_equal(c.reuse, 0);
        }
    char err[512] = "";
    char *a = sass_disassemble(k.cubin, k.cubin_size, err, sizeof err);
    char *b = sass_disassemble(copy, k.cubin_size, err, sizeof err);
    assert_true(a && b);
    assert_string_equal(strip_reuse(a), strip_reuse(b));
    /* outside the code section nothing moved */
    assert_memory_equal(copy, k.cubin, off);
    assert_memory_equal(copy + off + len, k.cubin + off + len, k.cubin_size - off - len);
    assert_int_equal(sass_rewrite_yield(copy, k.cubin_size, "no_such_kernel", SASS_OP_FFMA, 32,
                                        1.0, 1, &runs), -1);
    assert_int_equal(sass_cubin_code((const unsigned char *)"not an ELF file, long enough to read "
                                     "its header fields 0123456789", 64, k.name, &off, &len), -1);
    /* a cubin file named other than its kernel (y2.cubin): the lookup by that name fails, and
     * the cubin names its one kernel */
    size_t off2 = 0, len2 = 0;
    char kn[128];
    assert_int_equal(sass_cubin_code(k.cubin, k.cubin_size, "y2", &off2, &len2), -1);
    assert_int_equal(sass_cubin_kernel(k.cubin, k.cubin_size, kn, sizeof kn), 0);
    assert_string_equal(kn, k.name);
    assert_int_equal(sass_cubin_kernel(k.cubin, k.cubin_size, kn, 4), -1); /* does not fit */
    free(a);
    free(b);
    free(copy);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hist_sm90),
        cmocka_unit_test(test_hist_sm100),
        cmocka_unit_test(test_hist_sm120),
        cmocka_unit_test(test_hist_not_instructions),
        cmocka_unit_test(test_hist_print),
        cmocka_unit_test(test_loop_loads),
        cmocka_unit_test(test_loops),
        cmocka_unit_test(test_kloop),
        cmocka_unit_test(test_disassemble_many),
        cmocka_unit_test(test_cubin_file),
        cmocka_unit_test(test_find_env),
        cmocka_unit_test(test_disassemble_errors),
        cmocka_unit_test(test_quant_text),
        cmocka_unit_test(test_quant_cubins),
        cmocka_unit_test(test_clock_stamp), cmocka_unit_test(test_spin_ns),
        cmocka_unit_test(test_read_stream),
        cmocka_unit_test(test_ctrl_decode),
        cmocka_unit_test(test_line_addr),
        cmocka_unit_test(test_ctrl_runs_rewrite),
        cmocka_unit_test(test_ctrl_listing),
        cmocka_unit_test(test_ctrl_rewrite_cubin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
