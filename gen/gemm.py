"""FP8 and BF16 GEMM on sm_90a: D = alpha * (scales . (A . B^T)) + beta * C + bias, A [M, K] and
B [N, K] E4M3 or E5M2, or both BF16 (K-major), D [M, N] BF16, F16 or F32 row-major;
strided-batched and grouped (MoE).

Scaling modes (one kernel per mode and tile width):
  tensor  D = sa * sb * sum_k A B                    (two f32 device scalars)
  row     D[m, n] = sa[m] * sb[n] * sum_k A B        (f32 per row of A and per row of B)
  block   D[m, n] = sum_kb sa[m, kb] * sb[n/128, kb] * sum_{k in kb} A B
          (DeepSeek-V3 / DeepGEMM: A per 1x128, B per 128x128; any strides)
  mx      D[m, n] = sum_j sa[m, j] * sb[n, j] * sum_{k in 32j..32j+31} A B   (OCP MXFP8: UE8M0
          scales per 32 of K for both operands, bytes, contiguous along K)

MXFP8 on sm_90a: there is no block-scaled MMA, and a scale product that changes with both m and n
every 32 of K cannot be folded into the operands. Two paths are built, and src/gemm.c picks by a
cost model fitted to measurements (mx_prefers_dequant; desc.mx_path forces one):
  promote     (mode "mx" here) each k32 wgmma goes into a fresh partial that is promoted at once:
              acc += part * (sa[m, j] * sb[n, j]), one FMUL and one FFMA per element per k32 (8x
              BLOCK's promotion work). CUDA-core bound: 339 TFLOPS at 4096 x 7168 x 16384 (H100).
  dequantize  gemm_mx_dequant (below) decodes A and B to BF16 in the caller's workspace (exact:
              E4M3 x 2^e fits BF16), then the BF16 GEMM (a_type bf16: direct_kblock) runs at the
              BF16 MMA rate: 723 TFLOPS on the same shape, decode passes included (2.1x; 620
              before the decoder's whole-sector stores, forty-third session). It costs 3 bytes of
              traffic per operand element, so below a few hundred rows of M (N = 7168, K 16384:
              between 256 and 384) the promote path is faster and AUTO keeps it.
Decoding inside the GEMM's own loop instead (FP8 smem -> BF16 registers for wgmma's A, B still
from smem) would need B in BF16 in shared memory, i.e. a decode pass over every B tile per CTA:
not built.
B's scales (one byte per column per k32) are decoded once per K block through shared memory: thread c of a warpgroup loads
the 4-byte word of column n0 + c (the K block's 4 scales; one load, bounds-checked once) and
writes them as 4 floats; each thread then reads its 32 columns' floats per k32 step (16 v2
loads instead of 96 decode instructions: 312-321 -> 324-336 TFLOPS on an H100, and the next
k32 wgmma issued before the promotion: 355). K must be a multiple of 128.

BF16 x BF16 (a_type = b_type = "bf16", per-tensor mode; NULL scale pointers are 1.0): the same ring
and 128-byte K blocks (64 of K: 4 x m64nBNk16, the same descriptors as FP8's 4 x k32), but the
tensor core's FP32 accumulation needs no promotion, so every K block chains straight into the
accumulator and the wait for block kb-1 comes after block kb is issued (direct_kblock). 813
TFLOPS at 8192^3 on an H100 (82% of the 989 dense peak; cuBLASLt 842 in the same run).

CTA = 3 warpgroups (384 threads), warp-specialised, persistent over output tiles:
  WG0      producer: setmaxnreg.dec 40; one thread streams A and B tiles with TMA
           (128B swizzle, box 128 K-bytes) into a ring of `stages` slots guarded by full/empty
           mbarriers (gen/sm90.py Ring). BLOCK with the plain consumer: each K block's scales
           come into the slot too, so the consumers read them from shared memory after the same
           full wait: by TMA from the same thread ("_sm" kernels, scale_tma; layouts TMA can read:
           rows or K innermost, 16-byte pitches) or, for any other strides, by warp 1 of the
           producer warpgroup (cp.async; scale_producer). Measured (H100, 4096 x 7168 x 16384,
           ncu at locked clock): the two take the same cycles (1.144-1.154 M against 1.145-1.148
           M; 1294 against 1280 TFLOPS in one process). Timing-only variants of the "_sm"
           kernel show where BLOCK's ~12% over per-tensor goes: the promotion as FADD (scale
           loads and products kept) 1.031 M, FFMA by an immediate 1.019-1.034 M, FFMA by
           products loaded once per tile 1.174 M, as built 1.15 M; the products forced after
           the chain's wait change nothing (1.16 M). So it is the FFMA reading its scale from a
           register: ptxas sets operand reuse on every other FFMA, never two in a row, so the
           promotion reads ~243 registers a K block instead of 192 (bench/RESULTS.md, ninth
           session). The A scale differs per row, so no uniform-register or immediate form.
  WG1, 2   consumers: setmaxnreg.inc 232; each owns 64 rows of the 128 x BN tile and issues
           4 x wgmma m64nBNk32 per 128-K block into a partial accumulator (scale-d 0 on the first),
           waits, frees the slot, then promotes: acc += partial (block mode: acc += s * partial).
           The QGMMA accumulator keeps only ~14 significant bits per k32 step (NOTES.md section 7),
           so each 128-K chain is short and the long sum runs in FP32 on the CUDA cores.
           A warpgroup whose 64 rows all lie past the tile's row limit (M <= 64, the last M tile,
           small groups) issues no wgmma: it waits for each slot's full barrier and frees it
           (idle_kloop), leaving the tensor core and the issue slots to the other warpgroup.
           Measured on the DeepSeek-V3 block-scaled shapes at M = 64 (bench/RESULTS.md, twentieth
           session): H200 10-14% faster on three ((64, 2112, 7168) 0.023 -> 0.020 ms), 2-4% on
           (64, 7168, 16384); H100 7% and 12-19% on (64, 4096, 7168) and (64, 7168, 2048); the
           K loop's SASS of every kernel is as before.
Launch: the ring barriers are initialised one per warp, then each role waits for the preceding
kernel (griddepcontrol.wait, a no-op without a programmatic launch) right after its setmaxnreg,
before any global access, and signals its dependents (pdl_wait); the tile coordinates divide by
multipliers the runtime passes (fdiv). Timeline stamps (H100, 2026-11-26, branch
exp/gemm-stamps) had shown the producer's first TMA ~1.1 us after a CTA's entry: ~0.3 us of
barrier inits by one thread, ~0.45 us of coordinate divisions; 20 calls back to back on the
small-M DeepSeek-V3 shapes took 0.3-0.9 us less each after the change, and the consumers' tile
starts block-scaled 4096 x 7168 x 16384 2.4% fewer cycles (bench/RESULTS.md, twenty-seventh
session). src/gemm.c launches with PDL unless PTXQ_GEMM_NO_PDL. Measured on an H100 (2026-11-26, same
process, bench gemm --alt pdl=0): single calls (one launch between two events) within -3% to +4%
on the 18 DeepSeek-V3 shapes and 8192^3, as they should be (nothing precedes them); 20 calls back
to back (bench gemm --batch 20) 1.3-1.5 us a call faster on the small-M shapes without split-K
(64 x 24576 x 1536 18.5 against 19.8 us, 64 x 7168 x 2048 9.6 against 11.1), unchanged where the
split-K counters' memset sits between the calls (its plain launch ends the overlap), within the
clock's drift at M = 4096. Our CTA holds all of an SM's registers, so the next GEMM's CTAs get an
SM only as ours exit. What it gives a PDL kernel behind a GEMM (the GEMVs are): not measured.
With PTXQ_GEMM_COUNTERS_ZEROED (no memset: split_k_reduce leaves the counters at zero) the split-K
rows keep PDL too: 20 back to back, 64 x 2112 x 7168 (7 splits) 17.2-17.4 -> 14.9 us a call,
64 x 4096 x 7168 (4) 21.5-21.9 -> 19.2-19.3, 128 x 2112 x 7168 (7) 20.2 -> 17.5, the 2-split rows
1.8-2.9 us less (H100, 2026-11-26, bench gemm --batch 20 --counters zeroed); the H200 alike
except 64 x 7168 x 16384 (2 splits, 112 CTAs): 48-50 -> 53 us with PDL, 47-48 with plain launches.
Tiles are visited in grouped order: `group` M-tiles share an N sweep, so a wave of CTAs reuses
the same A rows and B rows from L2. Work units: tiles, or (split-K) K ranges of tiles; with a
tail split (args.full > 0) the first `full` units are whole tiles and only the last wave's tiles
are cut into `splits` ranges (src/gemm.c pick_tail_split). M/N tails: TMA zero-fills rows past M/N and K past K; the
epilogue masks stores. Stores: bf16x2 pairs straight from the accumulator fragment.

Batches and groups: tiles are numbered batch by batch (tiles_b per batch); A, B are 3-D tensor
maps {K, rows, batch}. A tile's A/D batch is its batch; B's batch coordinate is batch * b_batched
(0: one B shared by all batches) or, for contiguous grouping, the group of the tile's first row
(rows[m0], an I32 per row of A, DeepGEMM's m_indices; < 0 skips the tile). Masked grouping reads
the valid rows of each batch (rows[batch]) and skips tiles past them. Both sides (producer and
consumers) make the same per-tile decision from the same read-only data.

TMA-store variants (suffix _ts; tile_n 128 and 192, TENSOR / ROW also 160, BF16 also 256; each mode's
default pipeline): the epilogue
writes the tile as BF16 into a staging buffer in shared memory (per consumer warpgroup 64 rows x
BN, in slabs of 64 columns = 128 bytes a row, 128B-swizzled so the stores are conflict-free; at
160, slabs of 32 columns, 64B-swizzled) and
one thread issues cp.async.bulk.tensor stores; the warpgroup goes on to the next tile while the
copy engine writes D. Direct stores put 16-byte pieces of 8 rows in each warp instruction (8 L2
requests a 512-byte instruction); the bulk store writes whole 128-byte lines. The runtime picks them
for plain BF16 D (no C, bias or groups; 16-byte aligned rows, N a multiple of 8), where TMA's own
clipping at M and N is the only masking needed (a TMA store clips at N only to the 16-byte chunk:
with N * 2 bytes not a multiple of 16 it wrote zeros into the rows' padding, src/gemm.c). They cost one ring stage (BN 128: 6 stages, 160: 5, 192: 4).
Their "_tsg" twins (suffix _tsg; every "_ts" kernel but the "_m192" ones) take BF16 or F16 D with
a bias and groups: the bias is added while staging, and a consumer warpgroup whose 64 rows are not
all the tile's (masked rows past the batch's count, contiguous padding or another group's rows)
writes the rows it owns from the staging buffer with 16-byte stores (store_rows) instead of the
bulk store. Grouped block-scaled MoE GEMMs on an H100 (bench gemm --moe, 2026-11-28): contiguous
1224-1314 TFLOPS against 574-887 with the register stores; masked (decode), where the tiles walk
the groups' valid rows only (masked_walk), 682-1229 against 515-834 (bench/RESULTS.md,
forty-fifth session). The code is in twins, not in the "_ts" kernels, because it moved their K
loop (see epilogue_tma).

Epilogue: flags (ptxq_gemm_args.flags, set by src/gemm.c) select the output type (bits 0-1: bf16,
f16, f32), the bias (bits 2-3: none, bf16, f32), C (bit 4), the grouping (bits 5-6: none, masked,
contiguous) and bit 7 "general": when clear (plain BF16 D, no C or bias, no row map) the fast
pair-store path of before runs; when set, a per-element path loads C and bias and stores any type.
alpha folds into the per-tensor / row scales (block: one multiply per element); alpha = 1 is exact.

Operand types: e4m3 x e4m3 gets every variant; the other three pairs (e4m3/e5m2 mixes, e5m2 x
e5m2: wgmma takes any of them) get each tile width and cluster with that mode's default pipeline
only (default_pipe, the same rule as src/gemm.c's pick), and the TMA-store variants as e4m3 x e4m3
has them (since the thirty-second session; not the three-warpgroup "_m192" ones).

Variants: tile_n 128 / 160 / 192 (wave quantisation: the runtime picks), and cluster 1 / 2. With
cluster 2 (.reqnctapercluster 2), a CTA pair along M shares the B tile: each CTA loads half of it
with a multicast TMA into both CTAs' rings; an empty barrier then counts the consumer warps of
both CTAs (remote arrivals through mapa), and the CTAs meet at a cluster barrier after init and
before exit, so no CTA leaves while its peer may still signal it.

Pipelined variants (PIPES, suffix p2 / h2; the runtime picks per mode and width, src/gemm.c):
the consumer issues the next wgmma group before waiting (wait_group 1) and promotes the previous
one while it runs, so the tensor-core queue never drains inside a tile (consumer_pipe). p2: two
partial sets alternate by K block (BN 128: 3 x 64 accumulator registers). h2: each 128-K chain is
two m64n{BN/2} half chains, one half always queued. Measured on an H200 (same run): TENSOR 8192^3
n192_c2 1186-1277 -> n192h2_c2 1320-1332 TFLOPS; BLOCK 4096x7168x16384 n160 1035-1083 ->
n128p2 1102-1111; ROW did not gain (h2 1208-1294 vs 1268-1351).

Measured on an H200 (8192^3 per tensor), before the pipelined variants: 1255-1290 TFLOPS, about 0.87x cuBLASLt's 1430-1480; the
cluster variant moved it by 0-3% (so L2 traffic is not what limits it), ordering the two consumer
warpgroups' issue with named barriers by 0%. What remains is structural: each warpgroup waits for
its 128-K wgmma chain before promoting (FP32 adds on the CUDA cores), so its tensor-core queue
drains once per K block, and the epilogue is not overlapped with the next tile's MMAs.

Where the cycles go (H100, 8192^3 per-tensor, ncu at its locked clock, timing-only PTX variants
loaded through PTXQ_KERNEL_DIR): one warpgroup's 128-K chain alone keeps the tensor core ~58% busy
(the two warpgroups made to take turns: 1.82 M cycles against 1.19 M), so the SM needs both chains
in flight at once. Promoting 8 of the 96 partials instead of all took 1.19 M -> 1.14 M cycles
(about 38 of the ~100 cycles per K block above 768 of MMA). Issuing the two warpgroups' chains in
a fixed order (named barrier) took 1.21 M; issuing the next tile's first chain before the
epilogue changed nothing measurable. The early wait (next_slot_early) took 1.5%. cuBLASLt's
kernel (ncu source view) has the same loop: full-barrier wait, wait for the previous chain,
promote 72 partials, issue 4 x m64n144k32; its block-scaled kernel orders the two warpgroups'
issue with a named barrier.

Where a tile's cycles go beyond its MMAs (H100, per-tensor n192_ts_c2, ncu at locked clock, fitted
over K = 512 / 2048 / 8192 and 11 / 21 / 42 tiles per SM, 2026-11-26): ~14 k cycles per kernel,
~2.2 k per tile, ~13 per 128-K block above its 768. Of the 2.2 k the epilogue is ~1.1 k (a
timing-only kernel without it: 1.14 k; 8192^3 1.117 -> 1.081 M), and not through D's traffic (its
TMA stores alone switched off: 1.117 M) nor the BF16 conversion (no change without it); the
per-tensor FMUL ~0.4 k. Hiding it measured nothing or worse: the next unit's first chain issued
before the epilogue 1.116-1.120 M at 8192^3 and +1.6% at K = 2048; the two warpgroups' epilogues
aligned by a named barrier +0.8% / +4.5% (with that first chain 0% / +4%); the scale folded into
the promotion (FFMA, no FMUL in the epilogue) +6%. Each was correct (test_gemm) and none is built.
What the issue path between two chains must not hold (2026-11-26, read from DeepGEMM's SASS and
measured, RESULTS.md): the wgmma descriptors come from uniform registers (the warpgroup index is
taken from lane 0 so ptxas can prove it warp-uniform; computed in vector registers they needed 4
R2UR per wgmma between a chain's issues), and BLOCK's scale loads for K block kb+1 are issued
while chain kb runs. Per-tensor 8192^3 now takes 1.112-1.117 M cycles (cuBLASLt 1.118 M),
block-scaled 4096x7168x16384 1.054 M (DeepGEMM's kernel 1.014 M).
"""

import contextlib
from ptx import Kernel, header, struct_layout, load_arg
import sm90

GENERATOR = "gen/gemm.py"
TARGETS = ("sm_90a",)
THREADS = 384
BM = 128
BK = 128                       # one TMA box of 128 K-bytes per operand and stage
SMEM_LIMIT = 232448            # sm_90 opt-in maximum per CTA
PRODUCER_REGS = 40             # setmaxnreg split of the 64K registers: 128 x 40 + 256 x 232
CONSUMER_REGS = 232
# NOTE: with 232 registers ptxas kept the K-loop state of the narrower single-CTA FP8 consumers
# (n128 / n160, plain consumer) in vector registers: each K block's descriptors by IMAD.WIDE
# and 4 R2UR before the chain. Capped at 192 it moves them to the uniform datapath (UIMAD), as
# in the n192 and cluster kernels, without spills (consumer_regs). H100, ncu at locked clock
# (2026-11-26): block 4096x7168x16384 n160_sm 1.243-1.246 -> 1.188-1.217 M cycles, per-tensor 8192^3
# n160 1.379-1.383 -> 1.335-1.340 M, row n128_ts 1.261 -> 1.151-1.153 M, row n160 unchanged; H200
# 3-9% fewer on all four
CONSUMER_REGS_NARROW = 192
CONSUMER_REGS_M192 = 152       # three consumer warpgroups: 128 x 40 + 384 x 152 <= 64K
MODES = ("tensor", "row", "block")
MX_WIDTHS = (128,)             # mx: acc + one partial + 32 scale words fit at 128 columns
MX_SCALE_BYTES = 2 * 2 * 4 * 128 * 4  # 2 warpgroups x 2 K-block parities x 4 k32 x 128 f32
AB_TYPES = (("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3"), ("e5m2", "e5m2"))
BF16 = ("bf16", "bf16")        # BF16 x BF16: per-tensor mode only, the direct consumer (no promotion)
TILE_N = (128, 160, 192)       # 160: 7168 = 44.8 tiles, fewer idle SMs in the last wave
BF16_TILE_N = TILE_N + (256,)  # no partial accumulator: 128 f32 registers hold a 64 x 256 tile
CLUSTERS = (1, 2)              # 2: a CTA pair along M shares each B tile (TMA multicast)
# pipelined consumers (no tensor-core drain per K block): (pipe, tile widths)
#   p2  two partial accumulator sets alternate by K block: block kb+1's chain is in flight while
#       block kb is promoted (wait_group 1). 3 x BN/2 f32 registers: BN = 128 only.
#   h2  the 128-K chain is split in two column halves (m64n{BN/2}); the next half-chain is issued
#       before the previous one is promoted, so one half is always queued. Same registers as now.
PIPES = (("p2", (128,)), ("h2", (128, 160, 192)))
# NOTE: block n192 h2 once spilled 24 B (two scale sets); it no longer does, but it is slow: with
# the TMA-store epilogue 1.33-1.37 M cycles against the _sm kernel's 1.05-1.07 M (H100, ncu at
# locked clock, 4096x7168x16384, 2026-11-26), 1062-1103 TFLOPS against 1366-1369 at boost
PIPE_SKIP = {("block", 192, "h2")}
# M192_NOTE: three consumer warpgroups (cw = 3, suffix "_m192"): a 192 x 128 tile, each warpgroup
# 64 x 128 with its own partial. With two, a warpgroup's promotion (its FFMAs / FADDs after the
# chain's wait) must fit inside the other's chain or the tensor core idles; a microbenchmark of
# the K loop alone (wgmma from shared memory, promotion each 128 of K, H100, 2026-11-26) ran two
# warpgroups at 86-89% of the tensor peak for m64n128..n192 and three at 100% (two chains cover
# one promotion). Registers: 128 x 40 + 384 x 152 (CONSUMER_REGS_M192), no spills at n128.
# Built for E4M3 x E4M3 with the TMA store (BLOCK: scales by TMA), no split-K (src/gemm.c).
# NOTE: fed by TMA the gain did not carry over: H100, ncu at locked clock, active cycles -1%
# (per-tensor 8192^3 c1 1.073-1.083 M against 1.087-1.090 M; block-scaled 4096x7168x16384 c1
# 0.986-0.997 against 1.003-1.006), elapsed worse by the wave tail; at boost 4-5% ahead only on
# small-K block-scaled rows (4096/8192 x 7168 x 2048, 4096 x 32768 x 512), where src/gemm.c
# pick_m192 takes them (bench/RESULTS.md, thirtieth session); elsewhere desc.tile_m = 192 asks.
# NOTE: split_k_reduce generalised to 128 * cw threads and built into them (so that they take the
# tail split) moved ptxas's K loop (146 -> 140 SASS instructions, block): 4096 x 7168 x 16384
# active 0.986-0.997 -> 1.054-1.076 M cycles, and the small-K rows' lead was gone; not built.
# NOTE: the microbenchmark's two-warpgroup ceiling above (86-89%) is the warpgroups falling into
# lockstep (both chains queued together, both promoting while the tensor core idles): issued in turn
# through named barriers, or staggered once, two warpgroups reach 99-100% there. In these kernels
# (H100, ncu at locked clock, 2026-11-27) chains issued in turn measured per-tensor n192 c2 -0.4%
# active cycles (elapsed +0.3%), row +1%, BLOCK n192_sm +4% (staggered once a tile: +4% too), the
# m192 kernels -2 to -3% on long K but no faster at boost on the rows src/gemm.c gives them: not
# built. Fed by TMA both warpgroups wait on the same slot, and a stagger holds each slot longer.
# NOTE: walking K downwards on every second tile of a CTA (the producer's K coordinates only; the
# next wave then starts on the A blocks the last one read most recently) cut per-tensor 8192^3's
# DRAM reads from 685 to 534 MB at equal cycles (H100, ncu, 2026-11-27); at boost it clocked ~1%
# higher and did ~1% less a clock: 1485-1497 TFLOPS against 1486-1503 as built. Not built.
M192_MODES = ("tensor", "row", "block")
TS_WIDTHS = (128, 192)         # TMA-store epilogue variants: whole 64-column slabs (128B swizzle)
# TS160_MODES: TENSOR / ROW also at 160, staged in 32-column slabs (64-byte rows, 64B swizzle: the
# D map's box is 32 x 64 there, src/gemm.c). 160 divides 7168 into 44.8 tiles (192: 37.3), and
# with direct stores n160 ran 1-6% ahead of n192 on N = 7168 / 14336 shapes (H100, 2026-11-27,
# bench/RESULTS.md thirty-third session). Not BLOCK: its n160 K loop runs 11-18% more cycles than
# n192's (ncu, same session), and not MX (one width).
TS160_MODES = ("tensor", "row")

SC_PROD = BM * 8               # per staged slot: sa*sb of 128 rows x 2 B-scale blocks (f32 pairs)
SC_SLOT = SC_PROD + BM * 4 + 16  # then the raw sa of the 128 rows and sb of 2 blocks
# BLOCK scales by TMA ("_sm" kernels): per stage one box of A's scales (the tile's rows x 1 K block
# M-major, or x 4 K blocks K-major: sm_sa(), 2048 B at 128 rows) and one of B's (2 B-scale blocks
# x 4 K blocks K-major, or 8 blocks x 1 K block N-major: 32 B), each 128-byte aligned in the slot
# (a slot: sm_sa() + 128 bytes).
# NOTE: a TMA box must start on a 16-byte boundary in global memory (an unaligned start is an
# illegal instruction, seen on an H100): K-major boxes start at K block kb & ~3 and N-major B boxes
# at block nb0 & ~3, and the consumer picks its element inside (block_scale_setup)
# scmode bits (ptxq_gemm_args.scmode, the "_sm" kernels): how the scale maps are laid out
SC_A_KMAJOR, SC_B_NMAJOR, SC_A_BATCH, SC_B_BATCH = 1, 2, 4, 8
CS_UNITS = 2                   # cluster_split_reduce: units of two pairs summed per trip
# NOTE: the cluster sum is built into the single-CTA kernels of this width only (the runtime's
# pick for split-K, few tiles). In the others its code moved ptxas's K-loop schedule: block
# n192_ts_sm 4096x7168x16384 1.036-1.043 -> 1.056-1.076 M cycles (H100, ncu at its locked clock,
# 2026-11-26); those run split-K through the workspace.
CS_TILE_N = 128
# masked_walk's cursors: a (first tile, batch) pair of u32 for each of the producer, the scale warp
# and the consumers, after everything else in shared memory (geometry), in the kernels that take groups
CURSOR_BYTES = 32
assert 3 * 8 <= CURSOR_BYTES

# byte strides: ldd, ldc (rows), *_bs (batches); element strides: sam, sak, sbn, sbk (scales)
ARGS = [
    ("u64", "d"), ("u64", "sa"), ("u64", "sb"), ("u64", "ldd"),
    ("u64", "sam"), ("u64", "sak"), ("u64", "sbn"), ("u64", "sbk"),
    ("u64", "c"), ("u64", "ldc"), ("u64", "bias"), ("u64", "rows"),
    ("u64", "d_bs"), ("u64", "c_bs"), ("u64", "sa_bs"), ("u64", "sb_bs"),
    ("u64", "bias_bs"), ("u64", "ws"), ("u64", "cnt"),
    ("u32", "m"), ("u32", "n"), ("u32", "nkb"), ("u32", "tiles_m"),
    ("u32", "tiles_n"), ("u32", "group"), ("u32", "ntiles"), ("u32", "nbn"),
    ("u32", "tiles_b"), ("u32", "b_batched"), ("u32", "flags"), ("u32", "alpha"),
    ("u32", "beta"), ("u32", "splits"), ("u32", "kb_split"), ("u32", "full"), ("u32", "scmode"),
    ("u32", "dv_per"), ("u32", "sh_per"), ("u32", "dv_grp"), ("u32", "sh_grp"),
    ("u32", "dv_last"), ("u32", "sh_last"), ("u32", "dv_spl"), ("u32", "sh_spl"),
    ("u32", "dv_tb"), ("u32", "sh_tb"), ("u32", "csplit"), ("u32", "batches"),
]
# dv_X / sh_X: multiplier and shift that divide by X (per = group * tiles_n, grp = group, last = the
# last M group's size, spl = splits, tb = tiles_b) without a division instruction (fdiv)
# batches: A's batches (masked groups: G; masked_walk), loaded only by kernels that take groups
# csplit = 1: split-K in clusters of `splits` CTAs, one unit each, summed through distributed
# shared memory (cluster_split_reduce) instead of the workspace
# flags
OUT_BF16, OUT_F16, OUT_F32 = 0, 1, 2
BIAS_SHIFT, C_BIT, GROUP_SHIFT, GENERAL_BIT, MAPS3D_BIT = 2, 1 << 4, 5, 1 << 7, 1 << 8
GROUP_MASKED, GROUP_CONTIG = 1, 2


def arg_offsets():
    return struct_layout(ARGS)


def staging_bytes(bn, ts, cw=2):
    """TMA-store staging: cw consumer warpgroups x 64 rows x BN BF16 (0 without TMA store)"""
    return cw * 64 * bn * 2 if ts else 0


def sm_sa(cw=2):
    """sm kernels: bytes of a stage's A-scale box, 64 * cw rows x 4 K blocks of f32 (K-major; the
    M-major box, 64 * cw rows x 1 K block, is a quarter of it)"""
    return 16 * 64 * cw


def staged_scales(mode, pipe):
    """BLOCK with the plain consumer: a producer warp stages each K block's scales in shared
    memory (scale_producer); the pipelined consumers load them from global one chain ahead."""
    return mode == "block" and not pipe


# NOTE: ring depth (H100, per-tensor 8192^3 n192_ts_c2, ncu at locked clock, 2026-11-27): 3 stages
# 1.207-1.215 M active cycles, 4 (built) 1.088, 5 (the TMA-store staging cut to one 64-column slab a
# warpgroup, stored slab by slab: 1.094 at 4 stages) 1.090-1.092; BLOCK 3 stages +7%. Four 40 KiB
# stages already cover the operands' arrival; a fifth is not worth the slab-by-slab store.
def geometry(bn, ts=False, mx=False, sc=False, sm=False, cw=2, cursors=False):
    """(stage bytes, stages, dynamic shared memory). Layout: stages x stage, the TMA-store staging,
    (sm) a slot of TMA-loaded scales per stage (sm_sa(cw) + 128 bytes), full/empty barriers and the split-K flag, then
    (sc without sm) a SC_SLOT of staged scales per stage, then (mx) the MX scale buffers, then
    (cursors: kernels that take groups) the masked walk's cursors, CURSOR_BYTES."""
    stage = 64 * cw * BK + bn * BK
    stg = staging_bytes(bn, ts, cw)
    slot = sm_sa(cw) + 128 if sm else SC_SLOT if sc else 0
    stages = min(8, (SMEM_LIMIT - 1024 - 256 - stg - (MX_SCALE_BYTES if mx else 0))
                 // (stage + slot))
    smem = 1024 + stages * stage + stg + 16 * stages + 16 + slot * stages  # + the split-K flag
    if mx:
        smem += MX_SCALE_BYTES
    if cursors:
        smem += CURSOR_BYTES
    assert smem <= SMEM_LIMIT
    return stage, stages, smem


def kernel_name(mode, bn, cluster=1, pipe="", ab=("e4m3", "e4m3"), ts=False, sm=False, cw=2, tg=False):
    return (f"gemm_{ab[0]}_{ab[1]}_{mode}" + (f"_m{64 * cw}" if cw != 2 else "") + f"_n{bn}{pipe}" +
            ("_tsg" if tg else "_ts" if ts else "") + ("_sm" if sm else "") +
            ("_c2" if cluster == 2 else ""))


def default_pipe(mode, bn):
    """The pipeline src/gemm.c picks when not overridden (measured there)."""
    if mode in ("row", "mx"):
        return ""
    return "p2" if bn == 128 else ""


def variants():
    res = []
    for ab in AB_TYPES:
        for mode in MODES:
            for bn in TILE_N:
                if ab == ("e4m3", "e4m3"):
                    pipes = [""] + [p for p, bns in PIPES if bn in bns and (mode, bn, p) not in PIPE_SKIP]
                else:
                    pipes = [default_pipe(mode, bn)]
                for pipe in pipes:
                    for cl in CLUSTERS:
                        for sm in ((False, True) if staged_scales(mode, pipe) else (False,)):
                            stage, stages, smem = geometry(bn, sc=staged_scales(mode, pipe), sm=sm,
                                                           cursors=True)
                            prm = {"mode": mode, "a_type": ab[0], "b_type": ab[1], "tile_m": BM,
                                   "tile_n": bn, "tile_k": BK, "stages": stages,
                                   "stage_bytes": stage, "smem": smem, "threads": THREADS,
                                   "cluster": cl}
                            if pipe:
                                prm["pipe"] = pipe
                            if sm:
                                prm["scales"] = "tma"
                            res.append((kernel_name(mode, bn, cl, pipe, ab, sm=sm), prm))
    for ab in AB_TYPES:
        for bn in MX_WIDTHS:
            for cl in CLUSTERS:
                stage, stages, smem = geometry(bn, False, True, cursors=True)
                res.append((kernel_name("mx", bn, cl, "", ab),
                            {"mode": "mx", "a_type": ab[0], "b_type": ab[1], "tile_m": BM,
                             "tile_n": bn, "tile_k": BK, "stages": stages, "stage_bytes": stage,
                             "smem": smem, "threads": THREADS, "cluster": cl}))
    for bn in BF16_TILE_N:
        for cl in CLUSTERS:
            stage, stages, smem = geometry(bn, cursors=True)
            res.append((kernel_name("tensor", bn, cl, "", BF16),
                        {"mode": "tensor", "a_type": "bf16", "b_type": "bf16", "tile_m": BM,
                         "tile_n": bn, "tile_k": BK, "stages": stages, "stage_bytes": stage,
                         "smem": smem, "threads": THREADS, "cluster": cl}))
            if bn in TS_WIDTHS + (256,):
                for tg in (False, True):
                    stage, stages, smem = geometry(bn, True, cursors=tg)
                    res.append((kernel_name("tensor", bn, cl, "", BF16, True, tg=tg),
                                {"mode": "tensor", "a_type": "bf16", "b_type": "bf16", "tile_m": BM,
                                 "tile_n": bn, "tile_k": BK, "stages": stages, "stage_bytes": stage,
                                 "smem": smem, "threads": THREADS, "cluster": cl,
                                 "store": "tma_general" if tg else "tma"}))
    res.append(("gemm_mx_dequant", {"kind": "mx_dequant", "threads": DQ_THREADS}))
    # M192: three consumer warpgroups, tile 192 x 128, TMA store (BLOCK: scales by TMA)
    for mode in M192_MODES:
        for cl in CLUSTERS:
            sm = mode == "block"
            stage, stages, smem = geometry(128, True, False, sm, sm, 3)
            prm = {"mode": mode, "a_type": "e4m3", "b_type": "e4m3", "tile_m": 192, "tile_n": 128,
                   "tile_k": BK, "stages": stages, "stage_bytes": stage, "smem": smem,
                   "threads": 512, "cluster": cl, "store": "tma", "cw": 3}
            if sm:
                prm["scales"] = "tma"
            res.append((kernel_name(mode, 128, cl, "", ("e4m3", "e4m3"), True, sm, 3), prm))
    # TMA store, every FP8 pair (the consumer differs only in the wgmma's operand types)
    for ab, mode in ((ab, mode) for ab in AB_TYPES for mode in MODES + ("mx",)):
        for bn in (TS_WIDTHS + ((160,) if mode in TS160_MODES else ()) if mode != "mx" else MX_WIDTHS):
            pipe = default_pipe(mode, bn)
            for cl in CLUSTERS:
                for sm in ((False, True) if staged_scales(mode, pipe) else (False,)):
                    for tg in (False, True):
                        stage, stages, smem = geometry(bn, True, mode == "mx", staged_scales(mode, pipe), sm,
                                                       cursors=tg)
                        prm = {"mode": mode, "a_type": ab[0], "b_type": ab[1], "tile_m": BM,
                               "tile_n": bn, "tile_k": BK, "stages": stages, "stage_bytes": stage,
                               "smem": smem, "threads": THREADS, "cluster": cl,
                               "store": "tma_general" if tg else "tma"}
                        if pipe:
                            prm["pipe"] = pipe
                        if sm:
                            prm["scales"] = "tma"
                        res.append((kernel_name(mode, bn, cl, pipe, ab, True, sm, tg=tg), prm))
    return res


class G:
    def __init__(self, name, p, target):
        self.k = Kernel(name)
        self.p = p
        self.target = target
        self.mode = p["mode"]
        self.bn = p["tile_n"]
        self.cl = p["cluster"]
        self.pipe = p.get("pipe", "")
        self.ab = (p.get("a_type", "e4m3"), p.get("b_type", "e4m3"))
        # BF16: the tensor core's FP32 accumulation needs no promotion, so the K blocks chain
        # straight into the accumulator (consumer: direct)
        # FP8 with fast accumulation (experiment knob GEMM_OPTS=accum=fast; no kernel is built
        # with it): the same direct consumer, the tensor core's own accumulator over all of K, no
        # FP32 promotion. H200, 2026-11-27, per-tensor n192_ts_c2 8192^3: 1.071 M active cycles
        # against 1.088 M promoted (ncu, locked clock), 1542-1555 TFLOPS against cuBLASLt's
        # FAST_ACCUM 1515-1523 (1.017-1.021x); 2000x3000x4096 max relative error 0.025 against
        # 0.004 promoted. The promotion costs the K loop under 2%: not kept
        self.direct = self.ab[0] == "bf16" or p.get("accum") == "fast"
        assert p.get("accum") != "fast" or self.mode == "tensor", \
            "accum=fast: per-tensor scaling only (the direct consumer applies no per-block scales)"
        self.ts = p.get("store") in ("tma", "tma_general")
        # tg ("_tsg"): the TMA-store epilogue for bias, F16 D and groups (epilogue_tma)
        self.tg = p.get("store") == "tma_general"
        # groups: the kernel takes grouped calls (all but the plain "_ts" and "_m192" ones, which
        # the runtime gives plain calls only: call_plain); masked groups walk their valid tiles
        self.groups = not (self.ts and not self.tg)
        self.outline = []  # code placed after the producer's exit (emit)
        # cw consumer warpgroups of 64 rows each: the tile is 64 * cw rows (M192_NOTE)
        self.cw = p.get("cw", 2)
        self.bm = 64 * self.cw
        self.threads = 128 * (self.cw + 1)
        self.a_bytes = self.bm * BK
        self.sm_sa = sm_sa(self.cw)
        self.sm_slot = self.sm_sa + 128
        # early: the plain FP8 consumer waits for K block kb+1's slot while chain kb runs
        # (next_slot_early); BLOCK with its scales by TMA too (the "_sm" kernels) since the
        # descriptors are uniform; BLOCK's scale-warp kernels, MX and BF16 keep the wait after the chain
        self.early = ((self.mode in ("tensor", "row") or (self.mode == "block" and p.get("scales") == "tma"))
                      and not self.direct and not p.get("pipe"))
        self.sc = staged_scales(self.mode, self.pipe)
        # sm: the staged BLOCK scales come by TMA with the operands (no scale warp)
        self.sm = self.sc and p.get("scales") == "tma"
        self.stage, self.stages, self.smem = geometry(self.bn, self.ts, self.mode == "mx", self.sc,
                                                      self.sm, self.cw, self.groups)
        self.off, self.argsize = arg_offsets()
        # idle: a consumer warpgroup whose 64 rows all lie past the row limit runs idle_kloop.
        # NOTE: not in the MX promote kernels (ptxas spills 16 bytes with it) nor in the plain
        # early-wait kernels without cluster or TMA store (ptxas rebuilt their K loops with
        # convergence barriers, 11-19 more instructions a K block); elsewhere the K loop's SASS
        # is unchanged
        self.idle = self.mode != "mx" and not (self.early and self.cl == 1 and not self.ts)
        # csplit: split-K may be summed across a cluster (cluster_split_reduce; CS_TILE_N)
        self.csplit = self.cl == 1 and self.bn == CS_TILE_N and self.cw == 2

    def arg(self, name):
        return load_arg(self.k, self.off, name)

    def fdiv(self, q, n, dv, sh):
        fast_div(self.k, q, n, dv, sh)

    # ---- tile order ---------------------------------------------------------------------------
    def consumer_tile_end(self, acc, s_ab, tile, m0, n0, mr0, mr1, pr0, pr1, t4):
        """Epilogue of a tile, the step to the next one, and the consumer's exit (a cluster
        waits for its peer before leaving, as multicast writes land in both CTAs)."""
        k = self.k
        k.label("C_EPILOGUE")
        if self.cw == 2:
            self.split_k_reduce(acc, tile)
        k.comment("this tile's batch decisions again (cheaper than keeping them live through the K loop)")
        lab = k.fresh("EPI_BATCH")
        k("mov.u32 %t_bat_c, 0")
        k("setp.eq.u32 %p_one_c, %a_tiles_b, %a_ntiles")
        k(f"@%p_one_c bra.uni {lab}")
        self.unit_tile(tile, "%t_bat_c", "%p_one_c")
        if self.groups:
            lab_d = k.fresh("EPI_WALK")
            for n in ("t_epi_gm", "t_epi_ut", "t_epi_tl"):
                k.reg(".b32", n)
            k("bfe.u32 %t_epi_gm, %a_flags, " + f"{GROUP_SHIFT}, 2")
            k(f"setp.eq.u32 %p_one_c, %t_epi_gm, {GROUP_MASKED}")
            k(f"@%p_one_c bra.uni {lab_d}")
            with self.out_of_line():
                k.label(lab_d)
                k.comment("masked: the walk again (a tile that ran is valid: it never walks off)")
                k("mov.u32 %t_epi_ut, %t_bat_c")
                self.masked_walk("%t_epi_ut", "%t_bat_c", "%t_epi_tl", "%t_epi_gm", lab, "e")
                k(f"bra.uni {lab}")
        k(f"div.u32 %t_bat_c, %t_bat_c, %a_tiles_b")
        k.label(lab)
        self.tile_select("%t_bat_c", m0, "c")
        k.comment("this thread's rows and quad column again from %tid.x (kept live through the K loop,\n"
                  "they cost registers there, and ptxas re-read %tid.x inside the loop instead)")
        self.thread_rows(m0, mr0, mr1, "t_rb")
        k(f"mov.u32 {t4}, %tid.x")
        k(f"and.b32 {t4}, {t4}, 3")
        self.epilogue(acc, s_ab, m0, n0, mr0, mr1, pr0, pr1, t4)
        k.label("C_NEXT")
        k(f"add.u32 {tile}, {tile}, %tile_step")
        k("bra.uni C_TILE")
        k.label("C_DONE")
        if self.ts:
            k.comment("NOTE: the last tile's bulk store reads the staging buffer: finish it before exit")
            k("cp.async.bulk.wait_group 0")
        if self.cl > 1:
            sm90.cluster_sync(k)
        k("ret")

    def split_k_reduce(self, acc, unit):
        """Split-K (splits > 1): every unit stores its FP32 partial tile to the workspace
        (ws + slot * 256 * BN/2 * 4, slot = unit * cluster + rank; thread-major pairs so that
        stores coalesce; rows past the limit are neither stored nor read). The consumers then meet
        (named barrier 1, 256 threads), one thread counts the unit in cnt[tile * cluster + rank]
        (acq_rel) and the CTA that brings it to `splits` sums the partials of splits 0..S-1 in
        that order (the same sum whichever CTA is last) and runs the epilogue; the others go on.
        NOTE: the workspace is written in this kernel: read it with ld.relaxed.gpu, never .nc.
        The runtime zeroes the counters before a launch (stream-ordered memset) unless the caller
        says they are zero (PTXQ_GEMM_COUNTERS_ZEROED): the last unit of each tile sets its
        counter back to zero, so every call leaves the counters it used at zero."""
        k = self.k
        nreg = self.bn // 2
        npair = nreg // 2
        lab = k.fresh("SPLIT_DONE")
        p1, pl = k.reg(".pred", "p_nosplit"), k.reg(".pred", "p_last")
        ctid, slot, t, cslot = (k.reg(".b32", n) for n in ("ctid", "ws_slot", "t_ws", "cnt_slot"))
        wp, t64 = k.reg(".b64", "ws_ptr"), k.reg(".b64", "t_ws64")
        k(f"setp.eq.u32 {p1}, %a_splits, 1")
        k(f"@{p1} bra.uni {lab}")
        k(f"setp.lt.u32 {p1}, {unit}, %a_full")
        k(f"@{p1} bra.uni {lab}")
        if self.csplit:
            pc = k.reg(".pred", "p_csplit")
            k(f"setp.ne.u32 {pc}, %a_csplit, 0")
            k(f"@{pc} bra.uni CSPLIT")
        k.comment("==== split-K: store this unit's partial, count it, the last unit of the tile reduces\n"
                  "(slots and counters are numbered from the first split unit, v = unit - full)")
        v = k.reg(".b32", "split_v")
        k(f"sub.u32 {v}, {unit}, %a_full")
        unit = v
        k.comment("NOTE: %tid.x and the cluster rank are read again here: keeping the entry's copies\n"
                  "alive through the K loop made ptxas re-read %tid.x inside it (-3% block-scaled)")
        k(f"mov.u32 {ctid}, %tid.x")
        k(f"sub.u32 {ctid}, {ctid}, 128")
        rank = "0"
        if self.cl > 1:
            rank = k.reg(".b32", "split_rank")
            k(f"mov.u32 {rank}, %cluster_ctarank")
        k(f"mad.lo.u32 {slot}, {unit}, {self.cl}, {rank}")
        k(f"mul.wide.u32 {t64}, {slot}, {256 * npair * 8}")
        k(f"add.u64 {wp}, %a_ws, {t64}")
        k(f"mul.wide.u32 {t64}, {ctid}, 8")
        k(f"add.u64 {wp}, {wp}, {t64}")
        for j in range(npair):
            r = (j & 1)
            k(f"@%p_row{r} st.global.v2.f32 [{wp}+{j * 256 * 8}], {{{acc[2 * j]}, {acc[2 * j + 1]}}}")
        k("fence.acq_rel.gpu")
        k("bar.sync 1, 256")
        flag, old = k.reg(".b32", "split_flag"), k.reg(".b32", "split_old")
        cp, p0 = k.reg(".b64", "cnt_ptr"), k.reg(".pred", "p_ctid0")
        k(f"setp.eq.u32 {p0}, {ctid}, 0")
        k(f"div.u32 {cslot}, {unit}, %a_splits")
        k(f"mad.lo.u32 {cslot}, {cslot}, {self.cl}, {rank}")
        k(f"mad.wide.u32 {cp}, {cslot}, 4, %a_cnt")
        k(f"add.u32 {flag}, %bars, {16 * self.stages}")
        k(f"@{p0} atom.acq_rel.gpu.global.add.u32 {old}, [{cp}], 1")
        k(f"@{p0} add.u32 {old}, {old}, 1")
        k(f"@{p0} st.shared.u32 [{flag}], {old}")
        k("bar.sync 1, 256")
        k(f"ld.shared.u32 {old}, [{flag}]")
        k(f"setp.eq.u32 {pl}, {old}, %a_splits")
        k("bar.sync 1, 256")  # NOTE: the flag word is reused by the next tile: all read it first
        k(f"@!{pl} bra.uni C_NEXT")
        k("fence.acq_rel.gpu")
        k.comment("every unit of the tile has counted: its counter goes back to zero, so the workspace\n"
                  "leaves the call with all counters zero (PTXQ_GEMM_COUNTERS_ZEROED skips the memset)")
        k(f"@{p0} st.relaxed.gpu.global.u32 [{cp}], 0")
        k.comment("last unit of the tile: acc = sum of the partials of splits 0, 1, ..., S-1")
        base = k.reg(".b32", "ws_first")
        k(f"div.u32 {base}, {unit}, %a_splits")
        k(f"mul.lo.u32 {base}, {base}, %a_splits")
        for r in acc:
            k(f"mov.f32 {r}, 0f00000000")
        si, pe = k.reg(".b32", "split_i"), k.reg(".pred", "p_split_end")
        v0, v1 = k.reg(".f32", "ws_v0"), k.reg(".f32", "ws_v1")
        k(f"mov.u32 {si}, 0")
        loop = k.fresh("SPLIT_SUM")
        k.label(loop)
        k(f"add.u32 {t}, {base}, {si}")
        k(f"mad.lo.u32 {slot}, {t}, {self.cl}, {rank}")
        k(f"mul.wide.u32 {t64}, {slot}, {256 * npair * 8}")
        k(f"add.u64 {wp}, %a_ws, {t64}")
        k(f"mul.wide.u32 {t64}, {ctid}, 8")
        k(f"add.u64 {wp}, {wp}, {t64}")
        for j in range(npair):
            r = (j & 1)
            k(f"mov.f32 {v0}, 0f00000000")
            k(f"mov.f32 {v1}, 0f00000000")
            k(f"@%p_row{r} ld.relaxed.gpu.global.v2.f32 {{{v0}, {v1}}}, [{wp}+{j * 256 * 8}]")
            k(f"add.rn.f32 {acc[2 * j]}, {acc[2 * j]}, {v0}")
            k(f"add.rn.f32 {acc[2 * j + 1]}, {acc[2 * j + 1]}, {v1}")
        k(f"add.u32 {si}, {si}, 1")
        k(f"setp.lt.u32 {pe}, {si}, %a_splits")
        k(f"@{pe} bra.uni {loop}")
        if self.csplit:
            k(f"bra.uni {lab}")
            self.cluster_split_reduce(acc, lab)
        k.label(lab)

    def cluster_split_reduce(self, acc, done):
        """csplit: the `splits` units of a tile are the CTAs of one cluster (the runtime launches
        clusters of `splits` CTAs, one unit each, only when every cluster is resident at once).
        Each CTA puts its FP32 partial in its own shared memory (the ring, idle once both
        warpgroups' last chains are done; thread-major pairs as in the workspace), the cluster
        meets, CTA r sums pair rows [r * U / S, (r + 1) * U / S) of all S partials in split order
        0..S-1 through distributed shared memory (the same sum as the workspace path) and writes
        them over CTA 0's partial, the cluster meets again, and CTA 0 loads the summed tile and
        runs the epilogue; the others go on. Each SM moves about one partial tile, where the
        workspace path's last CTA read all S from L2 (3.6-4.3 us of a 14-20 us call, timeline
        stamps, H100, 2026-11-26) after a store, a fence and a count.
        NOTE: barrier.cluster waits for every non-exited thread of the cluster: the producer
        threads never arrive, they exit (the leader after its last TMA, this CTA's only unit).
        NOTE: no CTA leaves before the second meeting: its partial is read by the others.
        Clusters wait on nothing outside themselves, so a grid larger than what is resident
        still completes (in waves); the runtime launches this only when all are resident."""
        k = self.k
        npair = self.bn // 4
        nu = npair // 2            # units of two pairs: pair 2u is row mr0's, 2u + 1 row mr1's
        assert self.stages * self.stage >= 2048 * npair, "the partial tile must fit in the ring"
        k.label("CSPLIT")
        k.comment("==== cluster split-K: partials in shared memory, summed across the cluster")
        ctid, buf, r, u, u1, t = (k.reg(".b32", f"cs_{n}") for n in ("ctid", "buf", "rank", "u", "u1", "t"))
        off = k.reg(".b32", "cs_off")
        pany, pe, p2 = k.reg(".pred", "p_cs_any"), k.reg(".pred", "p_cs_end"), k.reg(".pred", "p_cs_2")
        k(f"mov.u32 {ctid}, %tid.x")
        k(f"sub.u32 {ctid}, {ctid}, 128")
        k.comment("NOTE: both warpgroups' last chains must have read the ring before it is overwritten")
        k("bar.sync 1, 256")
        k(f"mad.lo.u32 {buf}, {ctid}, 8, %smem")
        for j in range(npair):
            k(f"st.shared.v2.f32 [{buf}+{j * 2048}], {{{acc[2 * j]}, {acc[2 * j + 1]}}}")
        k.comment("every partial of the cluster is in place (release / acquire at cluster scope)")
        sm90.cluster_sync(k)
        k(f"mov.u32 {r}, %cluster_ctarank")
        k.comment(f"this CTA's units [r * {nu} / S, (r + 1) * {nu} / S), S = splits")
        k(f"mul.lo.u32 {t}, {r}, {nu}")
        self.fdiv(u, t, "%a_dv_spl", "%a_sh_spl")
        k(f"add.u32 {t}, {t}, {nu}")
        self.fdiv(u1, t, "%a_dv_spl", "%a_sh_spl")
        ps = [None] + [k.reg(".pred", f"p_cs_s{i}") for i in range(1, 8)]
        pb = [k.reg(".b32", f"cs_peer{i}") for i in range(8)]
        k.comment("this thread's pairs in CTA i's shared memory (i < S <= 8); for i >= S our own, read\n"
                  "and not added. NOTE: predicated loads left their registers live from the kernel's\n"
                  "entry for ptxas (undefined where the predicate is false): 48-252 bytes of spills")
        k(f"mapa.shared::cluster.u32 {pb[0]}, {buf}, 0")
        ri = k.reg(".b32", "cs_ri")
        for i in range(1, 8):
            k(f"setp.lt.u32 {ps[i]}, {i}, %a_splits")
            k(f"selp.u32 {ri}, {i}, {r}, {ps[i]}")
            k(f"mapa.shared::cluster.u32 {pb[i]}, {buf}, {ri}")
        k.comment("threads with no valid row sum nothing (their rows are never stored)")
        k("or.pred %p_cs_any, %p_row0, %p_row1")
        summed = "CSPLIT_SUMMED"
        k(f"@!{pany} bra.uni {summed}")
        v = [[[[k.reg(".f32", f"cs_v{q}{h}{i}{e}") for e in range(2)] for i in range(8)]
              for h in range(2)] for q in range(CS_UNITS)]
        k.label("CSPLIT_LOOP")
        k(f"setp.ge.u32 {pe}, {u}, {u1}")
        k(f"@{pe} bra.uni {summed}")
        k.comment(f"{CS_UNITS} units a trip, all {CS_UNITS * 16} loads in flight before the sums (a second unit\n"
                  "past the slice stores nothing)")
        k(f"add.u32 {t}, {u}, 1")
        k(f"setp.lt.u32 {p2}, {t}, {u1}")
        k(f"shl.b32 {off}, {u}, 12")
        k.comment("NOTE: past the slice the second unit re-reads the first (no read of pairs that\n"
                  "another CTA is writing)")
        d = k.reg(".b32", "cs_d")
        k(f"selp.u32 {d}, 4096, 0, {p2}")
        for q in range(CS_UNITS):
            for h in range(2):
                o = h * 2048
                for i in range(8):
                    a = k.reg(".b32", f"cs_a{q}{i}")
                    if h == 0:
                        k(f"add.u32 {a}, {pb[i]}, {off}" if q == 0 else
                          f"add.u32 {a}, %cs_a0{i}, {d}")
                    k(f"ld.shared::cluster.v2.f32 {{{v[q][h][i][0]}, {v[q][h][i][1]}}}, [{a}+{o}]")
        for q in range(CS_UNITS):
            for h in range(2):
                for i in range(1, 8):
                    for e in range(2):
                        k(f"@{ps[i]} add.rn.f32 {v[q][h][0][e]}, {v[q][h][0][e]}, {v[q][h][i][e]}")
                pred = f"@{p2} " if q else ""
                k(f"{pred}st.shared::cluster.v2.f32 [%cs_a{q}0+{h * 2048}], {{{v[q][h][0][0]}, {v[q][h][0][1]}}}")
        k(f"add.u32 {u}, {u}, {CS_UNITS}")
        k("bra.uni CSPLIT_LOOP")
        k.label(summed)
        k.comment("every slice is summed into CTA 0's partial; no CTA's shared memory is read after this")
        sm90.cluster_sync(k)
        k(f"setp.ne.u32 {pe}, {r}, 0")
        k(f"@{pe} bra.uni C_NEXT")
        k.comment("CTA 0: the summed tile into the accumulator, then the epilogue")
        for j in range(npair):
            k(f"ld.shared.v2.f32 {{{acc[2 * j]}, {acc[2 * j + 1]}}}, [{buf}+{j * 2048}]")
        k(f"bra.uni {done}")

    def unit_tile(self, unit, ut, pred):
        """ut = the output tile of work unit `unit` (tile_coords' numbering): unit itself below
        `full`, else full + (unit - full) / splits."""
        k = self.k
        lab = k.fresh("UNIT_TILE")
        k(f"mov.u32 {ut}, {unit}")
        k(f"setp.lt.u32 {pred}, {unit}, %a_full")
        k(f"@{pred} bra.uni {lab}")
        k(f"sub.u32 {ut}, {unit}, %a_full")
        k(f"div.u32 {ut}, {ut}, %a_splits")
        k(f"add.u32 {ut}, {ut}, %a_full")
        k.label(lab)

    def thread_rows(self, m0, mr0, mr1, tag):
        """mr0 = m0 + 64 * warpgroup + 16 * warp + lane / 4 (the thread's first accumulator row),
        mr1 = mr0 + 8, from a fresh read of %tid.x (consumer threads are 128..383)."""
        k = self.k
        t, u = k.reg(".b32", tag), k.reg(".b32", tag + "2")
        k(f"mov.u32 {t}, %tid.x")
        k(f"sub.u32 {t}, {t}, 128")
        k(f"shr.u32 {u}, {t}, 7")
        k(f"shl.b32 {u}, {u}, 6")
        k(f"add.u32 {mr0}, {m0}, {u}")
        k(f"bfe.u32 {u}, {t}, 5, 2")
        k(f"mad.lo.u32 {mr0}, {u}, 16, {mr0}")
        k(f"bfe.u32 {u}, {t}, 2, 3")
        k(f"add.u32 {mr0}, {mr0}, {u}")

    def consumer_tile_begin(self, ring, tile, m0, n0, kb, mr0, mr1, pr0, pr1, pdone, rbase, acc):
        """Consumer prologue of every output tile: loop test, tile coordinates, row guards,
        zeroed FP32 accumulator, block scales, K-block counter (both consumer kinds share it)."""
        k = self.k
        ring.reset()
        k(f"mov.u32 {tile}, %first_tile")
        k.label("C_TILE")
        k(f"setp.ge.u32 {pdone}, {tile}, %a_ntiles")
        k(f"@{pdone} bra.uni C_DONE")
        bat, bb, mlim, skip = self.tile_coords(tile, m0, n0, "c")
        k(f"@{skip} bra.uni C_NEXT")
        self.thread_rows(m0, mr0, mr1, "t_rb")
        k(f"add.u32 {mr1}, {mr0}, 8")
        k(f"setp.lt.u32 {pr0}, {mr0}, {mlim}")
        k(f"setp.lt.u32 {pr1}, {mr1}, {mlim}")
        if self.idle:
            self.idle_predicate(m0, mlim)
        k.comment("this tile's scale bases: A's at its batch, B's at B's batch coordinate (byte strides)")
        t64 = k.reg(".b64", "t_bs")
        k(f"cvt.u64.u32 {t64}, {bat}")
        k(f"mad.lo.u64 {k.reg('.b64', 'sa_t')}, {t64}, %a_sa_bs, %a_sa")
        k(f"cvt.u64.u32 {t64}, {bb}")
        k(f"mad.lo.u64 {k.reg('.b64', 'sb_t')}, {t64}, %a_sb_bs, %a_sb")
        if self.mode == "tensor":
            k.comment("per-tensor scales of this tile's batches: loaded here, multiplied in the epilogue\n"
                      "NOTE: a multiply here would wait for the loads before the K loop starts (-1.7%)")
            k.comment("a NULL scale pointer stands for 1.0 (BF16 operands; the MXFP8 dequantize path;\n"
                      "%p_sa / %p_sb were set from the generic pointers, before cvta)")
            k("mov.f32 %s_ab, 0f3F800000")
            k(f"mov.f32 {k.reg('.f32', 't_sb')}, 0f3F800000")
            k(f"@%p_sa ld.global.nc.f32 %s_ab, [%sa_t]")
            k(f"@%p_sb ld.global.nc.f32 %t_sb, [%sb_t]")
        k.comment("FP32 accumulator of the tile (sum of the promoted 128-K partials)")
        for r in acc:
            k(f"mov.f32 {r}, 0f00000000")
        if self.mode == "block":
            self.block_scale_setup(m0, n0, mr0, mr1, pr0, pr1)
        if self.mode == "mx":
            self.mx_scale_setup(m0, n0, mr0, mr1)
        k(f"mov.u32 {kb}, 0")

    @contextlib.contextmanager
    def out_of_line(self):
        """What is emitted inside goes after the producer's exit (self.outline, emit), reached
        only by branches: code off the hot path that must not move ptxas's K-loop schedule."""
        saved, self.k.lines = self.k.lines, []
        try:
            yield
        finally:
            self.outline += self.k.lines
            self.k.lines = saved

    def masked_walk(self, ut, bat, tl, vtm, lab_off, tag):
        """Masked groups: output tile ut counts only the batches' valid tiles (rows[b] rows, at
        most M: ceil(rows / cluster tile) M tiles x tiles_n each, batch by batch). bat = its
        batch, tl = its index there, vtm = that batch's valid (cluster) M tiles; ut past the last
        batch's tiles: to lab_off.
        NOTE: counted over the capacity instead, a CTA of the persistent grid got 0, 1 or 2 of
        its tiles' rows (G 1 x 764 rows of 1536 at n192: 132 valid tiles in 264, two on some
        SMs and none on others): that shape x 4096 x 7168 ran at 710 TFLOPS, walked 1195-1229
        (H100, same process, 2026-11-28). One load a batch before the tile's (L1-resident after
        the first tile).
        The walk starts at its role's cursor (CURSOR_BYTES: producer, scale warp, consumers): the
        batch where that role's last walk ended and that batch's first tile. A role's units only
        grow (a consumer's tile start and epilogue walk the same unit, then the next), so a walk
        loads O(1) counts, not O(G): over a CTA's tiles each role passes each batch about once.
        The role's warps race on the cursor: one ahead by a tile may leave it past another's
        unit, which then walks from batch 0; one behind may set it back, which costs its role a
        longer walk next time. Either way the pair read is one 64-bit word: a batch and that
        batch's first tile.
        NOTE: from batch 0 at every tile start and epilogue, G 64 x 256 rows x 7168 x 2048 ran at
        837 TFLOPS, from the cursors 1064 (G 32 x 256 x 4096 x 7168: 913 -> 951; G 16 x 128 x
        7168 x 2048: 533 -> 559; DeepGEMM's G <= 4 shapes and contiguous calls within 4% either
        way, ncu cycles equal; H100, 2026-11-28). A cursor a warp (slot from %tid.x) moved block
        n192_tsg_sm's K loop from 188 to 219 SASS instructions (ptxas 13.0); by role, without
        %tid.x, it stays at 188.
        NOTE: emitted out of line (self.outline, after the producer's exit). Inline, ptxas
        rescheduled the "_tsg" K loops and contiguous calls lost 4-8% (1081-1208 against
        1158-1266 TFLOPS); out of line their K loops still differ from before, but contiguous
        G 4 x 8192 x 4096 x 7168 took 2.22-2.23 M active cycles against 2.33 M (ncu, H100)."""
        k = self.k
        p, vt = k.reg(".pred", f"p_walk_{tag}"), k.reg(".b32", f"t_vt_{tag}")
        ptr = k.reg(".b64", f"t_wrow_{tag}")
        slot = k.reg(".b32", f"t_wslot_{tag}")
        loop, found = k.fresh("WALK"), k.fresh("WALKED")
        span = self.cl * self.bm
        assert span & (span - 1) == 0, "the walk divides by the cluster tile's rows with a shift"
        cur = k.reg(".b64", f"t_wcur_{tag}")
        role = {"p": 0, "s": 1, "c": 2, "e": 2}[tag]
        who = ("producer", "scale warp", "consumers")[role]
        k.comment(f"from the cursor of this role ({role}: {who}): (its first tile, batch); a cursor\n"
                  "past ut (another warp of the role is a tile ahead) starts at batch 0")
        k(f"add.u32 {slot}, %smem, {self.cursor_offset() + 8 * role}")
        k(f"ld.relaxed.cta.shared.u64 {cur}, [{slot}]")
        k(f"mov.b64 {{{vt}, {bat}}}, {cur}")
        k(f"setp.gt.u32 {p}, {vt}, {ut}")
        k(f"@{p} mov.u32 {vt}, 0")
        k(f"@{p} mov.u32 {bat}, 0")
        k(f"sub.u32 {tl}, {ut}, {vt}")
        k.label(loop)
        k(f"setp.ge.u32 {p}, {bat}, %a_batches")
        k(f"@{p} bra.uni {lab_off}")
        k(f"mad.wide.u32 {ptr}, {bat}, 4, %a_rows")
        k(f"ld.global.nc.u32 {vt}, [{ptr}]")
        k(f"min.u32 {vt}, {vt}, %a_m")
        k(f"add.u32 {vt}, {vt}, {span - 1}")
        k(f"shr.u32 {vtm}, {vt}, {span.bit_length() - 1}")
        k(f"mul.lo.u32 {vt}, {vtm}, %a_tiles_n")
        k(f"setp.lt.u32 {p}, {tl}, {vt}")
        k(f"@{p} bra.uni {found}")
        k(f"sub.u32 {tl}, {tl}, {vt}")
        k(f"add.u32 {bat}, {bat}, 1")
        k(f"bra.uni {loop}")
        k.label(found)
        k.comment("the cursor at this batch, one 64-bit store (a pair no reader sees torn)")
        k(f"sub.u32 {vt}, {ut}, {tl}")
        k(f"mov.b64 {cur}, {{{vt}, {bat}}}")
        k(f"st.relaxed.cta.shared.u64 [{slot}], {cur}")

    def tile_coords(self, tile, m0, n0, tag):
        """Batches first (tiles_b tiles each), then grouped rasterization inside a batch: tiles
        are numbered group by group; a group is `group` M-tiles by all N-tiles, walked down M
        first, so consecutive CTAs share B tiles and a wave keeps a band of A rows and B rows hot
        in L2. Then the per-tile batch decisions (tile_select). Returns the skip predicate."""
        k = self.k
        per, gi, first, gsz, loc, mt, nt, bat, tl = (
            k.reg(".b32", f"t_{n}_{tag}") for n in
            ("per", "gi", "first", "gsz", "loc", "mt", "nt", "bat", "tl"))
        sp, ut, kb0, nk = (k.reg(".b32", f"{n}_{tag}") for n in ("split", "utile", "kb0", "nkb"))
        k.comment("work unit -> (output tile, K split): units below `full` are whole tiles; each tile\n"
                  "after them is `splits` units, K ranges of kb_split blocks (the last may be shorter).\n"
                  "full = 0: every tile split (split-K); full > 0: only the last wave's tiles (tail split)")
        k.comment("NOTE: both consumer warpgroups wait here at every tile start with the tensor core\n"
                  "idle: the divisions are by the runtime's multipliers (fdiv; with div.u32 block-scaled\n"
                  "4096 x 7168 x 16384 took 1.061 M cycles, now 1.036 M, H100 at ncu's locked clock),\n"
                  "and the split and batch steps are skipped without splits / batches")
        one, lab_s, lab_b = k.reg(".pred", f"p_one_{tag}"), k.fresh("NO_SPLIT"), k.fresh("ONE_BATCH")
        k(f"mov.u32 {ut}, {tile}")
        k(f"mov.u32 {kb0}, 0")
        k(f"mov.u32 {nk}, %a_nkb")
        k(f"setp.eq.u32 {one}, %a_splits, 1")
        k(f"@{one} bra.uni {lab_s}")
        k(f"setp.lt.u32 {one}, {tile}, %a_full")
        k(f"@{one} bra.uni {lab_s}")
        k(f"sub.u32 {ut}, {tile}, %a_full")
        self.fdiv(sp, ut, "%a_dv_spl", "%a_sh_spl")
        k(f"mul.lo.u32 {kb0}, {sp}, %a_splits")
        k(f"sub.u32 {kb0}, {ut}, {kb0}")
        k(f"mov.u32 {ut}, {sp}")
        k(f"mov.u32 {sp}, {kb0}")
        k(f"add.u32 {ut}, {ut}, %a_full")
        k(f"mul.lo.u32 {kb0}, {sp}, %a_kb_split")
        k(f"sub.u32 {nk}, %a_nkb, {kb0}")
        k(f"min.u32 {nk}, {nk}, %a_kb_split")
        k.label(lab_s)
        lab_r = k.fresh("RASTERED") if self.groups else None
        if self.groups:
            lab_w, lab_off = k.fresh("MASKED_WALK"), k.fresh("WALKED_OFF")
            k(f"bfe.u32 {gsz}, %a_flags, {GROUP_SHIFT}, 2")
            k(f"setp.eq.u32 {one}, {gsz}, {GROUP_MASKED}")
            k(f"@{one} bra.uni {lab_w}")
            with self.out_of_line():
                k.label(lab_w)
                k.comment("masked: the valid tiles only (masked_walk), then grouped rasterization over\n"
                          "the batch's valid M tiles (gsz: their count first); the last M group's divisor\n"
                          "varies by batch: div.u32")
                self.masked_walk(ut, bat, tl, gsz, lab_off, tag)
                k(f"mul.lo.u32 {per}, %a_group, %a_tiles_n")
                self.fdiv(gi, tl, "%a_dv_per", "%a_sh_per")
                k(f"mul.lo.u32 {first}, {gi}, %a_group")
                k(f"sub.u32 {gsz}, {gsz}, {first}")
                k(f"min.u32 {gsz}, {gsz}, %a_group")
                k(f"mul.lo.u32 {loc}, {gi}, {per}")
                k(f"sub.u32 {loc}, {tl}, {loc}")
                k(f"div.u32 {nt}, {loc}, {gsz}")
                k(f"mul.lo.u32 {mt}, {nt}, {gsz}")
                k(f"sub.u32 {mt}, {loc}, {mt}")
                k(f"add.u32 {mt}, {mt}, {first}")
                k(f"bra.uni {lab_r}")
                k.label(lab_off)
                span = self.cl * self.bm
                k.comment(f"past the valid tiles: so is every later unit of this CTA (they only grow): a\n"
                          f"tile at row 2^32 - {span} (past any row limit, M < 2^31: tile_select skips it)\n"
                          "and the loop ends")
                k(f"mov.u32 {bat}, 0")
                k(f"mov.u32 {nt}, 0")
                k(f"mov.u32 {mt}, {(1 << 32) // span - 1}")
                k(f"mov.u32 {tile}, %a_ntiles")
                k(f"bra.uni {lab_r}")
        k(f"mov.u32 {bat}, 0")
        k(f"mov.u32 {tl}, {ut}")
        k(f"setp.eq.u32 {one}, %a_tiles_b, %a_ntiles")
        k(f"@{one} bra.uni {lab_b}")
        self.fdiv(bat, ut, "%a_dv_tb", "%a_sh_tb")
        k(f"mul.lo.u32 {tl}, {bat}, %a_tiles_b")
        k(f"sub.u32 {tl}, {ut}, {tl}")
        k.label(lab_b)
        k(f"mul.lo.u32 {per}, %a_group, %a_tiles_n")
        self.fdiv(gi, tl, "%a_dv_per", "%a_sh_per")
        k(f"mul.lo.u32 {first}, {gi}, %a_group")
        k(f"sub.u32 {gsz}, %a_tiles_m, {first}")
        k(f"min.u32 {gsz}, {gsz}, %a_group")
        k(f"mul.lo.u32 {loc}, {gi}, {per}")
        k(f"sub.u32 {loc}, {tl}, {loc}")
        k.comment("the last M group may be shorter: its own divisor, by predicated instructions\n"
                  "NOTE: a select of the two divisors (two more registers) or a branch made two\n"
                  "consumers spill (tensor n192h2 c2, BF16 n256 c2: 4-28 bytes)")
        pl, t = k.reg(".pred", f"p_lastg_{tag}"), k.reg(".b32", "t_fdiv")
        k(f"setp.ne.u32 {pl}, {gsz}, %a_group")
        self.fdiv(nt, loc, "%a_dv_grp", "%a_sh_grp")
        k(f"@{pl} mul.hi.u32 {t}, {loc}, %a_dv_last")
        k(f"@{pl} add.u32 {t}, {t}, {loc}")
        k(f"@{pl} shr.b32 {nt}, {t}, %a_sh_last")
        k(f"mul.lo.u32 {mt}, {nt}, {gsz}")
        k(f"sub.u32 {mt}, {loc}, {mt}")
        k(f"add.u32 {mt}, {mt}, {first}")
        if lab_r:
            k.label(lab_r)
        if self.cl == 1:
            k(f"mul.lo.u32 {m0}, {mt}, {self.bm}")
        else:
            k.comment(f"cluster tile: {self.cl * self.bm} rows; this CTA takes rows rank * {self.bm} of it")
            k(f"mad.lo.u32 {m0}, {mt}, {self.cl * self.bm}, %m_rank_off")
        k(f"mul.lo.u32 {n0}, {nt}, {self.bn}")
        return self.tile_select(bat, m0, tag)

    def tile_select(self, bat, m0, tag):
        """Per tile: A/D batch (= bat), B's batch coordinate (bat * b_batched, or the group of
        the tile's first row), the row limit (M, or the batch's valid rows) and whether to skip
        the tile. Registers bb_<tag>, mlim_<tag>, p_skip_<tag>; the same on both sides."""
        k = self.k
        bb, mlim, gm, m0c, t = (k.reg(".b32", f"{n}_{tag}") for n in ("bb", "mlim", "gmode", "m0c", "t_sel"))
        skip, pm = k.reg(".pred", f"p_skip_{tag}"), k.reg(".pred", f"p_gm_{tag}")
        ptr = k.reg(".b64", f"t_rows_{tag}")
        done = k.fresh("SEL_DONE")
        k(f"mul.lo.u32 {bb}, {bat}, %a_b_batched")
        k(f"mov.u32 {mlim}, %a_m")
        k(f"setp.ne.u32 {skip}, 0, 0")
        k(f"bfe.u32 {gm}, %a_flags, {GROUP_SHIFT}, 2")
        k(f"setp.eq.u32 {pm}, {gm}, 0")
        k(f"@{pm} bra.uni {done}")
        if self.cl == 1:
            k(f"mov.u32 {m0c}, {m0}")
        else:
            k(f"sub.u32 {m0c}, {m0}, %m_rank_off")
        k(f"setp.eq.u32 {pm}, {gm}, {GROUP_MASKED}")
        k.comment("masked: rows[bat] valid rows in this batch; a (cluster) tile past them is skipped\n"
                  "contiguous: rows[m] = group of row m; the tile's group is its first row's (< 0: skip)")
        k(f"selp.u32 {t}, {bat}, {m0c}, {pm}")
        k(f"mad.wide.u32 {ptr}, {t}, 4, %a_rows")
        k(f"ld.global.nc.u32 {t}, [{ptr}]")
        k(f"@{pm} min.u32 {mlim}, {mlim}, {t}")
        k(f"@{pm} setp.ge.u32 {skip}, {m0c}, {mlim}")
        k(f"@!{pm} mov.u32 {bb}, {t}")
        k(f"@!{pm} setp.lt.s32 {skip}, {t}, 0")
        k.label(done)
        return bat, bb, mlim, skip

    # ---- producer -----------------------------------------------------------------------------
    def producer(self, ring):
        k = self.k
        k.label("PRODUCER")
        k.comment("==== producer warpgroup: give registers to the consumers; one thread issues TMA")
        k(f"setmaxnreg.dec.sync.aligned.u32 {PRODUCER_REGS}")
        self.pdl_wait()
        if self.sc and not self.sm:
            pw1 = k.reg(".pred", "p_scale_warp")
            k.comment("warp 1 of the producer warpgroup stages the BLOCK scales (scale_producer)")
            k(f"shr.u32 {k.reg('.b32', 't_pw')}, %tid_x, 5")
            k(f"setp.eq.u32 {pw1}, %t_pw, 1")
            k(f"@{pw1} bra.uni S_PRODUCER")
        k("@!%p_leader bra P_DONE" if self.cl > 1 else "@!%p_leader ret")
        tile, m0, n0, kb, kc = (k.reg(".b32", n) for n in ("p_tile", "p_m0", "p_n0", "p_kb", "p_kc"))
        pe = k.reg(".b32", "p_empty_parity")
        pdone = k.reg(".pred", "p_pdone")
        ring.reset()
        tx = self.stage
        if self.sm:
            k.comment(f"scale boxes per stage (scmode): A {self.sm_sa} B K-major / {self.sm_sa // 4} B M-major, B 32 B; the\n"
                      "slot's expect_tx counts them with the operands")
            for bit, nm in ((SC_A_KMAJOR, "akmaj"), (SC_B_NMAJOR, "bnmaj"), (SC_A_BATCH, "abat"),
                            (SC_B_BATCH, "bbat")):
                k(f"and.b32 {k.reg('.b32', 'q_t')}, %a_scmode, {bit}")
                k(f"setp.ne.u32 {k.reg('.pred', 'q_' + nm)}, %q_t, 0")
            tx = k.reg(".b32", "q_tx")
            k(f"selp.u32 {tx}, {self.stage + self.sm_sa}, {self.stage + self.sm_sa // 4}, %q_akmaj")
            k(f"add.u32 {tx}, {tx}, 32")
        k(f"mov.u32 {tile}, %first_tile")
        k.label("P_TILE")
        k(f"setp.ge.u32 {pdone}, {tile}, %a_ntiles")
        k(f"@{pdone} bra.uni P_DONE")
        bat, bb, _, skip = self.tile_coords(tile, m0, n0, "p")
        k(f"@{skip} bra.uni P_NEXT")
        k.comment("the maps are 3-D only for batches and groups (flags bit 8)")
        k(f"and.b32 {k.reg('.b32', 't_m3')}, %a_flags, {MAPS3D_BIT}")
        k(f"setp.ne.u32 {k.reg('.pred', 'p_maps3d')}, %t_m3, 0")
        k(f"mov.u32 {kb}, 0")
        k(f"mul.lo.u32 {kc}, %kb0_p, {BK}")
        k.label("P_KB")
        k(f"setp.ge.u32 {pdone}, {kb}, %nkb_p")
        k(f"@{pdone} bra.uni P_NEXT")
        if self.cl == 1:
            k.comment("stage: wait until the consumers freed the slot (parity phase^1: a fresh barrier\n"
                      f"passes), announce the bytes, then one A box ({self.bm} rows) and one B box (BN rows)")
        else:
            k.comment("stage: wait until the consumers of BOTH CTAs freed the slot (our B half lands in\n"
                      "the peer too), announce the whole stage (A + both B halves), load A, and multicast\n"
                      f"our half of B ({self.bn // 2} rows at rank * {self.bn // 2}) to both CTAs")
        ring.locate()
        k(f"xor.b32 {pe}, {ring.phase}, 1")
        sm90.mbar_wait(k, ring.empty, pe, "EMPTY")
        sm90.mbar_arrive_expect_tx(k, ring.full, tx)
        lab3, labj = k.fresh("P_3D"), k.fresh("P_LOADED")
        k("@%p_maps3d bra.uni " + lab3)
        b = k.reg(".b32", "p_b_dst")
        for lab, batch_a, batch_b in ((None, (), ()), (lab3, (bat,), (bb,))):
            if lab:
                k.label(lab)
                k.comment("batches or groups: 3-D maps {K, rows, batch}")
            else:
                k.comment("one GEMM: 2-D maps {K, rows}")
            sm90.tma_load(k, ring.addr, "%tmap_a_g", (kc, m0) + batch_a, ring.full)
            if self.cl == 1:
                k(f"add.u32 {b}, {ring.addr}, {self.a_bytes}")
                sm90.tma_load(k, b, "%tmap_b_g", (kc, n0) + batch_b, ring.full)
            else:
                nh = k.reg(".b32", "p_n_half")
                k(f"add.u32 {b}, {ring.addr}, %b_half_off")
                k(f"add.u32 {nh}, {n0}, %n_rank_off")
                sm90.tma_load_multicast(k, b, "%tmap_b_g", (kc, nh) + batch_b, ring.full, "%cta_mask")
            if not lab:
                k(f"bra.uni {labj}")
        k.label(labj)
        if self.sm:
            self.scale_tma(ring, kc, m0, n0, bat, bb)
        ring.advance()
        k(f"add.u32 {kb}, {kb}, 1")
        k(f"add.u32 {kc}, {kc}, {BK}")
        k("bra.uni P_KB")
        k.label("P_NEXT")
        k(f"add.u32 {tile}, {tile}, %tile_step")
        k("bra.uni P_TILE")
        if self.sc and not self.sm:
            self.scale_producer(ring)
        k.label("P_DONE")
        if self.cl > 1:
            k.comment("no CTA of the cluster leaves while its peer may still arrive on its barriers")
            sm90.cluster_sync(k)
        k("ret")

    def pdl_wait(self):
        """PDL (a no-op without a programmatic launch): wait for the preceding kernel's completion
        before any global access (A, B, scales, C, bias, the workspace, D), then let the next
        kernel launch. Each role waits right after its setmaxnreg, so the setup before it (barrier
        init, the setup barrier, the role branch, the register split) overlaps the preceding
        kernel's tail.
        NOTE: signalled only after our own wait, as every kernel of the library does, so a
        kernel launched behind ours starts after everything before us has completed. Our CTAs
        hold all of an SM's registers: the next kernel's CTAs take SMs as ours exit."""
        self.k("griddepcontrol.wait")
        self.k("griddepcontrol.launch_dependents")

    def sc_base(self):
        """shared offset of the staged BLOCK scales: sm_slot per stage before the barriers (sm:
        TMA destinations, 128-byte aligned), else SC_SLOT per stage after them"""
        if self.sm:
            return self.stages * self.stage + staging_bytes(self.bn, self.ts, self.cw)
        return self.stages * self.stage + staging_bytes(self.bn, self.ts, self.cw) + 16 * self.stages + 16

    def cursor_offset(self):
        """masked_walk's cursors: the last CURSOR_BYTES of the layout (geometry)"""
        assert self.groups
        return self.smem - 1024 - CURSOR_BYTES

    def bars_offset(self):
        return self.stages * self.stage + staging_bytes(self.bn, self.ts, self.cw) + (
            self.sm_slot * self.stages if self.sm else 0)

    def scale_tma(self, ring, kc, m0, n0, bat, bb):
        """sm producer: this K block's scale boxes into the slot's sm_slot, on its full barrier.
        A: (m0, kb) M-major or (kb, m0) K-major; B: (kb, nb0) K-major or (nb0, kb) N-major; the
        third coordinate is the batch where the scales have one (scmode bits)."""
        k = self.k
        kbs, c0, c1, c2, dst = (k.reg(".b32", f"q_{n}") for n in ("kb", "c0", "c1", "c2", "dst"))
        k.comment(f"the K block's scales: A's {self.bm} rows and B's two 128-column blocks, by TMA onto the\n"
                  "same full barrier (their bytes are in the slot's expect_tx)")
        k(f"shr.u32 {kbs}, {kc}, 7")
        k(f"and.b32 {k.reg('.b32', 'q_kb4')}, {kbs}, -4")
        k(f"mad.lo.u32 {dst}, {ring.slot}, {self.sm_slot}, %smem")
        k(f"add.u32 {dst}, {dst}, {self.sc_base()}")
        k.comment("A: (kb & ~3, m0) K-major, (m0, kb) M-major; B: (kb & ~3, nb0) K-major, (nb0 & ~3, kb)\n"
                  "N-major (16-byte aligned box starts)")
        k(f"selp.u32 {c0}, %q_kb4, {m0}, %q_akmaj")
        k(f"selp.u32 {c1}, {m0}, {kbs}, %q_akmaj")
        k(f"selp.u32 {c2}, {bat}, 0, %q_abat")
        sm90.tma_load(k, dst, "%tmap_sa_g", (c0, c1, c2), ring.full)
        k(f"add.u32 {dst}, {dst}, {self.sm_sa}")
        k(f"shr.u32 {c2}, {n0}, 7")
        k(f"and.b32 {c1}, {c2}, -4")
        k(f"selp.u32 {c0}, {c1}, %q_kb4, %q_bnmaj")
        k(f"selp.u32 {c1}, {kbs}, {c2}, %q_bnmaj")
        k(f"selp.u32 {c2}, {bb}, 0, %q_bbat")
        sm90.tma_load(k, dst, "%tmap_sb_g", (c0, c1, c2), ring.full)

    def scale_producer(self, ring):
        """BLOCK, plain consumer: warp 1 of the producer warpgroup walks the same work units and K
        blocks as the TMA thread. Once a slot is free it copies that K block's raw scales into the
        slot with cp.async (sa of the tile's 128 rows, lane l: rows 4l..4l+3, rows past the tile's
        limit zero-filled with nothing read; sb of the two B-scale blocks the tile may span, lane
        0), one cp.async group per K block. Then it finishes the previous K block, whose group has
        landed by now (wait_group 1): the products sa * sb of its 128 rows x 2 B-scale blocks
        into that slot, and each lane's arrival on its full barrier (33 arrivals: these 32 and
        the TMA thread's). The consumers load two (s_b0, s_b1) pairs per K block and multiply
        nothing. A K block's products are published when the next slot is free, which is still
        stages - 2 K blocks before the consumers need them.
        NOTE (H100, 4096 x 7168 x 16384, TFLOPS): loaded by the consumers from global memory
        right before the promotion, or one K block ahead, the scales waited on L2 under full TMA
        traffic: 1152 / 1183 against 1405 with constant scales. Staged here, the consumers'
        shared-memory loads and products still cost (see block_scale_lds): raw scales and
        products in the consumer 1255-1272, products staged here 1272-1278 (same process)."""
        k = self.k
        k.label("S_PRODUCER")
        k.comment("==== scale producer (warp 1): one K block's BLOCK scales per slot, by cp.async")
        tile, m0, n0, kb = (k.reg(".b32", n) for n in ("s_tile", "s_m0", "s_n0", "s_kb"))
        lane, r, t = k.reg(".b32", "s_lane"), k.reg(".b32", "s_row"), k.reg(".b32", "s_t")
        pe, pdone = k.reg(".b32", "s_empty_parity"), k.reg(".pred", "s_done")
        pa, pb0, pb1, t64, src = (k.reg(".b64", n) for n in ("s_pa", "s_pb0", "s_pb1", "s_t64", "s_src"))
        sam4, sak4, sbk4 = (k.reg(".b64", n) for n in ("s_sam4", "s_sak4", "s_sbk4"))
        nbytes = [k.reg(".b32", f"s_nb{i}") for i in range(4)]
        pl0 = k.reg(".pred", "s_lane0")
        dst = k.reg(".b32", "s_dst")
        k(f"and.b32 {lane}, %tid_x, 31")
        k(f"setp.eq.u32 {pl0}, {lane}, 0")
        k(f"shl.b64 {sam4}, %a_sam, 2")
        k(f"shl.b64 {sak4}, %a_sak, 2")
        k(f"shl.b64 {sbk4}, %a_sbk, 2")
        ring.reset()
        k(f"setp.ne.u32 {k.reg('.pred', 's_have')}, 0, 0")
        k.reg(".b32", "s_prev")
        k.reg(".b32", "s_prev_full")
        k(f"mov.u32 {tile}, %first_tile")
        k.label("S_TILE")
        k(f"setp.ge.u32 {pdone}, {tile}, %a_ntiles")
        k(f"@{pdone} bra.uni S_DRAIN")
        bat, bb, mlim, skip = self.tile_coords(tile, m0, n0, "s")
        k(f"@{skip} bra.uni S_NEXT")
        k.comment("this lane's rows m0 + 4 lane + i: 4 bytes each below the tile's row limit, else\n"
                  "0 (zero fill); pointers at the unit's first K block; B's two scale blocks (lane 0)")
        k(f"mad.lo.u32 {r}, {lane}, 4, {m0}")
        for i in range(4):
            k(f"sub.u32 {t}, {mlim}, {r}")
            k(f"min.s32 {t}, {t}, {i + 1}")
            k(f"sub.u32 {t}, {t}, {i}")
            k(f"max.s32 {t}, {t}, 0")
            k(f"shl.b32 {nbytes[i]}, {t}, 2")
        k(f"cvt.u64.u32 {t64}, {bat}")
        k(f"mad.lo.u64 {pa}, {t64}, %a_sa_bs, %a_sa")
        k(f"cvt.u64.u32 {t64}, {r}")
        k(f"mad.lo.u64 {pa}, {t64}, {sam4}, {pa}")
        k(f"cvt.u64.u32 {t64}, %kb0_s")
        k(f"mad.lo.u64 {pa}, {t64}, {sak4}, {pa}")
        k(f"cvt.u64.u32 {t64}, {bb}")
        k(f"mad.lo.u64 {pb0}, {t64}, %a_sb_bs, %a_sb")
        k(f"cvt.u64.u32 {t64}, %kb0_s")
        k(f"mad.lo.u64 {pb0}, {t64}, {sbk4}, {pb0}")
        k(f"shr.u32 {t}, {n0}, 7")
        k(f"add.u32 {r}, {t}, 1")
        k(f"sub.u32 {dst}, %a_nbn, 1")
        k(f"min.u32 {r}, {r}, {dst}")
        k(f"sub.u32 {r}, {r}, {t}")
        k(f"cvt.u64.u32 {t64}, {t}")
        k(f"mul.lo.u64 {t64}, {t64}, %a_sbn")
        k(f"mad.lo.u64 {pb0}, {t64}, 4, {pb0}")
        k.comment("nb1 = min(nb0 + 1, nbn - 1): the same block or the next")
        k(f"cvt.u64.u32 {t64}, {r}")
        k(f"mul.lo.u64 {t64}, {t64}, %a_sbn")
        k(f"mad.lo.u64 {pb1}, {t64}, 4, {pb0}")
        k(f"mov.u32 {kb}, 0")
        k.label("S_KB")
        k(f"setp.ge.u32 {pdone}, {kb}, %nkb_s")
        k(f"@{pdone} bra.uni S_NEXT")
        ring.locate()
        k(f"xor.b32 {pe}, {ring.phase}, 1")
        sm90.mbar_wait(k, ring.empty, pe, "S_EMPTY")
        k(f"mad.lo.u32 {dst}, {ring.slot}, {SC_SLOT}, %smem")
        k(f"add.u32 {dst}, {dst}, {self.sc_base() + SC_PROD}")
        k(f"mad.lo.u32 {t}, {lane}, 16, {dst}")
        k(f"mov.u64 {src}, {pa}")
        for i in range(4):
            k(f"cp.async.ca.shared.global [{t}+{4 * i}], [{src}], 4, {nbytes[i]}")
            if i < 3:
                k(f"add.s64 {src}, {src}, {sam4}")
        k(f"@{pl0} cp.async.ca.shared.global [{dst}+{BM * 4}], [{pb0}], 4")
        k(f"@{pl0} cp.async.ca.shared.global [{dst}+{BM * 4 + 4}], [{pb1}], 4")
        k("cp.async.commit_group")
        k.comment("the previous K block's raw scales have landed (one group may stay in flight): its\n"
                  "products into its slot, then its full arrivals")
        k("@%s_have cp.async.wait_group 1")
        self.scale_products("%s_have")
        k(f"mov.u32 %s_prev, {ring.slot}")
        k(f"mov.u32 %s_prev_full, {ring.full}")
        k("setp.ne.u32 %s_have, 1, 0")
        k(f"add.s64 {pa}, {pa}, {sak4}")
        k(f"add.s64 {pb0}, {pb0}, {sbk4}")
        k(f"add.s64 {pb1}, {pb1}, {sbk4}")
        ring.advance()
        k(f"add.u32 {kb}, {kb}, 1")
        k("bra.uni S_KB")
        k.label("S_NEXT")
        k(f"add.u32 {tile}, {tile}, %tile_step")
        k("bra.uni S_TILE")
        k.label("S_DRAIN")
        k.comment("the last K block's products")
        k("@%s_have cp.async.wait_group 0")
        self.scale_products("%s_have")
        k("bra.uni P_DONE")

    def scale_products(self, pred):
        """Scale warp: sa * sb of the slot %s_prev from its raw copy (each lane its 4 rows, sb
        from lane 0's copy after a warp barrier), stored as (s_b0, s_b1) pairs per row, then
        each lane arrives on that slot's full barrier. Nothing when pred is false."""
        k = self.k
        skip = k.fresh("S_NOPREV")
        k(f"@!{pred} bra.uni {skip}")
        k("bar.warp.sync 0xffffffff")
        base, t = k.reg(".b32", "s_pbase"), k.reg(".b32", "s_pt")
        ra = [k.reg(".f32", f"s_ra{i}") for i in range(4)]
        rb = [k.reg(".f32", f"s_rb{i}") for i in range(2)]
        pr = [k.reg(".f32", f"s_pr{i}") for i in range(8)]
        k(f"mad.lo.u32 {base}, %s_prev, {SC_SLOT}, %smem")
        k(f"add.u32 {base}, {base}, {self.sc_base()}")
        k(f"mad.lo.u32 {t}, %s_lane, 16, {base}")
        k(f"ld.shared.v4.f32 {{{', '.join(ra)}}}, [{t}+{SC_PROD}]")
        k(f"ld.shared.v2.f32 {{{', '.join(rb)}}}, [{base}+{SC_PROD + BM * 4}]")
        for i in range(4):
            k(f"mul.rn.f32 {pr[2 * i]}, {ra[i]}, {rb[0]}")
            k(f"mul.rn.f32 {pr[2 * i + 1]}, {ra[i]}, {rb[1]}")
        k(f"mad.lo.u32 {t}, %s_lane, 32, {base}")
        k(f"st.shared.v4.f32 [{t}], {{{', '.join(pr[:4])}}}")
        k(f"st.shared.v4.f32 [{t}+16], {{{', '.join(pr[4:])}}}")
        sm90.mbar_arrive(k, "%s_prev_full")
        k.label(skip)

    def consumer_regs(self):
        """The consumers' setmaxnreg: CONSUMER_REGS_NARROW for the plain FP8 consumer at tile_n
        <= 160 without a cluster (see the NOTE at CONSUMER_REGS), else CONSUMER_REGS."""
        if self.cw == 3:
            return CONSUMER_REGS_M192
        narrow = (self.bn <= 160 and self.cl == 1 and not self.pipe and not self.direct
                  and self.mode in MODES)
        return CONSUMER_REGS_NARROW if narrow else CONSUMER_REGS

    def consumer_entry(self):
        """Consumer entry, shared by both consumer kinds: raise the register budget; this
        thread's warpgroup (0/1), warp, lane, quad row g, quad column t4, first tile row, lane-0
        predicate; the slot-0 wgmma descriptors; per-tensor: the product of the two scales."""
        k = self.k
        k(f"setmaxnreg.inc.sync.aligned.u32 {self.consumer_regs()}")
        self.pdl_wait()
        cwg, w, lane, g, t4, rbase = (k.reg(".b32", n) for n in
                                      ("cwg", "warp", "lane", "g", "t4", "row_base"))
        k(f"shr.u32 {cwg}, %tid_x, 7")
        k.comment("NOTE: warp-uniform for ptxas (see the role branch): the A descriptor depends on it.\n"
                  "Taking %wg - 1 from the role branch instead moved ptxas's schedule in most GEMM\n"
                  "cubins (not measured), so the consumer keeps its own copy")
        k(f"shfl.sync.idx.b32 {cwg}, {cwg}, 0, 31, 0xFFFFFFFF")
        k(f"sub.u32 {cwg}, {cwg}, 1")
        k(f"bfe.u32 {w}, %tid_x, 5, 2")
        k(f"and.b32 {lane}, %tid_x, 31")
        k(f"shr.u32 {g}, {lane}, 2")
        k(f"and.b32 {t4}, {lane}, 3")
        k.comment("this thread's first row in the tile: 64 * wg + 16 * warp + lane/4 (second: +8)")
        k(f"shl.b32 {rbase}, {cwg}, 6")
        k(f"mad.lo.u32 {rbase}, {w}, 16, {rbase}")
        k(f"add.u32 {rbase}, {rbase}, {g}")
        p_lane0 = k.reg(".pred", "p_lane0")
        k(f"setp.eq.u32 {p_lane0}, {lane}, 0")

        k.comment("descriptors of slot 0: A rows 64*wg.. (8 KiB per 64 rows), B at +16 KiB")
        da0, db0, t32 = k.reg(".b64", "desc_a0"), k.reg(".b64", "desc_b0"), k.reg(".b32", "t_addr")
        k(f"mad.lo.u32 {t32}, {cwg}, {64 * BK}, %smem")
        sm90.smem_desc(k, da0, t32)
        k(f"add.u32 {t32}, %smem, {self.a_bytes}")
        sm90.smem_desc(k, db0, t32)

        s_ab = k.reg(".f32", "s_ab") if self.mode == "tensor" else None
        return cwg, w, lane, g, t4, rbase, p_lane0, da0, db0, t32, s_ab

    # ---- consumer -----------------------------------------------------------------------------
    def idle_predicate(self, m0, mlim):
        """%p_wgidle: this consumer warpgroup's 64 rows all lie at or past the tile's row limit
        (M <= 64, the last M tile, small groups): it runs idle_kloop instead of the K loop.
        NOTE: the warpgroup's first row is recomputed from %tid.x (as thread_rows does) rather
        than taken from the thread's row mr0 (mr0 - m0 rounded down to 64): that shorter form
        kept mr0 live longer and moved ptxas's K-loop schedule in about twenty kernels."""
        k = self.k
        t = k.reg(".b32", "t_wg")
        k(f"mov.u32 {t}, %tid.x")
        k(f"sub.u32 {t}, {t}, 128")
        k(f"shr.u32 {t}, {t}, 7")
        k(f"shl.b32 {t}, {t}, 6")
        k(f"add.u32 {t}, {t}, {m0}")
        k(f"setp.ge.u32 {k.reg('.pred', 'p_wgidle')}, {t}, {mlim}")
        k.comment("NOTE: a vote makes the predicate warp-uniform for ptxas; from %tid.x alone it took the\n"
                  "branch as divergent and rebuilt the K loop (BSSY/BSYNC, an R2UR per descriptor)")
        k("vote.sync.all.pred %p_wgidle, %p_wgidle, 0xffffffff")

    def idle_kloop(self, ring, kb, pdone, p_lane0):
        """The K loop of a consumer warpgroup whose rows all lie past the tile's row limit: no
        wgmma, scales or promotion, only the ring's protocol, a full wait and one arrival per warp
        on each slot's empty barrier, so that the producer and the other warpgroup run as before.
        Its accumulator stays zero and the epilogue stores none of its rows (split-K barriers
        included). NOTE: the full wait is what keeps its arrivals in the right phase: full[kb]
        completes only after every arrival for K block kb - stages (both warpgroups') is in."""
        k = self.k
        k("bra.uni C_EPILOGUE")
        k.label("C_IDLE")
        k.comment("==== idle warpgroup (rows past the limit): keep the ring turning")
        k(f"setp.ge.u32 {pdone}, {kb}, %nkb_c")
        k(f"@{pdone} bra.uni C_EPILOGUE")
        ring.locate()
        sm90.mbar_wait(k, ring.full, ring.phase, "IDLE_FULL")
        self.release(ring.empty, p_lane0)
        ring.advance()
        k(f"add.u32 {kb}, {kb}, 1")
        k("bra.uni C_IDLE")

    def consumer(self, ring):
        k = self.k
        bn = self.bn
        nreg = bn // 2
        k.label("CONSUMER")
        k.comment("==== consumer warpgroups: 64 rows of the 128 x BN tile each")
        cwg, w, lane, g, t4, rbase, p_lane0, da0, db0, t32, s_ab = self.consumer_entry()

        part = None if self.direct else k.regs(".f32", "part", nreg)
        acc = k.regs(".f32", "acc", nreg)
        tile, m0, n0, kb = (k.reg(".b32", n) for n in ("c_tile", "c_m0", "c_n0", "c_kb"))
        mr0, mr1 = k.reg(".b32", "m_r0"), k.reg(".b32", "m_r1")
        pr0, pr1 = k.reg(".pred", "p_row0"), k.reg(".pred", "p_row1")
        pdone = k.reg(".pred", "p_cdone")
        if self.mode == "mx":
            k.comment("K blocks this warpgroup has taken scales for, over all its units (buffer parity)")
            k(f"mov.u32 {k.reg('.b32', 'mx_seq')}, 0")
        self.consumer_tile_begin(ring, tile, m0, n0, kb, mr0, mr1, pr0, pr1, pdone, rbase, acc)
        if self.idle:
            k("@%p_wgidle bra.uni C_IDLE")
        k.label("C_KB")
        k(f"setp.ge.u32 {pdone}, {kb}, %nkb_c")
        k(f"@{pdone} bra.uni {'C_DRAIN' if self.direct else 'C_EPILOGUE'}")
        if self.mode == "mx":
            self.mx_scale_load(kb)
        early = self.early
        if early:
            k.comment("the tile's first K block locates and waits for its slot here; every later one was\n"
                      "located and waited for while the chain before it ran (below)")
            pk0 = k.reg(".pred", "p_kb0")
            skip = k.fresh("FULL_DONE")
            k(f"setp.ne.u32 {pk0}, {kb}, 0")
            k(f"@{pk0} bra.uni {skip}")
        so, da, db = k.reg(".b64", "t_slot_enc"), k.reg(".b64", "desc_a"), k.reg(".b64", "desc_b")
        daj = [da] + [k.reg(".b64", f"desc_a{j}") for j in range(1, 4)]
        dbj = [db] + [k.reg(".b64", f"desc_b{j}") for j in range(1, 4)]

        def slot_descs():
            ring.locate()
            k.comment("descriptors of this slot: + slot * stage_bytes / 16")
            k(f"mul.wide.u32 {so}, {ring.slot}, {self.stage // 16}")
            k(f"add.s64 {da}, {da0}, {so}")
            k(f"add.s64 {db}, {db0}, {so}")

        def step_descs():
            k.comment("+ 2 per 32-K step inside the swizzled 128-byte row (the hardware applies the XOR\n"
                      "to the final address)")
            for j in range(1, 4):
                k(f"add.s64 {daj[j]}, {da}, {2 * j}")
                k(f"add.s64 {dbj[j]}, {db}, {2 * j}")
        slot_descs()
        if not early:
            step_descs()
        k.comment("wait for the TMA bytes of this slot" + (" and its staged scales" if self.sc else ""))
        sm90.mbar_wait(k, ring.full, ring.phase, "FULL")
        if early and self.sm:
            k.comment("the tile's first K block reads its scales here; every later one's were read\n"
                      "right after its slot's early wait (next_slot_early)")
            self.block_scale_lds_sm(ring)
        if early:
            k.label(skip)
            k.comment("NOTE: only the slot's two base descriptors stay live across the promotion (the\n"
                      "direct-store epilogue's registers leave no room for all eight)")
            step_descs()
        if self.sm and not early:
            self.block_scale_lds_sm(ring)
        if self.mode == "mx":
            self.mx_kblock(ring, [part, k.regs(".f32", "part1_", nreg)], acc, daj, dbj, p_lane0)
            k(f"add.u32 {kb}, {kb}, 1")
            k("bra.uni C_KB")
            self.consumer_tile_end(acc, s_ab, tile, m0, n0, mr0, mr1, pr0, pr1, t4)
            return
        if self.direct:
            self.direct_kblock(ring, acc, daj, dbj, kb, p_lane0)
            if self.idle:
                self.idle_kloop(ring, kb, pdone, p_lane0)
            self.consumer_tile_end(acc, s_ab, tile, m0, n0, mr0, mr1, pr0, pr1, t4)
            return
        k.comment(f"one 128-K block: 4 x m64n{bn}k32 chained in the tensor core (scale-d 0 first)")
        k("wgmma.fence.sync.aligned")
        for j in range(4):
            sm90.wgmma_fp8(k, bn, part, daj[j], dbj[j], 0 if j == 0 else 1, *self.ab)
        k("wgmma.commit_group.sync.aligned")
        if self.sc:
            self.block_scale_lds(ring)
        if early:
            self.next_slot_early(ring, kb, slot_descs, p_lane0)
        else:
            k("wgmma.wait_group.sync.aligned 0")
            k.comment("the slot's bytes are consumed: one arrival per consumer warp frees it" +
                      ("" if self.cl == 1 else " (ours and the peer's:\nits producer multicasts into our slot too)"))
            self.release(ring.empty, p_lane0)
            ring.advance()
        self.promote(part, acc, n0)
        k(f"add.u32 {kb}, {kb}, 1")
        k("bra.uni C_KB")
        if self.idle:
            self.idle_kloop(ring, kb, pdone, p_lane0)
        self.consumer_tile_end(acc, s_ab, tile, m0, n0, mr0, mr1, pr0, pr1, t4)

    def next_slot_early(self, ring, kb, slot_descs, p_lane0):
        """The early wait (tensor, row): while chain kb runs, step the ring and wait for K block
        kb+1's slot, then wait for the chain and free its slot. Measured with ncu on an H100 at
        8192^3 (locked clock, same call): per-tensor 1.199 M -> 1.175-1.181 M cycles, row 1.205-1.210 M
        -> 1.195 M. BLOCK: with its staged scales the same change took 1.144 M -> 1.192 M cycles
        (4096 x 7168 x 16384) while the descriptors needed R2UR in the loop; with uniform
        descriptors (2026-11-26, H100, same call) the "_sm" kernels gain: c1 1.111-1.115 -> 1.090-1.099
        M, c2 1.118-1.134 -> 1.095-1.099 M (at boost 1264 / 1272 -> 1277 / 1313 TFLOPS)."""
        k = self.k
        k.comment("while the chain runs: step the ring and wait for the next K block's slot, so that\n"
                  "between this chain's end and the next one's issue only the promotion remains\n"
                  "NOTE: waited after the chain, the loop, the slot arithmetic and the barrier's\n"
                  "try_wait stood between two chains of a warpgroup, where only the other warpgroup's\n"
                  "chain runs, and one chain alone keeps the tensor core ~58% busy (ncu, H100)")
        cur_empty = k.reg(".b32", "cur_empty")
        k(f"mov.u32 {cur_empty}, {ring.empty}")
        ring.advance()
        pnext = k.reg(".pred", "p_kb_next")
        nxt = k.reg(".b32", "c_kb_next")
        skip_next = k.fresh("NEXT_READY")
        k(f"add.u32 {nxt}, {kb}, 1")
        k(f"setp.ge.u32 {pnext}, {nxt}, %nkb_c")
        k(f"@{pnext} bra.uni {skip_next}")
        k.comment("NOTE: the chain in flight read its descriptors at issue: rewriting them is safe")
        slot_descs()
        sm90.mbar_wait(k, ring.full, ring.phase, "NEXT")
        if self.sm:
            k.comment("NOTE: the next K block's scales now, not after the promotion: read there, their\n"
                      "shared-memory latency sat between the next chain's first and second wgmma\n"
                      "(H100, 4096x7168x16384: 1.093 -> 1.054 M cycles at locked clock, 1290-1310 ->\n"
                      "1359-1363 TFLOPS at boost)")
            self.block_scale_lds_sm(ring, nxt)
        k.label(skip_next)
        k("wgmma.wait_group.sync.aligned 0")
        k.comment("the slot's bytes are consumed: one arrival per consumer warp frees it" +
                  ("" if self.cl == 1 else " (ours and the peer's:\nits producer multicasts into our slot too)"))
        self.release(cur_empty, p_lane0)

    def release(self, bar, p_lane0, pred=None):
        """One arrival per consumer warp on a slot's empty barrier (and, in a cluster, on the
        peer's: its producer multicasts into our slot too)."""
        k = self.k
        p = p_lane0
        if pred:
            p = k.reg(".pred", "p_rel")
            k(f"and.pred {p}, {p_lane0}, {pred}")
        if staged_scales(self.mode, self.pipe) and not self.sm:
            k.comment("NOTE: every lane read the slot's scale products (ld.shared) that the scale warp\n"
                      "overwrites once the slot is free: the warp barrier orders those reads before lane\n"
                      "0's release. compute-sanitizer racecheck (CUDA 13.0) still reports the pair: it does\n"
                      "not follow mbarrier try_wait.parity handoffs (a minimal two-warp kernel with the same\n"
                      "handoff is reported too; bench/RESULTS.md, 2026-11-26)")
            k("bar.warp.sync 0xffffffff")
        sm90.mbar_arrive(k, bar, p)
        if self.cl > 1:
            sm90.mbar_arrive_remote(k, bar, "%peer_rank", k.reg(".b32", "t_remote"), p)

    def direct_kblock(self, ring, acc, daj, dbj, kb, p_lane0):
        """BF16: one 128-byte K block (64 of K) = 4 x m64nBNk16 straight into the accumulator
        (scale-d 0 on the tile's first block). The chain of block kb is issued before the wait for
        block kb-1 (wait_group 1), so the tensor core always has the next chain queued; block
        kb-1's slot is freed after that wait, one block late. C_DRAIN ends the tile: wait for the
        last chain and free its slot.
        NOTE: the ring then holds one slot fewer in flight for the producer (4+ stages here)."""
        k = self.k
        bn = self.bn
        pacc, pprev = k.reg(".pred", "p_accum"), k.reg(".pred", "p_prev")
        prev = k.reg(".b32", "prev_empty")
        k.comment(f"one 128-byte K block: 4 x m64n{bn}k16 into the accumulator (scale-d 0 on the tile's first)")
        k(f"setp.ne.u32 {pacc}, {kb}, 0")
        k("wgmma.fence.sync.aligned")
        for j in range(4):
            sm90.wgmma_fp8(k, bn, acc, daj[j], dbj[j], pacc if j == 0 else 1, *self.ab)
        k("wgmma.commit_group.sync.aligned")
        k.comment("block kb-1's chain is done once at most this one is pending: free its slot")
        k("wgmma.wait_group.sync.aligned 1")
        self.release(prev, p_lane0, pacc)
        k(f"mov.u32 {prev}, {ring.empty}")
        ring.advance()
        k(f"add.u32 {kb}, {kb}, 1")
        k("bra.uni C_KB")
        k.label("C_DRAIN")
        k.comment("the tile's last chain: wait for it and free its slot (no K block: nothing to free)")
        k("wgmma.wait_group.sync.aligned 0")
        k(f"setp.ne.u32 {pprev}, {kb}, 0")
        self.release(prev, p_lane0, pprev)

    # ---- pipelined consumer ---------------------------------------------------------------------
    def consumer_pipe(self, ring):
        """Like consumer(), but the tensor core never drains between K blocks. The work of a tile
        is a sequence of wgmma groups (p2: one 128-K chain per K block into partial set kb % 2;
        h2: two half-width 128-K chains per K block into the two column halves of one partial set).
        Step i issues group i, commits, waits until at most one group is pending (wait_group 1:
        group i-1 is done while group i runs), promotes group i-1 and, if that was the last group
        of its K block, frees that block's slot. The K loop is unrolled by two blocks (register
        names and scale sets alternate with the parity of kb)."""
        k = self.k
        bn = self.bn
        nreg = bn // 2
        k.label("CONSUMER")
        k.comment(f"==== consumer warpgroups ({self.pipe} pipeline): 64 rows of the 128 x BN tile each")
        cwg, w, lane, g, t4, rbase, p_lane0, da0, db0, t32, s_ab = self.consumer_entry()

        acc = k.regs(".f32", "acc", nreg)
        if self.pipe == "p2":
            parts = [k.regs(".f32", "part0_", nreg), k.regs(".f32", "part1_", nreg)]
            ngroups = 1
        else:
            parts = [k.regs(".f32", "part", nreg)]
            ngroups = 2
        gw = bn // ngroups            # columns per group
        greg = gw // 2                # registers per group

        def group_regs(par, h):
            """(partial registers, first accumulator chunk) of group h of a K block of parity par"""
            if self.pipe == "p2":
                return parts[par], 0
            return parts[0][h * greg:(h + 1) * greg], h * gw // 8

        tile, m0, n0, kb = (k.reg(".b32", n) for n in ("c_tile", "c_m0", "c_n0", "c_kb"))
        mr0, mr1 = k.reg(".b32", "m_r0"), k.reg(".b32", "m_r1")
        pr0, pr1 = k.reg(".pred", "p_row0"), k.reg(".pred", "p_row1")
        pdone = k.reg(".pred", "p_cdone")
        pfirst = k.reg(".pred", "p_kb0")
        prev_empty = k.reg(".b32", "prev_empty")
        so, da, db = k.reg(".b64", "t_slot_enc"), k.reg(".b64", "desc_a"), k.reg(".b64", "desc_b")
        dt_a, dt_b = k.reg(".b64", "desc_at"), k.reg(".b64", "desc_bt")

        def release(bar):
            if self.cl == 1:
                sm90.mbar_arrive(k, bar, p_lane0)
            else:
                sm90.mbar_arrive(k, bar, p_lane0)
                sm90.mbar_arrive_remote(k, bar, "%peer_rank", k.reg(".b32", "t_remote"), p_lane0)

        def prom(par, h):
            regs, q0 = group_regs(par, h)
            self.promote(regs, acc[4 * q0:4 * q0 + len(regs)], n0,
                         sfx=f"_{par}" if self.mode == "block" else "", q0=q0)

        def kblock(par, lab_exit):
            """one K block of parity par (kb % 2 == par)"""
            k(f"setp.ge.u32 {pdone}, {kb}, %nkb_c")
            k(f"@{pdone} bra.uni {lab_exit}")
            if self.mode == "block":
                self.block_scale_load(f"_{par}")
            k(f"mov.u32 {prev_empty}, {ring.empty}")
            ring.locate()
            k(f"mul.wide.u32 {so}, {ring.slot}, {self.stage // 16}")
            k(f"add.s64 {da}, {da0}, {so}")
            k(f"add.s64 {db}, {db0}, {so}")
            sm90.mbar_wait(k, ring.full, ring.phase, "FULL")
            for h in range(ngroups):
                regs, _ = group_regs(par, h)
                k.comment(f"group {h} of this K block: 4 x m64n{gw}k32 (B rows {h * gw}..), then promote the previous group")
                k("wgmma.fence.sync.aligned")
                for j in range(4):
                    k(f"add.s64 {dt_a}, {da}, {2 * j}")
                    k(f"add.s64 {dt_b}, {db}, {2 * j + h * gw * BK // 16}")
                    sm90.wgmma_fp8(k, gw, regs, dt_a, dt_b, 0 if j == 0 else 1, *self.ab)
                k("wgmma.commit_group.sync.aligned")
                k("wgmma.wait_group.sync.aligned 1")
                if h == 0:
                    # previous group: the last group of the previous K block (parity 1 - par)
                    skip = k.fresh("NO_PREV")
                    if par == 0:
                        k(f"setp.eq.u32 {pfirst}, {kb}, 0")
                        k(f"@{pfirst} bra.uni {skip}")
                    prom(1 - par if self.pipe == "p2" else par ^ 1, ngroups - 1)
                    k.comment("the previous K block is consumed: free its slot")
                    release(prev_empty)
                    k.label(skip)
                else:
                    prom(par, h - 1)
            ring.advance()
            k(f"add.u32 {kb}, {kb}, 1")

        self.consumer_tile_begin(ring, tile, m0, n0, kb, mr0, mr1, pr0, pr1, pdone, rbase, acc)
        if self.idle:
            k("@%p_wgidle bra.uni C_IDLE")
        k.label("C_KB")
        kblock(0, "C_TAIL1")
        kblock(1, "C_TAIL0")
        k("bra.uni C_KB")
        for par, lab in ((1, "C_TAIL1"), (0, "C_TAIL0")):
            k.label(lab)
            k.comment(f"K done: drain, promote the last group (K block of parity {par}), free its slot")
            k("wgmma.wait_group.sync.aligned 0")
            if par == 1:
                k(f"setp.eq.u32 {pfirst}, {kb}, 0")
                k("@%p_kb0 bra.uni C_EPILOGUE")
            prom(par, ngroups - 1)
            release(ring.empty)
            if par == 1:
                k("bra.uni C_EPILOGUE")
        if self.idle:
            self.idle_kloop(ring, kb, pdone, p_lane0)
        self.consumer_tile_end(acc, s_ab, tile, m0, n0, mr0, mr1, pr0, pr1, t4)

    # ---- block scales -------------------------------------------------------------------------
    def block_scale_setup(self, m0, n0, mr0, mr1, pr0, pr1):
        """Per tile: running pointers to sa(m_r0, kb), sa(m_r1, kb), sb(nb0, kb), sb(nb1, kb).
        A tile starts at n0 % 128 = r (a multiple of gcd(BN, 128)); with BN <= 256 - r it spans
        B-scale blocks nb0 and nb1, and 8-column chunk q belongs to nb0 while 8q < 128 - r."""
        k = self.k
        if self.sm:
            k.comment("TMA-loaded scales: this thread's rows in a slot's A box (row pitch 16 B K-major, 4 B\n"
                      "M-major; the second row 8 rows on) and B's two blocks (K-major: +16; N-major: the\n"
                      "box starts at block nb0 & ~3, so nb0 is (nb0 & 3) in, nb1 the next); K-major boxes\n"
                      "start at K block kb & ~3: the K block's element is (kb & 3) in (masks sc_amask /\n"
                      "sc_bmask keep that offset for K-major boxes only)")
            pk, t = k.reg(".pred", "p_sc_akmaj"), k.reg(".b32", "t_sc")
            k(f"and.b32 {t}, %a_scmode, {SC_A_KMAJOR}")
            k(f"setp.ne.u32 {pk}, {t}, 0")
            k(f"selp.u32 {k.reg('.b32', 'sc_amask')}, -1, 0, {pk}")
            k(f"selp.u32 {t}, 4, 2, {pk}")
            k(f"sub.u32 {k.reg('.b32', 'sc_row')}, {mr0}, {m0}")
            k(f"shl.b32 %sc_row, %sc_row, {t}")
            k(f"add.u32 %sc_row, %sc_row, %smem")
            k(f"add.u32 %sc_row, %sc_row, {self.sc_base()}")
            k.comment("row 1: 8 rows on, 8 << log2(pitch) bytes")
            k(f"shl.b32 {t}, 8, {t}")
            k(f"add.u32 {k.reg('.b32', 'sc_row1')}, %sc_row, {t}")
            k(f"and.b32 {t}, %a_scmode, {SC_B_NMAJOR}")
            k(f"setp.ne.u32 {pk}, {t}, 0")
            k(f"selp.u32 {k.reg('.b32', 'sc_bmask')}, 0, -1, {pk}")
            k(f"shr.u32 {t}, {n0}, 5")
            k(f"and.b32 {t}, {t}, 12")
            k(f"selp.u32 {t}, {t}, 0, {pk}")
            k(f"add.u32 {k.reg('.b32', 'sc_sb')}, %smem, {t}")
            k(f"add.u32 %sc_sb, %sc_sb, {self.sc_base() + self.sm_sa}")
            k(f"selp.u32 {t}, 4, 16, {pk}")
            k(f"add.u32 {k.reg('.b32', 'sc_sb1')}, %sc_sb, {t}")
            k(f"and.b32 {k.reg('.b32', 'n_res')}, {n0}, 127")
            return
        if self.sc:
            k.comment("staged scale products: this thread's row 0 pair (s_b0, s_b1) in a slot (8 B a row;\n"
                      "row 1 is 8 rows = 64 B on)")
            k(f"sub.u32 {k.reg('.b32', 'sc_row')}, {mr0}, {m0}")
            k(f"shl.b32 %sc_row, %sc_row, 3")
            k(f"add.u32 %sc_row, %sc_row, %smem")
            k(f"add.u32 %sc_row, %sc_row, {self.sc_base()}")
            k(f"and.b32 {k.reg('.b32', 'n_res')}, {n0}, 127")
            return
        t = k.reg(".b64", "t_sc")
        pa0, pa1, pb0, pb1 = (k.reg(".b64", n) for n in ("sa_ptr0", "sa_ptr1", "sb_ptr0", "sb_ptr1"))
        k.comment("block scales of this tile: pointers at kb = 0 (rows past M read nothing)")
        k(f"cvt.u64.u32 {t}, {mr0}")
        k(f"mul.lo.u64 {t}, {t}, %a_sam")
        k(f"mad.lo.u64 {pa0}, {t}, 4, %sa_t")
        k(f"cvt.u64.u32 {t}, {mr1}")
        k(f"mul.lo.u64 {t}, {t}, %a_sam")
        k(f"mad.lo.u64 {pa1}, {t}, 4, %sa_t")
        nb0, nb1 = k.reg(".b32", "nb0"), k.reg(".b32", "nb1")
        k(f"shr.u32 {nb0}, {n0}, 7")
        k(f"add.u32 {nb1}, {nb0}, 1")
        lim = k.reg(".b32", "t_nbmax")
        k(f"sub.u32 {lim}, %a_nbn, 1")
        k(f"min.u32 {nb1}, {nb1}, {lim}")
        k(f"cvt.u64.u32 {t}, {nb0}")
        k(f"mul.lo.u64 {t}, {t}, %a_sbn")
        k(f"mad.lo.u64 {pb0}, {t}, 4, %sb_t")
        k(f"cvt.u64.u32 {t}, {nb1}")
        k(f"mul.lo.u64 {t}, {t}, %a_sbn")
        k(f"mad.lo.u64 {pb1}, {t}, 4, %sb_t")
        for sfx in (("_0", "_1") if self.pipe else ("",)):
            for r in ("sc_a0", "sc_a1"):
                k(f"mov.f32 {k.reg('.f32', r + sfx)}, 0f00000000")
        k(f"and.b32 {k.reg('.b32', 'n_res')}, {n0}, 127")
        k.reg(".b64", "sak4")
        k.reg(".b64", "sbk4")
        k(f"shl.b64 %sak4, %a_sak, 2")
        k(f"shl.b64 %sbk4, %a_sbk, 2")
        k.comment("split-K: this unit's first K block")
        k(f"cvt.u64.u32 {t}, %kb0_c")
        for p_, s_ in ((pa0, "%sak4"), (pa1, "%sak4"), (pb0, "%sbk4"), (pb1, "%sbk4")):
            k(f"mad.lo.u64 {p_}, {t}, {s_}, {p_}")

    def block_scale_load(self, sfx=""):
        """Issue this K block's scale loads before waiting on the slot (their latency hides
        behind the TMA wait and the wgmmas), then step the pointers to the next K block.
        sfx names the scale set (pipelined consumers keep one per K-block parity)."""
        k = self.k
        k(f"@%p_row0 ld.global.nc.f32 %sc_a0{sfx}, [%sa_ptr0]")
        k(f"@%p_row1 ld.global.nc.f32 %sc_a1{sfx}, [%sa_ptr1]")
        k(f"ld.global.nc.f32 {k.reg('.f32', 'sc_b0' + sfx)}, [%sb_ptr0]")
        if self.bn > 128:
            k(f"ld.global.nc.f32 {k.reg('.f32', 'sc_b1' + sfx)}, [%sb_ptr1]")
        for p, s in (("sa_ptr0", "sak4"), ("sa_ptr1", "sak4"), ("sb_ptr0", "sbk4"), ("sb_ptr1", "sbk4")):
            k(f"add.s64 %{p}, %{p}, %{s}")

    def block_scale_lds(self, ring):
        """Plain consumer: this K block's scale products (sa * sb for the thread's two rows and
        the tile's two B-scale blocks; scale_producer), loaded after the chain is issued and used
        after the wait for it.
        NOTE: where these loads go, and whether the consumer multiplies, matters (H100, 4096 x
        7168 x 16384, one process, TFLOPS at c1 / c2; 1387 / 1393 with no loads at all). With raw
        scales and the products computed here: loads right after the slot's full wait, before
        the wgmmas, 1289-1307 / 1302-1320; after the wait for the chain 1247-1264; after the
        chain's issue in PTX ~1080, as ptxas put the loads and the products' FMULs between the
        third and fourth wgmma, where the FMULs waited for the loads; read at the end of the
        previous K block 1184-1233, or only when that slot is already full (test_wait) 1215-1222
        against 1256-1266. With the products staged, nothing between the wgmmas waits for these
        loads: 1272-1278 against 1255-1272 for the first placement above (same process)."""
        k = self.k
        if self.sm:
            k.comment("the scale products of this K block: sa(row) * sb(block) for the two rows and blocks")
            nb = 2 if self.bn > 128 else 1
            for r in (0, 1):
                for b in range(nb):
                    k(f"mul.rn.f32 {k.reg('.f32', f'sp_r{r}_b{b}')}, %sm_a{r}, %sm_b{b}")
            return
        a = k.reg(".b32", "t_sc_a")
        k(f"mad.lo.u32 {a}, {ring.slot}, {SC_SLOT}, %sc_row")
        k(f"ld.shared.v2.f32 {{{k.reg('.f32', 'sp_r0_b0')}, {k.reg('.f32', 'sp_r0_b1')}}}, [{a}]")
        k(f"ld.shared.v2.f32 {{{k.reg('.f32', 'sp_r1_b0')}, {k.reg('.f32', 'sp_r1_b1')}}}, [{a}+64]")

    def block_scale_lds_sm(self, ring, kb="%c_kb"):
        """sm: K block kb's raw scales from the slot (TMA-loaded with the operands), read right
        after its full wait, before its chain is issued; multiplied after the issue
        (block_scale_lds)."""
        k = self.k
        so, e, t, p = (k.reg(".b32", n) for n in ("t_sc_slot", "t_sc_e", "t_sc_t", "t_sc_p"))
        k.comment("this K block's element in K-major boxes: (kb & 3) * 4 bytes (kb counted from K = 0)")
        k(f"add.u32 {e}, %kb0_c, {kb}")
        k(f"and.b32 {e}, {e}, 3")
        k(f"shl.b32 {e}, {e}, 2")
        k(f"mul.lo.u32 {so}, {ring.slot}, {self.sm_slot}")
        k(f"and.b32 {t}, {e}, %sc_amask")
        k(f"add.u32 {t}, {t}, {so}")
        k(f"add.u32 {p}, {t}, %sc_row")
        k(f"ld.shared.f32 {k.reg('.f32', 'sm_a0')}, [{p}]")
        k(f"add.u32 {p}, {t}, %sc_row1")
        k(f"ld.shared.f32 {k.reg('.f32', 'sm_a1')}, [{p}]")
        k(f"and.b32 {t}, {e}, %sc_bmask")
        k(f"add.u32 {t}, {t}, {so}")
        k(f"add.u32 {p}, {t}, %sc_sb")
        k(f"ld.shared.f32 {k.reg('.f32', 'sm_b0')}, [{p}]")
        if self.bn > 128:
            k(f"add.u32 {p}, {t}, %sc_sb1")
            k(f"ld.shared.f32 {k.reg('.f32', 'sm_b1')}, [{p}]")

    # ---- MXFP8 scales ---------------------------------------------------------------------------
    def mx_scale_setup(self, m0, n0, mr0, mr1):
        """Per tile: pointers to this thread's two rows of A's scales and to the B-scale word of
        column n0 + (thread % 128), at this unit's first K block (4 scale bytes a K block), and
        whether that column exists."""
        k = self.k
        t, c = k.reg(".b64", "t_mx"), k.reg(".b32", "mx_col")
        pa0, pa1, pb = (k.reg(".b64", n) for n in ("mxa_ptr0", "mxa_ptr1", "mxb_ptr"))
        k.comment("MX scales of this tile: rows m_r0 / m_r1 of A's, column n0 + tid % 128 of B's")
        t2 = k.reg(".b64", "t_mx2")
        k(f"cvt.u64.u32 {t}, %kb0_c")
        k(f"shl.b64 {t}, {t}, 2")
        k.comment("scale row strides (sam, sbn) are in bytes: UE8M0 elements are bytes")
        for pa, mr in ((pa0, mr0), (pa1, mr1)):
            k(f"cvt.u64.u32 {t2}, {mr}")
            k(f"mad.lo.u64 {pa}, {t2}, %a_sam, %sa_t")
            k(f"add.u64 {pa}, {pa}, {t}")
        k(f"mov.u32 {c}, %tid.x")
        k(f"and.b32 {c}, {c}, 127")
        k(f"add.u32 {c}, {c}, {n0}")
        k(f"setp.lt.u32 {k.reg('.pred', 'p_mxcol')}, {c}, %a_n")
        k(f"cvt.u64.u32 {t2}, {c}")
        k(f"mad.lo.u64 {pb}, {t2}, %a_sbn, %sb_t")
        k(f"add.u64 {pb}, {pb}, {t}")
        k.comment("this warpgroup's two scale buffers (K-block parity) after the barriers; barrier\n"
                  "2 + consumer warpgroup (the TMA-store epilogue's too: the same 128 threads)")
        buf, bar = k.reg(".b32", "mx_buf"), k.reg(".b32", "mx_bar")
        k(f"mov.u32 {buf}, %tid.x")
        k(f"shr.u32 {buf}, {buf}, 7")
        k(f"add.u32 {bar}, {buf}, 1")
        k(f"sub.u32 {buf}, {buf}, 1")
        off = self.stages * self.stage + staging_bytes(self.bn, self.ts, self.cw) + 16 * self.stages + 16
        k(f"mad.lo.u32 {buf}, {buf}, 4096, %smem")
        k(f"add.u32 {buf}, {buf}, {off}")

    def mx_decode(self, dst, word, j):
        """UE8M0 byte j of word -> 2^(e - 127) as f32 bits e << 23 (e = 0: 2^-127, a subnormal,
        0x00400000; e = 255 gives +inf, not NaN: such outputs are inf or NaN). dst: .b32"""
        k = self.k
        k(f"bfe.u32 {dst}, {word}, {8 * j}, 8")
        k(f"shl.b32 {dst}, {dst}, 23")
        k(f"max.u32 {dst}, {dst}, 0x00400000")

    def mx_scale_load(self, kb):
        """This K block's scales, before the slot wait: A's two words (rows past M read nothing)
        straight into registers; B's word of this thread's column, decoded to 4 floats, into the
        warpgroup's buffer of parity kb % 2 ([k32 step][128 columns] f32), then the warpgroup
        meets. Each thread reads its columns' floats per step in mx_kblock.
        NOTE: two buffers: a thread writing K block kb + 1 has passed this block's barrier, which
        every thread reaches only after reading block kb - 1 (the other buffer). The parity is
        the warpgroup's running count of K blocks (%mx_seq), not the unit's kb: with an odd K
        block count a unit's first block and the previous unit's last one had the same parity,
        and a fast thread wrote the buffer a slow one was still reading (compute-sanitizer
        racecheck, 1000 x 1000 x 3200 on 50 CTAs; results were right by timing, 2026-11-26)."""
        k = self.k
        k(f"mov.u32 {k.reg('.b32', 'mx_sa0')}, 0")
        k(f"mov.u32 {k.reg('.b32', 'mx_sa1')}, 0")
        k("@%p_row0 ld.global.nc.u32 %mx_sa0, [%mxa_ptr0]")
        k("@%p_row1 ld.global.nc.u32 %mx_sa1, [%mxa_ptr1]")
        w, sl, f = k.reg(".b32", "mx_w"), k.reg(".b32", "mx_slot"), k.reg(".b32", "mx_f")
        k(f"mov.u32 {w}, 0")
        k(f"@%p_mxcol ld.global.nc.u32 {w}, [%mxb_ptr]")
        k(f"and.b32 {sl}, %mx_seq, 1")
        k("add.u32 %mx_seq, %mx_seq, 1")
        k(f"mad.lo.u32 {sl}, {sl}, 2048, %mx_buf")
        tc = k.reg(".b32", "mx_tc")
        k(f"mov.u32 {tc}, %tid.x")
        k(f"and.b32 {tc}, {tc}, 127")
        k(f"mad.lo.u32 {tc}, {tc}, 4, {sl}")
        for j in range(4):
            self.mx_decode(f, w, j)
            k(f"st.shared.u32 [{tc}+{512 * j}], {f}")
        k("bar.sync %mx_bar, 128")
        k.comment("this thread's columns 8q + 2t (+1): floats at 4 * (8q + 2t) of each step's row")
        k(f"mov.u32 {k.reg('.b32', 'mx_rd')}, %tid.x")
        k("and.b32 %mx_rd, %mx_rd, 3")
        k(f"mad.lo.u32 %mx_rd, %mx_rd, 8, {sl}")
        for p in ("mxa_ptr0", "mxa_ptr1", "mxb_ptr"):
            k(f"add.s64 %{p}, %{p}, 4")

    def mx_kblock(self, ring, parts, acc, daj, dbj, p_lane0):
        """One 128-K block in MX mode: k32 step j's wgmma goes into partial set j % 2 and is
        issued before step j - 1 is promoted (wait_group 1), so the tensor core works on step j
        while the CUDA cores promote step j - 1; the last step is promoted after a full wait,
        once the slot has been freed. acc += part * sa(m, j) * sb(n, j)."""
        k = self.k
        n = len(acc)
        sa = ["%mx_sa0", "%mx_sa1"]
        fa = [k.reg(".f32", "mx_fa0"), k.reg(".f32", "mx_fa1")]
        fb = [k.reg(".f32", "mx_fb0"), k.reg(".f32", "mx_fb1")]
        s, t = k.reg(".f32", "mx_s"), k.reg(".b32", "t_mxe")

        def promote_step(j):
            part = parts[j % 2]
            k.comment(f"promote k32 step {j}: acc += part{j % 2} * sa * sb")
            for r in (0, 1):
                self.mx_decode(t, sa[r], j)
                k(f"mov.b32 {fa[r]}, {t}")
            for q in range(n // 4):
                k(f"ld.shared.v2.f32 {{{fb[0]}, {fb[1]}}}, [%mx_rd+{512 * j + 32 * q}]")
                for e in (0, 1):
                    for r in (0, 1):
                        i = 4 * q + 2 * r + e
                        k(f"mul.rn.f32 {s}, {fa[r]}, {fb[e]}")
                        k(f"fma.rn.f32 {acc[i]}, {part[i]}, {s}, {acc[i]}")

        for j in range(4):
            k.comment(f"k32 step {j}: m64n{self.bn}k32 into partial set {j % 2}")
            k("wgmma.fence.sync.aligned")
            sm90.wgmma_fp8(k, self.bn, parts[j % 2], daj[j], dbj[j], 0, *self.ab)
            k("wgmma.commit_group.sync.aligned")
            if j > 0:
                k("wgmma.wait_group.sync.aligned 1")
                promote_step(j - 1)
        k("wgmma.wait_group.sync.aligned 0")
        k.comment("the slot's bytes are consumed: free it before the last promotion")
        sm90.mbar_arrive(k, ring.empty, p_lane0)
        if self.cl > 1:
            sm90.mbar_arrive_remote(k, ring.empty, "%peer_rank", k.reg(".b32", "t_remote"), p_lane0)
        ring.advance()
        promote_step(3)

    def promote(self, part, acc, n0, sfx="", q0=0):
        """acc[i] (+)= partial[i]; part covers accumulator chunks q0.. (8 columns each)."""
        k = self.k
        n = len(part)
        if self.mode != "block":
            k.comment("promotion: acc += partial (FP32 on the CUDA cores)")
            for i in range(n):
                k(f"add.f32 {acc[i]}, {acc[i]}, {part[i]}")
            return
        k.comment("promotion with the block scales: acc += sa(m, kb) * sb(nb, kb) * partial")
        c = {}
        for r in (0, 1):
            for b in ((0, 1) if self.bn > 128 else (0,)):
                if self.sc:
                    c[r, b] = f"%sp_r{r}_b{b}"
                    continue
                c[r, b] = k.reg(".f32", f"s_r{r}_b{b}")
                k(f"mul.rn.f32 {c[r, b]}, %sc_a{r}{sfx}, %sc_b{b}{sfx}")
        import math
        residues = list(range(0, 128, math.gcd(self.bn, 128))) if self.bn > 128 else [0]
        chunks = sorted({q0 + (i >> 2) for i in range(n)})
        # chunk q is in B-scale block nb0 while 8q < 128 - n_res, i.e. n_res < 128 - 8q: always
        # (for every residue the tile start can have), never, or depending on n_res ("mixed")
        scale = {}
        for q in chunks:
            below = sum(1 for r in residues if r < 128 - 8 * q)
            if below == len(residues):
                scale[q] = (c[0, 0], c[1, 0])
            elif below == 0:
                scale[q] = (c[0, 1], c[1, 1])
            else:
                scale[q] = below
        mixed = sorted({v for v in scale.values() if isinstance(v, int)})
        if mixed:
            k.comment("chunks whose B-scale block depends on where the tile starts in one (n0 % 128):\n"
                      "their scale by select, not by branching to a copy of the loop per residue (+3%)")
        sel = {}
        for below in mixed:
            p_ = k.reg(".pred", f"p_sel{below}")
            k(f"setp.lt.u32 {p_}, %n_res, {residues[below - 1] + 1}")
            sel[below] = tuple(k.reg(".f32", f"s_sel{below}_r{r}") for r in (0, 1))
            for r in (0, 1):
                k(f"selp.f32 {sel[below][r]}, {c[r, 0]}, {c[r, 1]}, {p_}")
        for i in range(n):
            q, r = q0 + (i >> 2), (i >> 1) & 1
            v = scale[q]
            sc = sel[v][r] if isinstance(v, int) else v[r]
            k(f"fma.rn.f32 {acc[i]}, {part[i]}, {sc}, {acc[i]}")

    # ---- epilogue -----------------------------------------------------------------------------
    def epilogue(self, acc, s_ab, m0, n0, mr0, mr1, pr0, pr1, t4):
        """Two paths. Fast (flags' general bit clear, the tile wholly inside D): scale, round to
        BF16 pairs, one 4-byte store per pair. General (anything else: F16/F32 output, C, bias,
        a row map, edge tiles): per element, masked, any type."""
        k = self.k
        bn = self.bn
        nq = bn // 8
        k.comment("==== epilogue: rows m_r0, m_r1 (= m_r0 + 8); cols n0 + 8q + 2t (+1)\n"
                  + sm90.acc_layout_doc(bn))
        c0 = k.reg(".b32", "col0")
        k(f"mad.lo.u32 {c0}, {t4}, 2, {n0}")
        k(f"mov.b32 {k.reg('.f32', 'alpha')}, %a_alpha")
        k(f"mov.b32 {k.reg('.f32', 'beta')}, %a_beta")
        if self.mode == "tensor":
            k.comment("s = sa * sb * alpha")
            k(f"mul.rn.f32 {s_ab}, {s_ab}, %t_sb")
            k(f"mul.rn.f32 {s_ab}, {s_ab}, %alpha")
        esh, t32 = k.reg(".b32", "d_esh"), k.reg(".b32", "t_e32")
        k.comment("D (and C) element size: 4 bytes for F32 output, else 2")
        k(f"and.b32 {t32}, %a_flags, 3")
        k(f"setp.eq.u32 {k.reg('.pred', 'p_of')}, {t32}, {OUT_F32}")
        k(f"selp.u32 {esh}, 2, 1, %p_of")
        t, cofs = k.reg(".b64", "t_d"), k.reg(".b64", "t_cofs")
        k(f"shl.b32 {t32}, {c0}, {esh}")
        k(f"cvt.u64.u32 {cofs}, {t32}")

        def row_ptrs(base, ld, bs, bat, p0, p1):
            """p0 = base + bat * bs + m_r0 * ld + col0 * esize; p1 = p0 + 8 * ld (bytes)"""
            k(f"cvt.u64.u32 {t}, {bat}")
            k(f"mad.lo.u64 {p0}, {t}, {bs}, {base}")
            k(f"cvt.u64.u32 {t}, {mr0}")
            k(f"mad.lo.u64 {p0}, {t}, {ld}, {p0}")
            k(f"add.u64 {p0}, {p0}, {cofs}")
            k(f"mad.lo.u64 {p1}, {ld}, 8, {p0}")

        if not self.ts:
            dp0, dp1 = k.reg(".b64", "d_ptr0"), k.reg(".b64", "d_ptr1")
            row_ptrs("%a_d", "%a_ldd", "%a_d_bs", "%t_bat_c", dp0, dp1)
            nrem = k.reg(".b32", "n_rem")
            k.comment("n_rem = N - (n0 + 2t): column 8q + e of this thread exists if 8q + e < n_rem")
            k(f"sub.u32 {nrem}, %a_n, {c0}")
        sr = [None, None]
        if self.mode == "row":
            k.comment("row scales: alpha * sa of this thread's two rows, sb of its columns (per chunk)")
            sr = [k.reg(".f32", "sa_r0"), k.reg(".f32", "sa_r1")]
            ta = k.reg(".b64", "t_sa")
            for mr, pr, s in ((mr0, pr0, sr[0]), (mr1, pr1, sr[1])):
                k(f"mov.f32 {s}, 0f00000000")
                k(f"cvt.u64.u32 {ta}, {mr}")
                k(f"mul.lo.u64 {ta}, {ta}, %a_sam")
                k(f"mad.lo.u64 {ta}, {ta}, 4, %sa_t")
                k(f"@{pr} ld.global.nc.f32 {s}, [{ta}]")
                k(f"mul.rn.f32 {s}, {s}, %alpha")
            pbn = k.reg(".b64", "sb_col")
            k(f"cvt.u64.u32 {t}, {c0}")
            k(f"mul.lo.u64 {t}, {t}, %a_sbn")
            k(f"mad.lo.u64 {pbn}, {t}, 4, %sb_t")
            k(f"shl.b64 {k.reg('.b64', 'sbn4')}, %a_sbn, 2")
            k.reg(".b64", "sb_q")
        v0, v1, h = k.reg(".f32", "v0"), k.reg(".f32", "v1"), k.reg(".b32", "h2")
        sc = [k.reg(".f32", "sb_c0"), k.reg(".f32", "sb_c1")]

        def scaled(v, i, r, e):
            if self.mode == "tensor":
                k(f"mul.rn.f32 {v}, {acc[i]}, {s_ab}")
            elif self.mode == "row":
                k(f"mul.rn.f32 {v}, {acc[i]}, {sr[r]}")
                k(f"mul.rn.f32 {v}, {v}, {sc[e]}")
            else:
                k(f"mul.rn.f32 {v}, {acc[i]}, %alpha")

        if self.ts:
            self.epilogue_tma(acc, m0, n0, scaled, v0, v1, h, sc)
            return

        # fast path: general bit clear and the tile wholly inside D
        pin, tt = k.reg(".pred", "p_interior"), k.reg(".b32", "t_in")
        k(f"add.u32 {tt}, {m0}, {self.bm}")
        k(f"setp.le.u32 {pin}, {tt}, %mlim_c")
        k(f"add.u32 {tt}, {n0}, {bn}")
        k(f"setp.le.and.u32 {pin}, {tt}, %a_n, {pin}")
        k(f"and.b32 {tt}, %a_flags, {GENERAL_BIT}")
        k(f"setp.eq.and.u32 {pin}, {tt}, 0, {pin}")
        lab_gen, lab_end = k.fresh("EPI_GENERAL"), k.fresh("EPI_END")
        k(f"@!{pin} bra.uni {lab_gen}")
        k.comment("fast path: plain BF16 D, interior tile: every pair is inside D")
        for q in range(nq):
            if self.mode == "row":
                self.row_col_scales(q, sc)
            for r, dp in ((0, dp0), (1, dp1)):
                scaled(v0, 4 * q + 2 * r, r, 0)
                scaled(v1, 4 * q + 2 * r + 1, r, 1)
                k(f"cvt.rn.bf16x2.f32 {h}, {v1}, {v0}")
                k(f"st.global.b32 [{dp}+{16 * q}], {h}")
        k(f"bra.uni {lab_end}")

        k.label(lab_gen)
        k.comment("general path: per element; D = v + beta * C + bias, v the scaled product; rows past\n"
                  "the limit (or of another group), columns past N are neither read nor written")
        p = {n: k.reg(".pred", f"p_{n}") for n in ("ob", "oh", "o16", "c", "cb", "ch", "c16", "cf",
                                                   "bb", "bf", "b")}
        k(f"and.b32 {t32}, %a_flags, 3")
        k(f"setp.eq.u32 {p['ob']}, {t32}, {OUT_BF16}")
        k(f"setp.eq.u32 {p['oh']}, {t32}, {OUT_F16}")
        k(f"setp.ne.u32 {p['o16']}, {t32}, {OUT_F32}")
        k(f"and.b32 {t32}, %a_flags, {C_BIT}")
        k(f"setp.ne.u32 {p['c']}, {t32}, 0")
        k(f"and.pred {p['cb']}, {p['c']}, {p['ob']}")
        k(f"and.pred {p['ch']}, {p['c']}, {p['oh']}")
        k(f"and.pred {p['c16']}, {p['c']}, {p['o16']}")
        k(f"and.pred {p['cf']}, {p['c']}, %p_of")
        k(f"bfe.u32 {t32}, %a_flags, {BIAS_SHIFT}, 2")
        k(f"setp.eq.u32 {p['bb']}, {t32}, 1")
        k(f"setp.eq.u32 {p['bf']}, {t32}, 2")
        k(f"setp.ne.u32 {p['b']}, {t32}, 0")
        cp0, cp1, bp = k.reg(".b64", "c_ptr0"), k.reg(".b64", "c_ptr1"), k.reg(".b64", "bias_ptr")
        row_ptrs("%a_c", "%a_ldc", "%a_c_bs", "%t_bat_c", cp0, cp1)
        k.comment("bias of B's batch, at col0 (element size 2 or 4)")
        k(f"selp.u32 {t32}, 2, 1, {p['bf']}")
        k(f"shl.b32 {t32}, {c0}, {t32}")
        k(f"cvt.u64.u32 {bp}, {t32}")
        k(f"cvt.u64.u32 {t}, %bb_c")
        k(f"mad.lo.u64 {t}, {t}, %a_bias_bs, %a_bias")
        k(f"add.u64 {bp}, {bp}, {t}")
        k.comment("contiguous grouping: a row is written only if its group is the tile's")
        gm, gr = k.reg(".pred", "p_contig"), k.reg(".b32", "t_grp")
        k(f"bfe.u32 {t32}, %a_flags, {GROUP_SHIFT}, 2")
        k(f"setp.eq.u32 {gm}, {t32}, {GROUP_CONTIG}")
        for mr, pr in ((mr0, pr0), (mr1, pr1)):
            pg = k.reg(".pred", "p_rowgrp")
            k(f"and.pred {pg}, {pr}, {gm}")
            k(f"mov.u32 {gr}, %bb_c")
            k(f"mad.wide.u32 {t}, {mr}, 4, %a_rows")
            k(f"@{pg} ld.global.nc.u32 {gr}, [{t}]")
            k(f"setp.eq.and.u32 {pr}, {gr}, %bb_c, {pr}")
        pc, pe, pt = k.reg(".pred", "p_col"), k.reg(".pred", "p_el"), k.reg(".pred", "p_t")
        hb, hc, hs = k.reg(".b16", "h_bias"), k.reg(".b16", "h_c"), k.reg(".b16", "h_st")
        bv, cv, v = k.reg(".f32", "bias_v"), k.reg(".f32", "c_v"), k.reg(".f32", "v_el")
        k.comment("NOTE: registers written only under a predicate start defined here, or ptxas keeps their\n"
                  "previous tile's value alive through the whole K loop (it spilled)")
        for r in (bv, cv):
            k(f"mov.f32 {r}, 0f00000000")
        for r in (hb, hc, hs):
            k(f"mov.b16 {r}, 0")
        for q in range(nq):
            for e in (0, 1):
                j = 8 * q + e
                o2, o4 = 16 * q + 2 * e, 32 * q + 4 * e
                k(f"setp.gt.s32 {pc}, {nrem}, {j}")
                if self.mode == "row":
                    k(f"mov.f32 {sc[e]}, 0f00000000")
                    k(f"mad.lo.u64 %sb_q, %a_sbn, {4 * j}, %sb_col")
                    k(f"@{pc} ld.global.nc.f32 {sc[e]}, [%sb_q]")
                k(f"and.pred {pt}, {pc}, {p['bb']}")
                k(f"@{pt} ld.global.nc.b16 {hb}, [{bp}+{o2}]")
                k(f"@{p['bb']} cvt.f32.bf16 {bv}, {hb}")
                k(f"and.pred {pt}, {pc}, {p['bf']}")
                k(f"@{pt} ld.global.nc.f32 {bv}, [{bp}+{o4}]")
                for r, (dp, cp, pr) in enumerate(((dp0, cp0, pr0), (dp1, cp1, pr1))):
                    scaled(v, 4 * q + 2 * r + e, r, e)
                    k(f"and.pred {pe}, {pc}, {pr}")
                    k(f"and.pred {pt}, {pe}, {p['c16']}")
                    k(f"@{pt} ld.global.b16 {hc}, [{cp}+{o2}]")
                    k(f"@{p['cb']} cvt.f32.bf16 {cv}, {hc}")
                    k(f"@{p['ch']} cvt.f32.f16 {cv}, {hc}")
                    k(f"and.pred {pt}, {pe}, {p['cf']}")
                    k(f"@{pt} ld.global.f32 {cv}, [{cp}+{o4}]")
                    k(f"@{p['c']} fma.rn.f32 {v}, %beta, {cv}, {v}")
                    k(f"@{p['b']} add.rn.f32 {v}, {v}, {bv}")
                    k(f"@{p['ob']} cvt.rn.bf16.f32 {hs}, {v}")
                    k(f"@{p['oh']} cvt.rn.f16.f32 {hs}, {v}")
                    k(f"and.pred {pt}, {pe}, {p['o16']}")
                    k(f"@{pt} st.global.b16 [{dp}+{o2}], {hs}")
                    k(f"and.pred {pt}, {pe}, %p_of")
                    k(f"@{pt} st.global.f32 [{dp}+{o4}], {v}")
        k.label(lab_end)

    def row_col_scales(self, q, sc, nrem=None):
        """ROW epilogue: sc[0], sc[1] = sb of this thread's columns 8q + 2t, 8q + 2t + 1. With
        nrem (N - (n0 + 2t), signed) a column at or past N reads nothing and gets 0."""
        k = self.k
        k(f"mad.lo.u64 %sb_q, %a_sbn, {32 * q}, %sb_col")
        if nrem is None:
            k(f"ld.global.nc.f32 {sc[0]}, [%sb_q]")
            k(f"add.s64 %sb_q, %sb_q, %sbn4")
            k(f"ld.global.nc.f32 {sc[1]}, [%sb_q]")
            return
        p = k.reg(".pred", "p_sbcol")
        for e in (0, 1):
            if e:
                k(f"add.s64 %sb_q, %sb_q, %sbn4")
            k(f"mov.f32 {sc[e]}, 0f00000000")
            k(f"setp.gt.s32 {p}, {nrem}, {8 * q + e}")
            k(f"@{p} ld.global.nc.f32 {sc[e]}, [%sb_q]")

    def epilogue_tma(self, acc, m0, n0, scaled, v0, v1, h, sc):
        """TMA-store epilogue (runtime guarantees: BF16 D, or with tg F16, no C, 16-byte aligned
        rows, N a multiple of 8: the store clips at N only to the 16-byte chunk; "_ts": no bias
        or groups either). Staging of this warpgroup: BN/64 slabs of 64 rows x 128 bytes, 128B
        swizzle (16-byte chunk c of row r at chunk c ^ (r % 8), the layout the D map's
        SWIZZLE_128B reads). A thread's pair (row, 8q + 2t) lands in chunk q % 8 of slab q / 8 at
        byte 4t; the 8 rows of a warp's store differ in r % 8, so its 32 words hit 32 banks.
        BN 160 (not a multiple of 64): 5 slabs of 64 rows x 64 bytes, 64B swizzle (chunk c of row
        r at c ^ ((r / 2) % 4), the D map's SWIZZLE_64B with a 32-column box); a warp's 8 rows are
        then 4 pairs 64 bytes apart, each pair in its own chunk order: again 32 banks.
        tg ("_tsg" kernels: bias, F16 D, groups): the bias is added while staging (ts_stage_general),
        and since a TMA store clips only at M and N, rows a group does not own (masked: at or past
        the batch's count; contiguous: another group's or padding) must not reach it: the
        warpgroup votes (bar.red.and) whether all its rows below M are the tile's; if so one
        thread issues the bulk stores, else the 128 threads copy the staged rows they may write
        with 16-byte stores (store_rows).
        NOTE: the "_ts" kernels keep the epilogue without these: in them the extra code moved
        ptxas's K loop (block n192_ts_sm 182 -> 189 SASS instructions a K block; H100, ncu at
        locked clock, 2026-11-28: block 4096 x 7168 x 16384 +1.4% active cycles, row 8192^3
        +0.8%; at boost block -2%, per-tensor -1%)."""
        k = self.k
        bn, nq = self.bn, self.bn // 8
        assert bn % 32 == 0, "TMA-store staging: whole 32-column slabs (src/gemm.c: D box 32 wide if BN % 64)"
        rowb = 128 if bn % 64 == 0 else 64   # staging row bytes: the swizzle span
        cpr, slab = rowb // 16, 64 * rowb     # 16-byte chunks a row, bytes a slab
        nslab, scols = bn * 2 // rowb, rowb // 2
        stg_off = self.stages * self.stage
        k.comment("---- TMA-store epilogue: BF16 tile -> swizzled staging (st.shared) -> one thread's\n"
                  "bulk tensor stores; the warpgroup moves on while the copy engine writes D")
        t, cwg, w, g, t4 = (k.reg(".b32", f"ts_{n}") for n in ("t", "wg", "warp", "g", "t4"))
        k(f"mov.u32 {t}, %tid.x")
        k(f"sub.u32 {t}, {t}, 128")
        k(f"shr.u32 {cwg}, {t}, 7")
        k(f"bfe.u32 {w}, {t}, 5, 2")
        k(f"bfe.u32 {g}, {t}, 2, 3")
        k(f"and.b32 {t4}, {t}, 3")
        stg, bid = k.reg(".b32", "ts_stg"), k.reg(".b32", "ts_bar")
        k(f"mad.lo.u32 {stg}, {cwg}, {64 * bn * 2}, %smem")
        k(f"add.u32 {stg}, {stg}, {stg_off}")
        k(f"add.u32 {bid}, {cwg}, 2")
        if self.tg:
            mrow = k.reg(".b32", "ts_m")
            k(f"mad.lo.u32 {mrow}, {cwg}, 64, {m0}")
            pok = self.ts_row_vote(t, mrow)
        k.comment("NOTE: the previous tile's bulk store may still read the staging buffer: its issuing\n"
                  "thread waits for the read (a no-op elsewhere), then the warpgroup meets (named barrier\n"
                  "2 + wg, 128 threads) before anyone overwrites it")
        k("cp.async.bulk.wait_group.read 0")
        k(f"bar.sync {bid}, 128")
        thr, gx, tx = k.reg(".b32", "ts_thr"), k.reg(".b32", "ts_gx"), k.reg(".b32", "ts_x")
        if rowb == 128:
            k.comment("this thread's row 16w + g: thr = staging + row * 128 + 4t; chunk c sits at (c ^ g) * 16")
        else:
            k.comment("this thread's row 16w + g: thr = staging + row * 64 + 4t; chunk c sits at\n"
                      "(c ^ ((g / 2) % 4)) * 16 (16w and the +8 row keep (row / 2) % 4)")
        k(f"mad.lo.u32 {thr}, {w}, {16 * rowb}, {stg}")
        k(f"mad.lo.u32 {thr}, {g}, {rowb}, {thr}")
        k(f"mad.lo.u32 {thr}, {t4}, 4, {thr}")
        if rowb == 128:
            k(f"shl.b32 {gx}, {g}, 4")
        else:
            k(f"shl.b32 {gx}, {g}, 3")
            k(f"and.b32 {gx}, {gx}, 48")
        xo = []
        for c in range(cpr):
            xo.append(k.reg(".b32", f"ts_a{c}"))
            k(f"xor.b32 {tx}, {gx}, {c << 4}")
            k(f"add.u32 {xo[c]}, {thr}, {tx}")
        nrem = None
        if self.mode == "row" or self.tg:
            nrem = k.reg(".b32", "ts_nrem")
            k.comment("NOTE: the TMA store clips D at N, but the column scales are plain loads: those of\n"
                      "columns at or past N (the last column tile) are not read (ts_nrem = N - (n0 + 2t))"
                      + ("; the bias likewise" if self.tg else ""))
            k(f"mad.lo.u32 {nrem}, {t4}, 2, {n0}")
            k(f"sub.u32 {nrem}, %a_n, {nrem}")
        if self.tg:
            lab_gen, lab_staged = k.fresh("TS_GENERAL"), k.fresh("TS_STAGED")
            tf, pg = k.reg(".b32", "ts_f"), k.reg(".pred", "p_ts_gen")
            k.comment("bias or F16 D: the general staging loop")
            k(f"and.b32 {tf}, %a_flags, {(3 << BIAS_SHIFT) | 3}")
            k(f"setp.ne.u32 {pg}, {tf}, 0")
            k(f"@{pg} bra.uni {lab_gen}")
        self.ts_stage_loop(scaled, v0, v1, h, sc, xo, nrem, cpr, slab, rowb)
        if self.tg:
            k(f"bra.uni {lab_staged}")
            k.label(lab_gen)
            self.ts_stage_general(scaled, v0, v1, h, sc, xo, nrem, cpr, slab, rowb, n0, t4)
            k.label(lab_staged)
        k.comment("generic-proxy writes -> visible to the copy engine, then the warpgroup meets")
        k("fence.proxy.async.shared::cta")
        if self.tg:
            k.comment("and votes: p_ts_all = every thread's row is the tile's (or past M, where TMA clips)")
            pall, lab_rows = k.reg(".pred", "p_ts_all"), k.fresh("TS_ROWS")
            k(f"bar.red.and.pred {pall}, {bid}, 128, {pok}")
            k(f"@!{pall} bra.uni {lab_rows}")
        else:
            k(f"bar.sync {bid}, 128")
        pl, pm, p3 = k.reg(".pred", "p_ts_lead"), k.reg(".pred", "p_ts_rows"), k.reg(".pred", "p_ts_3d")
        mrow, ncol = k.reg(".b32", "ts_m"), k.reg(".b32", "ts_n")
        # NOTE: tt must not be t in the tg kernels (store_rows reads t after the bulk stores)
        tt = k.reg(".b32", "ts_f" if self.tg else "ts_t")
        lab = k.fresh("TS_STORED")
        k(f"and.b32 {tt}, {t}, 127")
        k(f"setp.eq.u32 {pl}, {tt}, 0")
        k(f"@!{pl} bra.uni {lab}")
        k.comment("one thread per warpgroup: its 64 rows, one box per slab; TMA clips rows >= M and\n"
                  "columns >= N (a slab wholly past N, or rows wholly past M, are not issued)")
        if not self.tg:
            k(f"mad.lo.u32 {mrow}, {cwg}, 64, {m0}")
        k(f"setp.lt.u32 {pm}, {mrow}, %a_m")
        k(f"@!{pm} bra.uni {lab}")
        k(f"and.b32 {tt}, %a_flags, {MAPS3D_BIT}")
        k(f"setp.ne.u32 {p3}, {tt}, 0")
        src = k.reg(".b32", "ts_src")
        pn = k.reg(".pred", "p_ts_col")
        lab3, labc = k.fresh("TS_3D"), k.fresh("TS_COMMIT")
        k(f"@{p3} bra.uni {lab3}")
        for rank, coords in ((2, f"{ncol}, {mrow}"), (3, f"{ncol}, {mrow}, %t_bat_c")):
            if rank == 3:
                k.label(lab3)
                k.comment("batches: 3-D map {N, M, batch}")
            for s_ in range(nslab):
                k(f"add.u32 {ncol}, {n0}, {scols * s_}")
                k(f"setp.lt.u32 {pn}, {ncol}, %a_n")
                k(f"add.u32 {src}, {stg}, {s_ * slab}")
                k(f"@{pn} cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group [%tmap_d_g, "
                  f"{{{coords}}}], [{src}]")
            if rank == 2:
                k(f"bra.uni {labc}")
        k.label(labc)
        k("cp.async.bulk.commit_group")
        if self.tg:
            k(f"bra.uni {lab}")
            k.label(lab_rows)
            self.store_rows(t, mrow, n0, stg, cpr, slab, rowb, nslab, scols)
        k.label(lab)

    def ts_row_valid(self, p, row, gv, pc):
        """p = row `row` of this tile is written: below the row limit (M; masked: the batch's
        count) and, for contiguous groups, of the tile's group (rows[row] == bb_c; loaded only
        for rows below M). pc: the contiguous-grouping predicate; gv: a scratch register."""
        k = self.k
        pt = k.reg(".pred", "p_ts_rt")
        k(f"setp.lt.u32 {p}, {row}, %mlim_c")
        k(f"and.pred {pt}, {p}, {pc}")
        k(f"mad.wide.u32 %t_ts_rows, {row}, 4, %a_rows")
        k(f"@{pt} ld.global.nc.u32 {gv}, [%t_ts_rows]")
        k(f"@{pt} setp.eq.and.u32 {p}, {gv}, %bb_c, {p}")

    def ts_row_vote(self, t, mrow):
        """This thread's vote for the bulk store: row mrow + (thread in warpgroup) / 2 (two threads a
        row, so the 128 votes cover the warpgroup's 64 rows) is written, or lies at or past M
        (TMA clips it). Always true without groups.
        NOTE: the group id load is issued before the staging, but ptxas puts its compare right
        after the barrier that opens the staging (SASS of block n192_tsg_sm: LDG, BAR.SYNC,
        ISETP on the loaded id), so a contiguous call waits for the load once a tile there.
        NOTE: moving the compare after the staging loop (with a predicated bias add) put the
        ISETP before the BAR.RED, but ptxas rebuilt block n192_tsg_sm's K loop (189 -> 185
        SASS instructions): contiguous G 4 x 8192 x 4096 x 7168 2.48 -> 2.77 M cycles (ncu,
        H100, 2026-11-28), 1060-1181 against 1168-1252 TFLOPS. Not kept."""
        k = self.k
        k.reg(".b64", "t_ts_rows")
        pc, pok = k.reg(".pred", "p_ts_contig"), k.reg(".pred", "p_ts_ok")
        mc, gv = k.reg(".b32", "ts_vrow"), k.reg(".b32", "ts_vgrp")
        k.comment("groups: does this warpgroup own all its rows below M? (the vote, after the staging)")
        k(f"bfe.u32 {gv}, %a_flags, {GROUP_SHIFT}, 2")
        k(f"setp.eq.u32 {pc}, {gv}, {GROUP_CONTIG}")
        k(f"bfe.u32 {mc}, {t}, 1, 6")
        k(f"add.u32 {mc}, {mc}, {mrow}")
        self.ts_row_valid(pok, mc, gv, pc)
        k(f"setp.ge.or.u32 {pok}, {mc}, %a_m, {pok}")
        return pok

    def ts_stage_general(self, scaled, v0, v1, h, sc, xo, nrem, cpr, slab, rowb, n0, t4):
        """The staging loop with a bias (BF16 or F32, of B's batch: the group for grouped calls)
        and BF16 or F16 output: v = scaled product + bias, rounded once, as the register path.
        NOTE: without a bias (F16 D) it adds +0.0, which turns an exact -0.0 into +0.0 where the
        register path keeps -0.0 (found by review; not changed: no GPU time left to test it)."""
        k = self.k
        pbb, pbf, pf16 = (k.reg(".pred", f"p_ts_{n}") for n in ("bb", "bf", "f16"))
        tt = k.reg(".b32", "ts_f")
        k(f"bfe.u32 {tt}, %a_flags, {BIAS_SHIFT}, 2")
        k(f"setp.eq.u32 {pbb}, {tt}, 1")
        k(f"setp.eq.u32 {pbf}, {tt}, 2")
        k(f"and.b32 {tt}, %a_flags, 3")
        k(f"setp.eq.u32 {pf16}, {tt}, {OUT_F16}")
        bp, t64 = k.reg(".b64", "ts_bias"), k.reg(".b64", "ts_t64")
        k.comment("bias of B's batch at column n0 + 2t (element size 2 or 4)")
        col, esz = k.reg(".b32", "ts_bcol"), k.reg(".b32", "ts_besz")
        k(f"mad.lo.u32 {col}, {t4}, 2, {n0}")
        k(f"selp.u32 {esz}, 4, 2, {pbf}")
        k(f"mul.wide.u32 {bp}, {col}, {esz}")
        k(f"cvt.u64.u32 {t64}, %bb_c")
        k(f"mad.lo.u64 {t64}, {t64}, %a_bias_bs, %a_bias")
        k(f"add.u64 {bp}, {bp}, {t64}")
        self.ts_stage_loop(scaled, v0, v1, h, sc, xo, nrem, cpr, slab, rowb, (bp, pbb, pbf, pf16))

    def ts_stage_loop(self, scaled, v0, v1, h, sc, xo, nrem, cpr, slab, rowb, bias=None):
        """The staging loop: each column pair q of this thread's two rows, scaled, rounded to a
        16-bit pair and stored at its swizzled place. bias (ts_stage_general): (pointer, BF16 and
        F32 bias predicates, F16 predicate): the two columns' bias loaded (none past N) and added
        before the rounding, which is BF16 or F16; without it the plain loop of the "_ts"
        kernels, BF16."""
        k = self.k
        if bias:
            bp, pbb, pbf, pf16 = bias
            pc, pt = k.reg(".pred", "p_ts_bc"), k.reg(".pred", "p_ts_bt")
            hb, bv = k.reg(".b16", "ts_hb"), [k.reg(".f32", f"ts_bv{e}") for e in (0, 1)]
            k(f"mov.b16 {hb}, 0")
        for q in range(self.bn // 8):
            s_, c = q // cpr, q % cpr
            if self.mode == "row":
                self.row_col_scales(q, sc, nrem)
            for e in (0, 1) if bias else ():
                j = 8 * q + e
                k(f"mov.f32 {bv[e]}, 0f00000000")
                k(f"setp.gt.s32 {pc}, {nrem}, {j}")
                k(f"and.pred {pt}, {pc}, {pbb}")
                k(f"@{pt} ld.global.nc.b16 {hb}, [{bp}+{2 * j}]")
                k(f"@{pt} cvt.f32.bf16 {bv[e]}, {hb}")
                k(f"and.pred {pt}, {pc}, {pbf}")
                k(f"@{pt} ld.global.nc.f32 {bv[e]}, [{bp}+{4 * j}]")
            for r in (0, 1):
                scaled(v0, 4 * q + 2 * r, r, 0)
                scaled(v1, 4 * q + 2 * r + 1, r, 1)
                if bias:
                    k(f"add.rn.f32 {v0}, {v0}, {bv[0]}")
                    k(f"add.rn.f32 {v1}, {v1}, {bv[1]}")
                    k(f"@!{pf16} cvt.rn.bf16x2.f32 {h}, {v1}, {v0}")
                    k(f"@{pf16} cvt.rn.f16x2.f32 {h}, {v1}, {v0}")
                else:
                    k(f"cvt.rn.bf16x2.f32 {h}, {v1}, {v0}")
                k(f"st.shared.b32 [{xo[c]}+{s_ * slab + r * 8 * rowb}], {h}")

    def store_rows(self, t, mrow, n0, stg, cpr, slab, rowb, nslab, scols):
        """The warpgroup's staged rows to D by the 128 threads, 16-byte chunks, only rows the
        tile owns (ts_row_valid) and columns below N (N is a multiple of 8: whole chunks).
        Thread i takes chunk i % cpr of rows i / cpr + j * 128 / cpr, in every slab: a warp's
        store covers whole rows of a slab (128 or 64 bytes each), and its loads one staging row
        per cpr lanes, conflict-free (the swizzle is a permutation of a row's chunks)."""
        k = self.k
        rstep, npass = 128 // cpr, 64 * cpr // 128
        sh = cpr.bit_length() - 1
        i, rs, c, x = (k.reg(".b32", f"sr_{n}") for n in ("i", "row", "chunk", "x"))
        k.comment("---- store_rows: this warpgroup's rows are not all the tile's: plain 16-byte stores\n"
                  "of the rows it owns, read back from the staging buffer")
        k(f"and.b32 {i}, {t}, 127")
        k(f"shr.u32 {rs}, {i}, {sh}")
        k(f"and.b32 {c}, {i}, {cpr - 1}")
        k.comment("staging: row rs at rs * rowb, chunk c at (c ^ swizzle) * 16; the swizzle of rows\n"
                  f"rs + j * {rstep} is (i / 8) % {cpr} for both spans (128B: row % 8; 64B: (row / 2) % 4)")
        sa = k.reg(".b32", "sr_sa")
        k(f"bfe.u32 {x}, {i}, 3, {sh}")
        k(f"xor.b32 {x}, {x}, {c}")
        k(f"shl.b32 {x}, {x}, 4")
        k(f"mad.lo.u32 {sa}, {rs}, {rowb}, {stg}")
        k(f"add.u32 {sa}, {sa}, {x}")
        pc = k.reg(".pred", "p_sr_contig")
        k(f"bfe.u32 {x}, %a_flags, {GROUP_SHIFT}, 2")
        k(f"setp.eq.u32 {pc}, {x}, {GROUP_CONTIG}")
        prow = [k.reg(".pred", f"p_sr_r{j}") for j in range(npass)]
        rj = k.reg(".b32", "sr_rj")
        gvs = [k.reg(".b32", f"sr_g{j}") for j in range(npass)]
        for j in range(npass):
            k(f"add.u32 {rj}, {mrow}, {rs}")
            if j:
                k(f"add.u32 {rj}, {rj}, {j * rstep}")
            self.ts_row_valid(prow[j], rj, gvs[j], pc)
        ga, gstep, t64 = k.reg(".b64", "sr_ga"), k.reg(".b64", "sr_gstep"), k.reg(".b64", "sr_t64")
        col = k.reg(".b32", "sr_col")
        k.comment("D + batch * d_bs + (mrow + rs) * ldd + (n0 + 8c) * 2")
        k(f"cvt.u64.u32 {t64}, %t_bat_c")
        k(f"mad.lo.u64 {ga}, {t64}, %a_d_bs, %a_d")
        k(f"add.u32 {rj}, {mrow}, {rs}")
        k(f"cvt.u64.u32 {t64}, {rj}")
        k(f"mad.lo.u64 {ga}, {t64}, %a_ldd, {ga}")
        k(f"mad.lo.u32 {col}, {c}, 8, {n0}")
        k(f"mul.wide.u32 {t64}, {col}, 2")
        k(f"add.u64 {ga}, {ga}, {t64}")
        k(f"mul.lo.u64 {gstep}, %a_ldd, {rstep}")
        pcol, pst = k.reg(".pred", "p_sr_col"), k.reg(".pred", "p_sr_st")
        vals = [k.reg(".b32", f"sr_v{e}") for e in range(4)]
        gj = [k.reg(".b64", f"sr_ga{j}") for j in range(npass)]
        k(f"mov.b64 {gj[0]}, {ga}")
        for j in range(1, npass):
            k(f"add.u64 {gj[j]}, {gj[j - 1]}, {gstep}")
        for s_ in range(nslab):
            k(f"add.u32 {x}, {col}, {scols * s_}")
            k(f"setp.lt.u32 {pcol}, {x}, %a_n")
            for j in range(npass):
                k(f"ld.shared.v4.b32 {{{', '.join(vals)}}}, [{sa}+{s_ * slab + j * rstep * rowb}]")
                k(f"and.pred {pst}, {pcol}, {prow[j]}")
                k(f"@{pst} st.global.v4.b32 [{gj[j]}+{s_ * scols * 2}], {{{', '.join(vals)}}}")

    # ---- the kernel ---------------------------------------------------------------------------
    def emit(self):
        k = self.k
        k.comment("---- arguments (one .param struct; layout in build/gen/gemm_args.h) and the maps")
        for typ, name in ARGS:
            if name != "batches" or self.groups:
                self.arg(name)
        if self.mode == "tensor":
            k.comment("per-tensor scales: a NULL pointer is 1.0 (tested before cvta, which need not map 0 to 0)")
            k(f"setp.ne.u64 {k.reg('.pred', 'p_sa')}, %a_sa, 0")
            k(f"setp.ne.u64 {k.reg('.pred', 'p_sb')}, %a_sb, 0")
        for name in ("d", "sa", "sb", "c", "bias", "rows"):
            k(f"cvta.to.global.u64 %a_{name}, %a_{name}")
        sm90.tmap_param(k, k.reg(".b64", "tmap_a_g"), "tmap_a")
        sm90.tmap_param(k, k.reg(".b64", "tmap_b_g"), "tmap_b")
        if self.ts:
            sm90.tmap_param(k, k.reg(".b64", "tmap_d_g"), "tmap_d")
        if self.sm:
            sm90.tmap_param(k, k.reg(".b64", "tmap_sa_g"), "tmap_sa")
            sm90.tmap_param(k, k.reg(".b64", "tmap_sb_g"), "tmap_sb")
        tid = k.reg(".b32", "tid_x")
        k(f"mov.u32 {tid}, %tid.x")
        first, step = k.reg(".b32", "first_tile"), k.reg(".b32", "tile_step")
        if self.cl == 1:
            k.comment("persistent: CTA c takes tiles c, c + gridDim, ...")
            k(f"mov.u32 {first}, %ctaid.x")
            k(f"mov.u32 {step}, %nctaid.x")
        else:
            k.comment(f"persistent clusters of {self.cl} CTAs: cluster c takes cluster tiles c, c + clusters, ...")
            k(f"mov.u32 {first}, %clusterid.x")
            k(f"mov.u32 {step}, %nclusterid.x")
            rank = k.reg(".b32", "cta_rank")
            k(f"mov.u32 {rank}, %cluster_ctarank")
            k(f"xor.b32 {k.reg('.b32', 'peer_rank')}, {rank}, 1")
            k(f"mul.lo.u32 {k.reg('.b32', 'm_rank_off')}, {rank}, {self.bm}")
            k(f"mul.lo.u32 {k.reg('.b32', 'n_rank_off')}, {rank}, {self.bn // 2}")
            k(f"mad.lo.u32 {k.reg('.b32', 'b_half_off')}, {rank}, {self.bn // 2 * BK}, {self.a_bytes}")
            k(f"mov.b16 {k.reg('.b16', 'cta_mask')}, 3")
        lead = k.reg(".pred", "p_leader")
        k(f"setp.eq.u32 {lead}, {tid}, 0")
        smem = k.reg(".b32", "smem")
        sm90.smem_base_1024(k, smem)
        bars = k.reg(".b32", "bars")
        stg = staging_bytes(self.bn, self.ts, self.cw)
        k.comment(f"layout: {self.stages} stages x [A {self.bm} x 128 B | B {self.bn} x 128 B] "
                  f"({self.stage} B each), "
                  + (f"the D staging ({self.cw} x 64 x {self.bn} BF16 = {stg} B), " if stg else "")
                  + (f"{self.stages} x {self.sm_slot} B of TMA-loaded BLOCK scales, " if self.sm else "")
                  + f"then full[{self.stages}], empty[{self.stages}] barriers")
        k(f"add.u32 {bars}, {smem}, {self.bars_offset()}")
        ring = sm90.Ring(k, self.stages, self.stage, smem, bars, "ring")
        k.comment("---- thread 0: barriers and tensor-map prefetch, then everyone syncs once")
        k(f"@{lead} prefetch.tensormap [%tmap_a_g]")
        k(f"@{lead} prefetch.tensormap [%tmap_b_g]")
        if self.ts:
            k(f"@{lead} prefetch.tensormap [%tmap_d_g]")
        if self.sm:
            k(f"@{lead} prefetch.tensormap [%tmap_sa_g]")
            k(f"@{lead} prefetch.tensormap [%tmap_sb_g]")
        ring.init_barriers_warps(tid, self.threads // 32, 4 * self.cw * self.cl,
                                 33 if self.sc and not self.sm else 1)
        if self.groups:
            k.comment("the masked walk's cursors (producer, scale warp, consumers) at (tile 0, batch 0):\n"
                      "a word a thread of warp 0, seen by all after the setup barrier")
            pc, tc = k.reg(".pred", "p_curs"), k.reg(".b32", "t_curs")
            k(f"setp.lt.u32 {pc}, {tid}, {CURSOR_BYTES // 4}")
            k(f"mad.lo.u32 {tc}, {tid}, 4, {smem}")
            k(f"@{pc} st.shared.u32 [{tc}+{self.cursor_offset()}], 0")
        k.comment("the PDL wait comes after the role branch (pdl_wait): nothing before it reads global memory")
        if self.cl == 1:
            k("bar.sync 0")
        else:
            k.comment("the peer multicasts into our barriers: both CTAs' inits must be visible first")
            sm90.cluster_sync(k)
        wg = k.reg(".b32", "wg")
        pw = k.reg(".pred", "p_producer")
        k(f"shr.u32 {wg}, {tid}, 7")
        k.comment("NOTE: lane 0's copy, so that ptxas knows the warpgroup index (and the role branch,\n"
                  "and every address derived from it) is warp-uniform: from %tid.x alone it kept the\n"
                  "K loops' wgmma descriptors in vector registers, moved to uniform ones by 4 R2UR\n"
                  "per wgmma between the chain's issues (H100, ncu at locked clock: per-tensor 8192^3\n"
                  "1.172-1.178 -> 1.112-1.117 M cycles, block-scaled 4096x7168x16384 1.150 -> 1.108 M)")
        k(f"shfl.sync.idx.b32 {wg}, {wg}, 0, 31, 0xFFFFFFFF")
        k(f"setp.eq.u32 {pw}, {wg}, 0")
        k(f"@{pw} bra.uni PRODUCER")
        k.blank()
        if self.pipe:
            self.consumer_pipe(ring)
        else:
            self.consumer(ring)
        k.blank()
        self.producer(ring)
        if self.outline:
            k.comment("==== out of line: the masked walks (masked_walk), branched to from the tile starts\n"
                      "NOTE: inline, their code moved ptxas's K-loop schedule of the \"_tsg\" kernels")
            k.lines += self.outline
        params = [".param .align 64 .b8 tmap_a[128]", ".param .align 64 .b8 tmap_b[128]"]
        if self.ts:
            params.append(".param .align 64 .b8 tmap_d[128]")
        if self.sm:
            params += [".param .align 64 .b8 tmap_sa[128]", ".param .align 64 .b8 tmap_sb[128]"]
        params.append(f".param .align 8 .b8 args[{self.argsize}]")
        directives = [f".maxntid {self.threads}, 1, 1", ".minnctapersm 1"]
        if self.cl > 1:
            directives.append(f".reqnctapercluster {self.cl}, 1, 1")
        hdr = header(GENERATOR, k.name, "gemm", self.threads, self.smem, self.p)
        text = k.render(hdr, self.target, params, directives)
        decl = ".extern .shared .align 1024 .b8 dsmem[];\n\n"
        return text.replace(".visible .entry", decl + ".visible .entry", 1)


# ---- MXFP8 -> BF16 (the dequantize path of MX GEMMs) ----------------------------------------------
def fast_div(k, q, n, dv, sh):
    """q = n / d for n < 2^31 by the runtime's multiplier and shift of d (src/gemm.c
    ptxq_fast_div): q = (mulhi(n, dv) + n) >> sh. NOTE: div.u32 by a register is ~15 SASS
    instructions through MUFU.RCP and conversions; the tile coordinates' three of them took
    ~0.45 us before the producer's first TMA of every call (timeline stamps, H100, 2026-11-26,
    branch exp/gemm-stamps) and sit at every tile start of the consumers."""
    t = k.reg(".b32", "t_fdiv")
    k(f"mul.hi.u32 {t}, {n}, {dv}")
    k(f"add.u32 {t}, {t}, {n}")
    k(f"shr.b32 {q}, {t}, {sh}")


DQ_THREADS = 256
DQ_ARGS = [
    ("u64", "q"), ("u64", "s"), ("u64", "y"), ("u64", "q_rs"), ("u64", "q_bs"),
    ("u64", "s_rs"), ("u64", "s_bs"), ("u32", "rows_b"), ("u32", "nj"), ("u32", "blocks"),
    ("u32", "e5m2"), ("u32", "dv_nj"), ("u32", "sh_nj"), ("u32", "dv_rb"), ("u32", "sh_rb"),
]
DQ_UNITS = 4   # units of 8 codes a thread a trip (a scale block's worth: 32 codes)


def mx_dequant(name, p, target):
    """y[r, 32j + i] = decode(q[r, 32j + i]) * 2^(s[r, j] - 127) as BF16, y dense [rows, K].

    Work: a unit is a quarter of a 32-code scale block (8 codes: one 8-byte load, one 16-byte
    store). Lane l of a warp takes part l % 4 of block 8w + l / 4 (w: the warp's index in the
    grid), and a trip takes DQ_UNITS such blocks, stepping by the grid's 8 x warps blocks, so each
    store instruction of a warp writes 512 contiguous bytes of y: whole 32-byte sectors. NOTE:
    a thread per block (two 16-byte loads, four 16-byte stores 64 bytes apart) left every
    instruction touching each 32-byte sector by half: a lane-consecutive layout measured 72 ->
    89-91% of the copy in ptx/dequant_fp8_bf16.ptx (H100, forty-third session).
    Block t (< `blocks` = rows x K/32 < 2^30: the runtime refuses more, as the unit index
    4t + part and the store offset's factor are u32) is row r = t / nj, column
    j; row r = batch * rows_b + m reads q at batch * q_bs + m * q_rs + 32j and its scale at
    batch * s_bs + m * s_rs + j (bytes), so any batched or padded layout the MX GEMM accepts is
    read in place. The two divisions are the runtime's multiply-shift (src/gemm.c
    ptxq_fast_div): div.u32 is ~15 instructions and each unit pays them. Exact: an FP8 value
    has at most 4 significant bits and the scale is a power of two, so the f32 product and its
    BF16 rounding change nothing (BF16 keeps 8 bits and f32's exponent range), except where the
    product leaves BF16's normal range. Code 0 is 2^-127, code 255 +inf (as the promote
    path)."""
    k = Kernel(name)
    off, size = struct_layout(DQ_ARGS)
    for _, n in DQ_ARGS:
        load_arg(k, off, n)
    for n in ("q", "s", "y"):
        k(f"cvta.to.global.u64 %a_{n}, %a_{n}")
    U = DQ_UNITS
    t0, bstep, part, tmp = (k.reg(".b32", n) for n in ("blk0", "bstep", "part", "tmp"))
    tb = k.regs(".b32", "blk", U)
    row, j, bat, m = (k.reg(".b32", n) for n in ("row", "j", "bat", "m"))
    qa, sa, w = (k.reg(".b64", n) for n in ("qa", "sa", "w"))
    ya = k.regs(".b64", "ya", U)
    pdone, p5, pz = k.reg(".pred", "p_done"), k.reg(".pred", "p_e5m2"), k.reg(".pred", "p_zero")
    pu = k.regs(".pred", "p_u", U)
    sc = k.regs(".f32", "sc", U)
    code = k.regs(".b32", "code", 2 * U)
    pair = k.regs(".b16", "pair", 2)
    hh = k.reg(".b32", "hh")
    out = k.regs(".b32", "out", 4)
    hlo, hhi, lo, hi = k.reg(".b16", "hlo"), k.reg(".b16", "hhi"), k.reg(".f32", "lo"), k.reg(".f32", "hi")

    k(f"setp.ne.u32 {p5}, %a_e5m2, 0")
    k.comment("thread -> (first block, part): block 8 * (global warp) + lane / 4, part lane % 4")
    k(f"mov.u32 {t0}, %ctaid.x")
    k(f"mov.u32 {tmp}, %ntid.x")
    k(f"mov.u32 {part}, %tid.x")
    k(f"mad.lo.u32 {t0}, {t0}, {tmp}, {part}")
    k(f"shr.u32 {t0}, {t0}, 2")
    k(f"and.b32 {part}, {part}, 3")
    k(f"mov.u32 {bstep}, %nctaid.x")
    k(f"mul.lo.u32 {bstep}, {bstep}, {tmp}")
    k(f"shr.u32 {bstep}, {bstep}, 2")
    k.label("BLOCK_LOOP")
    k(f"setp.ge.u32 {pdone}, {t0}, %a_blocks")
    k(f"@{pdone} bra.uni DONE")
    k.comment(f"the trip's {U} units: addresses, then every load before any use (streaming: read\n"
              "once, no L1 allocation; the scale byte is shared by the block's four lanes)")
    for u in range(U):
        if u == 0:
            k(f"mov.u32 {tb[0]}, {t0}")
        else:
            k(f"add.u32 {tb[u]}, {tb[u - 1]}, {bstep}")
        k(f"setp.lt.u32 {pu[u]}, {tb[u]}, %a_blocks")
        fast_div(k, row, tb[u], "%a_dv_nj", "%a_sh_nj")
        k(f"mul.lo.u32 {tmp}, {row}, %a_nj")
        k(f"sub.u32 {j}, {tb[u]}, {tmp}")
        fast_div(k, bat, row, "%a_dv_rb", "%a_sh_rb")
        k(f"mul.lo.u32 {tmp}, {bat}, %a_rows_b")
        k(f"sub.u32 {m}, {row}, {tmp}")
        k(f"cvt.u64.u32 {w}, {bat}")
        k(f"mad.lo.u64 {qa}, {w}, %a_q_bs, %a_q")
        k(f"mad.lo.u64 {sa}, {w}, %a_s_bs, %a_s")
        k(f"cvt.u64.u32 {w}, {m}")
        k(f"mad.lo.u64 {qa}, {w}, %a_q_rs, {qa}")
        k(f"mad.lo.u64 {sa}, {w}, %a_s_rs, {sa}")
        k(f"shl.b32 {tmp}, {j}, 2")
        k(f"add.u32 {tmp}, {tmp}, {part}")
        k(f"mul.wide.u32 {w}, {tmp}, 8")
        k(f"add.u64 {qa}, {qa}, {w}")
        k(f"cvt.u64.u32 {w}, {j}")
        k(f"add.u64 {sa}, {sa}, {w}")
        k(f"shl.b32 {tmp}, {tb[u]}, 2")
        k(f"add.u32 {tmp}, {tmp}, {part}")
        k(f"mul.wide.u32 {w}, {tmp}, 16")
        k(f"add.u64 {ya[u]}, %a_y, {w}")
        k(f"@{pu[u]} ld.global.nc.L1::no_allocate.v2.b32 {{{code[2 * u]}, {code[2 * u + 1]}}}, [{qa}]")
        k(f"@{pu[u]} ld.global.nc.u8 {tmp}, [{sa}]")
        k.comment("UE8M0 -> f32: the code is the exponent field (255 -> +inf); code 0 is 2^-127, a subnormal")
        k(f"shl.b32 {tmp}, {tmp}, 23")
        k(f"setp.eq.u32 {pz}, {tmp}, 0")
        k(f"@{pz} mov.u32 {tmp}, 0x00400000")
        k(f"mov.b32 {sc[u]}, {tmp}")
    for fmt in ("e4m3", "e5m2"):
        if fmt == "e4m3":
            k.comment("FP8 pair -> f16x2 (exact) -> f32 (exact), x 2^e (exact in range), -> bf16x2 (first\n"
                      "element in the low half); the format is uniform per launch: one branch a trip")
            k(f"@{p5} bra.uni DECODE_E5M2")
        else:
            k.label("DECODE_E5M2")
        for u in range(U):
            for wd in range(2):
                k(f"mov.b32 {{{pair[0]}, {pair[1]}}}, {code[2 * u + wd]}")
                for h in range(2):
                    k(f"cvt.rn.f16x2.{fmt}x2 {hh}, {pair[h]}")
                    k(f"mov.b32 {{{hlo}, {hhi}}}, {hh}")
                    k(f"cvt.f32.f16 {lo}, {hlo}")
                    k(f"cvt.f32.f16 {hi}, {hhi}")
                    k(f"mul.rn.f32 {lo}, {lo}, {sc[u]}")
                    k(f"mul.rn.f32 {hi}, {hi}, {sc[u]}")
                    k(f"cvt.rn.bf16x2.f32 {out[2 * wd + h]}, {hi}, {lo}")
            k(f"@{pu[u]} st.global.v4.b32 [{ya[u]}], {{{', '.join(out)}}}")
        if fmt == "e4m3":
            k("bra.uni NEXT_TRIP")
    k.label("NEXT_TRIP")
    k(f"mad.lo.u32 {t0}, {bstep}, {U}, {t0}")
    k("bra.uni BLOCK_LOOP")
    k.label("DONE")
    k("ret")
    hdr = header(GENERATOR, name, "gemm", DQ_THREADS, 0, p)
    return k.render(hdr, target, [f".param .align 8 .b8 args[{size}]"],
                    [f".maxntid {DQ_THREADS}, 1, 1"])


def emit(name, params, target):
    import os
    import sys
    opts = os.environ.get("GEMM_OPTS", "")
    if opts:
        # experiment knobs over the variant's parameters (the build never sets it: python3
        # gen/ptxq_gen.py emit ... with it, then PTXQ_KERNEL_DIR)
        print(f"gen/gemm.py: GEMM_OPTS={opts} changes {name} ({target})", file=sys.stderr)
        kv = dict(item.split("=", 1) for item in opts.split(","))
        params = dict(params, **{key: int(v) if v.lstrip("-").isdigit() else v
                                 for key, v in kv.items()})
    if params.get("kind") == "mx_dequant":
        return mx_dequant(name, params, target)
    return G(name, params, target).emit()


def c_header():
    offs, size = arg_offsets()
    out = ["/* Generated by gen/gemm.py: the .param block of every gemm kernel (after its",
           " * CUtensorMaps, which are passed by value). */",
           "#ifndef PTXQ_GEMM_ARGS_H", "#define PTXQ_GEMM_ARGS_H", "#include <stddef.h>",
           "#include <stdint.h>", "", "typedef struct ptxq_gemm_args {"]
    for typ, name in ARGS:
        out.append(f"    {'uint64_t' if typ == 'u64' else 'uint32_t'} {name};")
    out.append("} ptxq_gemm_args;")
    out.append("")
    for typ, name in ARGS:
        out.append(f"_Static_assert(offsetof(ptxq_gemm_args, {name}) == {offs[name][1]}, \"{name}\");")
    out.append(f"_Static_assert(sizeof(ptxq_gemm_args) == {size}, \"size\");")
    out.append("")
    out.append("/* gemm_mx_dequant (MXFP8 -> BF16 for the MX dequantize path) */")
    out.append("typedef struct ptxq_gemm_dq_args {")
    for typ, name in DQ_ARGS:
        out.append(f"    {'uint64_t' if typ == 'u64' else 'uint32_t'} {name};")
    out.append("} ptxq_gemm_dq_args;")
    doff, dsize = struct_layout(DQ_ARGS)
    for typ, name in DQ_ARGS:
        out.append(f"_Static_assert(offsetof(ptxq_gemm_dq_args, {name}) == {doff[name][1]}, \"{name}\");")
    out.append(f"_Static_assert(sizeof(ptxq_gemm_dq_args) == {dsize}, \"dq size\");")
    out.append(f"#define PTXQ_GEMM_DQ_THREADS {DQ_THREADS}")
    out.append(f"#define PTXQ_GEMM_TILE_M {BM}")
    out.append(f"#define PTXQ_GEMM_TILE_K {BK}")
    out.append(f"#define PTXQ_GEMM_MAX_CLUSTER {max(CLUSTERS)}")
    out.append(f"#define PTXQ_GEMM_CSPLIT_TILE_N {CS_TILE_N}  /* kernels with the cluster split-K sum */")
    out.append(f"#define PTXQ_GEMM_FLAG_BIAS_SHIFT {BIAS_SHIFT}")
    out.append(f"#define PTXQ_GEMM_FLAG_C {C_BIT}u")
    out.append(f"#define PTXQ_GEMM_FLAG_GROUP_SHIFT {GROUP_SHIFT}")
    out.append(f"#define PTXQ_GEMM_FLAG_GENERAL {GENERAL_BIT}u")
    out.append(f"#define PTXQ_GEMM_FLAG_MAPS3D {MAPS3D_BIT}u")
    out.append("/* scmode of the BLOCK \"_sm\" kernels (scales by TMA) */")
    out.append(f"#define PTXQ_GEMM_SC_A_KMAJOR {SC_A_KMAJOR}u")
    out.append(f"#define PTXQ_GEMM_SC_B_NMAJOR {SC_B_NMAJOR}u")
    out.append(f"#define PTXQ_GEMM_SC_A_BATCH {SC_A_BATCH}u")
    out.append(f"#define PTXQ_GEMM_SC_B_BATCH {SC_B_BATCH}u")
    out.append("#endif")
    return "\n".join(out) + "\n"
