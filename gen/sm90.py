"""sm_90a building blocks for warp-specialised TMA + wgmma kernels (standard library only).

Every helper emits into a ptx.Kernel and names its registers by role. Nothing here knows about a
particular kernel family: gen/gemm.py uses them for the FP8 GEMM, attention can reuse them.

Facts relied on (see /work/shared/examples/wgmma-tma-sm90/NOTES.md and ptx-facts/FACTS.md 1, 2, 6):
  * TMA with CU_TENSOR_MAP_SWIZZLE_128B writes 16-byte chunk c of 128-byte row r to chunk
    c ^ (r % 8); a wgmma descriptor with swizzle mode 1 reads exactly that layout when the tile
    starts on a 1024-byte boundary (base offset 0). Each 8-row group is 1024 bytes (SBO = 64).
  * A descriptor's address field is (addr & 0x3FFFF) >> 4: the shared address of a variable carries
    the CTA's cluster rank in bits 24+, so it is masked.
  * Stepping 32 FP8 (32 bytes) of K inside the swizzled 128-byte row adds 2 to the descriptor.
  * mbarrier phases: a fresh barrier is in phase 0; try_wait.parity P succeeds once the phase with
    parity P has completed, so a producer waiting on a fresh "empty" barrier with parity 1 passes.
  * setmaxnreg is ignored (C7508) unless the entry has .maxntid + .minnctapersm (or .maxnreg).
"""

# descriptor constant part: swizzle mode 1 (128B) at bit 62, SBO = 1024 B (enc 64) at bit 32,
# LBO enc 1 at bit 16 (ignored for swizzled K-major operands)
DESC_SW128_KMAJOR = (1 << 62) | (64 << 32) | (1 << 16)


def smem_base_1024(k, dst, sym="dsmem"):
    """dst = the dynamic shared memory base rounded up to 1024 B (the 128B-swizzle repeat)."""
    k.comment("shared-memory base rounded up to 1024 B: every swizzled tile starts on the 128B-swizzle"
              "\nrepeat, so descriptor base offsets stay 0 (the launch adds 1 KiB of slack)")
    k(f"mov.u32 {dst}, {sym}")
    k(f"add.u32 {dst}, {dst}, 1023")
    k(f"and.b32 {dst}, {dst}, 0xFFFFFC00")


def smem_desc(k, dst, addr32, const=DESC_SW128_KMAJOR):
    """dst (.b64) = wgmma shared-memory descriptor of the K-major, 128B-swizzled tile at addr32."""
    t = k.reg(".b64", "t_desc")
    k(f"cvt.u64.u32 {t}, {addr32}")
    k(f"and.b64 {t}, {t}, 0x3FFFF")
    k(f"shr.u64 {t}, {t}, 4")
    k(f"or.b64 {dst}, {t}, 0x{const:016X}")


def tmap_param(k, dst, pname):
    """dst (.b64) = the generic address of a CUtensorMap passed by value as .param pname."""
    k(f"mov.b64 {dst}, {pname}")
    k(f"cvta.param.u64 {dst}, {dst}")


def mbar_init_fence(k, pred=None):
    """Make barrier inits visible to the other threads and to the async proxy (then bar.sync)."""
    p = f"@{pred} " if pred else ""
    k(f"{p}fence.mbarrier_init.release.cluster")
    k(f"{p}fence.proxy.async.shared::cta")


def mbar_wait(k, bar, parity, tag):
    """Spin until the phase of bar with the given parity (register or immediate) has completed."""
    p = k.reg(".pred", "p_mbar_ok")
    lab = k.fresh(f"WAIT_{tag}")
    k.label(lab)
    k(f"mbarrier.try_wait.parity.shared::cta.b64 {p}, [{bar}], {parity}")
    k(f"@!{p} bra {lab}")


def mbar_arrive(k, bar, pred=None):
    p = f"@{pred} " if pred else ""
    k(f"{p}mbarrier.arrive.shared::cta.b64 _, [{bar}]")


def mbar_arrive_expect_tx(k, bar, nbytes):
    k(f"mbarrier.arrive.expect_tx.shared::cta.b64 _, [{bar}], {nbytes}")


def tma_load(k, dst, tmap, coords, bar):
    """One TMA box (rank = len(coords), 1..5) into shared memory (dst), completing tx bytes on bar.
    Coordinates are elements, innermost first; out-of-bounds parts of the box are zero-filled (and
    still count)."""
    k(f"cp.async.bulk.tensor.{len(coords)}d.shared::cluster.global.mbarrier::complete_tx::bytes "
      f"[{dst}], [{tmap}, {{{', '.join(coords)}}}], [{bar}]")


def wgmma_fp8(k, n, acc, desc_a, desc_b, scale_d, atype="e4m3", btype="e4m3"):
    """acc (n/2 .f32 registers) (+)= A(64 x 32 bytes, smem) . B(n x 32 bytes, smem)^T: k32 for
    FP8, k16 for BF16 (the same 32 bytes of each K-major row, so the same descriptors and the
    same +2 per step inside a 128-byte swizzled row). scale_d: 0 ignores acc (or a predicate)."""
    regs = ", ".join(acc)
    if atype == "bf16":
        # 16-bit types take two more immediates: transpose A / B (0: K-major, as in smem here)
        k(f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 {{{regs}}}, {desc_a}, {desc_b}, "
          f"{scale_d}, 1, 1, 0, 0")
        return
    k(f"wgmma.mma_async.sync.aligned.m64n{n}k32.f32.{atype}.{btype} {{{regs}}}, {desc_a}, {desc_b}, "
      f"{scale_d}, 1, 1")


def acc_layout_doc(n):
    return (f"accumulator fragment of m64n{n} (f32, register i = 0..{n // 2 - 1}); w = warp in the\n"
            "warpgroup, g = lane/4, t = lane%4:  row = 16w + g + 8*((i>>1)&1),  col = 8*(i>>2) + 2t + (i&1)\n"
            "so (i = 4q, 4q+1) are row 16w+g, cols 8q+2t and 8q+2t+1; (4q+2, 4q+3) the same cols of row +8")


class Ring:
    """A shared-memory ring of `stages` slots with a full and an empty mbarrier per slot.

    Both sides keep a running slot index and a phase bit; advance() steps them. The consumer waits
    on full[slot] with parity `phase`; the producer waits on empty[slot] with parity `phase ^ 1`
    (a fresh barrier counts as having completed the phase before phase 0)."""

    def __init__(self, k, stages, stage_bytes, base, bars, tag):
        self.k, self.stages, self.stage_bytes, self.tag = k, stages, stage_bytes, tag
        self.base = base     # .b32 register: shared address of slot 0
        self.bars = bars     # .b32 register: full[0]; full[s] = bars + 8s, empty[s] = bars + 8(S+s)
        self.slot = k.reg(".b32", f"{tag}_slot")
        self.phase = k.reg(".b32", f"{tag}_phase")
        self.full = k.reg(".b32", f"{tag}_full")
        self.empty = k.reg(".b32", f"{tag}_empty")
        self.addr = k.reg(".b32", f"{tag}_slot_addr")

    def init_barriers_warps(self, tid, nwarps, empty_count, full_count=1):
        """The ring's barriers, full[s] (full_count arrivals + tx bytes) and empty[s] (empty_count
        arrivals), spread over the CTA's warps: lane 0 of warp w initialises barrier w, w + nwarps,
        ... (barriers 0..stages-1 are full[], then empty[]) and fences its own inits; the setup
        barrier that follows makes them visible to the CTA.
        NOTE: ptxas puts a fence before every mbarrier init (~40 cycles each in one thread: about
        600 cycles at every kernel start with 6 stages and the tensor-map prefetches, timeline
        stamps, H100, 2026-11-26); and mbarrier.init takes uniform operands, so one barrier per
        lane of a warp becomes a loop over the lanes: one per warp instead."""
        k = self.k
        p, pf = k.reg(".pred", "p_bar_init"), k.reg(".pred", "p_bar_full")
        w, t, c, i = (k.reg(".b32", n) for n in ("t_bar_w", "t_bar", "t_bar_n", "t_bar_i"))
        k.comment(f"ring barriers, lane 0 of warp w: barrier w (+ {nwarps}...); full[s] = barrier s "
                  f"({full_count} arrival{'s' if full_count > 1 else ''} + tx bytes), empty[s] = "
                  f"barrier {self.stages} + s ({empty_count} arrivals)")
        k(f"shr.u32 {w}, {tid}, 5")
        k(f"and.b32 {t}, {tid}, 31")
        for r in range((2 * self.stages + nwarps - 1) // nwarps):
            k(f"add.u32 {i}, {w}, {r * nwarps}")
            k(f"setp.lt.u32 {p}, {i}, {2 * self.stages}")
            k(f"setp.eq.and.u32 {p}, {t}, 0, {p}")
            k(f"setp.lt.u32 {pf}, {i}, {self.stages}")
            k(f"selp.u32 {c}, {full_count}, {empty_count}, {pf}")
            k(f"mad.lo.u32 {i}, {i}, 8, {self.bars}")
            k(f"@{p} mbarrier.init.shared::cta.b64 [{i}], {c}")
        k(f"setp.lt.u32 {p}, {w}, {2 * self.stages}")
        k(f"setp.eq.and.u32 {p}, {t}, 0, {p}")
        mbar_init_fence(k, p)

    def reset(self):
        self.k(f"mov.u32 {self.slot}, 0")
        self.k(f"mov.u32 {self.phase}, 0")

    def locate(self):
        """full / empty / addr of the current slot."""
        k = self.k
        k(f"mad.lo.u32 {self.full}, {self.slot}, 8, {self.bars}")
        k(f"add.u32 {self.empty}, {self.full}, {8 * self.stages}")
        k(f"mad.lo.u32 {self.addr}, {self.slot}, {self.stage_bytes}, {self.base}")

    def advance(self):
        k = self.k
        p = k.reg(".pred", f"p_{self.tag}_wrap")
        k(f"add.u32 {self.slot}, {self.slot}, 1")
        k(f"setp.eq.u32 {p}, {self.slot}, {self.stages}")
        k(f"@{p} mov.u32 {self.slot}, 0")
        k(f"@{p} xor.b32 {self.phase}, {self.phase}, 1")


# ---- clusters (thread-block clusters of sm_90) -------------------------------------------------

def tma_load_multicast(k, dst, tmap, coords, bar, mask16):
    """One TMA box written to the same shared offset (dst) in every CTA of the cluster whose
    bit is set in mask16 (.b16 register); each destination CTA's mbarrier at the same offset as
    bar receives the complete_tx of its copy."""
    k(f"cp.async.bulk.tensor.{len(coords)}d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
      f"[{dst}], [{tmap}, {{{', '.join(coords)}}}], [{bar}], {mask16}")


def mbar_arrive_remote(k, bar, cta_rank, tmp, pred=None):
    """Arrive on the mbarrier at the same shared offset as bar in CTA cta_rank of the cluster
    (mapa turns a CTA-local shared address into that CTA's shared::cluster address).
    Default semantics (.release.cta): the explicit .release.cluster form makes ptxas put a
    MEMBAR.ALL.GPU before every arrive, which cost a third of the GEMM's throughput."""
    p = f"@{pred} " if pred else ""
    k(f"mapa.shared::cluster.u32 {tmp}, {bar}, {cta_rank}")
    k(f"{p}mbarrier.arrive.shared::cluster.b64 _, [{tmp}]")


def cluster_sync(k):
    """All threads of all CTAs of the cluster (not .aligned: callers may be divergent)."""
    k("barrier.cluster.arrive.release")
    k("barrier.cluster.wait.acquire")
