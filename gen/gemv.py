"""Block-scaled GEMV: y[l, m] = ga * gx * sum_k A[l, m, k] sa(l, m, k/blk) x[l, k] sx(l, k/blk).

Formats of A (and of x when x is quantized too, "same"):
  nvfp4  E2M1 values, two per byte (element 2i in the low nibble), UE4M3 scale per 16
  mxfp4  E2M1 values, UE8M0 scale per 32
  mxfp8  E4M3 values, UE8M0 scale per 32
x is either in A's format (with its own scales) or BF16 / F16; y is F32, F16 or BF16 (chosen at
run time by a flag: the store happens once per row). ga / gx are optional per-tensor F32 scales.

Work decomposition
  A *chunk* is 16 bytes of one row of A: 32 FP4 or 16 FP8 elements. Lane l of a warp takes chunk
  c = cb + l, so one warp instruction reads 512 contiguous bytes of a row (every sector whole).
  A thread owns R rows (R = 1, 2, 4: the kernel variants) and loads the same chunk of each, so
  the x chunk (and its scales) is loaded and decoded once for R rows. They are consecutive rows,
  or with A's scales in the 128x4 layout (R = 2, 4; FLAG_RI32) rows 32 apart, whose scales share
  the layout's 16-byte runs (ri_row). The CTA is 8 warps; at run
  time they split into 8/WK row groups x WK warps along K (WK = 1, 2, 4, 8, a shift in the
  arguments), so a CTA covers 8/WK * R rows and the grid is L * ceil(M / that). The runtime
  picks R and WK per shape (src/gemv.c) and callers can override both.
  Each warp walks its chunks with stride 32 * WK: a main loop of U chunks per row per trip
  (U * R independent 16-byte loads in flight per thread, U = 4/R, at most 2 with BF16/F16 x),
  a one-chunk loop, and one predicated tail trip whose inactive lanes load nothing and hold
  zeros (NVFP4 with K % 32 == 16 ends rows with a half chunk: an 8-byte load). FP4 A with
  BF16/F16 x software-pipelines the main loop (see pipelined()): two register sets, the next
  trip's loads issued before this trip's decode.
  Two copies of the loops. ptxas schedules these kernels for 64 registers (4 CTAs of 256 per
  SM); where a trip's loads do not all fit beside what else is live, it sinks the smallest ones,
  the scale bytes, below the decode, so a trip waited on memory twice (SASS: the LDG.U8s after the
  IDP block). The fast copy drops what costs registers: row r's addresses are row r-1's plus the
  row stride (one 64-bit base per thread, not R), no row clamps (its warps have all R rows), and
  NVFP4's two scale bytes of a chunk come as one u16 (FLAG_SPAIR, set by the runtime when they
  are adjacent and aligned); ptxas then issues all of a trip's loads first. The slow copy (the
  last row tile's warps; NVFP4 scale layouts without adjacent pairs) keeps per-row bases clamped
  to M - 1 and byte loads. Measured on an H100 against the single-copy kernels: NVFP4 +1.5 to
  +3.9 points of copy, MXFP4 +0.4 to +2.9, MXFP8 unchanged.
  Partial sums are reduced with a shfl butterfly per row, then (WK > 1) across the WK warps of a
  row through 128 bytes of shared memory; one thread per row applies ga * gx, converts, stores.
  With WK = 1 lanes 0..R-1 store their warp's rows straight from the butterfly, without shared
  memory or bar.sync (H100, (7168, 2048, 4): NVFP4 -0.45 µs, MXFP8 -0.4).
  The tensor-core kernels ("gemv_<fp4>_<f16|bf16>_tc", FP4 A with F16/BF16 x; class TC) split work
  differently: a warp owns 16 rows, lane (g, t) two of them, and walks K in windows of 64
  bytes a row; the dot products run on mma.sync with x, masked per scale block, as the B
  operand. R is 16 in the plan (rows per CTA 8/WK * 16). On sm_90a their window loop walks
  running pointers (pinc) and is software-pipelined over two register sets (spl: the next
  window's loads go out before this window's decode and mma); their ring twins ("..._tcr",
  TC_RING) bring each window's A, scale runs and x into a per-warp shared-memory ring by
  cp.async instead, D - 1 windows ahead.

Launch: every kernel issues griddepcontrol.wait before its first load (programmatic dependent
launch: the runtime launches with programmatic stream serialization, so a kernel's CTAs may start
while the preceding kernel drains; without PDL both are no-ops) and griddepcontrol.
launch_dependents first, but in CTA 0 only after its wait (pdl_trigger_first: so a following
kernel that does not wait still starts after everything before us). FLAG_NOWAIT (the caller's
independence promise) skips the wait and waits at the very end instead (pdl_end_wait).
FLAG_EARLY (the caller's promise that A and its scales are not written by a kernel still running)
moves the wait after the optional L2 prefetch of A (pfn trips, see prologue()), so that prefetch
overlaps the preceding kernel's tail. NVFP4 x NVFP4 also has software-pipelined twins
("_r<R>s", see variants()).

Caching: A and its scales stream with ld.global.nc.L1::no_allocate and an L2 evict_first policy
(createpolicy + .L2::cache_hint: ptxas 13 accepts .L2::evict_first only on 256-bit loads); A adds
an L2 prefetch-size hint, .L2::128B (see GV.ld). x and its scales use L1::evict_last and an L2
evict_last policy: every CTA of a batch reads the same x.

Decode
  sm_90a, FP4 A with FP4 x (the dp4a path): 2 * an E2M1 value is an integer in
  {0, 1, 2, 3, 4, 6, 8, 12}, so block dot products are integer dot products (dp4a) of table
  bytes. A prmt looks 4 magnitudes up in an 8-byte table at once; a selector nibble with bit 3
  set (a negative code) yields the replicated sign of its table byte, 0 here, so the lookup on
  A's word gives P (the positive codes' bytes, 0 for negative ones) and the lookup on
  word ^ 0x88888888 gives N (the negative codes' magnitudes): A = P - N, 7 integer ops per 8
  elements (xor, 2 shifts, 4 prmt) and 4 dp4a, where the f16 path below needs 15 + 4 HFMA2.
  x is decoded once per chunk for the R rows into signed bytes (the table and the negated table,
  picked by a byte mask of the signs from a sign-replicating prmt: 11 ops per 8 elements).
  The tables live in registers made opaque to ptxas (times unit and a thread-dependent 1), else
  it rematerializes the constant with an IMAD before every prmt.
  SASS per 16-byte row chunk (loop body, R = 4, NVFP4): 132 instructions (67 integer-pipe) with
  the f16 path, 82.5 (45.5 integer-pipe, 16 IDP) with this one.
  sm_90a otherwise (FP4 A with BF16/F16 x) has no FP4 cvt. E2M1 -> f16 by byte permute: the f16 of every E2M1 magnitude has a zero
  low byte and a high byte from {00 38 3C 3E 40 42 44 46}, an 8-entry table that prmt indexes
  with the 3 magnitude bits of four nibbles at once (bit 3 of a selector nibble would mean "sign
  replicate", so the sign bits are masked off first). A second prmt per pair spreads the table
  bytes into f16x2 high bytes, zeroing the low bytes by "replicating" the sign of a table byte
  (all below 0x80). Pairs are elements (i, i+4) of a 32-bit word, whose sign bits (4i+3, 4i+19)
  sit 16 apart like the f16x2 sign bits: one shift and one lop3 insert both. 15 integer ops per
  8 elements; x is decoded the same way, so the pairing is the same on both sides.
  sm_100a / sm_120a use cvt.rn.f16x2.e2m1x2 (one byte -> elements (2i, 2i+1)). E4M3 (and the
  UE4M3 scales) -> f16x2 with cvt.rn.f16x2.e4m3x2 on every target. BF16 x -> f32 is a shift or a
  mask; F16 x -> f32 is cvt.

Accumulation precision (why integers or f16x2 where they are used, f32 elsewhere)
  FP4 x FP4 on sm_90a (the dp4a path): products of doubled values are integers |j| <= 144;
  the P and N chains of a block (16 or 32 products each) accumulate in int32, starting from the
  bits of 1.5 * 2^21, an f32 whose ulp is 1/4: the chain read as f32 is 1.5 * 2^21 + sum / 4
  exactly (|sum| / 4 <= 32 * 36 < 2^20), and the difference of the two f32 is the block dot
  product, exact (both lie in [2^21, 2^22), same ulp). No rounding before the block scale.
  FP4 x FP4 on sm_100a / sm_120a (f16x2): every E2M1 value is k/2 with
  k in {0,1,2,3,4,6,8,12}, so a product is j/4 with |j| <= 144: exact in f16 (11-bit
  significand). Each half of an f16x2 accumulator takes 8 products (two words of 4 pairs), so its
  partial sums are multiples of 1/4 with magnitude <= 8 * 36 = 288 < 512, where f16 spacing is
  at most 1/4: every fma.rn.f16x2 is exact. An NVFP4 block is one accumulator, an MXFP4 block
  two; their halves are converted to f32 and added (exact: <= 12 significant bits). So the block
  dot product is exact, and the only rounding is the f32 accumulation of scaled block sums.
  (A sum of 16 products in one f16 can reach 576 > 512, where spacing is 1/2: that is why a half
  never takes more than 8.)
  MXFP8 x MXFP8: E4M3 products reach 448^2 > 65504 and go down to 2^-18 (subnormal in f16):
  f16 is not exact, so products and sums are f32 (products of 4-bit significands are exact in
  f32; the sums round at 2^-24 relative).
  BF16 / F16 x: products of a 2- or 4-bit significand with an 8- or 11-bit one are not exact in
  f16, and BF16 overflows f16: f32 products and sums.
  The block scale is applied once per block (per half block for MXFP8: a chunk is 16 elements)
  in f32: acc += block_sum * (sa * sx). UE4M3 products are exact in f32; two UE8M0 scales whose
  product leaves f32's range (below 2^-149 or from 2^128) flush to 0 / overflow to Inf.
  UE8M0 code 0 is 2^-127 (an f32 subnormal), 255 is NaN; UE4M3 bit 7 is ignored.
  FP4 A with F16 x on sm_90a's tensor-core kernel: the decode's values are A's times 2^-14 and
  the sums are scaled back once at the end, so an output under 2^-112 is summed in f32
  subnormals (each rounding 2^-150 absolute, 2^-136 once scaled back; tests/test_gemv.c's
  random configurations met it at y about 1e-38, MXFP4 scale code 0).
"""

import sys

from ptx import Kernel, header

GENERATOR = "gen/gemv.py"
THREADS = 256
WARPS = THREADS // 32

FORMATS = {
    "nvfp4": {"elem": "e2m1", "scale": "ue4m3", "block": 16},
    "mxfp4": {"elem": "e2m1", "scale": "ue8m0", "block": 32},
    "mxfp8": {"elem": "e4m3", "scale": "ue8m0", "block": 32},
}
XTYPES = ("same", "bf16", "f16")
ROWS = (1, 2, 4)

# Kernel arguments: one .param struct; build/gen/gemv_args.h is its C mirror (same list).
# Byte strides: a_l/a_m (A batch/row), as_l/as_m (A scale batch/row; 128x4: as_l = bytes per
# batch), x_l, xs_l (x and its scales per batch), y_l/y_m. A scale k offset (u32):
# (k >> ksh) * kmul + (k & kmsk), and ks1 from an even k to k + 1 (strided: kmul = ks1 = k stride,
# ksh = kmsk = 0; 128x4: ksh 2, kmul 512, kmsk 3, ks1 1). unit is 1: a multiplier the runtime
# passes so per-row address sums issue as IMAD.WIDE on the FMA pipe rather than 64-bit IADD pairs
# on the integer pipe, which the FP4 decode keeps busy. pfn: trips of this warp's chunks (and
# their scale bytes) to prefetch into L2 before the loop (0: none); CTAs from pfcta on skip it.
# tmag / tsh: the batch of CTA b is (b * tmag) >> tsh (64-bit product), b / tiles exactly for
# b < 2^31 (see ptxq_gemv_tile_magic in src/gemv.c).
ARG_LIST = (
    "u64 a", "u64 as", "u64 x", "u64 xs", "u64 y", "u64 ga", "u64 gx",
    "u64 a_l", "u64 a_m", "u64 as_l", "u64 as_m", "u64 x_l", "u64 xs_l", "u64 y_l", "u64 y_m",
    "u32 m", "u32 tiles", "u32 nch", "u32 nfull", "u32 wk_shift", "u32 kb4", "u32 flags",
    "u32 ksh", "u32 kmul", "u32 kmsk", "u32 ks1", "u32 xs_k", "u32 unit", "u32 pfn", "u32 pfcta",
    "u32 tmag", "u32 tsh",
)
Y_MASK, Y_F32, Y_F16, Y_BF16 = 3, 0, 1, 2
FLAG_SF128x4 = 4   # A scales in the 128x4 interleaved layout
FLAG_GA = 8        # ga points at A's per-tensor scale
FLAG_GX = 16       # gx points at x's per-tensor scale
FLAG_SPAIR = 64    # NVFP4: a chunk's two scale bytes, A's and (x in NVFP4 too) x's, are
                   # adjacent, the first at an even address (K stride 1 and even base and
                   # pitches, or 128x4 with an even base): the fast loop loads them as one u16
FLAG_EARLY = 32    # the caller promised A and its scales are not written by the preceding kernel:
                   # the L2 prefetch of A runs before griddepcontrol.wait (PDL), not after
FLAG_NOWAIT = 128  # the caller promised the call is independent of every kernel that may still run
                   # (PTXQ_GEMV_INDEPENDENT): no griddepcontrol.wait at all
FLAG_NOSPF = 256   # the L2 prefetch covers A only, not its scale bytes (the runtime's choice)
FLAG_RI32 = 512    # rows interleaved by 32 (128x4 scales, R = 2 or 4; see ri_row): a thread's rows
                   # are row0 + 32 r, whose scales share one 16-byte group of the 128x4 layout
FLAG_SVEC = 1024   # with FLAG_RI32: the R rows' scale words of a chunk are one aligned R-word
                   # vector (A's scale base 4R-byte aligned): the "...v" twins' fast loop loads
                   # them with one instruction (see load()); the other kernels ignore it
# bit 31 is never set (src/gemv.c sets only the flags above): the tensor-core kernels make an
# opaque zero or a never-true predicate of it (TC: sdep, udep, spl's sfence); the sfence branch
# would skip windows if it were ever taken


def flag_test(k, flag, t, p, cmp="ne", also=None):
    """Predicate p = (args.flags & flag) != 0 (cmp "ne") or == 0 ("eq"), and'ed with predicate
    `also` if given; t is the scratch register."""
    k(f"and.b32 {t}, %a_flags, {flag}")
    if also:
        k(f"setp.{cmp}.and.u32 {p}, {t}, 0, {also}")
    else:
        k(f"setp.{cmp}.u32 {p}, {t}, 0")


def pdl_trigger_first(k):
    """Programmatic dependent launch, at the kernel's start: every CTA but CTA 0 signals its
    dependents (griddepcontrol.launch_dependents) here; CTA 0 signals after its wait (pdl_trigger).
    NOTE: the next kernel may start only once every CTA of ours has signalled, so CTA 0's late
    signal means everything before us has completed when it starts. That is what makes a
    following PTXQ_GEMV_INDEPENDENT call, which does not wait, safe with respect to the kernels
    before us. One CTA is enough, and CTA 0 passes its wait early in our run, long before our
    last CTAs start (they gate the next kernel anyway): on an H200 (2026-11-26, separate
    processes, two rounds) the dp4a kernels with this signal ran within 0.5% of the previous
    ones that signalled first in every CTA; all CTAs signalling after their waits would hold the
    next kernel back by our last CTAs' prologues (not measured alone). A kernel that does not
    wait (FLAG_NOWAIT) signals from every CTA here."""
    f, p, pl = k.reg(".b32", "t_nw"), k.reg(".pred", "p_nowait"), k.reg(".pred", "p_late")
    c = k.reg(".b32", "t_c0")
    flag_test(k, FLAG_NOWAIT, f, p)
    k(f"mov.u32 {c}, %ctaid.x")
    k(f"setp.eq.and.u32 {pl}, {c}, 0, !{p}")
    k(f"@!{pl} griddepcontrol.launch_dependents")


def pdl_wait(k, label):
    """griddepcontrol.wait unless FLAG_NOWAIT (the caller's independence promise); needs
    pdl_trigger_first before it.
    NOTE: a poll on a counter that every CTA of the kernel before bumps with red.release.gpu
    after its stores (thread 0 spinning on ld.acquire.gpu, then bar.sync) released the next
    call 0.1-0.4 us sooner than this wait but made a chain of read kernels 0-18% slower (the
    spin, the barrier behind it and CTA 0's later signal; a one-wave grid doubles the gap): H200, 2026-11-28,
    bench/RESULTS.md forty-eighth session, branch exp/fsync."""
    k(f"@%p_nowait bra.uni {label}")
    k("griddepcontrol.wait")
    k.label(label)


def pdl_trigger(k):
    """CTA 0's signal to the next kernel, after its wait (see pdl_trigger_first)."""
    k("@%p_late griddepcontrol.launch_dependents")


def pdl_end_wait(k):
    """With FLAG_NOWAIT, the wait the kernel skipped, at its very end (after the y stores).
    NOTE: a kernel that waits on ours waits for our completion only; so that this still implies
    the completion of everything before us (as it does after a kernel that waited first), an
    independent kernel does not exit before its predecessor has completed. Its CTAs reach this
    point long after the predecessor's last ones in a chain, so it costs little."""
    # the flag read again from the parameter (constant bank): a predicate or register held
    # live across the loops cost the tensor-core kernels 3% (H200)
    f, p = k.reg(".b32", "t_nwe"), k.reg(".pred", "p_nwe")
    k(f"ld.param.u32 {f}, [args+{arg_layout()[0]['flags'][1]}]")
    k(f"and.b32 {f}, {f}, {FLAG_NOWAIT}")
    k(f"setp.ne.u32 {p}, {f}, 0")
    k(f"@{p} griddepcontrol.wait")


def arg_layout():
    """{name: (ptx type, byte offset)} and the padded size; u64 first, so no holes."""
    layout, pos = {}, 0
    for item in ARG_LIST:
        typ, name = item.split()
        width = 8 if typ == "u64" else 4
        assert pos % width == 0, name
        layout[name] = (typ, pos)
        pos += width
    return layout, -(-pos // 8) * 8


def unroll(fmt, xt, rows):
    u = 4 // rows
    if xt != "same" and FORMATS[fmt]["elem"] == "e2m1":
        u = min(u, 2)   # 64 bytes of BF16/F16 x per chunk: keep the register count sane
    return u


def pipelined(fmt, xt):
    """Software-pipelined main loop (next trip's loads before this trip's decode): measured on an
    H200, +5-9 points of %copy for FP4 A with BF16/F16 x (long f32 decode per trip), nothing or
    slightly worse for FP4 x FP4 and MXFP8 (the extra register set costs occupancy)."""
    return 1 if FORMATS[fmt]["elem"] == "e2m1" and xt != "same" else 0


def kernel_name(fmt, xt, rows, twin=0):
    """twin: 0 plain, 1 software-pipelined ("s"), 2 bulk-copy ring ("b"), 3 vector scale loads
    for 128x4 scales ("v")."""
    return f"gemv_{fmt}_{fmt if xt == 'same' else xt}_r{rows}{['', 's', 'b', 'v'][twin]}"


# The bulk-copy ring ("...b" kernels, NVFP4 x NVFP4, sm_90a): each warp streams its R rows of A
# and their scale bytes into its own ring of BULK_DEPTH[R] stages in shared memory with 1-D
# cp.async.bulk (one stage = one trip: 32 chunks = 512 bytes of A and 64 scale bytes per row),
# one mbarrier per stage. Ring: 8 warps x depth x R x 576 bytes = 36 KiB per CTA (static
# shared memory stays under 48 KiB), about 4.5 KiB of A in flight per warp without registers.
BULK_DEPTH = {1: 8, 2: 4, 4: 2}
BULK_ROW = 512 + 64     # bytes per row per stage: A, then (after all R rows of A) scales


def variants():
    """Every format x x dtype x rows per thread, and for NVFP4 x NVFP4 a software-pipelined twin
    ("...s": the next trip's loads issued before this trip's decode, twice the bytes in flight per
    thread for 80 registers instead of 64). Measured on an H200 (bench gemv --pipelined -1,1),
    2026-11-22: +1 to +2 points of %copy for NVFP4 where a warp makes 4 or more trips along K, -1
    with 2 trips; MXFP4 (99 registers) and MXFP8 (69) lost 1.5 to 13 points, so they have no
    twin. Since the plain kernel's fast loop and WK = 1 reduction the twin is 4-7% slower than
    it on the H200 too (2026-11-24), so the runtime takes it only when asked (desc.pipelined).
    sm_90a only: elsewhere (not measured; sm_120a spills) the twin is the plain kernel.
    NVFP4 x NVFP4 with R = 2, 4 also has "...v" twins for 128x4 A scales (param svec; see load()):
    the fast loop loads a chunk's R scale words as one vector. A twin, not a third copy of the
    loops in the plain kernel: that copy raised ptxas's count for every call of the r4 kernel
    (64 -> 80 registers, 4 -> 3 CTAs a SM; H200 row-major (7168,16384,1) 81-82% of the copy
    against 89 before). 2026-11-27, 128x4 scales, x in A's format, points of the copy on the four
    bench shapes against the same kernel without the vector loads, same plans, three rounds:
    H200 waiting -0.5 to +3.8, independent +1.2 to +6.3; H100 -1.1 to +3.5 and -1.7 to +3.3
    (bench/RESULTS.md, thirty-fifth session). The same loads in MXFP4 lost 1.5-3.4 points on the
    H200 and MXFP8 moved within +-1, so they have no twin."""
    res = []
    for fmt, f in FORMATS.items():
        for xt in XTYPES:
            for rows in ROWS:
                twins = (0,)
                if xt == "same" and fmt == "nvfp4":
                    twins = (0, 1, 2, 3) if rows > 1 else (0, 1, 2)
                for twin in twins:
                    prm = {"format": fmt, "x": xt, "rows": rows, "elem": f["elem"],
                           "scale": f["scale"], "block": f["block"],
                           "unroll": unroll(fmt, xt, rows), "threads": THREADS,
                           "pipe": pipelined(fmt, xt), "twin": int(twin == 1),
                           "bulk": int(twin == 2)}
                    if twin == 3:
                        prm["svec"] = 1
                    res.append((kernel_name(fmt, xt, rows, twin), prm))
    for fmt in ("nvfp4", "mxfp4"):
        f = FORMATS[fmt]
        for xt in TC_X:
            for ring in (0, TC_RING[(fmt, xt)][0]):
                prm = {"format": fmt, "x": xt, "rows": 16, "elem": f["elem"], "scale": f["scale"],
                       "block": f["block"], "unroll": 1, "threads": THREADS, "pipe": 0, "twin": 0,
                       "bulk": 0, "tc": 1}
                if ring:
                    # the ring twin (TC.cpr; sm_90a: elsewhere the plain kernel, as pinc is)
                    prm["ring"] = ring
                    if TC_RING[(fmt, xt)][1]:
                        prm["ring_block"] = 1
                res.append((tc_name(fmt, xt, ring > 0), prm))
    return res


# f16 high byte of each E2M1 magnitude code 0..7 (the low byte is always 0)
E2M1_F16_HI = (0x00, 0x38, 0x3C, 0x3E, 0x40, 0x42, 0x44, 0x46)
LUT_LO = E2M1_F16_HI[0] | E2M1_F16_HI[1] << 8 | E2M1_F16_HI[2] << 16 | E2M1_F16_HI[3] << 24
LUT_HI = E2M1_F16_HI[4] | E2M1_F16_HI[5] << 8 | E2M1_F16_HI[6] << 16 | E2M1_F16_HI[7] << 24
LOP_OR_AND = 0xF8   # lop3 truth table of a | (b & c)
LOP_SEL = 0xE4      # lop3 truth table of c ? a : b (bitwise)

# sm_90a FP4 x FP4: E2M1 magnitude code -> 2 * value, an integer (int8 table for prmt + dp4a)
E2M1_X2 = (0, 1, 2, 3, 4, 6, 8, 12)
I8_LO = E2M1_X2[0] | E2M1_X2[1] << 8 | E2M1_X2[2] << 16 | E2M1_X2[3] << 24
I8_HI = E2M1_X2[4] | E2M1_X2[5] << 8 | E2M1_X2[6] << 16 | E2M1_X2[7] << 24
NEG_LO = sum(((-v) & 0xFF) << 8 * i for i, v in enumerate(E2M1_X2[:4]))
NEG_HI = sum(((-v) & 0xFF) << 8 * i for i, v in enumerate(E2M1_X2[4:]))
# int32 dp4a sums start from the bits of 1.5 * 2^21, an f32 whose ulp is 1/4: read back as f32
# the accumulator is 1.5 * 2^21 + sum / 4 exactly (|sum| / 4 <= 32 * 36 < 2^20)
DP_MAGIC = 0x4A400000
DP_MAGIC_F = 3145728.0
# prmt selectors spreading the sign bits of nibbles 0-3 (4-7) of w into byte masks, from
# {a = w << 4, b = w}: nibble 2i's sign is bit 7 of byte i of a, nibble 2i+1's of byte i of b
SIGN_SEL = (0xD9C8, 0xFBEA)


def spread_selector(i):
    """prmt selector: f16x2 {lo: table byte i of a, hi: table byte i of b}, low bytes zero
    (sign-replicate of a table byte, which is < 0x80)."""
    return (4 + i) << 12 | (8 + i) << 8 | i << 4 | (8 + i)


def fp4_pairs(target):
    """Element indices (within a 32-bit word) of the halves of the 4 decoded f16x2."""
    if target == "sm_90a":
        return [(i, i + 4) for i in range(4)]
    return [(2 * i, 2 * i + 1) for i in range(4)]


def decode_fp4(k, target, w, tag):
    """One word of 8 E2M1 codes -> 4 f16x2 registers (pairs as fp4_pairs)."""
    out = [k.reg(".b32", f"{tag}h{i}") for i in range(4)]
    if target != "sm_90a":
        b = [k.reg(".b8", f"{tag}b{i}") for i in range(4)]
        k(f"mov.b32 {{{b[0]}, {b[1]}, {b[2]}, {b[3]}}}, {w}")
        for i in range(4):
            k(f"cvt.rn.f16x2.e2m1x2 {out[i]}, {b[i]}")
        return out
    k.comment("E2M1 -> f16x2 (no FP4 cvt on sm_90a): table bytes for 4 magnitudes per prmt,\n"
              "spread to pairs (i, i+4) whose signs sit 16 bits apart like f16x2's")
    mag = k.reg(".b32", "t_mag")
    mag_hi = k.reg(".b32", "t_maghi")
    lut_lo = k.reg(".b32", "t_lutlo")
    lut_hi = k.reg(".b32", "t_luthi")
    sgn = k.reg(".b32", "t_sgn")
    k(f"and.b32 {mag}, {w}, 0x77777777")
    k(f"shr.b32 {mag_hi}, {mag}, 16")
    k(f"prmt.b32 {lut_lo}, %lut0, %lut1, {mag}")
    k(f"prmt.b32 {lut_hi}, %lut0, %lut1, {mag_hi}")
    for i in range(4):
        k(f"prmt.b32 {out[i]}, {lut_lo}, {lut_hi}, 0x{spread_selector(i):04X}")
        pair_signs(k, out[i], out[i], w, i, sgn)
    return out


def pair_signs(k, dst, mag, w, i, tmp):
    """dst = mag | the signs of elements (i, i + 4) of the E2M1 word w at bits 15 and 31 (they sit
    16 apart in w, as in a 16-bit pair): one shift (none for i = 3) and one lop3."""
    if i < 3:
        k(f"shl.b32 {tmp}, {w}, {12 - 4 * i}")
        k(f"lop3.b32 {dst}, {mag}, {tmp}, 0x80008000, 0x{LOP_OR_AND:02X}")
    else:
        k(f"lop3.b32 {dst}, {mag}, {w}, 0x80008000, 0x{LOP_OR_AND:02X}")


def decode_x_i8(k, w, tag):
    """sm_90a, FP4 x: one word of 8 E2M1 codes -> 2 words of signed bytes 2 * value (elements
    0-3, 4-7). Table bytes for 4 magnitudes per prmt, the negated table likewise, and a byte
    mask of the signs (prmt sign-replicate) picks one of the two: 11 integer ops per 8 elements,
    once per chunk for R rows."""
    mag, mhi, ws = k.reg(".b32", "t_xmag"), k.reg(".b32", "t_xmhi"), k.reg(".b32", "t_xws")
    k(f"and.b32 {mag}, {w}, 0x77777777")
    k(f"shr.b32 {mhi}, {mag}, 16")
    k(f"shl.b32 {ws}, {w}, 4")
    out = []
    for h, m in enumerate((mag, mhi)):
        p, n, s = k.reg(".b32", "t_xp"), k.reg(".b32", "t_xn"), k.reg(".b32", "t_xs")
        o = k.reg(".b32", f"{tag}i{h}")
        k(f"prmt.b32 {p}, %i8lo, %i8hi, {m}")
        k(f"prmt.b32 {n}, %neglo, %neghi, {m}")
        k(f"prmt.b32 {s}, {ws}, {w}, 0x{SIGN_SEL[h]:04X}")
        k(f"lop3.b32 {o}, {n}, {p}, {s}, 0x{LOP_SEL:02X}")
        out.append(o)
    return out


def decode_a_i8(k, w, tag, shift="shr"):
    """sm_90a, FP4 A: one word of 8 E2M1 codes -> [(P, N)] for elements 0-3 and 4-7, byte
    2 * |value| in P where the code is positive, in N where it is negative (0 elsewhere). A prmt
    selector nibble with bit 3 set replicates the sign of a table byte (all < 0x80: 0), so the
    lookup on w zeroes the negative codes and the lookup on w ^ 0x88888888 the positive ones;
    value = P - N. 7 integer ops per 8 elements."""
    wx = k.reg(".b32", f"{tag}wx")
    whi, wxhi = k.reg(".b32", f"{tag}whi"), k.reg(".b32", f"{tag}wxhi")
    k(f"xor.b32 {wx}, {w}, 0x88888888")
    if shift == "mulhi":   # w >> 16 on the FMA pipe (an experiment knob: no gain on an H200)
        k(f"mul.hi.u32 {whi}, {w}, 65536")
        k(f"mul.hi.u32 {wxhi}, {wx}, 65536")
    else:
        k(f"shr.b32 {whi}, {w}, 16")
        k(f"shr.b32 {wxhi}, {wx}, 16")
    out = []
    for h, (sp, sn) in enumerate(((w, wx), (whi, wxhi))):
        p, n = k.reg(".b32", f"{tag}p{h}"), k.reg(".b32", f"{tag}n{h}")
        k(f"prmt.b32 {p}, %i8lo, %i8hi, {sp}")
        k(f"prmt.b32 {n}, %i8lo, %i8hi, {sn}")
        out.append((p, n))
    return out


def opaque_tables(k, tid, tables):
    """Registers %name = val for (name, val) in tables, as val times unit (1, a kernel argument)
    and a thread-dependent 1 (tid | 1, masked by unit): ptxas cannot fold them into constants."""
    uv = k.reg(".b32", "unit_v")
    k(f"or.b32 {uv}, {tid}, 1")
    k(f"and.b32 {uv}, {uv}, %a_unit")
    for name, val in tables:
        k.reg(".b32", name)
        k(f"mul.lo.u32 %{name}, {uv}, 0x{val:08X}")


def decode_fp8(k, w, tag):
    """One word of 4 E4M3 codes -> 2 f16x2 (elements (0,1), (2,3))."""
    lo, hi = k.reg(".b16", f"{tag}q0"), k.reg(".b16", f"{tag}q1")
    out = [k.reg(".b32", f"{tag}h{i}") for i in range(2)]
    k(f"mov.b32 {{{lo}, {hi}}}, {w}")
    k(f"cvt.rn.f16x2.e4m3x2 {out[0]}, {lo}")
    k(f"cvt.rn.f16x2.e4m3x2 {out[1]}, {hi}")
    return out


def halves_f32(k, h2, lo, hi):
    t0, t1 = k.reg(".b16", "t_h0"), k.reg(".b16", "t_h1")
    k(f"mov.b32 {{{t0}, {t1}}}, {h2}")
    k(f"cvt.f32.f16 {lo}, {t0}")
    k(f"cvt.f32.f16 {hi}, {t1}")


def sum_parts(k, s, t, ad, n, pl, stride):
    """s += the n f32 at [ad], [ad + stride], ... in shared memory (the WK warps' parts of a row,
    in warp order: every plan's sum in the same order)."""
    k.label("RED_LOOP")
    k(f"ld.shared.f32 {t}, [{ad}]")
    k(f"add.f32 {s}, {s}, {t}")
    k(f"add.u32 {ad}, {ad}, {stride}")
    k(f"sub.u32 {n}, {n}, 1")
    k(f"setp.ne.u32 {pl}, {n}, 0")
    k(f"@{pl} bra RED_LOOP")


def mul_globals(k, dst, pl):
    """dst *= A's and x's per-tensor scales, each where its flag says it is passed."""
    g, f = k.reg(".f32", "gscale"), k.reg(".b32", "t_gf")
    for flag, ptr, lab in ((FLAG_GA, "%a_ga", "NO_GA"), (FLAG_GX, "%a_gx", "NO_GX")):
        k(f"and.b32 {f}, %a_flags, {flag}")
        k(f"setp.eq.u32 {pl}, {f}, 0")
        k(f"@{pl} bra {lab}")
        k(f"ld.global.f32 {g}, [{ptr}]")
        k(f"mul.f32 {dst}, {dst}, {g}")
        k.label(lab)


def store_y(k, s, row, pl, sfx, end):
    """y[l, row] = s in y's type (the flags' Y field); every path ends at label `end`."""
    ya, r64 = k.reg(".b64", "yaddr"), k.reg(".b64", "t_y64")
    k(f"mad.lo.u64 {ya}, %l64, %a_y_l, %a_y")
    k(f"cvt.u64.u32 {r64}, {row}")
    k(f"mad.lo.u64 {ya}, {r64}, %a_y_m, {ya}")
    yt, h = k.reg(".b32", "t_yt"), k.reg(".b16", "t_yh")
    k(f"and.b32 {yt}, %a_flags, {Y_MASK}")
    k(f"setp.ne.u32 {pl}, {yt}, {Y_F32}")
    k(f"@{pl} bra Y_NARROW{sfx}")
    k(f"st.global.f32 [{ya}], {s}")
    k(f"bra {end}")
    k.label(f"Y_NARROW{sfx}")
    k(f"setp.ne.u32 {pl}, {yt}, {Y_F16}")
    k(f"@{pl} bra Y_BF16{sfx}")
    k(f"cvt.rn.f16.f32 {h}, {s}")
    k(f"st.global.b16 [{ya}], {h}")
    k(f"bra {end}")
    k.label(f"Y_BF16{sfx}")
    k(f"cvt.rn.bf16.f32 {h}, {s}")
    k(f"st.global.b16 [{ya}], {h}")
    k.label(end)


class GV:
    """Emits one GEMV kernel for one target."""

    def __init__(self, name, p, target):
        self.k = Kernel(name)
        self.p = p
        self.target = target
        self.fmt = p["format"]
        self.xt = p["x"]
        self.R = p["rows"]
        self.U = p["unroll"]
        self.fp4 = p["elem"] == "e2m1"
        self.nv = self.fmt == "nvfp4"
        self.same = self.xt == "same"
        self.layout, self.argsize = arg_layout()
        self.tc_class = bool(p.get("tc"))   # the tensor-core kernels map rows their own way
        # sm_90a FP4 x FP4: int8 decode + dp4a (integer block sums); GEMV_OPTS tunes experiments
        self.dp = self.same and self.fp4 and target == "sm_90a"
        self.shift = p.get("shift", "shr")
        self.pipe = int(p.get("pipe", 0))
        if p.get("twin") and target == "sm_90a":
            # the pipelined twin; elsewhere (not measured; sm_120a spills) it is the plain kernel
            self.pipe = 1
        # the bulk-copy ring (sm_90a; elsewhere, not measured, the plain kernel)
        self.bulk = bool(p.get("bulk")) and target == "sm_90a"
        # chained row addresses (see setup()); the bulk ring keeps one base per row
        self.chain = not self.bulk
        self.fast = False   # set per copy of the loops (see emit())
        # the "...v" twins (param svec; R = 2, 4): the fast copy of the loops loads a chunk's R
        # scale words as one vector (see load()), and runs only with FLAG_SVEC
        self.svec = (not self.tc_class and not self.bulk and self.R in (2, 4) and
                     bool(int(p.get("svec", 0))))
        self.vec = False    # set while emitting that copy
        self.lsfx = ""
        # x bytes per chunk: FP4 chunk = 32 elements, FP8 chunk = 16
        self.epc = 32 if self.fp4 else 16
        self.xbytes = 16 if self.same else 2 * self.epc

    # ---- arguments and setup -------------------------------------------------------------
    def args(self):
        k = self.k
        for name, (typ, off) in self.layout.items():
            if name.startswith("pad"):
                continue
            r = k.reg(".b64" if typ == "u64" else ".b32", "a_" + name)
            k(f"ld.param.{typ} {r}, [args+{off}]")
        for name in ("a", "as", "x", "xs", "y", "ga", "gx"):
            k(f"cvta.to.global.u64 %a_{name}, %a_{name}")

    def coords(self):
        """Who am I: warp (wm, wk) of the CTA, CTA = (batch l, row tile); %row0 = the warp's first
        row (R rows a warp), the batch's A and scale bases, %p_sf128."""
        k, R = self.k, self.R
        k.comment("---- who am I: warp (wm, wk) of the CTA; CTA = (batch l, row tile)")

        tid, lane, warp = k.reg(".b32", "thread"), k.reg(".b32", "lane"), k.reg(".b32", "warp")
        k(f"mov.u32 {tid}, %tid.x")
        k(f"and.b32 {lane}, {tid}, 31")
        k(f"shr.u32 {warp}, {tid}, 5")
        wk, wm, t = k.reg(".b32", "wk"), k.reg(".b32", "wm"), k.reg(".b32", "t_s")
        k(f"shl.b32 {t}, 1, %a_wk_shift")
        k(f"sub.u32 {t}, {t}, 1")
        k(f"and.b32 {wk}, {warp}, {t}")
        k(f"shr.u32 {wm}, {warp}, %a_wk_shift")
        rpc = k.reg(".b32", "rpc")
        k(f"shr.u32 {rpc}, {WARPS}, %a_wk_shift")
        k(f"mul.lo.u32 {rpc}, {rpc}, {R}")
        bid, l, tile = k.reg(".b32", "bid"), k.reg(".b32", "l"), k.reg(".b32", "tile")
        k(f"mov.u32 {bid}, %ctaid.x")
        if self.p.get("div"):
            # experiment knob (GEMV_OPTS=div=1): the hardware-less division ptxas expands
            # (I2F, MUFU.RCP, F2I and a correction: ~20 dependent instructions)
            k(f"div.u32 {l}, {bid}, %a_tiles")
        else:
            # NOTE: l = bid / tiles by the runtime's magic multiplier: two uniform instructions
            # instead of ptxas's ~20-instruction division at the head of every CTA's prologue
            # (a second-wave CTA's loads start after it)
            q64 = k.reg(".b64", "t_q64")
            k(f"mul.wide.u32 {q64}, {bid}, %a_tmag")
            k(f"shr.b64 {q64}, {q64}, %a_tsh")
            k(f"cvt.u32.u64 {l}, {q64}")
        k(f"mul.lo.u32 {t}, {l}, %a_tiles")
        k(f"sub.u32 {tile}, {bid}, {t}")
        row0 = k.reg(".b32", "row0")
        k(f"mul.lo.u32 {row0}, {tile}, {rpc}")
        k(f"mad.lo.u32 {row0}, {wm}, {R}, {row0}")
        if not self.tc_class:
            self.ri_row(row0, row0, self.ri_pred())
        l64 = k.reg(".b64", "l64")
        k(f"cvt.u64.u32 {l64}, {l}")

        abl, sbl = k.reg(".b64", "a_batch"), k.reg(".b64", "s_batch")
        k(f"mad.lo.u64 {abl}, {l64}, %a_a_l, %a_a")
        k(f"mad.lo.u64 {sbl}, {l64}, %a_as_l, %a_as")
        p128 = k.reg(".pred", "p_sf128")
        ft = k.reg(".b32", "t_flag")
        flag_test(k, FLAG_SF128x4, ft, p128)

    def a_pitch(self):
        """A fresh .b64 register: A's row pitch, a_m / 32 under FLAG_RI32 (see setup)."""
        k = self.k
        pit, sh = k.reg(".b64", "t_pitch"), k.reg(".b32", "t_psh")
        k(f"selp.u32 {sh}, 5, 0, {self.ri_pred()}")
        k(f"shr.u64 {pit}, %a_a_m, {sh}")
        return pit

    def ri_pred(self):
        """A fresh predicate: FLAG_RI32 set (read where needed: one live across the loops cost
        ptxas a register)."""
        k = self.k
        t, p = k.reg(".b32", "t_rif"), k.reg(".pred", "p_ri")
        flag_test(k, FLAG_RI32, t, p)
        return p

    def ri_step(self):
        """A fresh register: the row step between a thread's rows, 32 with FLAG_RI32, else 1."""
        rs = self.k.reg(".b32", "t_rs")
        self.k(f"selp.u32 {rs}, 32, 1, {self.ri_pred()}")
        return rs

    def ri_row(self, dst, v, pri):
        """dst = the row of standard row index v (= row group gw times R plus r) under FLAG_RI32:
        row group gw takes rows (gw / 32) * 32 R + gw % 32 + 32 r, so the 32 row groups of a
        32 R-row block read every row once and a thread's R rows are 32 apart (the 128x4 scale
        layout keeps rows m, m + 32, m + 64, m + 96 of a K-block group in one 16-byte run; row
        groups m .. m + 31 fill its 512 bytes). Without the flag dst = v. R = 1: the identity."""
        k, R = self.k, self.R
        if R == 1:
            if dst != v:
                k(f"mov.u32 {dst}, {v}")
            return
        lg = R.bit_length() - 1
        g, o = k.reg(".b32", "t_rig"), k.reg(".b32", "t_rio")
        k(f"shr.u32 {g}, {v}, {lg}")
        k(f"and.b32 {o}, {g}, -32")
        k(f"shl.b32 {o}, {o}, {lg}")
        k(f"bfi.b32 {o}, {g}, {o}, 0, 5")
        k(f"and.b32 {g}, {v}, {R - 1}")
        k(f"bfi.b32 {o}, {g}, {o}, 5, {lg}")
        k(f"selp.b32 {dst}, {o}, {v}, {pri}")

    def policies(self):
        k = self.k
        k.comment("cache policies: A streams through L2 (evict_first), x stays (evict_last)")
        k.reg(".b64", "pol_a")
        k.reg(".b64", "pol_x")
        k("createpolicy.fractional.L2::evict_first.b64 %pol_a, 1.0")
        k("createpolicy.fractional.L2::evict_last.b64 %pol_x, 1.0")

    def setup(self):
        k, R = self.k, self.R
        self.coords()
        # the registers coords() set, by their role names
        wk, t, row0, l64 = k.reg(".b32", "wk"), k.reg(".b32", "t_s"), "%row0", "%l64"
        abl, sbl, p128, ft = "%a_batch", "%s_batch", "%p_sf128", "%t_flag"
        if not self.chain:
            self.row_bases()
        else:
            k.comment("chained row addresses: row r's = row r-1's + the step between a thread's rows\n"
                      "(A: a_m, the row pitch or 32 pitches with FLAG_RI32; scales: as_m, or in the\n"
                      "128x4 layout 16 (rows 4i .. 4i+3 share a 32-row group) or 4 (FLAG_RI32)), one\n"
                      "64-bit base per thread instead of R")
            r64 = k.reg(".b64", "row64")
            k.reg(".b64", "abase0")
            k.reg(".b64", "sbase0")
            k(f"cvt.u64.u32 {r64}, {row0}")
            k.comment("a_m is the step between a thread's rows: the row pitch, or 32 pitches with\n"
                      "FLAG_RI32 (the runtime's choice; a second 64-bit argument cost ptxas 2 registers\n"
                      "in the NVFP4 r4 kernel)")
            pit = self.a_pitch()
            k(f"mad.lo.u64 %abase0, {r64}, {pit}, {abl}")
            k(f"add.u64 %sbase0, {sbl}, {self.scale_row_offset(row0, r64)}")
            k.comment("NOTE: the scales' row step as a computed register, not a second 64-bit\n"
                      "argument: with both steps as arguments ptxas took 66 registers in the NVFP4 r4\n"
                      "kernel (64: 4 CTAs a SM)")
            k.reg(".b64", "srow")
            k(f"selp.b64 %srow, 16, %a_as_m, {p128}")
            k(f"selp.b64 %srow, 4, %srow, {self.ri_pred()}")

            k.comment("the fast copy of the loops: all R rows exist (warp-uniform: row0 is per\n"
                      "warp)" + ("; each scale pair is one aligned u16 (FLAG_SPAIR)" if self.nv else ""))
            k.reg(".pred", "p_rows")
            k.reg(".pred", "p_fast")
            k.reg(".b32", "t_rend")
            k(f"mad.lo.u32 %t_rend, {self.ri_step()}, {R - 1}, {row0}")
            k(f"add.u32 %t_rend, %t_rend, 1")
            k(f"setp.le.u32 %p_rows, %t_rend, %a_m")
            k("mov.pred %p_fast, %p_rows")
            if self.nv:
                flag_test(k, FLAG_SPAIR, ft, "%p_fast", "ne", "%p_rows")
            if self.svec:
                k.comment("...v twin: and the R scale words are one aligned vector (FLAG_SVEC)")
                flag_test(k, FLAG_SVEC, ft, "%p_fast", "ne", "%p_fast")
        xr, xsr = k.reg(".b64", "xrow"), k.reg(".b64", "xsrow")
        k(f"mad.lo.u64 {xr}, {l64}, %a_x_l, %a_x")
        k(f"mad.lo.u64 {xsr}, {l64}, %a_xs_l, %a_xs")

        self.policies()
        if self.dp:
            k.comment("E2M1 magnitude -> 2 * value as int8, and negated, tables for prmt. Times\n"
                      "unit (1), so ptxas keeps them in registers instead of rematerializing a\n"
                      "constant (an IMAD move) before every prmt")
            opaque_tables(k, "%thread", (("i8lo", I8_LO), ("i8hi", I8_HI), ("neglo", NEG_LO),
                                          ("neghi", NEG_HI)))
        elif self.fp4 and self.target == "sm_90a":
            k.comment("E2M1 magnitude -> f16 high byte table for prmt (codes 0-3, 4-7)")
            k.reg(".b32", "lut0")
            k.reg(".b32", "lut1")
            k(f"mov.b32 %lut0, 0x{LUT_LO:08X}")
            k(f"mov.b32 %lut1, 0x{LUT_HI:08X}")
        step, cb = k.reg(".b32", "step"), k.reg(".b32", "cb")
        k(f"shl.b32 {step}, 32, %a_wk_shift")
        k(f"shl.b32 {cb}, {wk}, 5")
        if self.nv:
            ph = k.reg(".pred", "p_hashalf")
            k(f"setp.gt.u32 {ph}, %a_nch, %a_nfull")
        self.acc = []
        for r in range(R):
            a = k.reg(".f32", f"acc{r}")
            k(f"mov.f32 {a}, 0f00000000")
            self.acc.append(a)

    def scale_row_offset(self, row, r64):
        """Byte offset (.b64 register) of A's scale row `row` (r64: the same as .b64): strided
        row * as_m, or the 128x4 interleave (m/128) * kb4 * 512 + (m%32) * 16 + ((m/32)%4) * 4."""
        k = self.k
        o128, ostr = k.reg(".b32", "t_o128"), k.reg(".b64", "t_ostr")
        o64, tb = k.reg(".b64", "t_o64"), k.reg(".b32", "t_ob")
        k(f"mul.lo.u64 {ostr}, {r64}, %a_as_m")
        k(f"shr.u32 {o128}, {row}, 7")
        k(f"mul.lo.u32 {o128}, {o128}, %a_kb4")
        k(f"shl.b32 {o128}, {o128}, 9")
        k(f"and.b32 {tb}, {row}, 31")
        k(f"mad.lo.u32 {o128}, {tb}, 16, {o128}")
        k(f"bfe.u32 {tb}, {row}, 5, 2")
        k(f"mad.lo.u32 {o128}, {tb}, 4, {o128}")
        k(f"cvt.u64.u32 {o64}, {o128}")
        k(f"selp.b64 {o64}, {o64}, {ostr}, %p_sf128")
        return o64

    def row_address(self, dst, prev, r, idx, mul, base, step, chained):
        """Row r's address of element idx * mul into dst: chained, row r-1's (prev) plus the row
        stride `step` (row 0 from %<base>0); else from row r's own base %<base><r>."""
        if chained and r > 0:
            self.k(f"add.u64 {dst}, {prev}, {step}")
        else:
            self.k(f"mad.wide.u32 {dst}, {idx}, {mul}, %{base}{0 if chained else r}")

    def row_bases(self):
        """One A and one scale base per row (the bulk ring, and the slow copy of the loops): rows
        past M are clamped to M - 1 (computed, never stored)."""
        k, R = self.k, self.R
        k.comment("per-row bases; rows past M are clamped to M - 1 (computed, never stored)")
        mlast, rowc, r64 = k.reg(".b32", "mlast"), k.reg(".b32", "rowc"), k.reg(".b64", "row64")
        k(f"sub.u32 {mlast}, %a_m, 1")
        rs, pit = self.ri_step(), self.a_pitch()
        for r in range(R):
            ab, sb = k.reg(".b64", f"abase{r}"), k.reg(".b64", f"sbase{r}")
            k(f"mad.lo.u32 {rowc}, {rs}, {r}, %row0")
            k(f"min.u32 {rowc}, {rowc}, {mlast}")
            k(f"cvt.u64.u32 {r64}, {rowc}")
            k(f"mad.lo.u64 {ab}, {r64}, {pit}, %a_batch")
            k(f"add.u64 {sb}, %s_batch, {self.scale_row_offset(rowc, r64)}")

    # ---- one trip: U chunks of each of R rows ----------------------------------------------
    def ld(self, dst, addr, which, pred=None, width="u8"):
        """which: 'a' (stream) or 'x' (keep). dst: list of 1, 2 or 4 .b32, or one byte reg."""
        k = self.k
        # "s": A's scale bytes in the CUDA-core kernels go through L1 (evict_normal; L2
        # evict_first as A's): a thread's rows share their scales' lines in the 128x4 layout
        # (rows 32 apart, FLAG_RI32), so the later rows' loads hit L1. H200, 2026-11-27, x in A's
        # format, % of the copy, two rounds: 128x4 scales NVFP4 +4.3 to +18.1 points on the four
        # bench shapes (4096,7168,8 73.1 -> 88.1-88.6 waiting), MXFP4 0.0 to +5.0, MXFP8 -1.9
        # to +3.6; row-major scales -1.9 to +3.5 over two calls (no allocation: the old policy,
        # GEMV_OPTS=scache=0)
        cache = {"a": "ld.global.nc.L1::no_allocate.L2::cache_hint",
                 "s": "ld.global.nc.L1::evict_normal.L2::cache_hint"}.get(
                     which, "ld.global.nc.L1::evict_last.L2::cache_hint")
        pol = "%pol_a" if which in ("a", "s") else "%pol_x"
        pre = f"@{pred} " if pred else ""
        if len(dst) == 4:
            # NOTE: A's L2 prefetch size, .L2::128B (it was .L2::256B). 2026-11-26, two rounds
            # each, x in A's format: H100 FP4 3.0-3.4% faster on (7168,2048,4), 0.8-1.4% on
            # (4096,7168,8) and (7168,16384,1), MXFP8 0.9-1.2%; H200 FP4 1.8-8.7% on all four
            # bench shapes ((7168,16384,1) NVFP4 19.85 -> 18.26 us), MXFP8 2.9-4.4%. Tensor-core
            # kernels: H100 2% on the small shape, H200 within 0.5%. 64 bytes or no hint matched
            # 128 for x in A's format on both GPUs; no hint cost the tensor-core kernels 1-2.4%
            # on the H100.
            # GEMV_OPTS=ahint=0/64/128/256 overrides.
            ah = int(self.p.get("ahint", 128))
            hint = (f".L2::{ah}B" if ah else "") if which == "a" else ""
            k(f"{pre}{cache}{hint}.v4.b32 {{{', '.join(dst)}}}, [{addr}], {pol}")
        elif len(dst) == 2:
            k(f"{pre}{cache}.v2.b32 {{{', '.join(dst)}}}, [{addr}], {pol}")
        else:
            k(f"{pre}{cache}.{width} {dst[0]}, [{addr}], {pol}")

    def zero(self, regs):
        for r in regs:
            self.k(f"mov.b32 {r}, 0")

    def scale_bytes(self, tag, addr, next_addr, which, pred, pf, pany):
        """A chunk's scale byte(s) into .b32 registers: its first block's at addr (any lane with
        data), NVFP4's second at the address the instruction next_addr writes to {d} (whole chunks
        only; addr itself is left as it is: the fast copy chains the next row's from it)."""
        k = self.k
        if self.nv and not pred and self.fast:
            reg = k.reg(".b32", f"{tag}_p")
            self.ld([reg], addr, which, None, "u16")
            return [reg]
        regs = [k.reg(".b32", f"{tag}_{j}") for j in range(2 if self.nv else 1)]
        if pred:
            self.zero(regs)
        self.ld([regs[0]], addr, which, pany if pred else None)
        if self.nv:
            a2 = k.reg(".b64", "t_saddr2")
            k(next_addr.format(d=a2))
            self.ld([regs[1]], a2, which, pf if pred else None)
        return regs

    def chunk_k(self, c, tag):
        """Scale index of chunk c's first block (its second, NVFP4 only, is k + 1)."""
        k = self.k
        kk = k.reg(".b32", f"kidx{tag}")
        if self.nv:
            k(f"shl.b32 {kk}, {c}, 1")
        elif self.fp4:
            k(f"mov.b32 {kk}, {c}")
        else:
            k(f"shr.u32 {kk}, {c}, 1")
        return kk

    def scale_index(self, kk, ko_name, t_name):
        """A's scale offset (in units) of scale index kk: (kk >> ksh) * kmul + (kk & kmsk), the
        strided layout (ksh = kmsk = 0, kmul = K stride) and the 128x4 one (2, 3, 512) alike.
        Register names given so that callers keep theirs."""
        k = self.k
        ko, t = k.reg(".b32", ko_name), k.reg(".b32", t_name)
        k(f"shr.u32 {t}, {kk}, %a_ksh")
        k(f"and.b32 {ko}, {kk}, %a_kmsk")
        k(f"mad.lo.u32 {ko}, {t}, %a_kmul, {ko}")
        return ko

    def body(self, U, pred, tag):
        self.compute(self.load(U, pred, ""), tag)

    def load(self, U, pred, sfx):
        """Issue one trip's loads (U chunks x R rows) into register set sfx; returns them."""
        k, R = self.k, self.R
        cs = []
        for u in range(U):
            c = k.reg(".b32", f"c{u}")
            if u == 0:
                k(f"add.u32 {c}, %cb, %lane")
            else:
                k(f"add.u32 {c}, {cs[-1]}, %step")
            cs.append(c)
        pf = ph = pany = None
        if pred:
            k.comment("tail: pf = a whole chunk, ph = the half chunk ending an NVFP4 row")
            pf = k.reg(".pred", "p_full")
            k(f"setp.lt.u32 {pf}, {cs[0]}, %a_nfull")
            pany = pf
            if self.nv:
                ph = k.reg(".pred", "p_half")
                pany = k.reg(".pred", "p_any")
                k(f"setp.eq.and.u32 {ph}, {cs[0]}, %a_nfull, %p_hashalf")
                k(f"or.pred {pany}, {pf}, {ph}")

        k.comment(f"loads first: {U} chunk(s) x {R} row(s) of A, their scales, x and its scales")
        xw, xsb, aw, asb = [], [], [], []
        for u in range(U):
            xa = k.reg(".b64", f"xaddr{u}")
            k(f"mad.wide.u32 {xa}, {cs[u]}, {self.xbytes}, %xrow")
            nvec = self.xbytes // 16
            words = [k.reg(".b32", f"x{sfx}{u}_{j}") for j in range(4 * nvec)]
            if pred:
                self.zero(words)
            for q in range(nvec):
                dst = words[4 * q:4 * q + 4]
                addr = f"{xa}+{16 * q}" if q else xa
                if not pred:
                    self.ld(dst, addr, "x")
                elif self.same:
                    self.ld(dst, addr, "x", pf)
                    if self.nv:
                        self.ld(dst[:2], addr, "x", ph)
                else:
                    # BF16/F16 x: the half chunk (16 elements) is the first 32 bytes
                    self.ld(dst, addr, "x", pany if (self.nv and q < nvec // 2) else pf)
            xw.append(words)
            kk = self.chunk_k(cs[u], f"{u}")
            if self.same:
                sa = k.reg(".b64", f"xsaddr{u}")
                k(f"mad.wide.u32 {sa}, {kk}, %a_xs_k, %xsrow")
                xsb.append(self.scale_bytes(f"xs{sfx}{u}", sa, f"add.u64 {{d}}, {sa}, %xs_k64", "x",
                                            pred, pf, pany))
            # A scale k offset, shared by the R rows
            ko = self.scale_index(kk, f"koff{u}", "t_k")
            ko1 = None
            if self.nv:
                ko1 = k.reg(".b32", f"koff1_{u}")
                k(f"add.u32 {ko1}, {ko}, %a_ks1")
            awu, asu = [], []
            vwords = None
            if self.vec and not pred:
                # NOTE: the 128x4 layout keeps rows m + 32 r (r = 0..3) of 4 K-blocks in one 16-byte
                # run, a 4-byte word a row: with rows 32 apart (FLAG_RI32) a thread's R words are
                # one aligned vector (FLAG_SVEC: the runtime checked the base). One load instead of
                # R: each of these touches a 128-byte line per 4 K-blocks of the warp (NVFP4: 16
                # lines a row of 32 chunks, against 1 for row-major scales), so R loads were R
                # times those L1 wavefronts (the gain is measured in variants(); most of the gap
                # to row-major scales was the prefetch: see prologue()). The lane's byte (MX) or
                # byte pair (NVFP4) of each word is at kk & 3 (compute() extracts it).
                klo, kv = k.reg(".b32", "t_klo"), k.reg(".b32", f"koffv{u}")
                ssh = k.reg(".b32", f"ssh{sfx}{u}")
                k(f"and.b32 {klo}, {kk}, %a_kmsk")
                k(f"sub.u32 {kv}, {ko}, {klo}")
                k(f"shl.b32 {ssh}, {klo}, 3")
                sv = k.reg(".b64", f"svaddr{u}")
                k(f"mad.wide.u32 {sv}, {kv}, %a_unit, %sbase0")
                vwords = [k.reg(".b32", f"as{sfx}{u}_{r}_w") for r in range(R)]
                self.ld(vwords, sv, "s" if self.p.get("scache", 1) else "a")
            for r in range(R):
                aa = k.reg(".b64", f"aaddr{u}_{r}")
                sa = k.reg(".b64", f"saddr{u}_{r}")
                self.row_address(aa, f"%aaddr{u}_{r - 1}", r, cs[u], 16, "abase", "%a_a_m",
                                 self.fast)
                if not vwords:
                    self.row_address(sa, f"%saddr{u}_{r - 1}", r, ko, "%a_unit", "sbase",
                                     "%srow", self.fast)
                # NVFP4's second scale byte (byte loads: the tail trip, or the slow copy)
                nxt = (f"mad.wide.u32 {{d}}, %a_ks1, %a_unit, {sa}" if self.fast else
                       f"mad.wide.u32 {{d}}, {ko1}, %a_unit, %sbase{r}")
                words = [k.reg(".b32", f"a{sfx}{u}_{r}_{j}") for j in range(4)]
                if pred:
                    self.zero(words)
                self.ld(words, aa, "a", pf)
                if pred and self.nv:
                    self.ld(words[:2], aa, "a", ph)
                awu.append(words)
                if vwords:
                    asu.append(("vec", vwords[r], ssh))
                    continue
                asu.append(self.scale_bytes(f"as{sfx}{u}_{r}", sa, nxt,
                                            "s" if self.p.get("scache", 1) else "a", pred, pf,
                                            pany))
            aw.append(awu)
            asb.append(asu)
        return (U, xw, xsb, aw, asb)

    def compute(self, loaded, tag):
        """Decode and accumulate one trip's loaded registers."""
        k, R = self.k, self.R
        U, xw, xsb, aw, asb = loaded
        for u in range(U):
            k.comment(f"chunk {u}: decode x once, then each row: decode, block sums, scale")
            xv = self.decode_x(xw[u], f"{tag}{u}")
            sx = self.scales(xsb[u], "sx") if self.same else None
            for r in range(R):
                regs = asb[u][r]
                if isinstance(regs, tuple):
                    # vector scale loads (FLAG_SVEC): this lane's byte (pair) of the row's word
                    _, w, ssh = regs
                    b = k.reg(".b32", "t_sbyte")
                    if self.nv:
                        k(f"shr.b32 {b}, {w}, {ssh}")
                    else:
                        k(f"bfe.u32 {b}, {w}, {ssh}, 8")
                    regs = [b]
                sa = self.scales(regs, "sa")
                self.row_chunk(aw[u][r], xv, sa, sx, r)

    # ---- decode ----------------------------------------------------------------------------
    def decode_x(self, words, tag):
        """FP4 x (same format): f16x2 per word. Otherwise a list of f32 per element."""
        k = self.k
        if self.dp and self.p.get("nodecode"):
            return words
        if self.dp:
            return [decode_x_i8(k, words[j], f"dx{j}_") for j in range(4)]
        if self.same and self.fp4:
            return [decode_fp4(k, self.target, words[j], f"dx{j}_") for j in range(4)]
        xf = [k.reg(".f32", f"xf{e}") for e in range(self.epc)]
        if self.same:   # MXFP8 x: E4M3 -> f16x2 -> f32
            for j in range(4):
                h = decode_fp8(k, words[j], f"dx{j}_")
                halves_f32(k, h[0], xf[4 * j], xf[4 * j + 1])
                halves_f32(k, h[1], xf[4 * j + 2], xf[4 * j + 3])
        elif self.xt == "bf16":   # a BF16 is the top half of an f32
            for q in range(self.epc // 2):
                k(f"shl.b32 {xf[2 * q]}, {words[q]}, 16")
                k(f"and.b32 {xf[2 * q + 1]}, {words[q]}, 0xFFFF0000")
        else:
            for q in range(self.epc // 2):
                halves_f32(k, words[q], xf[2 * q], xf[2 * q + 1])
        return xf

    def scales(self, regs, role):
        """Loaded scale bytes -> f32 values (NVFP4: 2 per chunk, MX: 1)."""
        k = self.k
        if self.nv:
            pk, lo, hi = k.reg(".b32", "t_spk"), k.reg(".b16", "t_slo"), k.reg(".b16", "t_shi")
            h2 = k.reg(".b32", "t_sh2")
            out = [k.reg(".f32", f"{role}{i}") for i in range(2)]
            # two bytes -> one .b16 (bit 7 is not part of UE4M3), one cvt for both
            if len(regs) == 1:
                k(f"and.b32 {pk}, {regs[0]}, 0x7F7F")
            else:
                k(f"prmt.b32 {pk}, {regs[0]}, {regs[1]}, 0x0040")
                k(f"and.b32 {pk}, {pk}, 0x7F7F")
            k(f"mov.b32 {{{lo}, {hi}}}, {pk}")
            k(f"cvt.rn.f16x2.e4m3x2 {h2}, {lo}")
            halves_f32(k, h2, out[0], out[1])
            return out
        bits, p = k.reg(".b32", "t_e8"), k.reg(".pred", "p_e8nan")
        out = k.reg(".f32", f"{role}0")
        # UE8M0 c -> f32 bits c << 23; c = 0 is 2^-127 (0x00400000), c = 255 NaN
        k(f"shl.b32 {bits}, {regs[0]}, 23")
        k(f"max.u32 {bits}, {bits}, 0x00400000")
        k(f"setp.eq.u32 {p}, {regs[0]}, 255")
        k(f"selp.b32 {bits}, 0x7FC00000, {bits}, {p}")
        k(f"mov.b32 {out}, {bits}")
        return [out]

    def row_chunk(self, words, xv, sa, sx, r):
        """One chunk of row r: block sums, times scales, into acc[r]."""
        k = self.k
        acc = self.acc[r]
        if self.dp and self.p.get("nodecode"):
            # experiment knob (GEMV_OPTS=nodecode=1; wrong results by design): the loads, scales
            # and everything after stay, the decode and dot products become one fold per chunk,
            # so the kernel's time without its arithmetic can be measured
            t, f = k.reg(".b32", "t_fold"), k.reg(".f32", "t_foldf")
            k(f"lop3.b32 {t}, {words[0]}, {words[1]}, {words[2]}, 0x96")
            k(f"lop3.b32 {t}, {t}, {words[3]}, {xv[r % 4]}, 0x96")
            k(f"and.b32 {t}, {t}, 0x3FFFFFFF")
            k(f"mov.b32 {f}, {t}")
            for b in range(len(sa)):
                self.apply(f, sa[b], sx[b], acc)
            return
        if self.dp:
            ad = [decode_a_i8(k, words[j], f"da{j}_", self.shift) for j in range(4)]
            k.comment("block dot products: dp4a of 2 * values, exact in int32; P and N chains")
            blocks = [[0, 1], [2, 3]] if self.nv else [[0, 1, 2, 3]]
            for b, wl in enumerate(blocks):
                cp, cn = k.reg(".b32", "dp_p"), k.reg(".b32", "dp_n")
                k(f"mov.b32 {cp}, 0x{DP_MAGIC:08X}")
                k(f"mov.b32 {cn}, 0x{DP_MAGIC:08X}")
                for j in wl:
                    for h in range(2):
                        pa, na = ad[j][h]
                        k(f"dp4a.s32.s32 {cp}, {pa}, {xv[j][h]}, {cp}")
                        k(f"dp4a.s32.s32 {cn}, {na}, {xv[j][h]}, {cn}")
                fp, fn = k.reg(".f32", "t_dpf"), k.reg(".f32", "t_dnf")
                bsum = k.reg(".f32", f"bsum{b}")
                k(f"mov.b32 {fp}, {cp}")
                k(f"mov.b32 {fn}, {cn}")
                k(f"sub.f32 {bsum}, {fp}, {fn}")
                self.apply(bsum, sa[b], sx[b], acc)
            return
        if self.same and self.fp4:
            ah = [decode_fp4(k, self.target, words[j], f"da{j}_") for j in range(4)]
            k.comment("block dot products in f16x2: 8 exact products per half, sums < 512: exact")
            groups = [[0, 1], [2, 3]]
            blocks = [[groups[0]], [groups[1]]] if self.nv else [[groups[0], groups[1]]]
            for b, grps in enumerate(blocks):
                bsum = k.reg(".f32", f"bsum{b}")
                first_g = True
                for g, words_g in enumerate(grps):
                    h = k.reg(".b32", f"hacc{g}")
                    first = True
                    for j in words_g:
                        for i in range(4):
                            if first:
                                k(f"mul.rn.f16x2 {h}, {ah[j][i]}, {xv[j][i]}")
                                first = False
                            else:
                                k(f"fma.rn.f16x2 {h}, {ah[j][i]}, {xv[j][i]}, {h}")
                    lo, hi = k.reg(".f32", "t_flo"), k.reg(".f32", "t_fhi")
                    halves_f32(k, h, lo, hi)
                    if first_g:
                        k(f"add.f32 {bsum}, {lo}, {hi}")
                        first_g = False
                    else:
                        k(f"add.f32 {bsum}, {bsum}, {lo}")
                        k(f"add.f32 {bsum}, {bsum}, {hi}")
                self.apply(bsum, sa[b], sx[b], acc)
            return
        k.comment("f32 products and sums (not exact in f16: see the module docstring)")
        if self.fp4:
            pairs = []
            for j in range(4):
                hs = decode_fp4(k, self.target, words[j], f"da{j}_")
                for i, (e0, e1) in enumerate(fp4_pairs(self.target)):
                    pairs.append((hs[i], 8 * j + e0, 8 * j + e1))
        else:
            pairs = []
            for j in range(4):
                hs = decode_fp8(k, words[j], f"da{j}_")
                pairs.append((hs[0], 4 * j, 4 * j + 1))
                pairs.append((hs[1], 4 * j + 2, 4 * j + 3))
        nblk = 2 if self.nv else 1
        per = len(pairs) // nblk
        for b in range(nblk):
            # two chains (low and high halves) per block for latency
            c0, c1 = k.reg(".f32", "bs_lo"), k.reg(".f32", "bs_hi")
            af0, af1 = k.reg(".f32", "t_af0"), k.reg(".f32", "t_af1")
            for n, (h, e0, e1) in enumerate(pairs[b * per:(b + 1) * per]):
                halves_f32(k, h, af0, af1)
                if n == 0:
                    k(f"mul.f32 {c0}, {af0}, {xv[e0]}")
                    k(f"mul.f32 {c1}, {af1}, {xv[e1]}")
                else:
                    k(f"fma.rn.f32 {c0}, {af0}, {xv[e0]}, {c0}")
                    k(f"fma.rn.f32 {c1}, {af1}, {xv[e1]}, {c1}")
            bsum = k.reg(".f32", f"bsum{b}")
            k(f"add.f32 {bsum}, {c0}, {c1}")
            self.apply(bsum, sa[b], sx[b] if sx else None, acc)

    def apply(self, bsum, sa, sx, acc):
        k = self.k
        k.comment("the block scale, once per block, into the row's f32 sum")
        if sx is None:
            k(f"fma.rn.f32 {acc}, {bsum}, {sa}, {acc}")
            return
        f = k.reg(".f32", "t_fac")
        k(f"mul.f32 {f}, {sa}, {sx}")
        k(f"fma.rn.f32 {acc}, {bsum}, {f}, {acc}")

    # ---- PDL and the L2 prefetch ---------------------------------------------------------
    def prologue(self):
        """Programmatic dependent launch: griddepcontrol.launch_dependents was issued first (in
        CTA 0 it comes here, after the wait: pdl_trigger_first), griddepcontrol.wait comes before
        the first load of anything a preceding kernel may have written (without PDL both are
        no-ops; with FLAG_NOWAIT there is no wait here). Around the wait, an L2 prefetch
        of the first pfn trips of each row's chunks and their scale bytes (pfn = 0: none): all of
        a short CTA's A requests in flight at once without holding registers. With FLAG_EARLY
        (the caller's promise that A and its scales are not written by the preceding kernel) the
        prefetch runs before the wait, overlapping the preceding kernel's tail."""
        k, R = self.k, self.R
        k.comment("---- PDL wait (before the prefetch unless FLAG_EARLY), then the L2 prefetch")
        f, pe = k.reg(".b32", "t_fe"), k.reg(".pred", "p_early")
        flag_test(k, FLAG_EARLY, f, pe)
        k(f"@{pe} bra.uni PDL_WAITED")
        pdl_wait(k, "PDL_WAITED")
        i, c = k.reg(".b32", "pf_i"), k.reg(".b32", "pf_c")
        pd, pin = k.reg(".pred", "p_pfdone"), k.reg(".pred", "p_pfin")
        if self.chain:
            # chained addresses are valid only where all R rows exist: the last row tile's warps
            # skip the prefetch
            k(f"selp.u32 {i}, %a_pfn, 0, %p_rows")
        else:
            k(f"mov.u32 {i}, %a_pfn")
        # NOTE: CTAs from pfcta on (the runtime's choice: past the first wave where a warp makes
        # at most 2 trips) skip the prefetch: they start after the wait has long been satisfied,
        # the prefetch only delays their loads, and fewer prefetches in flight let the next
        # launch's wait release sooner. 2026-11-26, (7168,2048,4), H100 three rounds: NVFP4
        # 13.02 -> 12.40-12.49 us, MXFP4 12.32-12.45 -> 11.95-12.03; H200 two: MXFP4 -2%,
        # NVFP4 -0.5%; with 4 trips a warp ((7168,16384,1)) 1-6% slower, so not there.
        psk = k.reg(".pred", "p_pfskip")
        k(f"setp.ge.u32 {psk}, %bid, %a_pfcta")
        k(f"@{psk} mov.u32 {i}, 0")
        k(f"add.u32 {c}, %cb, %lane")
        k.label("PF_LOOP")
        k(f"setp.eq.u32 {pd}, {i}, 0")
        k(f"@{pd} bra.uni PF_DONE")
        k(f"setp.lt.u32 {pin}, {c}, %a_nch")
        aa = k.reg(".b64", "pf_a")
        for r in range(R):
            self.row_address(aa, aa, r, c, 16, "abase", "%a_a_m", self.chain)
            k(f"@{pin} prefetch.global.L2 [{aa}]")
        ko = self.scale_index(self.chunk_k(c, "pf"), "pf_ko", "t_k")
        # NOTE: FLAG_NOSPF drops the scale bytes from the prefetch (fewer requests in flight
        # while the CTA waits; see prefetch_scales_off in src/gemv.c for where that is faster)
        # (MX formats with x in A's format, the kernels the runtime sets it for; in NVFP4's r4
        # kernel the extra predicate cost ptxas 12 registers, in MXFP8's BF16/F16-x r1 kernels 8)
        pns = pin
        if self.same and self.fmt in ("mxfp4", "mxfp8"):
            fs, pns = k.reg(".b32", "t_fs"), k.reg(".pred", "p_spf")
            flag_test(k, FLAG_NOSPF, fs, pns, "eq", pin)
        # NOTE: the "...v" twins prefetch row 0's scale bytes only: with rows 32 apart a thread's
        # R rows share that 16-byte run, and the R prefetches of the plain kernels (each touching
        # 16 lines of the 128x4 layout a warp) were most of the gap to row-major scales. H200,
        # 2026-11-27, two rounds, % of the copy, waiting: (7168,16384,1) 78.9-79.9 -> 84.2-85.2,
        # (4096,7168,8) 90.0-91.0 -> 95.9-96.9, (7168,2048,4) 62.1-62.5 -> 71.5-72.8,
        # (16384,16384,4) 102.1-103.4 -> 104.3-105.7 (none at all, GEMV_OPTS=pfs0=1: -2.0 to
        # +2.2 from that, waiting and independent; pfs1=0: R as in the plain kernels)
        nps = 0 if self.p.get("pfs0") else 1 if self.p.get("pfs1", int(self.svec)) else R
        pnr = pns
        if nps > 1 and self.p.get("pfri", 0):
            # experiment knob (GEMV_OPTS=pfri=1): with rows 32 apart (FLAG_RI32) rows 1 .. R-1
            # share row 0's run, so no prefetch of theirs. H100, 2026-11-27, 128x4 scales, two
            # rounds: MXFP4 x MXFP4 waiting -0.1 to +2.4 points, MXFP8 (x MXFP8 or BF16) -0.3 to
            # +2.2, per round. Not built: in the NVFP4 r4 kernel the predicate costs ptxas 12
            # registers, on sm_100a / sm_120a it moves several kernels' counts, and the MX gains
            # did not seem worth a third rule.
            tr, pnr = k.reg(".b32", "t_pfri"), k.reg(".pred", "p_pfr")
            flag_test(k, FLAG_RI32, tr, pnr, "eq", pns)
        for r in range(nps):
            self.row_address(aa, aa, r, ko, "%a_unit", "sbase", "%srow", self.chain)
            k(f"@{pns if r == 0 else pnr} prefetch.global.L2 [{aa}]")
        k(f"add.u32 {c}, {c}, %step")
        k(f"sub.u32 {i}, {i}, 1")
        k("bra.uni PF_LOOP")
        k.label("PF_DONE")
        k(f"@!{pe} bra.uni PDL_DONE")
        pdl_wait(k, "PDL_DONE")
        pdl_trigger(k)

    # ---- the kernel ------------------------------------------------------------------------
    def loops(self):
        k, U = self.k, self.U
        if self.same:
            k.reg(".b64", "xs_k64")
            k("cvt.u64.u32 %xs_k64, %a_xs_k")
        t, p = k.reg(".b32", "t_last"), k.reg(".pred", "p_stop")
        if self.pipe:
            k.comment(f"---- main loop, software pipelined: {U} whole chunks per row per trip; the\n"
                      "next trip's loads are issued before this trip's decode (two register sets,\n"
                      "the loop unrolled twice so they alternate without moves)")

            def more(label):
                k(f"mad.lo.u32 {t}, %step, {U - 1}, %cb")
                k(f"add.u32 {t}, {t}, 32")
                k(f"setp.gt.u32 {p}, {t}, %a_nfull")
                k(f"@{p} bra.uni {label}")

            more("MAIN_DONE" + self.lsfx)
            sets = [self.load(U, False, "P"), None]
            k.label("MAIN_LOOP" + self.lsfx)
            for i in (0, 1):
                k(f"mad.lo.u32 %cb, %step, {U}, %cb")
                more(f"MAIN_LAST{i}" + self.lsfx)
                sets[1 - i] = self.load(U, False, "PQ"[1 - i])
                self.compute(sets[i], f"m{i}")
            k("bra.uni MAIN_LOOP" + self.lsfx)
            for i in (0, 1):
                k.label(f"MAIN_LAST{i}" + self.lsfx)
                self.compute(sets[i], f"l{i}")
                if i == 0:
                    k("bra.uni MAIN_DONE" + self.lsfx)
            k.label("MAIN_DONE" + self.lsfx)
        elif U > 1:
            k.comment(f"---- main loop: {U} whole chunks per row per trip, no predicates")
            k.label("MAIN_LOOP" + self.lsfx)
            k(f"mad.lo.u32 {t}, %step, {U - 1}, %cb")
            k(f"add.u32 {t}, {t}, 32")
            k(f"setp.gt.u32 {p}, {t}, %a_nfull")
            k(f"@{p} bra.uni MAIN_DONE" + self.lsfx)
            self.body(U, False, "m")
            k(f"mad.lo.u32 %cb, %step, {U}, %cb")
            k("bra.uni MAIN_LOOP" + self.lsfx)
            k.label("MAIN_DONE" + self.lsfx)
        k.comment("---- one whole chunk per trip")
        k.label("ONE_LOOP" + self.lsfx)
        k(f"add.u32 {t}, %cb, 32")
        k(f"setp.gt.u32 {p}, {t}, %a_nfull")
        k(f"@{p} bra.uni ONE_DONE" + self.lsfx)
        self.body(1, False, "o")
        k("add.u32 %cb, %cb, %step")
        k("bra.uni ONE_LOOP" + self.lsfx)
        k.label("ONE_DONE" + self.lsfx)
        k.comment("---- tail: the warp's last chunks, lanes past the row end load nothing")
        k("setp.ge.u32 %p_stop, %cb, %a_nch")
        k("@%p_stop bra.uni TAIL_DONE" + self.lsfx)
        self.body(1, True, "t")
        k.label("TAIL_DONE" + self.lsfx)

    # ---- the bulk-copy ring ("...b": NVFP4 x NVFP4, sm_90a) --------------------------------
    def bulk_issue(self, j, slot):
        """Lane 0: stage j of this warp (chunks cb0 + j * step ...) into ring slot `slot`: R rows
        of A (16 n bytes each) and their scale bytes (2 n), n = min(32, nch - chunk), one mbarrier
        with the byte count. The runtime guarantees n % 8 == 0 (K % 256 == 0) and 16-byte aligned
        rows and scale rows (strided scales, K stride 1)."""
        k, R = self.k, self.R
        cj, n, t = k.reg(".b32", "bq_c"), k.reg(".b32", "bq_n"), k.reg(".b32", "bq_t")
        k(f"mad.lo.u32 {cj}, {j}, %step, %cb0")
        k(f"sub.u32 {n}, %a_nch, {cj}")
        k(f"min.u32 {n}, {n}, 32")
        bar, dst = k.reg(".b32", "bq_bar"), k.reg(".b32", "bq_dst")
        k(f"mad.lo.u32 {bar}, {slot}, 8, %bar_w")
        k(f"mad.lo.u32 {dst}, {slot}, {R * BULK_ROW}, %ring_w")
        k(f"mul.lo.u32 {t}, {n}, {18 * R}")
        k(f"mbarrier.arrive.expect_tx.shared::cta.b64 _, [{bar}], {t}")
        nb, ns = k.reg(".b32", "bq_nb"), k.reg(".b32", "bq_ns")
        k(f"shl.b32 {nb}, {n}, 4")
        k(f"shl.b32 {ns}, {n}, 1")
        src, sd = k.reg(".b64", "bq_src"), k.reg(".b32", "bq_sd")
        so = k.reg(".b32", "bq_so")
        k(f"shl.b32 {so}, {cj}, 1")
        for r in range(R):
            k(f"mad.wide.u32 {src}, {cj}, 16, %abase{r}")
            k(f"add.u32 {sd}, {dst}, {512 * r}")
            k(f"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
              f" [{sd}], [{src}], {nb}, [{bar}], %pol_a")
            k(f"mad.wide.u32 {src}, {so}, 1, %sbase{r}")
            k(f"add.u32 {sd}, {dst}, {512 * R + 64 * r}")
            k(f"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
              f" [{sd}], [{src}], {ns}, [{bar}], %pol_a")

    def bulk_loops(self):
        """Per warp: lane 0 inits the warp's D stage barriers and fills the ring (before the PDL
        wait with FLAG_EARLY, after it otherwise); then per stage every lane loads its x chunk
        (global, L1-resident), waits for the stage's barrier, reads its chunk of each row and the
        two scale bytes from shared memory (ld.shared.v4 / .u16: a warp reads 512 contiguous
        bytes per row, conflict-free), computes exactly as the plain kernel's trips (same order:
        bit-identical results), syncs the warp and lane 0 refills the slot with stage i + D."""
        k, R = self.k, self.R
        D = BULK_DEPTH[R]
        lg = D.bit_length() - 1
        k.comment(f"---- bulk-copy ring: {D} stages x {R} rows x {BULK_ROW} bytes per warp")
        for name in ("ring_w", "bar_w", "cb0", "nst", "bi", "bq_j", "bq_s"):
            k.reg(".b32", name)
        t, p0, p = k.reg(".b32", "t_b"), k.reg(".pred", "p_l0"), k.reg(".pred", "p_b")
        k("mov.u32 %ring_w, ring")
        k(f"mad.lo.u32 %ring_w, %warp, {D * R * BULK_ROW}, %ring_w")
        k("mov.u32 %bar_w, fullbar")
        k(f"mad.lo.u32 %bar_w, %warp, {8 * D}, %bar_w")
        k("mov.u32 %cb0, %cb")
        k.comment("stages of this warp: ceil((nch - cb0) / step), 0 if nch <= cb0")
        k("sub.u32 %nst, %a_nch, %cb0")
        k("add.u32 %nst, %nst, %step")
        k("sub.u32 %nst, %nst, 1")
        k("add.u32 %t_b, %a_wk_shift, 5")
        k("shr.u32 %nst, %nst, %t_b")
        k("setp.le.u32 %p_b, %a_nch, %cb0")
        k("selp.b32 %nst, 0, %nst, %p_b")
        k("setp.eq.u32 %p_l0, %lane, 0")
        f, pe = k.reg(".b32", "t_fe"), k.reg(".pred", "p_early")
        flag_test(k, FLAG_EARLY, f, pe)
        k(f"@{pe} bra.uni BW_EARLY")
        pdl_wait(k, "BW_EARLY")
        k("@!%p_l0 bra FILL_DONE")
        for s in range(D):
            k(f"mbarrier.init.shared::cta.b64 [%bar_w+{8 * s}], 1")
        k("fence.mbarrier_init.release.cluster")
        k("fence.proxy.async.shared::cta")
        k.comment("fill: stages 0 .. min(D, nst) - 1")
        k("mov.u32 %bq_j, 0")
        k.label("FILL_LOOP")
        k("setp.ge.u32 %p_b, %bq_j, %nst")
        k(f"setp.ge.or.u32 %p_b, %bq_j, {D}, %p_b")
        k("@%p_b bra FILL_DONE")
        self.bulk_issue("%bq_j", "%bq_j")
        k("add.u32 %bq_j, %bq_j, 1")
        k("bra FILL_LOOP")
        k.label("FILL_DONE")
        k("bar.warp.sync 0xffffffff")
        k(f"@!{pe} bra.uni BW_DONE")
        pdl_wait(k, "BW_DONE")
        pdl_trigger(k)
        k.reg(".b64", "xs_k64")
        k("cvt.u64.u32 %xs_k64, %a_xs_k")

        k.comment("---- per stage: x from global, wait, A and scales from shared memory")
        k("mov.u32 %bi, 0")
        k.label("ST_LOOP")
        k("setp.ge.u32 %p_b, %bi, %nst")
        k("@%p_b bra.uni ST_DONE")
        c, pv = k.reg(".b32", "c0"), k.reg(".pred", "p_full")
        k(f"mad.lo.u32 %cb, %bi, %step, %cb0")
        k(f"add.u32 {c}, %cb, %lane")
        k(f"setp.lt.u32 {pv}, {c}, %a_nch")
        xa = k.reg(".b64", "xaddr0")
        k(f"mad.wide.u32 {xa}, {c}, 16, %xrow")
        xw = [k.reg(".b32", f"x0_{j}") for j in range(4)]
        self.zero(xw)
        self.ld(xw, xa, "x", pv)
        kk = self.chunk_k(c, "0")
        sa = k.reg(".b64", "xsaddr0")
        k(f"mad.wide.u32 {sa}, {kk}, %a_xs_k, %xsrow")
        xsb = self.scale_bytes("xs0", sa, f"add.u64 {{d}}, {sa}, %xs_k64", "x", True, pv, pv)
        slot, par = k.reg(".b32", "slot"), k.reg(".b32", "par")
        k(f"and.b32 {slot}, %bi, {D - 1}")
        k(f"shr.u32 {par}, %bi, {lg}")
        k(f"and.b32 {par}, {par}, 1")
        bar = k.reg(".b32", "st_bar")
        k(f"mad.lo.u32 {bar}, {slot}, 8, %bar_w")
        pw = k.reg(".pred", "p_wait")
        k.label("ST_WAIT")
        k(f"mbarrier.try_wait.parity.shared::cta.b64 {pw}, [{bar}], {par}")
        k(f"@!{pw} bra ST_WAIT")
        base = k.reg(".b32", "st_base")
        k(f"mad.lo.u32 {base}, {slot}, {R * BULK_ROW}, %ring_w")
        sl = k.reg(".b32", "st_lane")
        k(f"mad.lo.u32 {sl}, %lane, 16, {base}")
        ss = k.reg(".b32", "st_sc")
        k(f"mad.lo.u32 {ss}, %lane, 2, {base}")
        aw, asb = [], []
        for r in range(R):
            words = [k.reg(".b32", f"a0_{r}_{j}") for j in range(4)]
            self.zero(words)
            k(f"@{pv} ld.shared.v4.b32 {{{', '.join(words)}}}, [{sl}+{512 * r}]")
            aw.append(words)
            s0, s1 = k.reg(".b32", f"as0_{r}_0"), k.reg(".b32", f"as0_{r}_1")
            k(f"mov.b32 {s0}, 0")
            k(f"@{pv} ld.shared.u16 {s0}, [{ss}+{512 * R + 64 * r}]")
            k(f"shr.u32 {s1}, {s0}, 8")
            asb.append([s0, s1])
        self.compute((1, [xw], [xsb], [aw], [asb]), "b")
        k.comment("every lane has read the slot: lane 0 refills it with stage bi + D")
        k("bar.warp.sync 0xffffffff")
        k(f"add.u32 %bq_j, %bi, {D}")
        k("setp.ge.u32 %p_b, %bq_j, %nst")
        k("@%p_b bra.uni ST_NEXT")
        k("@!%p_l0 bra ST_NEXT")
        self.bulk_issue("%bq_j", slot)
        k.label("ST_NEXT")
        k("bar.warp.sync 0xffffffff")
        k("add.u32 %bi, %bi, 1")
        k("bra.uni ST_LOOP")
        k.label("ST_DONE")

    def finish(self):
        k, R = self.k, self.R
        k.comment("---- reduce: butterfly per row, then (WK > 1) the WK warps of a row "
                  "through shared\nmemory")
        t = k.reg(".f32", "t_red")
        for r in range(R):
            for o in (16, 8, 4, 2, 1):
                k(f"shfl.sync.bfly.b32 {t}, {self.acc[r]}, {o}, 0x1f, 0xffffffff")
                k(f"add.f32 {self.acc[r]}, {self.acc[r]}, {t}")
        s, row = k.reg(".f32", "ysum"), k.reg(".b32", "yrow")
        pf, pl = k.reg(".pred", "p_fin"), k.reg(".pred", "p_more")
        k.comment("WK = 1: no other warp holds these rows, so lanes 0 .. R-1 finish rows "
                  "row0 + lane\nstraight from the butterfly (no shared memory, no bar.sync: a "
                  "CTA's warps\nretire independently). 0 + sum, as the shared-memory path adds "
                  "it: same bits")
        k(f"setp.ne.u32 {pl}, %a_wk_shift, 0")
        k(f"@{pl} bra.uni RED_SMEM")
        k(f"setp.ge.u32 {pf}, %lane, {R}")
        # divergent from here on (one lane per row): plain bra, never bra.uni
        k(f"@{pf} bra DONE")
        k(f"mov.f32 {t}, {self.acc[0]}")
        for r in range(1, R):
            k(f"setp.eq.u32 {pl}, %lane, {r}")
            k(f"selp.f32 {t}, {self.acc[r]}, {t}, {pl}")
        k(f"add.f32 {s}, {t}, 0f00000000")
        k(f"mad.lo.u32 {row}, {self.ri_step()}, %lane, %row0")
        k("bra Y_ROW")
        k.label("RED_SMEM")
        sm, p0 = k.reg(".b32", "smem"), k.reg(".pred", "p_lane0")
        k("mov.u32 %smem, red")
        k("setp.eq.u32 %p_lane0, %lane, 0")
        wa = k.reg(".b32", "t_wa")
        k(f"mad.lo.u32 {wa}, %warp, {4 * R}, {sm}")
        for r in range(R):
            k(f"@{p0} st.shared.f32 [{wa}+{4 * r}], {self.acc[r]}")
        k("bar.sync 0")
        k("setp.ge.u32 %p_fin, %thread, %rpc")
        # divergent from here on (one thread per row): plain bra, never bra.uni
        k(f"@{pf} bra DONE")
        k.comment("thread t < rows per CTA finishes row t: wm = t / R, r = t % R")
        rr, wmf, ad = k.reg(".b32", "t_r"), k.reg(".b32", "t_wm"), k.reg(".b32", "t_ad")
        lg = R.bit_length() - 1
        k(f"and.b32 {rr}, %thread, {R - 1}")
        k(f"shr.u32 {wmf}, %thread, {lg}")
        k(f"shl.b32 {wmf}, {wmf}, %a_wk_shift")
        k(f"mad.lo.u32 {ad}, {wmf}, {R}, {rr}")
        k(f"mad.lo.u32 {ad}, {ad}, 4, {sm}")
        n = k.reg(".b32", "t_n")
        k(f"mov.f32 {s}, 0f00000000")
        k(f"shl.b32 {n}, 1, %a_wk_shift")
        sum_parts(k, s, t, ad, n, pl, 4 * R)
        k(f"mad.lo.u32 {row}, %tile, %rpc, %thread")
        self.ri_row(row, row, self.ri_pred())
        k.label("Y_ROW")
        k(f"setp.ge.u32 {pf}, {row}, %a_m")
        k(f"@{pf} bra DONE")
        k.comment("per-tensor scales (NVFP4's global scale), then convert and store")
        mul_globals(k, s, pl)
        store_y(k, s, row, pl, "", "DONE")

    def emit(self):
        k = self.k
        k.comment("---- arguments (one .param struct; layout in build/gen/gemv_args.h)")
        self.args()
        pdl_trigger_first(k)
        self.setup()
        if self.bulk:
            self.bulk_loops()
        else:
            self.prologue()
            k.comment("---- two copies of the loops: the fast one loads without row predicates\n"
                      "(and NVFP4's scale pairs as one u16); the other predicates rows past M off")
            k("@!%p_fast bra.uni LOOPS_SLOW")
            self.fast, self.vec, self.lsfx = True, self.svec, ""
            self.loops()
            self.vec = False
            k("bra.uni LOOPS_END")
            k.label("LOOPS_SLOW")
            self.fast, self.lsfx = False, "_S"
            self.row_bases()
            self.loops()
            k.label("LOOPS_END")
        self.finish()
        pdl_end_wait(k)
        k("ret")
        params = [f".param .align 8 .b8 args[{self.argsize}]"]
        directives = [f".maxntid {THREADS}, 1, 1"]
        minct = self.p.get("minct", 4 if self.bulk else 0)
        if minct:
            # bulk: 64 registers (4 CTAs per SM, as the plain kernels) instead of 80 for R = 4:
            # no spills. Experiment knob (GEMV_OPTS=minct=N): .minnctapersm N on any kernel
            directives.append(f".minnctapersm {int(minct)}")
        hdr = header(GENERATOR, k.name, "gemv", THREADS, 0, self.p)
        text = k.render(hdr, self.target, params, directives)
        # the reduction buffer: one f32 per (warp, row)
        decl = f".shared .align 16 .b8 red[{4 * WARPS * self.R}];\n"
        if self.bulk:
            D = BULK_DEPTH[self.R]
            decl += (f".shared .align 128 .b8 ring[{WARPS * D * self.R * BULK_ROW}];\n"
                     f".shared .align 8 .b8 fullbar[{8 * WARPS * D}];\n")
        decl += "\n"
        return text.replace(".visible .entry", decl + ".visible .entry", 1)


# ---- the tensor-core kernels ("..._tc": FP4 A x F16 or BF16 x, sm_90a) ----------------------
# A warp takes 16 rows (lane (g, t) = (lane / 4, lane % 4) holds rows g and g + 8) and walks K in
# windows of 4 chunks (128 elements, 64 bytes a row): lane t reads its rows' chunk 4w + t. Each
# 16-byte chunk is decoded to f16x2 (sm_90a: spread_f16, bit moves, the value times 2^-14;
# elsewhere spread_e4m3: E2M1 -> E4M3 by bit moves, the value times 2^-6, then cvt; both exact),
# consecutive elements (2j, 2j + 1) in one register, and fed as the A operand of 8
# mma.sync.m16n8k16 f16 x f16 -> f32 steps: step s takes elements (2s, 2s + 1) of the chunk's
# first half as a0 / a1 (rows g / g + 8) and of its second half as a2 / a3.
# NOTE: the B operand is x masked per scale block, so that the block sums come back in separate
# accumulator columns: B[k][n] is nonzero only where column n = 2t + h is the block (chunk t,
# half h) whose elements sit at k. Lane (n, t) holds B's column n at lane t's k positions, so
# lanes with n = 2t load half 0 of x's chunk 4w + t into b0 (their b1 stays 0), lanes with n =
# 2t + 1 half 1 into b1, all others hold zeros. Lane (g, t) then gets back D[g][2t],
# D[g][2t + 1], D[g + 8][2t], D[g + 8][2t + 1]: its own chunk's two half-chunk block sums for
# both its rows, exact in f32 (16 products of an 11-bit and a 3-bit significand), scaled once a
# window in f32 by the block scale (NVFP4: one per half; MXFP4: the two halves are one block).
# BF16 x: mma.sync bf16, A decoded by spread_bf16 to consecutive pairs like F16's (2.1
# instructions an element), so x's registers feed the mma as loaded, as with F16.
# Both x types load x into one register set (compute_w2: 2 loads a window, not 4): lanes g = 2t
# and 2t + 1 read halves 0 and 1 into the same registers, and the 8 mma run as two chains, one
# per half of A's chunk (compute_w, two register sets, stays behind GEMV_OPTS=x2=0).
# NOTE (before the pipelined loop, spl): the window loads (8 rows x 64 bytes a warp instruction)
# were read as what caps these kernels on the H200: a streaming harness with the same loads and
# no arithmetic reads at 60% of the copy, with 4 rows x 128 bytes an instruction at 82-88%
# (2026-11-26, bench/RESULTS.md). An A ring filled that
# way by cp.async (72-78 registers) and an mma.sync path on the CUDA-core kernels' row loads (80-84
# registers, 3 CTAs a SM) were both slower than these kernels (branch exp/gemv-mma-ring).
TC_X = ("f16", "bf16")


# Windows a trip (TC.TU): one. Before the software-pipelined loop (TC.spl) MXFP4 walked two on
# sm_90a: x F16 +0.5 to +2.3 points of the copy over one on the H200, x BF16 (with the
# consecutive-pair decode, 58 registers) +0.6 to +2.6 on five of eight rows (2026-11-27); NVFP4
# lost 1-7 points with two. The pipelined loop at one window matched or beat two on all four
# kernels, so every format takes it.


# The ring twins ("..._tcr", sm_90a; TC.cpr, param ring = D): a window's A (this lane's 16 bytes
# of rows A and B), its scale runs and x come into a per-warp ring of D slots in shared memory by
# cp.async, D - 1 windows in flight while one is decoded, without registers (the pipelined loop,
# spl, holds the next window in a second register set, and ptxas sinks those loads to the end of
# the window before: SASS, 2026-11-27). Each lane reads back its own A and x bytes, and the
# warp waits with cp.async.wait_group and bar.warp.sync (TC.cpsync): no mbarrier. The loop is
# unrolled D times so that slots are immediate offsets. The scale runs must be K-contiguous and
# 4-byte aligned (a 4-byte cp.async a lane), which src/gemv.c checks (tc_ring_ok) before it picks
# a twin. (A lane's scale bytes are copied by another lane of its row group, hence the barrier.)
# H200, 2026-11-27, against the spl kernels in one process, two rounds, % of the copy, waiting:
# NVFP4 x BF16 (16384,16384,4) 90.5-90.6 -> 95.5-96.0, (4096,7168,8) 85.0-85.2 -> 85.5-87.1,
# (7168,16384,1) 72.8-72.9 -> 72.8-73.7, (7168,2048,4) 63.0-63.2 -> 62.9-63.6; F16 x and MXFP4
# +1.6 to +6.5 on the three shapes with 14-16 windows a warp, -2.4 to +0.6 on (7168,2048,4) (4
# a warp); independent +1 to +6 on the first three. H100, three rounds: NVFP4 +1.0 to +2.8 on
# (16384,16384,4) and +0.8 to +4.5 on (7168,2048,4), but -2.4 to -3.8 on (7168,16384,1), MXFP4 x
# F16 -2.1 to -3.7 on (16384,16384,4) (thirty-eighth session). Since the thirty-ninth (F16 x
# decoded by bit moves, more rounds on both GPUs) the runtime takes the twins where warps walk at
# least 4 whole windows (8 with BF16 x at 4 TB/s or more), and below 4 TB/s only on grids past
# one wave (src/gemv.c pick_tc_ring has the figures). Depth: 2,
# and 3 for MXFP4 x F16 (2 spilled 8 bytes at 64 registers; 3 measured within a point of 2
# there); 4 was 1-5 points below 2 on the H200. NVFP4 x F16 also takes D windows a block with
# one exit test (TC.cpb): H200, two rounds against the twin without it, +1.9 to +3.2 points of
# the copy waiting on the three shapes it runs (independent +1 to +4); NVFP4 x BF16 moved -1.4
# to +2.0 (noise: the plain kernel of the same call moved -1.9 to 0) and MXFP4 took 68
# registers with it (3 CTAs a SM), so they stay without.
TC_RING = {("nvfp4", "bf16"): (2, 0), ("nvfp4", "f16"): (2, 1), ("mxfp4", "bf16"): (2, 0),
           ("mxfp4", "f16"): (3, 0)}
# a ring slot: A's 16 bytes a lane of rows A (0) and B (512), the scale runs (1024 + 16 g: row A's
# 8 bytes, then row B's), x's 256 bytes (1152 + 32 g, x lanes only)
CPR_SLOT = 1408


def tc_name(fmt, xt, ring=False):
    return f"gemv_{fmt}_{xt}_tc{'r' if ring else ''}"


def spread_e4m3(k, w, tag):
    """One word of 8 E2M1 codes -> 4 f16x2 (elements (0,1), (2,3), (4,5), (6,7)) of value * 2^-6.
    E2M1 s e1 e0 m -> E4M3 s 0 0 e1 e0 m 0 0: the exponent field keeps E2M1's (bias 7 instead of
    1) and the subnormal code (e = 0, m = 1: 0.5) lands on E4M3's subnormal 2^-7, so every code
    maps to its value times 2^-6 by moving bits; cvt.rn.f16x2.e4m3x2 widens two at a time."""
    lo, hi = k.reg(".b32", f"{tag}el"), k.reg(".b32", f"{tag}eh")
    t0, t1 = k.reg(".b32", "t_sp0"), k.reg(".b32", "t_sp1")
    k(f"shl.b32 {t0}, {w}, 2")
    k(f"shl.b32 {t1}, {w}, 4")
    k(f"and.b32 {t0}, {t0}, 0x1C1C1C1C")
    k(f"lop3.b32 {lo}, {t0}, {t1}, 0x80808080, 0x{LOP_OR_AND:02X}")
    k(f"shr.b32 {t0}, {w}, 2")
    k(f"and.b32 {t0}, {t0}, 0x1C1C1C1C")
    k(f"lop3.b32 {hi}, {t0}, {w}, 0x80808080, 0x{LOP_OR_AND:02X}")
    out = []
    for q, sel in enumerate((0x5140, 0x7362)):
        pr = k.reg(".b32", "t_sppr")
        b0, b1 = k.reg(".b16", "t_spb0"), k.reg(".b16", "t_spb1")
        k(f"prmt.b32 {pr}, {lo}, {hi}, 0x{sel:04X}")
        k(f"mov.b32 {{{b0}, {b1}}}, {pr}")
        for b in (b0, b1):
            o = k.reg(".b32", f"{tag}f{len(out)}")
            k(f"cvt.rn.f16x2.e4m3x2 {o}, {b}")
            out.append(o)
    return out


def spread_f16(k, w, tag):
    """One word of 8 E2M1 codes -> 4 f16x2, consecutive pairs (2i, 2i + 1), of value * 2^-14,
    exact, 13 instructions a word and no conversion: spread_bf16's prmt lays each code of pair
    i in the high nibble of a 16-bit half's low byte with its sign replicated over the byte
    above; a shift by 5 puts the code's e1 e0 m at f16 bits 11 10 9 (exponent field e, mantissa
    m << 9) and a copy of its sign at bit 15, and the mask drops the rest. The subnormal code
    lands on f16's subnormal 2^-15 (the mma takes f16 subnormals as they are)."""
    return spread_pairs(k, w, tag, "f", 5, 0x8E008E00, None)


def spread_bf16_split(k, w, tag):
    """One word of 8 E2M1 codes -> 4 bf16x2, pairs (i, i + 4) (whose sign bits sit 16 apart, as
    bf16x2's do), exact. Each code's bits move into a bf16 with exponent field e and mantissa
    m << 6, the value times 2^-126 (the subnormal code lands on bf16's subnormal 2^-127), and
    one mul.rn.bf16x2 by 2^126 (subnormals are kept: bf16 arithmetic has no flush) restores it.
    x's registers then need one prmt each to the same pairing. Kept behind GEMV_OPTS=bfp=0."""
    out = []
    m, sg = k.reg(".b32", "t_bm"), k.reg(".b32", "t_bs")
    for i in range(4):
        o = k.reg(".b32", f"{tag}b{i}")
        d = 6 - 4 * i
        k(f"shl.b32 {m}, {w}, {d}" if d > 0 else f"shr.b32 {m}, {w}, {-d}")
        k(f"and.b32 {m}, {m}, 0x01C001C0")
        pair_signs(k, o, m, w, i, sg)
        k(f"mul.rn.bf16x2 {o}, {o}, %bf2p126")
        out.append(o)
    return out


def bf16_pair_selector(i):
    """prmt selector for spread_bf16's pair i, sources (w, w << 4): byte 0 = byte i of w << 4
    (code 2i in its high nibble), byte 1 = that byte's sign replicated, byte 2 = byte i of w
    (code 2i + 1 in its high nibble), byte 3 = that byte's sign replicated."""
    return (4 + i) | (8 | (4 + i)) << 4 | i << 8 | (8 | i) << 12


def spread_bf16(k, w, tag):
    """One word of 8 E2M1 codes -> 4 bf16x2, consecutive pairs (2i, 2i + 1) like x's own
    registers (so x needs no re-pairing), exact, 17 instructions a word (the split pairing: 19,
    and 2 prmt a word on x). A prmt lays each code of pair i in the high nibble of a 16-bit half
    with its sign replicated over the byte above; a shift by 2 puts the code's e1 e0 m at bf16
    bits 8 7 6 (exponent field e, mantissa m << 6) and a copy of its sign at bit 15, and the
    mask drops the rest: the value times 2^-126 (the subnormal code lands on bf16's subnormal
    2^-127). One mul.rn.bf16x2 by 2^126 (bf16 arithmetic keeps subnormals) restores it, so the
    mma's products stay far from f32's subnormal range."""
    return spread_pairs(k, w, tag, "b", 2, 0x81C081C0, "%bf2p126")


def spread_pairs(k, w, tag, t, shift, mask, mul):
    """spread_bf16 / spread_f16: per pair i a prmt of (w, w << 4), a shift and a mask (and a
    multiply by mul where given); t names the registers."""
    w4 = k.reg(".b32", f"t_{t}w4")
    k(f"shl.b32 {w4}, {w}, 4")
    out = []
    for i in range(4):
        o = k.reg(".b32", f"{tag}{t}{i}")
        k(f"prmt.b32 {o}, {w}, {w4}, 0x{bf16_pair_selector(i):04X}")
        k(f"shl.b32 {o}, {o}, {shift}")
        k(f"and.b32 {o}, {o}, 0x{mask:08X}")
        if mul:
            k(f"mul.rn.bf16x2 {o}, {o}, {mul}")
        out.append(o)
    return out


class TC(GV):
    """Emits one tensor-core GEMV kernel (see the block comment above)."""

    def __init__(self, name, p, target):
        super().__init__(name, p, target)
        self.R = 16
        # windows a trip (p["u"]; GEMV_OPTS=u=N). H200, 2026-11-25: u = 2 (80 / 71 registers)
        # and 4 (120 / 108) were 3-50% slower than u = 1 (64) on every bench shape; since then
        # MXFP4 took u = 2 before spl (see the note above tc_name)
        self.TU = int(p.get("u", 1))
        # one x register set and two mma chains (compute_w2; GEMV_OPTS=x2=0/1). H100,
        # 2026-11-25, same process: BF16 x 2-7% faster on all four bench shapes, both formats
        # (NVFP4 (7168,16384,1) 27.93 against 30.07 us). F16 x was 8-12% slower until its scale
        # loads were held before the first mma (sdep): then 0.6-3% faster on every shape, two
        # rounds (NVFP4 (7168,16384,1) 27.95-28.02 against 28.81-28.84 us)
        self.x2 = bool(int(p.get("x2", 1)))
        # experiment knob (GEMV_OPTS=xrot=1): each CTA walks its warps' whole windows starting at
        # window (ctaid % J) of the J a warp has, wrapping, so that CTAs started together do not
        # all read the same x window at the same time (U = 1 only). H200, 2026-11-27, NVFP4 x
        # BF16 / F16 and MXFP4 x BF16, four bench shapes, waiting and independent: -2.1 to +1.2
        # points of the copy, noise: x's reads are not what holds these kernels back
        self.xrot = bool(int(p.get("xrot", 0))) and self.TU == 1
        # experiment knob (GEMV_OPTS=apf=D[,apfs=1]): in the window loop, an L2 prefetch of the
        # lane's 16 bytes of rows A and B D windows ahead (apfs: and their scale bytes), so that
        # more of A is in flight a warp without registers (U = 1 only). H200, same day, same
        # kernels and shapes: D = 1, 2, 4 all 2-20 points slower, waiting and independent (NVFP4
        # x F16 (7168,16384,1) independent 88.1-88.7 -> 68.4-72.1%), with the scale bytes 25-37
        # slower: a prefetch instruction costs these kernels more than the loads it would hide
        self.apf = int(p.get("apf", 0)) if self.TU == 1 else 0
        self.apfs = bool(int(p.get("apfs", 0)))
        # (the thirty-sixth session's cp.async ring, GEMV_OPTS=cpa=D, 5-25 points slower then:
        # every address recomputed from the chunk index, the window's scale bytes in per-lane
        # 8- or 4-byte copies, x still loaded in the window; its successor is cpr below, which
        # the ring twins build)
        # pinc (sm_90a; GEMV_OPTS=pinc=0/1 overrides): the window loop walks running pointers
        # (A rows A and B, their scale bytes, x) stepped by constants instead of recomputing each
        # address from the chunk index: 157 -> 148 SASS instructions a window (NVFP4 x F16),
        # 209 -> 199 (NVFP4 x BF16), 208 -> 196 (MXFP4 x BF16), and fewer registers.
        # NOTE (read before spl, below): at the H200's copy bandwidth an SM must take in ~18
        # bytes of A a clock, and at 0.20 instructions a byte (NVFP4 x BF16) that is ~3.7 of
        # the 4 warp instructions an SM issues a clock. More of A in flight a warp made them
        # slower (an L2 prefetch ahead, GEMV_OPTS=apf; a cp.async ring, cpa: both add
        # instructions); fewer instructions made them faster. spl then showed the per-warp
        # latency mattered as much: it hides it without adding instructions a window.
        # pinc itself, H200, 2026-11-27, two calls of three rounds, % of the copy, waiting and
        # independent, pinc against pinc = 0 in one process: NVFP4 x BF16 +0.3 to +2.5 points on
        # three bench shapes (independent (7168,16384,1) 83.4-84.3 -> 85.0-85.2), NVFP4 x F16
        # +1.0 to +3.0 ((16384,16384,4) 88.3-88.9 -> 90.0-90.9), MXFP4 x BF16 +0.4 to +2.5;
        # on (7168,2048,4), 4 windows a warp, NVFP4 -1.5 to +0.5, MXFP4 x BF16 +0.9 to +1.7.
        self.pinc = (bool(int(p.get("pinc", 1 if target == "sm_90a" else 0))) and self.TU == 1
                     and self.x2 and not self.p.get("pk") and not self.xrot)
        self._ptrs = None
        # spl (with pinc; GEMV_OPTS=spl=0/1, sfence=0/1): the window loop software-pipelined
        # over two register sets (spl_loop), the next window's scale loads fenced ahead of this
        # window's work (sfence). 54-64 registers, 4 CTAs a SM. H200, 2026-11-27, three rounds
        # in one process, % of the copy, waiting and independent on the four bench shapes,
        # against the kernels without it (NVFP4 u = 1 with sdep, MXFP4 u = 2): NVFP4 x BF16
        # +2.6 to +6.6 points ((7168,16384,1) 66.7 -> 73.2 waiting, 87.2 -> 93.5 independent),
        # NVFP4 x F16 +0.9 to +1.7, MXFP4 x BF16 +0.5 to +4.7, MXFP4 x F16 -1.2 to +1.0. Without
        # sfence: NVFP4 x BF16 and MXFP4 x F16 the same within 1.2 points, NVFP4 x F16 and
        # MXFP4 x BF16 0.3-1.3 points lower.
        # NOTE: this is latency, which the loop without spl leaves exposed once a window per
        # warp; the note at pinc above, from before spl, read the gains of fewer instructions
        # as an issue bound alone
        self.spl = bool(int(p.get("spl", 1))) and self.pinc and not self.apf
        # cpr (the ring twins, param ring = D; GEMV_OPTS=cpr=D overrides, with pinc): the window
        # loop through a per-warp cp.async ring of D slots (see TC_RING)
        self.cpr = int(p.get("cpr", p.get("ring", 0))) if self.pinc and not self.apf else 0
        # experiment knob (GEMV_OPTS=cprx=0): x loaded in the window as before, not through the
        # ring. H200, 2026-11-27, D = 2: the first mma of each window then held 38% of the
        # stall samples (ncu, (7168,16384,1)), waiting on x's loads. With x in the ring, two
        # rounds, points of the copy waiting on (4096,7168,8) and (7168,2048,4): NVFP4 x BF16
        # +1.7 to +5.9, NVFP4 x F16 +2.2 to +3.9, MXFP4 x F16 +2.3 to +5.5, MXFP4 x BF16 -1.7
        # to +5.1; on the two K = 16384 shapes -3.0 to +2.5
        self.cprx = bool(int(p.get("cprx", 1))) and self.cpr and self.x2
        if self.cpr:
            self.spl = False
        self.cpb = bool(int(p.get("cpb", p.get("ring_block", 0)))) and self.cpr > 1
        # NOTE: the scale runs are copied in 4-byte pieces that other lanes of the row group
        # read (NVFP4: lane (g, t) copies bytes 4 (t & 1) .. + 3 of row t >> 1's run, which
        # lanes 2 (t & 1) and 2 (t & 1) + 1 read; MXFP4: lanes t < 2 copy, all four read), and
        # the refill overwrites them. cp.async.wait_group makes only the executing thread's
        # copies visible in the PTX memory model, so cpsync (on by default) puts bar.warp.sync
        # after each window's wait (its copies, every lane's, before its reads) and before its
        # refill (every lane's reads before the overwrite). H200, 2026-11-27, two rounds
        # against the twins without it (which relied on the SASS order alone): -0.7 points of
        # the copy on average over the 32 rows (4 twins x 4 shapes x waiting / independent),
        # -2.2 to +0.4. The other cure, each lane copying the pieces that hold its own scale
        # bytes (two 4-byte copies a lane, 1536-byte slots), was slower: NVFP4 -3.5 to -6.9
        # points on the K = 16384 shapes, MXFP4 -20 to -33 there; removed. GEMV_OPTS=cpsync=0
        # drops the barrier (timing only). test_gemv's test_sass_ring_order checks that each
        # window's scale LDS still come before its refill's LDGSTS in every built twin.
        self.cpsync = bool(int(p.get("cpsync", 1))) and self.cpr > 0
        self.sfence = bool(int(p.get("sfence", 1))) and self.spl
        # BF16 x: A decoded to consecutive pairs (spread_bf16), x's registers used as loaded;
        # GEMV_OPTS=bfp=0 keeps the split pairing (spread_bf16_split) and a prmt a register on x
        # (17 instructions a word of A against 19 and 2 prmt on x). Window loop, sm_90a:
        # NVFP4 x BF16 199 -> 181 SASS instructions (with sdep), 58 -> 56 registers; MXFP4 x
        # BF16 196 -> 185 a window at u = 2 (no pinc there), 58 registers. H200, 2026-11-27,
        # three rounds in one process against bfp = 0 at u = 1 (the kernels before), % of the
        # copy, waiting and independent on the four bench shapes: NVFP4 x BF16 -0.2 to +2.4
        # points ((7168,16384,1) waiting 63.0-63.6 -> 64.8-65.5, (7168,2048,4) independent
        # 71.4-71.7 -> 73.5-73.9), MXFP4 x BF16 +1.1 to +5.9 ((7168,16384,1) waiting 60.4-60.6
        # -> 65.9-67.0)
        self.bfp = bool(int(p.get("bfp", 1)))
        # f16d (sm_90a; GEMV_OPTS=f16d=0/1 overrides): F16 x with A decoded by spread_f16
        # (prmt, shift, mask: value * 2^-14) instead of spread_e4m3 (E4M3 bytes widened by
        # cvt.rn.f16x2.e4m3x2, 4 F2FP a word). The same 13 instructions a word, but F2FP runs
        # on a narrow conversion pipe, and with 32 a window a warp it was what held the F16
        # kernels back (the BF16 decode, 17 a word without F2FP, ran faster). H200,
        # 2026-11-27, two rounds, in one process against the cvt decode (call f): NVFP4 x F16
        # twin waiting 71.3-71.6 -> 78.6-79.2 / 85.9-86.5 -> 89.7-90.4 / 94.0-94.6 ->
        # 98.7-99.5 on (7168,16384,1) / (4096,7168,8) / (16384,16384,4), independent
        # 97.3-97.9 -> 104.8-105.4; MXFP4 x F16 twin 66.5-66.6 -> 71.5-71.7 / 80.0 ->
        # 86.8-87.0 / 88.3-89.1 -> 96.8; the plain kernels +1 to +10.5 (NVFP4 (7168,2048,4)
        # 63.6-64.1 -> 65.0-65.6, MXFP4 (7168,16384,1) 61.9 -> 72.4-72.5; +0.25 to +10.55 in
        # all). H100, two rounds, on what the runtime runs there: waiting -0.15 to +4.3,
        # independent -2.6 to +0.5 (bench/RESULTS.md, thirty-ninth session). test_gemv and
        # `check gemv` passed with it (the mma takes the subnormal
        # code's f16 2^-15 as it is). sm_100a / sm_120a keep spread_e4m3 (not measured
        # there: no such GPU here)
        self.f16d = self.xt == "f16" and bool(int(p.get("f16d", target == "sm_90a")))
        # BF16 x with the consecutive-pair decode lets ptxas sink a scale load below the first
        # mma as F16 x did; sdep holds it (u = 1). H200, 2026-11-27, three rounds, NVFP4 x BF16
        # u = 1: +0.4 to +4.5 points of the copy on all eight rows with it, against without;
        # MXFP4 x BF16 at u = 2 lost 0.3 to 2.7 points with it on seven of eight
        # (without spl; under spl without sfence, sdep cost NVFP4 x BF16 6 registers (68: 3
        # CTAs a SM) and 1.6-11.9 points, and NVFP4 x F16 without it took 70 registers, 2.8-9.6
        # points slower; with sfence either way is 64 registers, not compared)
        bf_sdep = self.xt == "bf16" and self.bfp and self.TU == 1 and not self.spl
        self.sdep = bool(int(p.get("sdep", 1 if self.x2 and (self.xt == "f16" or bf_sdep)
                                   else 0)))
        if self.cpr:
            self.sdep = False

    def setup_tc(self):
        k = self.k
        self.coords()
        k.comment("lane (g, t): rows row0 + g (A) and row0 + g + 8 (B); rows past M: addresses\n"
                  "clamped to row M - 1 (computed, never stored)")
        for name in ("g", "t4", "rowA", "rowB", "mlast"):
            k.reg(".b32", name)
        k("shr.u32 %g, %lane, 2")
        k("and.b32 %t4, %lane, 3")
        k("add.u32 %rowA, %row0, %g")
        k("add.u32 %rowB, %rowA, 8")
        k.reg(".pred", "p_rA")
        k.reg(".pred", "p_rB")
        k("setp.lt.u32 %p_rA, %rowA, %a_m")
        k("setp.lt.u32 %p_rB, %rowB, %a_m")
        k("sub.u32 %mlast, %a_m, 1")
        if self.p.get("i8px"):
            k.comment("i8px (timing only): decode_a_i8's tables, opaque to ptxas as in GV.setup")
            opaque_tables(k, "%lane", (("i8lo", I8_LO), ("i8hi", I8_HI)))
        for rr in ("A", "B"):
            rc, r64 = k.reg(".b32", f"rowc{rr}"), k.reg(".b64", f"row64{rr}")
            k(f"min.u32 {rc}, %row{rr}, %mlast")
            k(f"cvt.u64.u32 {r64}, {rc}")
            ab, sb = k.reg(".b64", f"abase{rr}"), k.reg(".b64", f"sbase{rr}")
            if self.p.get("pk"):
                # experiment knob (GEMV_OPTS=pk=1; timing only, wrong results by design): A read
                # as 16-row x 64-byte tiles (1 KiB, row-major inside, K-fastest), a row group's
                # tiles 16 row pitches apart: a warp instruction reads 512 contiguous bytes, the
                # layout a pre-packed weight format would give. H200, 2026-11-27, two rounds:
                # NVFP4 +0.6 to +5.1 points of the copy (waiting and independent), MXFP4 x BF16
                # -1.3 to +1.8: the 8-row x 64-byte pattern is not what holds these kernels back
                tq, tq64 = k.reg(".b32", "t_pkq"), k.reg(".b64", "t_pkq64")
                k(f"shr.u32 {tq}, {rc}, 4")
                k(f"cvt.u64.u32 {tq64}, {tq}")
                k(f"mul.lo.u64 {tq64}, {tq64}, %a_a_m")
                k(f"shl.b64 {tq64}, {tq64}, 4")
                k(f"and.b32 {tq}, {rc}, 15")
                k(f"shl.b32 {tq}, {tq}, 6")
                k(f"mad.lo.u32 {tq}, %t4, 16, {tq}")
                k(f"add.u64 {ab}, %a_batch, {tq64}")
                k(f"cvt.u64.u32 {tq64}, {tq}")
                k(f"add.u64 {ab}, {ab}, {tq64}")
            else:
                k(f"mad.lo.u64 {ab}, {r64}, %a_a_m, %a_batch")
            k(f"add.u64 {sb}, %s_batch, {self.scale_row_offset(rc, r64)}")
        k.reg(".b64", "xrow")
        k("mad.lo.u64 %xrow, %l64, %a_x_l, %a_x")
        self.policies()
        k.comment("x lanes: lane (g, t) holds half g - 2t of x's chunk 4w + t if that is 0 or 1")
        k.reg(".b32", "t_h")
        k.reg(".pred", "p_x0")
        k.reg(".pred", "p_x1")
        k("shl.b32 %t_h, %t4, 1")
        k("setp.eq.u32 %p_x0, %g, %t_h")
        k("add.u32 %t_h, %t_h, 1")
        k("setp.eq.u32 %p_x1, %g, %t_h")
        if self.x2:
            k.comment("one x register set: lanes g = 2t + 1 read half 1 (32 bytes on)")
            k.reg(".pred", "p_xl")
            k.reg(".b64", "xrowl")
            k.reg(".b32", "t_xo")
            k("or.pred %p_xl, %p_x0, %p_x1")
            k("and.b32 %t_xo, %g, 1")
            k("mad.wide.u32 %xrowl, %t_xo, 32, %xrow")
        if self.nv:
            k.reg(".pred", "p_hashalf")
            k("setp.gt.u32 %p_hashalf, %a_nch, %a_nfull")
        if self.xt == "bf16":
            k.reg(".b32", "bf2p126")
            k("mov.b32 %bf2p126, 0x7E807E80")
        k.reg(".f32", "accA")
        k.reg(".f32", "accB")
        k.reg(".f32", "fz")
        k("mov.f32 %accA, 0f00000000")
        k("mov.f32 %accB, 0f00000000")
        k("mov.f32 %fz, 0f00000000")
        self.prefetch_tc()
        k.comment("PDL: everything above overlaps the preceding kernel's tail")
        pdl_wait(k, "PDL_DONE")
        pdl_trigger(k)

    def prefetch_tc(self):
        """An L2 prefetch of the lane's 16 bytes of rows A and B in each of its first pfn windows,
        before the PDL wait.
        NOTE: a prefetch loads nothing into registers and L2 is coherent with every SM's writes,
        so this is correct after any kernel, A written by it included (see ptxq_gemv); the
        kernel still reads A after the wait. 2026-11-26, two rounds: one window took 2.3-4.4%
        off the three hackathon shapes on the H100 and 0.4-4.1% on the H200 (grids of at most
        two waves: their CTAs start while the preceding kernel drains); two windows gained less,
        four lost 3-20% (H100)."""
        k = self.k
        k.comment("---- L2 prefetch of the first pfn windows (rows A and B), before the PDL wait")
        i, c, st = k.reg(".b32", "pf_i"), k.reg(".b32", "pf_c"), k.reg(".b32", "pf_st")
        pd, pin, aa = k.reg(".pred", "p_pfdone"), k.reg(".pred", "p_pfin"), k.reg(".b64", "pf_a")
        k(f"mov.u32 {i}, %a_pfn")
        k(f"shl.b32 {st}, 4, %a_wk_shift")
        k(f"shl.b32 {c}, %wk, 2")
        if self.xrot:
            self.xrot_setup()
            k(f"mad.lo.u32 {c}, %xr_j, {st}, {c}")
        k(f"add.u32 {c}, {c}, %t4")
        k.label("PF_LOOP")
        k(f"setp.eq.u32 {pd}, {i}, 0")
        k(f"@{pd} bra.uni PF_DONE")
        k(f"setp.lt.u32 {pin}, {c}, %a_nch")
        for rr in ("A", "B"):
            self.a_addr(aa, c, rr)
            k(f"@{pin} prefetch.global.L2 [{aa}]")
        k(f"add.u32 {c}, {c}, {st}")
        k(f"sub.u32 {i}, {i}, 1")
        k("bra.uni PF_LOOP")
        k.label("PF_DONE")

    def xrot_setup(self):
        """xrot: %xr_J = the warp's whole windows (wk, wk + WK, ... below nfull / 4), %xr_j = the
        first one it takes (ctaid % J; 0 when J = 0)."""
        k = self.k
        w, p = k.reg(".b32", "xr_W"), k.reg(".pred", "p_xrJ")
        J, j = k.reg(".b32", "xr_J"), k.reg(".b32", "xr_j")
        k(f"shr.u32 {w}, %a_nfull, 2")
        k(f"setp.gt.u32 {p}, {w}, %wk")
        k(f"sub.u32 {J}, {w}, %wk")
        k(f"sub.u32 {J}, {J}, 1")
        k(f"shr.u32 {J}, {J}, %a_wk_shift")
        k(f"add.u32 {J}, {J}, 1")
        k(f"selp.u32 {J}, {J}, 0, {p}")
        k(f"max.u32 {w}, {J}, 1")
        k(f"rem.u32 {j}, %bid, {w}")

    def pinc_setup(self):
        """pinc: running pointers at chunk c0 + t4 and their steps a window (cstep chunks: A
        16 bytes a chunk, x 64, the scales ko(chunk_k(cstep)) * unit).
        NOTE: the scale step is additive only because every layout src/gemv.c sets has kmsk =
        2^ksh - 1 (strided 0 / 0, 128x4 3 / 2) and cstep's scale index (4 << wk_shift chunks:
        8 or 4 per window and warp) is a multiple of 2^ksh; a new scale layout must keep both."""
        k = self.k
        k.comment("pinc: running pointers for the window loop and the tail")
        c = k.reg(".b32", "pi_c")
        k("add.u32 %pi_c, %c0, %t4")
        ptrs = {nm: k.reg(".b64", f"pi_{nm}") for nm in ("A", "B", "sA", "sB", "x")}
        for rr in ("A", "B"):
            self.a_addr(ptrs[rr], c, rr)
        k(f"mad.wide.u32 {ptrs['x']}, {c}, 64, %xrowl")

        def ko_of(cc, tag):
            return self.scale_index(self.chunk_k(cc, tag), f"pi_ko{tag}", f"pi_tk{tag}")
        ko = ko_of(c, "pi")
        for rr in ("A", "B"):
            k(f"mad.wide.u32 {ptrs['s' + rr]}, {ko}, %a_unit, %sbase{rr}")
        kd = ko_of("%cstep", "pd")
        for nm in ("pi_da", "pi_ds", "pi_dx"):
            k.reg(".b64", nm)
        k("mul.wide.u32 %pi_da, %cstep, 16")
        k("mul.wide.u32 %pi_dx, %cstep, 64")
        k(f"mul.wide.u32 %pi_ds, {kd}, %a_unit")
        self._ptrs = ptrs

    def cpr_issue(self, j, slot):
        """cpr: this lane's cp.async of window c0 + j * cstep into slot `slot` (A's 16 bytes of
        rows A and B, its share of the two rows' scale runs, and on x lanes its 32 bytes of x),
        then commit (an empty group where the window is not whole, so that wait_group counts
        stay uniform); the source pointers then step one window."""
        k = self.k
        p, t = k.reg(".pred", "p_cpr"), k.reg(".b32", "t_cpr")
        k(f"mad.lo.u32 {t}, %cstep, {j}, %c0")
        k(f"add.u32 {t}, {t}, 4")
        k(f"setp.le.u32 {p}, {t}, %a_nfull")
        o = slot * CPR_SLOT
        for i, rr in enumerate(("A", "B")):
            k(f"@{p} cp.async.cg.shared.global.L2::cache_hint.L2::128B [%cpr_l+{o + 512 * i}], "
              f"[{self._ptrs[rr]}], 16, %pol_a;")
        ps = k.reg(".pred", "p_cprs")
        k(f"and.pred {ps}, {p}, %p_cprsc")
        k(f"@{ps} cp.async.ca.shared.global.L2::cache_hint [%cpr_sd+{o}], [%cpr_cs], 4, "
          "%pol_a;")
        if self.cprx:
            k(f"and.pred {ps}, {p}, %p_xl")
            for i in range(2):
                k(f"@{ps} cp.async.cg.shared.global.L2::cache_hint [%cpr_xd+{o + 16 * i}], "
                  f"[{self._ptrs['x']}+{16 * i}], 16, %pol_x;")
        k("cp.async.commit_group;")
        self.advance_ptrs(("A", "B", "x") if self.cprx else ("A", "B"))
        k("add.s64 %cpr_cs, %cpr_cs, %pi_ds")

    def cpr_window(self, j, exit_test):
        """cpr: window c0 from slot j (exit_test: leave for WIN_DONE first if it is not whole),
        then slot j <- window c0 + D cstep."""
        k, D = self.k, self.cpr
        k.comment(f"cpr: window c0 from slot {j}, then slot {j} <- window c0 + {D} cstep")
        if exit_test:
            k("add.u32 %t_end, %c0, 4")
            k("setp.gt.u32 %p_stop, %t_end, %a_nfull")
            k("@%p_stop bra.uni WIN_DONE")
        k(f"cp.async.wait_group {D - 1};")
        if self.cpsync:
            k("bar.warp.sync -1;")
        o = j * CPR_SLOT
        words = {}
        for i, rr in enumerate(("A", "B")):
            ws = [k.reg(".b32", f"w0{rr}{q}") for q in range(4)]
            k(f"ld.shared.v4.b32 {{{', '.join(ws)}}}, [%cpr_l+{o + 512 * i}];")
            words[rr] = ws
        sbr = {}
        for i, rr in enumerate(("A", "B")):
            r = k.reg(".b32", f"sb0{rr}0")
            k(f"ld.shared.{'u16' if self.nv else 'u8'} {r}, "
              f"[%cpr_sr+{o + 8 * i}];")
            sbr[rr] = [r]
        xin = None
        if self.cprx:
            xin = [k.reg(".b32", f"xx{q}") for q in range(8)]
            for i in range(2):
                k(f"@%p_xl ld.shared.v4.b32 {{{', '.join(xin[4 * i:4 * i + 4])}}}, "
                  f"[%cpr_xd+{o + 16 * i}];")
        ch = k.reg(".b32", "chunk0")
        k(f"add.u32 {ch}, %c0, %t4")
        self.compute_w(ch, words, sbr, False, xin)
        if not self.cprx:
            self.advance_ptrs(("x",))
        if self.cpsync:
            k("bar.warp.sync -1;")
        self.cpr_issue(D, j)
        k("add.u32 %c0, %c0, %cstep")

    def cpr_loop(self):
        """cpr: the whole-window loop through the ring (TC_RING), unrolled D times: slot j holds
        windows j, j + D, ... of the warp. Window w waits for its own group (wait_group D - 1:
        the D - 1 younger ones may still fly), reads the slot back, computes, then refills the
        slot with window w + D. Exits leave c0 at the first window not done; the tail then
        computes its addresses from c0 (no running pointers).
        NOTE: the refill overwrites bytes read from the slot in this window, A's and x's by
        this lane, the scale runs' by the lanes of its row group (see TC.cpsync); it is issued
        after the decode and mma that consume them (ptxas also puts its own fence, a dummy LDS,
        before each LDGSTS that follows an LDS).
        NOTE: at an exit the groups still pending belong to windows that are not whole, whose
        copies were predicated off: nothing writes the ring after the loop."""
        k, D = self.k, self.cpr
        k.comment(f"---- cpr: {D} windows in flight a warp through shared memory (cp.async)")
        for nm in ("cpr_l", "cpr_sd", "cpr_sr"):
            k.reg(".b32", nm)
        k("mov.u32 %cpr_l, cprbuf")
        k(f"mad.lo.u32 %cpr_l, %warp, {D * CPR_SLOT}, %cpr_l")
        self.cpr_scale_setup()
        if self.cprx:
            k.comment(f"x through the ring too: x lane (g, t) copies and reads its 32 bytes at\n"
                      "1152 + 32 g (the window's 256 bytes of x, in order)")
            k.reg(".b32", "cpr_xd")
            k("mad.lo.u32 %cpr_xd, %g, 32, %cpr_l")
            k("add.u32 %cpr_xd, %cpr_xd, 1152")
        k("mad.lo.u32 %cpr_l, %lane, 16, %cpr_l")
        for j in range(D):
            self.cpr_issue(j, j)
        self.cpr_loops()

    def cpr_scale_setup(self):
        """The scale copies as built: NVFP4 lane (g, t) copies 4 bytes of row (t >> 1)'s run
        at 4 (t & 1); MXFP4 lanes t < 2 the 4 bytes of row t's run; the run of row r lies at
        1024 + 16 g + 8 r of the slot (read by the four lanes of the row group)."""
        k = self.k
        t, t2 = k.reg(".b32", "t_cq"), k.reg(".b32", "t_cq2")
        k("mad.lo.u32 %cpr_sr, %g, 16, %cpr_l")
        k("add.u32 %cpr_sr, %cpr_sr, 1024")
        k.comment("scale copies: NVFP4 lane (g, t) 4 bytes of row (t >> 1)'s run at 4 (t & 1);\n"
                  "MXFP4 lanes t < 2 the 4 bytes of row t's run; run of row r at 1024 + 16 g + 8 r")
        k.reg(".pred", "p_cprsc")
        k.reg(".b64", "cpr_cs")
        c = k.reg(".b32", "t_cqc")
        if self.nv:
            k("setp.eq.u32 %p_cprsc, %t4, %t4")   # every lane copies
            k(f"shr.u32 {t}, %t4, 1")
            k(f"and.b32 {t2}, %t4, 1")
            k(f"shl.b32 {c}, {t2}, 1")
            k(f"add.u32 {c}, {c}, %c0")
            k(f"shl.b32 {t2}, {t2}, 2")
        else:
            k("setp.lt.u32 %p_cprsc, %t4, 2")
            k(f"and.b32 {t}, %t4, 1")
            k(f"mov.u32 {t2}, 0")
            k(f"mov.u32 {c}, %c0")
        k(f"mad.lo.u32 %cpr_sd, {t}, 8, %cpr_sr")
        k(f"add.u32 %cpr_sd, %cpr_sd, {t2}")
        ko = self.scale_index(self.chunk_k(c, "cq"), "cq_ko", "cq_tk")
        pB = k.reg(".pred", "p_cqB")
        k(f"setp.ne.u32 {pB}, {t}, 0")
        sb = k.reg(".b64", "t_cqsb")
        k(f"selp.b64 {sb}, %sbaseB, %sbaseA, {pB}")
        k(f"mad.wide.u32 %cpr_cs, {ko}, %a_unit, {sb}")
        if self.nv:
            k(f"mad.lo.u32 %cpr_sr, %t4, 2, %cpr_sr")
        else:
            k(f"add.u32 %cpr_sr, %cpr_sr, %t4")

    def cpr_loops(self):
        """The ring loops after the prologue's copies: cpb's blocks of D windows, then one
        window at a time."""
        k, D = self.k, self.cpr
        if self.cpb:
            # cpb (param ring_block; GEMV_OPTS=cpb=0/1): D windows a block with one exit test,
            # so that ptxas may interleave their work (the per-window exits end its basic
            # blocks); the last < D windows through the loop below, from slot 0
            k.label("WIN_LOOPRB")
            k(f"mad.lo.u32 %t_end, %cstep, {D - 1}, %c0")
            k("add.u32 %t_end, %t_end, 4")
            k("setp.gt.u32 %p_stop, %t_end, %a_nfull")
            k("@%p_stop bra.uni WIN_LOOPR")
            for j in range(D):
                self.cpr_window(j, False)
            k("bra.uni WIN_LOOPRB")
        k.label("WIN_LOOPR")
        for j in range(D):
            self.cpr_window(j, True)
        k("bra.uni WIN_LOOPR")

    def ahead_prefetch(self):
        """apf: L2 prefetch of this lane's chunk apf windows on (rows A and B; apfs: and its
        scale bytes), when that chunk exists."""
        if not self.apf:
            return
        k = self.k
        c, p, aa = k.reg(".b32", "apf_c"), k.reg(".pred", "p_apf"), k.reg(".b64", "apf_a")
        k(f"mad.lo.u32 {c}, %cstep, {self.apf}, %c0")
        k(f"add.u32 {c}, {c}, %t4")
        k(f"setp.lt.u32 {p}, {c}, %a_nch")
        for rr in ("A", "B"):
            self.a_addr(aa, c, rr)
            k(f"@{p} prefetch.global.L2 [{aa}]")
        if self.apfs:
            ko = self.scale_index(self.chunk_k(c, "apf"), "apf_ko", "apf_tk")
            for rr in ("A", "B"):
                k(f"mad.wide.u32 {aa}, {ko}, %a_unit, %sbase{rr}")
                k(f"@{p} prefetch.global.L2 [{aa}]")

    def a_addr(self, aa, c, rr):
        """A's address of chunk c of row rr (A or B) of this lane."""
        k = self.k
        if self.p.get("pk"):
            cw = k.reg(".b32", "t_pkc")
            k(f"shr.u32 {cw}, {c}, 2")
            k(f"mad.wide.u32 {aa}, {cw}, 1024, %abase{rr}")
        else:
            k(f"mad.wide.u32 {aa}, {c}, 16, %abase{rr}")

    def load_a(self, u, tail, spair=False, fence=None, regs=None):
        """Window u of the trip (chunk c_u = c0 + u cstep + t): A's 16 bytes of rows A and B and
        their block scale bytes. Rows past M read row M - 1 (clamped; never stored). tail: the
        chunk may be past the row end (zeros) or NVFP4's last half chunk (8 bytes). spair
        (NVFP4, FLAG_SPAIR): a chunk's two scale bytes are one aligned u16, one load a row.
        fence (spl's sfence): emitted after the scale loads, which then come first. regs: the
        register set to load into (default u; spl loads window 1 into either set)."""
        k = self.k
        r = u if regs is None else regs
        c = k.reg(".b32", f"chunk{r}")
        k(f"mad.lo.u32 {c}, %cstep, {u}, %c0")
        k(f"add.u32 {c}, {c}, %t4")
        if tail:
            k(f"setp.lt.u32 %p_in, {c}, %a_nch")
            k(f"setp.lt.u32 %p_full, {c}, %a_nfull")
            if self.nv:
                k(f"setp.eq.and.u32 %p_half, {c}, %a_nfull, %p_hashalf")
        if fence:
            sb = self.load_scales(r, c, tail, spair)
            fence()
            return c, self.load_words(r, c, tail), sb
        words = self.load_words(r, c, tail)
        return c, words, self.load_scales(r, c, tail, spair)

    def load_words(self, u, c, tail):
        """load_a's A words (register set u): 16 bytes of rows A and B (tail: zeros past the
        row end)."""
        k = self.k
        words = {}
        for rr in ("A", "B"):
            ws = [k.reg(".b32", f"w{u}{rr}{j}") for j in range(4)]
            if self._ptrs:
                aa = self._ptrs[rr]
            else:
                aa = k.reg(".b64", f"aaddr{rr}")
                self.a_addr(aa, c, rr)
            if tail:
                self.zero(ws)
                self.ld(ws, aa, "a", "%p_full")
                if self.nv:
                    self.ld(ws[:2], aa, "a", "%p_half")
            else:
                self.ld(ws, aa, "a")
            words[rr] = ws
        return words

    def load_scales(self, u, c, tail, spair):
        """load_a's scale bytes of rows A and B (register set u): {row: [registers]}."""
        k = self.k
        # with running pointers (pinc) the scale addresses need no offset from c
        ko = None if self._ptrs else self.scale_index(self.chunk_k(c, "w"), "koff", "t_k")
        sb = {}
        if self.p.get("noscale"):
            # experiment knob (GEMV_OPTS=noscale=1; wrong results by design): no scale loads,
            # the scale registers hold a constant code
            for rr in ("A", "B"):
                n = 1 if (spair and not tail) or not self.nv else 2
                regs = [k.reg(".b32", f"sb{u}{rr}{j}") for j in range(n)]
                for r in regs:
                    k(f"mov.b32 {r}, {0x3838 if self.nv else 127}")
                sb[rr] = regs
            return sb
        for rr in ("A", "B"):
            if self._ptrs:
                sa = self._ptrs["s" + rr]
            else:
                sa = k.reg(".b64", f"saddr{rr}")
                k(f"mad.wide.u32 {sa}, {ko}, %a_unit, %sbase{rr}")
            if spair and not tail:
                regs = [k.reg(".b32", f"sb{u}{rr}0")]
                self.ld(regs, sa, "a", None, "u16")
                sb[rr] = regs
                continue
            regs = [k.reg(".b32", f"sb{u}{rr}{j}") for j in range(2 if self.nv else 1)]
            if tail:
                self.zero(regs)
            self.ld([regs[0]], sa, "a", "%p_in" if tail else None)
            if self.nv:
                s2 = k.reg(".b64", f"saddr2{rr}")
                k(f"mad.wide.u32 {s2}, %a_ks1, %a_unit, {sa}")
                self.ld([regs[1]], s2, "a", "%p_full" if tail else None)
            sb[rr] = regs
        return sb

    def compute_w(self, c, words, sb, tail, xin=None):
        """x's halves of chunk c on the x lanes (b0 on lanes g = 2t, b1 on g = 2t + 1; the
        other lanes keep zeros), the decode, 8 mma, the scales. xin: x's registers, already
        loaded (cpr)."""
        k = self.k
        if self.x2:
            return self.compute_w2(c, words, sb, tail, xin)
        P = [k.reg(".b32", f"xp{j}") for j in range(8)]
        Q = [k.reg(".b32", f"xq{j}") for j in range(8)]
        xa = k.reg(".b64", "xaddr")
        k(f"mad.wide.u32 %xaddr, {c}, 64, %xrow")
        p0, p1 = "%p_x0", "%p_x1"
        if tail:
            k.comment("tail: x lanes load only what exists (the zeros stay elsewhere)")
            self.zero(P + Q)
            k("and.pred %p_lx0, %p_x0, %p_in")
            k("and.pred %p_lx1, %p_x1, %p_full")
            p0, p1 = "%p_lx0", "%p_lx1"
        self.ld(P[0:4], xa, "x", p0)
        self.ld(P[4:8], f"{xa}+16", "x", p0)
        self.ld(Q[0:4], f"{xa}+32", "x", p1)
        self.ld(Q[4:8], f"{xa}+48", "x", p1)
        sc, h = self.decode_w(words, sb)
        bf = self.xt == "bf16" and not self.bfp
        D = [k.reg(".f32", f"d{j}") for j in range(4)]
        for s in range(8):
            a = [h["A"][s // 4][s % 4], h["B"][s // 4][s % 4],
                 h["A"][2 + s // 4][s % 4], h["B"][2 + s // 4][s % 4]]
            b = [P[s], Q[s]]
            if bf:
                # A's pair s is elements (e, e + 4), e = 8 (s / 4) + s % 4 of the half: x's
                # registers hold (2j, 2j + 1), so take the matching halves of two of them
                i = s % 4
                j0 = 4 * (s // 4) + i // 2
                sel = "0x7632" if i % 2 else "0x5410"
                b = [k.reg(".b32", "t_xb0"), k.reg(".b32", "t_xb1")]
                k(f"prmt.b32 {b[0]}, {P[j0]}, {P[j0 + 2]}, {sel}")
                k(f"prmt.b32 {b[1]}, {Q[j0]}, {Q[j0 + 2]}, {sel}")
            self.mma(D, a, b, s == 0)
        self.scale_sums(D, sc)

    def decode_w(self, words, sb):
        """The window's block scales (f32, rows A and B) and A's words spread to f16x2 / bf16x2
        pairs: h[row][word][pair]."""
        k = self.k
        sc = {rr: self.scales(sb[rr], f"s{rr}") for rr in ("A", "B")}
        spread = spread_f16 if self.f16d else spread_e4m3
        if self.xt == "bf16":
            spread = spread_bf16 if self.bfp else spread_bf16_split
        if self.p.get("nodecode"):
            # experiment knob (GEMV_OPTS=nodecode=1; wrong results by design): A's raw words as
            # the mma operands, no decode
            h = {rr: [[words[rr][j]] * 4 for j in range(4)] for rr in ("A", "B")}
        elif self.p.get("i8px"):
            # experiment knob (GEMV_OPTS=i8px=1; wrong results by design): the dp4a path's
            # 7-instruction P / N int8 decode (decode_a_i8) as the mma operands: what an integer
            # mma (IMMA, A as P - N against x split into int8 terms) would pay for A's decode,
            # without the x split or the integer sums' conversion. H200, 2026-11-27, one round,
            # % of the copy waiting, built / i8px / nodecode: NVFP4 x BF16 twin 73.9 / 82.5 /
            # 82.5 on (7168,16384,1), 88.0 / 95.0 / 95.0 on (4096,7168,8); MXFP4 x BF16 twin
            # 68.0 / 80.7 / 82.1 on (7168,16384,1); NVFP4 x F16 plain 76.8 / 78.6 / 87.1. Not
            # built: x would be split into int8 terms with a block exponent (two for BF16's 8
            # significant bits; F16 would lose up to 2^-15 of the block's largest |x|), and -x
            # kept too; with k8 each x element serves one warp's 16 rows, so the split (block
            # exponent, two rounded terms, byte packing, negation: ~40 instructions a lane a
            # window) and converting and combining the integer sums (~16) take back most of
            # the ~80 the decode saves on BF16 (bench/RESULTS.md, fortieth session)
            h = {rr: [[r for pn in decode_a_i8(k, words[rr][j], f"d{rr}{j}_") for r in pn]
                      for j in range(4)] for rr in ("A", "B")}
        else:
            h = {rr: [spread(k, words[rr][j], f"d{rr}{j}_") for j in range(4)]
                 for rr in ("A", "B")}
        return sc, h

    def mma(self, D, a, b, first):
        """D (+)= a * b, m16n8k16 in x's type; first: from zero."""
        ty = "bf16" if self.xt == "bf16" else "f16"
        cin = "%fz, %fz, %fz, %fz" if first else ", ".join(D)
        self.k(f"mma.sync.aligned.m16n8k16.row.col.f32.{ty}.{ty}.f32 {{{', '.join(D)}}}, "
               f"{{{', '.join(a)}}}, {{{', '.join(b)}}}, {{{cin}}}")

    def scale_sums(self, sums, sc):
        """sums: the window's block sums, rows A and B, halves 0 and 1 (A0, A1, B0, B1), into
        the row accumulators times the block scales (MXFP4: one block, the halves added)."""
        k = self.k
        for rr, (h0, h1) in (("A", sums[0:2]), ("B", sums[2:4])):
            if self.nv:
                k(f"fma.rn.f32 %acc{rr}, {h0}, {sc[rr][0]}, %acc{rr}")
                k(f"fma.rn.f32 %acc{rr}, {h1}, {sc[rr][1]}, %acc{rr}")
            else:
                t0 = k.reg(".f32", "t_bs")
                k(f"add.f32 {t0}, {h0}, {h1}")
                k(f"fma.rn.f32 %acc{rr}, {t0}, {sc[rr][0]}, %acc{rr}")

    def compute_w2(self, c, words, sb, tail, xin=None):
        """compute_w with one x register set: lane g = 2t loads half 0 of x's chunk, g = 2t + 1
        half 1, into the same 8 registers (2 loads a window, not 4), and the mma run as two
        chains, one per half of A's chunk, on those same B registers. Chain h's column 2t + h is
        the lane's half-h block sum; its other column pairs A's half h with x's other half
        (never read)."""
        k = self.k
        X = [k.reg(".b32", f"xx{j}") for j in range(8)]
        if xin:
            xa = None   # x came through the ring (cpr)
        elif self._ptrs:
            xa = self._ptrs["x"]
        else:
            xa = k.reg(".b64", "xaddr")
            k(f"mad.wide.u32 %xaddr, {c}, 64, %xrowl")
        pl = "%p_xl"
        if tail:
            k.comment("tail: x lanes load only what exists (the zeros stay elsewhere)")
            self.zero(X)
            k("and.pred %p_lx0, %p_x0, %p_in")
            k("and.pred %p_lx1, %p_x1, %p_full")
            k("or.pred %p_lx0, %p_lx0, %p_lx1")
            pl = "%p_lx0"
        if not xin:
            self.ld(X[0:4], xa, "x", pl)
            self.ld(X[4:8], f"{xa}+16", "x", pl)
        if self.sdep:
            # NOTE: the first mma's x word waits for the scale bytes through an opaque zero (the
            # flags' bit 31, never set), so ptxas cannot sink the scale loads below the first
            # chain: it does for F16 x without this, and each window then waits out their DRAM
            # latency (H100: 10% slower). BF16 x with the split pairing (bfp = 0) keeps its
            # loads early without it; with consecutive pairs it needs it too (without spl).
            z, t = k.reg(".b32", "t_zdep"), k.reg(".b32", "t_sdep")
            k(f"and.b32 {z}, %a_flags, 0x80000000")
            k(f"lop3.b32 {t}, {sb['A'][-1]}, {sb['B'][-1]}, {z}, 0xA8")  # (a | b) & c: 0
            k(f"or.b32 {X[0]}, {X[0]}, {t}")
        sc, h = self.decode_w(words, sb)
        bf = self.xt == "bf16" and not self.bfp
        D = [[k.reg(".f32", f"d{hh}{j}") for j in range(4)] for hh in range(2)]
        for hh in range(2):
            for j in range(4):
                # A pairs 2j (k slots 2t, 2t + 1) and 2j + 1 (k slots 2t + 8, 2t + 9) of half hh
                a, b = [], []
                for q in (2 * j, 2 * j + 1):
                    w, i = 2 * hh + q // 4, q % 4
                    a += [h["A"][w][i], h["B"][w][i]]
                    if bf:
                        # pair (e, e + 4), e = 8 (q / 4) + q % 4 of the half; X holds (2m, 2m + 1)
                        e = 8 * (q // 4) + i
                        t = k.reg(".b32", f"t_xb{len(b)}")
                        sel = "0x7632" if e % 2 else "0x5410"
                        k(f"prmt.b32 {t}, {X[e // 2]}, {X[e // 2 + 2]}, {sel}")
                        b.append(t)
                    else:
                        b.append(X[q])
                self.mma(D[hh], a, b, j == 0)
        self.scale_sums([D[0][0], D[1][1], D[0][2], D[1][3]], sc)

    def loops_tc(self):
        k, U = self.k, self.TU
        for nm in ("c0", "cstep", "t_end"):
            k.reg(".b32", nm)
        for nm in ("p_stop", "p_in", "p_full", "p_half", "p_lx0", "p_lx1"):
            k.reg(".pred", nm)
        if self.x2:
            xz = [k.reg(".b32", f"xx{j}") for j in range(8)]
        else:
            xz = [k.reg(".b32", f"xp{j}") for j in range(8)] + [k.reg(".b32", f"xq{j}") for j in range(8)]
        k.comment("x registers: zeros on the lanes that never load x (kept across windows)")
        self.zero(xz)
        k.comment(f"---- windows wk, wk + WK, ...: chunks c0 .. c0 + 3 (one per lane t); {U} a trip,\n"
                  "A's loads for all of them first")
        k("shl.b32 %c0, %wk, 2")
        k("shl.b32 %cstep, 4, %a_wk_shift")
        if U > 1:
            k.label("TRIP_LOOP")
            k(f"mad.lo.u32 %t_end, %cstep, {U - 1}, %c0")
            k("add.u32 %t_end, %t_end, 4")
            k("setp.gt.u32 %p_stop, %t_end, %a_nfull")
            k("@%p_stop bra.uni TRIP_DONE")
            loaded = [self.load_a(u, False) for u in range(U)]
            if self.p.get("udep"):
                # experiment knob (GEMV_OPTS=u=N,udep=1): window 0's first A word depends on the
                # other windows' through an opaque zero (the flags' bit 31, never set), so ptxas
                # issues every window's A loads before the first decode. H200, 2026-11-27, u = 2:
                # NVFP4 x F16 at 64 registers, no spills (4 CTAs a SM as built), 2 KiB of A in
                # flight a warp: 2.6-7.3 points of the copy slower than u = 1 on all four shapes,
                # waiting and independent; the other kernels (70-80 registers) slower still
                z, t = k.reg(".b32", "t_udz"), k.reg(".b32", "t_udt")
                k(f"and.b32 {z}, %a_flags, 0x80000000")
                w0 = loaded[0][1]["A"][0]
                for u in range(1, U):
                    for rr in ("A", "B"):
                        k(f"and.b32 {t}, {loaded[u][1][rr][3]}, {z}")
                        k(f"or.b32 {w0}, {w0}, {t}")
            for u in range(U):
                self.compute_w(*loaded[u], False)
            k(f"mad.lo.u32 %c0, %cstep, {U}, %c0")
            k("bra.uni TRIP_LOOP")
            k.label("TRIP_DONE")
        if self.xrot:
            k.comment("xrot: J windows from window j, wrapping; %c0b the warp's window 0")
            c0b, n = k.reg(".b32", "c0b"), k.reg(".b32", "xr_n")
            k(f"mov.u32 {c0b}, %c0")
            k(f"mov.u32 {n}, %xr_J")
        if self.pinc:
            self.pinc_setup()
        copies = [""]
        if self.nv and U == 1 and not self.cpr:
            # NOTE: NVFP4 with FLAG_SPAIR takes a copy of the loop with one u16 scale load a row
            # instead of two byte loads (each a warp-wide request to 8 rows)
            copies = ["P", ""]
            t, p = k.reg(".b32", "t_sp"), k.reg(".pred", "p_spair")
            flag_test(k, FLAG_SPAIR, t, p, "eq")
            k(f"@{p} bra.uni WIN_LOOP")
        if self.cpr:
            self.cpr_loop()
            copies = []
        for cp in copies:
            if self.spl:
                self.spl_loop(cp)
                continue
            k.label(f"WIN_LOOP{cp}")
            if self.xrot:
                k(f"setp.eq.u32 %p_stop, %xr_n, 0")
                k(f"@%p_stop bra.uni WIN_DONE")
                k("mad.lo.u32 %c0, %xr_j, %cstep, %c0b")
                self.compute_w(*self.load_a(0, False, cp == "P"), False)
                k("add.u32 %xr_j, %xr_j, 1")
                k("setp.eq.u32 %p_stop, %xr_j, %xr_J")
                k("selp.u32 %xr_j, 0, %xr_j, %p_stop")
                k("sub.u32 %xr_n, %xr_n, 1")
                k(f"bra.uni WIN_LOOP{cp}")
                continue
            k("add.u32 %t_end, %c0, 4")
            k("setp.gt.u32 %p_stop, %t_end, %a_nfull")
            k(f"@%p_stop bra.uni WIN_DONE")
            self.compute_w(*self.load_a(0, False, cp == "P"), False)
            self.ahead_prefetch()
            k("add.u32 %c0, %c0, %cstep")
            if self.pinc:
                self.advance_ptrs(("A", "B", "sA", "sB", "x"))
            k(f"bra.uni WIN_LOOP{cp}")
        k.label("WIN_DONE")
        if self.cpr:
            # the ring's pointers run D windows ahead: the tail computes its addresses from c0
            self._ptrs = None
        if self.xrot:
            k("mad.lo.u32 %c0, %xr_J, %cstep, %c0b")
        k.comment("---- tail: the window that reaches past the last whole chunk, if any")
        k("setp.ge.u32 %p_stop, %c0, %a_nch")
        k("@%p_stop bra.uni TAIL_DONE")
        self.compute_w(*self.load_a(0, True), True)
        k.label("TAIL_DONE")

    # each pinc pointer's step a window (pinc_setup)
    PTR_STEP = {"A": "pi_da", "B": "pi_da", "sA": "pi_ds", "sB": "pi_ds", "x": "pi_dx"}

    def advance_ptrs(self, names):
        """The pinc pointers named in names one window on."""
        for nm in names:
            self.k(f"add.s64 {self._ptrs[nm]}, {self._ptrs[nm]}, %{self.PTR_STEP[nm]}")

    def spl_loop(self, cp):
        """spl: the window loop software-pipelined, unrolled twice over two register sets:
        window j + 1's scale and A loads go out before window j's x loads, decode and mma. The
        A and scale pointers run one window ahead of x's; every exit leaves all of them (and
        c0) at the first window not done, for the tail.
        NOTE: ptxas sinks loads towards their use to shorten live ranges, here into the
        previous window's mma, where their latency shows again. sfence ends the block after
        the next window's scale loads with a branch on a predicate that is never true (the
        flags' bit 31; taken, it would leave c0 on a window loaded but not computed and skip
        windows: src/gemv.c never sets that bit): the scale bytes (one DRAM request a row
        each) then stay at the top, A's loads still sink part way (SASS, thirty-eighth session:
        to about 25 instructions before their use; the ring twins, cpr, hold them in shared
        memory instead). Fencing A's loads too took 70-74 registers in three of the four
        kernels (3 CTAs a SM) and lost 2.5-17.7 points of the copy there; making the never-taken
        path read the scale bytes held them too, at -4.9 to +4.6 points (H200, 2026-11-27;
        bench/RESULTS.md, thirty-seventh session)."""
        k, sp = self.k, cp == "P"
        k.label(f"WIN_LOOP{cp}")
        k.comment("spl: two register sets; A and scale pointers one window ahead of x")
        k("add.u32 %t_end, %c0, 4")
        k("setp.gt.u32 %p_stop, %t_end, %a_nfull")
        k(f"@%p_stop bra.uni WIN_DONE")
        fen = None
        if self.sfence:
            t = k.reg(".b32", "t_never")
            k.reg(".pred", "p_never")
            k(f"and.b32 {t}, %a_flags, 0x80000000")
            k(f"setp.ne.u32 %p_never, {t}, 0")

            def fen():
                k("@%p_never bra.uni WIN_DONE")
        sets = [self.load_a(0, False, sp), None]
        self.advance_ptrs(("A", "B", "sA", "sB"))
        k.label(f"SPL_LOOP{cp}")
        for j in range(2):
            k.comment(f"spl: set {1 - j} <- window c0 + cstep (if whole), then window c0 from set {j}")
            k("add.u32 %t_end, %c0, %cstep")
            k("add.u32 %t_end, %t_end, 4")
            k("setp.gt.u32 %p_stop, %t_end, %a_nfull")
            k(f"@%p_stop bra.uni SPL_LAST{j}{cp}")
            sets[1 - j] = self.load_a(1, False, sp, fen, regs=1 - j)
            self.advance_ptrs(("A", "B", "sA", "sB"))
            self.compute_w(*sets[j], False)
            self.advance_ptrs(("x",))
            k("add.u32 %c0, %c0, %cstep")
        k(f"bra.uni SPL_LOOP{cp}")
        for j in range(2):
            k.label(f"SPL_LAST{j}{cp}")
            k.comment(f"spl: the last whole window, in set {j}")
            self.compute_w(*sets[j], False)
            self.advance_ptrs(("x",))
            k("add.u32 %c0, %c0, %cstep")
            k(f"bra.uni WIN_DONE")

    def out_scale(self):
        """%oscale = the decode's scaling undone (exact) times the per-tensor scales."""
        k = self.k
        k.reg(".f32", "oscale")
        # f16: spread_f16's values are A's times 2^-14, spread_e4m3's times 2^-6; bf16: exact
        one = "0f46800000" if self.f16d else "0f42800000"
        k(f"mov.f32 %oscale, {'0f3F800000' if self.xt == 'bf16' else one}")
        mul_globals(k, "%oscale", k.reg(".pred", "p_g"))

    def store(self, s, row, lab):
        """y[row] = s times %oscale, in y's type."""
        k = self.k
        k(f"mul.f32 {s}, {s}, %oscale")
        store_y(k, s, row, k.reg(".pred", "p_g"), lab, f"Y_END{lab}")

    def finish_tc(self):
        k = self.k
        k.comment("---- reduce: the 4 lanes of a quad hold parts of the same two rows")
        t = k.reg(".f32", "t_red")
        for acc in ("%accA", "%accB"):
            for o in (1, 2):
                k(f"shfl.sync.bfly.b32 {t}, {acc}, {o}, 0x1f, 0xffffffff")
                k(f"add.f32 {acc}, {acc}, {t}")
        self.out_scale()
        pl, pf = k.reg(".pred", "p_more"), k.reg(".pred", "p_fin")
        s, row = k.reg(".f32", "ysum"), k.reg(".b32", "yrow")
        k("setp.ne.u32 %p_more, %a_wk_shift, 0")
        k("@%p_more bra.uni RED_SMEM")
        k.comment("WK = 1: lane (g, 0) finishes rows A and B (0 + sum, as the shared-memory path)")
        k("setp.ne.u32 %p_fin, %t4, 0")
        k("@%p_fin bra DONE")
        for rr in ("A", "B"):
            k(f"@!%p_r{rr} bra DONE")
            k(f"add.f32 {s}, %acc{rr}, 0f00000000")
            k(f"mov.u32 {row}, %row{rr}")
            self.store(s, row, rr)
        k("bra DONE")
        k.label("RED_SMEM")
        k.comment("WK > 1: red[warp][16 rows], then thread i < rows per CTA sums row i's WK parts")
        sm, wa = k.reg(".b32", "smem"), k.reg(".b32", "t_wa")
        k("mov.u32 %smem, red")
        k(f"mad.lo.u32 {wa}, %warp, 64, {sm}")
        k(f"mad.lo.u32 {wa}, %g, 4, {wa}")
        k("setp.eq.u32 %p_fin, %t4, 0")
        k(f"@%p_fin st.shared.f32 [{wa}], %accA")
        k(f"@%p_fin st.shared.f32 [{wa}+32], %accB")
        k("bar.sync 0")
        k("setp.ge.u32 %p_fin, %thread, %rpc")
        k("@%p_fin bra DONE")
        rr_, wmf, ad, n = (k.reg(".b32", "t_r"), k.reg(".b32", "t_wm"), k.reg(".b32", "t_ad"),
                           k.reg(".b32", "t_n"))
        k.comment("thread i: wm = i / 16, r = i % 16, parts at warps (wm << wk_shift) + j")
        k(f"and.b32 {rr_}, %thread, 15")
        k(f"shr.u32 {wmf}, %thread, 4")
        k(f"shl.b32 {wmf}, {wmf}, %a_wk_shift")
        k(f"mad.lo.u32 {ad}, {wmf}, 64, {sm}")
        k(f"mad.lo.u32 {ad}, {rr_}, 4, {ad}")
        k(f"mov.f32 {s}, 0f00000000")
        k(f"shl.b32 {n}, 1, %a_wk_shift")
        sum_parts(k, s, t, ad, n, pl, 64)
        k(f"mad.lo.u32 {row}, %tile, %rpc, %thread")
        k(f"setp.ge.u32 {pl}, {row}, %a_m")
        k(f"@{pl} bra DONE")
        self.store(s, row, "S")
        k.label("DONE")

    def emit(self):
        k = self.k
        k.comment("---- arguments (one .param struct; layout in build/gen/gemv_args.h)")
        self.args()
        pdl_trigger_first(k)
        self.setup_tc()
        self.loops_tc()
        self.finish_tc()
        pdl_end_wait(k)
        k("ret")
        params = [f".param .align 8 .b8 args[{self.argsize}]"]
        directives = [f".maxntid {THREADS}, 1, 1"]
        # the ring twins: 4 CTAs a SM (64 registers; ptxas takes 62 without it, MXFP4 x F16 at
        # D = 3 70; no spills with it at TC_RING's depths); with cpb NVFP4 x F16 takes 64 alone
        # and spills 8 bytes with it
        minct = self.p.get("minct", 4 if self.cpr and not self.cpb else 0)
        if minct:
            # experiment knob (GEMV_OPTS=minct=N): .minnctapersm N, registers capped to fit.
            # N = 5 on the twins (48 registers, 5 CTAs a SM; ptxas spills 56 bytes, all outside
            # the window loop, which grows 184 -> 196 SASS lines a window, NVFP4 x BF16): H200,
            # 2026-11-27, two rounds, -1.5 to -11 points of the copy on every twin row, -12 to
            # -14 on (7168,16384,1) waiting; each warp's instruction stream, not the CTAs a SM,
            # bounds these kernels
            directives.append(f".minnctapersm {int(minct)}")
        hdr = header(GENERATOR, k.name, "gemv", THREADS, 0, self.p)
        text = k.render(hdr, self.target, params, directives)
        decl = f".shared .align 16 .b8 red[{4 * WARPS * 16}];\n\n"
        if self.cpr:
            decl += f".shared .align 16 .b8 cprbuf[{WARPS * self.cpr * CPR_SLOT}];\n\n"
        return text.replace(".visible .entry", decl + ".visible .entry", 1)


def emit(name, params, target):
    import os
    opts = os.environ.get("GEMV_OPTS", "")
    if opts:
        print(f"gen/gemv.py: GEMV_OPTS={opts} changes {name} ({target})", file=sys.stderr)   # experiment knobs over the variant's parameters, e.g. GEMV_OPTS=shift=mulhi (the
               # build never sets it: python3 gen/ptxq_gen.py emit ... with it, then PTXQ_KERNEL_DIR)
        kv = dict(item.split("=", 1) for item in opts.split(","))
        params = dict(params, **{key: int(v) if v.lstrip("-").isdigit() else v
                                 for key, v in kv.items()})
    if target == "sm_90a" and FORMATS[params["format"]]["elem"] == "e2m1":
        selftest_decode()
        if params["x"] == "same":
            selftest_dp4a()
        if params["x"] == "bf16" and params.get("tc"):
            selftest_bf16()
        if params["x"] == "f16" and params.get("tc"):
            selftest_f16()
    return (TC if params.get("tc") else GV)(name, params, target).emit()


# ---- a check of the sm_90a E2M1 decode: interpret the emitted instructions ------------------
def _prmt(a, b, sel):
    src = (b << 32) | a
    out = 0
    for i in range(4):
        n = (sel >> (4 * i)) & 15
        byte = (src >> (8 * (n & 7))) & 0xFF
        if n & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * i)
    return out


def _lop3(a, b, c, lut):
    out = 0
    for bit in range(32):
        idx = ((a >> bit) & 1) << 2 | ((b >> bit) & 1) << 1 | ((c >> bit) & 1)
        out |= ((lut >> idx) & 1) << bit
    return out


def _run(lines, regs):
    import re
    for line in lines:
        m = re.match(r"\s*(\S+)\s+(.*);$", line)
        if not m:
            continue
        op, ops = m.group(1), [o.strip() for o in m.group(2).split(",")]
        val = [regs[o[1:]] if o.startswith("%") else int(o, 0) for o in ops[1:]]
        dst = ops[0][1:]
        if op == "and.b32":
            regs[dst] = val[0] & val[1]
        elif op == "shr.b32":
            regs[dst] = val[0] >> val[1]
        elif op == "shl.b32":
            regs[dst] = (val[0] << val[1]) & 0xFFFFFFFF
        elif op == "prmt.b32":
            regs[dst] = _prmt(val[0], val[1], val[2])
        elif op == "xor.b32":
            regs[dst] = val[0] ^ val[1]
        elif op == "mul.hi.u32":
            regs[dst] = (val[0] * val[1]) >> 32
        elif op == "lop3.b32":
            regs[dst] = _lop3(val[0], val[1], val[2], val[3])
        elif op == "mul.rn.bf16x2":
            regs[dst] = _bf16x2_mul_exact(val[0], val[1])
        else:
            raise AssertionError(f"selftest: unexpected instruction {line!r}")


def _selftest_words(seed):
    """The decode selftests' words: 256 random ones, then every code at every nibble position
    amid random others."""
    import random
    rng = random.Random(seed)
    words = [rng.getrandbits(32) for _ in range(256)]
    for pos in range(8):
        for code in range(16):
            words.append((rng.getrandbits(32) & ~(15 << 4 * pos)) | code << 4 * pos)
    return words


def _bf16_value(h):
    """The value of a bf16 bit pattern (finite), subnormals included."""
    e, m = h >> 7 & 0xFF, h & 0x7F
    v = (m / 128) * 2.0 ** -126 if e == 0 else (1 + m / 128) * 2.0 ** (e - 127)
    return -v if h & 0x8000 else v


def _bf16_bits_exact(v):
    """The bf16 bit pattern of v, which must be exactly representable (normal, or zero)."""
    import struct
    b = struct.unpack("<I", struct.pack("<f", v))[0]
    if b & 0xFFFF:
        raise AssertionError(f"selftest: {v} is not a bf16")
    return b >> 16


def _bf16x2_mul_exact(a, b):
    """mul.rn.bf16x2 where every product is exact (the selftest's scalings by 2^126)."""
    return (_bf16_bits_exact(_bf16_value(a >> 16) * _bf16_value(b >> 16)) << 16
            | _bf16_bits_exact(_bf16_value(a & 0xFFFF) * _bf16_value(b & 0xFFFF)))


def _selftest_spread(name, spread, pairs, bits, consts, seed):
    """Runs spread (a word of 8 E2M1 codes -> 4 registers) on _selftest_words and checks that
    half h of register i holds bits[code & 7] (and the sign) of element pairs[i][h]. consts:
    the registers the decode reads besides w."""
    k = Kernel("selftest")
    w = k.reg(".b32", "w")
    out = spread(k, w, "st_")
    for word in _selftest_words(seed):
        regs = dict(consts, w=word)
        _run(k.lines, regs)
        for i, (e0, e1) in enumerate(pairs):
            got = regs[out[i][1:]]
            for half, e in ((0, e0), (1, e1)):
                code = (word >> 4 * e) & 15
                want = bits[code & 7] | (0x8000 if code & 8 else 0)
                if (got >> 16 * half) & 0xFFFF != want:
                    raise AssertionError(f"{name}: word {word:08x} element {e}")


def selftest_bf16():
    """spread_bf16 (consecutive pairs) and spread_bf16_split (pairs (i, i + 4)): every code at
    every nibble position, and random words, decode to the bf16 of its E2M1 value."""
    bits = [_bf16_bits_exact(v) for v in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)]
    for spread, pairs in ((spread_bf16, [(2 * i, 2 * i + 1) for i in range(4)]),
                          (spread_bf16_split, [(i, i + 4) for i in range(4)])):
        _selftest_spread(spread.__name__, spread, pairs, bits, {"bf2p126": 0x7E807E80}, 6)


def selftest_f16():
    """spread_f16: every code at every nibble position, and random words, decode to the f16 of
    its E2M1 value times 2^-14 (the subnormal code on f16's 2^-15), pairs (2i, 2i + 1)."""
    bits = [0x0000, 0x0200, 0x0400, 0x0600, 0x0800, 0x0A00, 0x0C00, 0x0E00]
    _selftest_spread("spread_f16", spread_f16, [(2 * i, 2 * i + 1) for i in range(4)], bits, {},
                     6)


def selftest_decode():
    """Every code at every nibble position decodes to the f16 of its E2M1 value."""
    bits = [0x0000, 0x3800, 0x3C00, 0x3E00, 0x4000, 0x4200, 0x4400, 0x4600]
    _selftest_spread("E2M1 decode", lambda k, w, tag: decode_fp4(k, "sm_90a", w, tag),
                     fp4_pairs("sm_90a"), bits, {"lut0": LUT_LO, "lut1": LUT_HI}, 4)


def selftest_dp4a():
    """The sm_90a FP4 x FP4 int8 decodes: for every code pair at every position, and random
    words, sum over the lanes of dp4a(P, x) - dp4a(N, x) is 4 * the dot product of the values."""
    import random
    k = Kernel("selftest")
    wa, wx = k.reg(".b32", "wa"), k.reg(".b32", "wx")
    xo = decode_x_i8(k, wx, "sx_")
    for shift in ("shr", "mulhi"):
        ka = Kernel("selftest_a")
        ao = decode_a_i8(ka, "%wa", "sa_", shift)
        val = (0, 1, 2, 3, 4, 6, 8, 12)

        def s8(b):
            return b - 256 if b & 0x80 else b

        rng = random.Random(5)
        cases = [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(256)]
        for pos in range(8):
            for ca in range(16):
                for cx in range(16):
                    cases.append((ca << 4 * pos, cx << 4 * pos | rng.getrandbits(32) & ~(15 << 4 * pos)))
        for a, x in cases:
            regs = {"wa": a, "wx": x, "i8lo": I8_LO, "i8hi": I8_HI, "neglo": NEG_LO,
                    "neghi": NEG_HI}
            _run(k.lines, regs)
            _run(ka.lines, regs)
            got = 0
            for h in range(2):
                xb = regs[xo[h][1:]]
                pa, na = (regs[r[1:]] for r in ao[h])
                for i in range(4):
                    xi = s8(xb >> 8 * i & 0xFF)
                    got += (s8(pa >> 8 * i & 0xFF) - s8(na >> 8 * i & 0xFF)) * xi
            want = 0
            for e in range(8):
                ca, cx = a >> 4 * e & 15, x >> 4 * e & 15
                want += (-1) ** (ca >> 3) * val[ca & 7] * (-1) ** (cx >> 3) * val[cx & 7]
            if got != want:
                raise AssertionError(f"E2M1 int8 decode: a {a:08x} x {x:08x}: {got} != {want}")


def c_header():
    """The C mirror of the argument block (build/gen/gemv_args.h)."""
    layout, size = arg_layout()
    ctype = {"u64": "uint64_t", "u32": "uint32_t"}
    out = ["/* Generated by gen/gemv.py: the .param block of every gemv kernel. */",
           "#ifndef PTXQ_GEMV_ARGS_H", "#define PTXQ_GEMV_ARGS_H", "#include <stddef.h>",
           "#include <stdint.h>", "", "typedef struct ptxq_gemv_args {"]
    out += [f"    {ctype[typ]} {name};" for name, (typ, _) in layout.items()]
    out += ["} ptxq_gemv_args;", ""]
    out += [f'_Static_assert(offsetof(ptxq_gemv_args, {name}) == {off}, "gemv arg {name}");'
            for name, (_, off) in layout.items()]
    out.append(f'_Static_assert(sizeof(ptxq_gemv_args) == {size}, "gemv args size");')
    defs = {"THREADS": THREADS, "WARPS": WARPS, "Y_F32": Y_F32, "Y_F16": Y_F16,
            "Y_BF16": Y_BF16, "FLAG_SF128x4": FLAG_SF128x4, "FLAG_GA": FLAG_GA,
            "FLAG_GX": FLAG_GX, "FLAG_EARLY": FLAG_EARLY, "FLAG_SPAIR": FLAG_SPAIR,
            "FLAG_NOWAIT": FLAG_NOWAIT, "FLAG_NOSPF": FLAG_NOSPF, "FLAG_RI32": FLAG_RI32,
            "FLAG_SVEC": FLAG_SVEC}
    out += [f"#define PTXQ_GEMV_{key} {val}" for key, val in defs.items()]
    out.append("#endif")
    return "\n".join(out) + "\n"
