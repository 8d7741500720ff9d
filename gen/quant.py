"""Quantization kernels: BF16/F16/F32 -> FP8, MXFP8, NVFP4, INT8 with per-tensor, per-row and
per-block scales. Bandwidth-bound; one family, one template.

Work decomposition
  An *item* is one 16-byte vector of the input row (V = 8 bf16/f16 or 4 f32 elements). Items are
  numbered row by row (vpr = K / V per row), so lane l of a warp holds item base + l: a warp loads
  512 contiguous bytes, and the L = B / V lanes of one scale block are neighbours (B divides K, so
  a block never crosses a row). The block amax is a butterfly over those L lanes.
  Each warp takes U items per lane per trip (U independent 16-byte loads in flight per thread)
  and strides over the tensor by the whole grid (persistent-ish grid sized by the runtime).
  Row modes instead give a whole row to a warp: pass 1 takes the amax, pass 2 re-reads the row
  (an L2 hit for all but enormous rows) and quantizes.

Numerics (the CPU reference in src/quant_ref.c follows these exact f32 steps, so codes compare
bit for bit):
  FP8 / INT8: a = amax, raised to fmax * 2^-126 if positive and below; scale = a / fmax;
         inv = fmax / a (0 if amax == 0); static: inv = min(1 / scale, FLT_MAX) (0 if scale <= 0);
         q = cvt.rn.sat(x * inv).
  MXFP8: code = max(expfield(amax) - emax, 0) (255 if amax is Inf/NaN), inv = 2^(127 - code).
  NVFP4: g = amax_t / 2688, raised to 2^-117 if positive and below (or static);
         s = e4m3(amax16 * min(1 / (6 g), FLT_MAX)) (0 if g == 0);
         inv = min(1 / (dec(s) * g), FLT_MAX) (0 if dec(s) * g is 0); q = e2m1(f16(x * inv)).
Divisions and reciprocals are div.rn / rcp.rn (IEEE), so the host reference reproduces them.
"""

from ptx import Kernel, header, f32, struct_layout, load_arg

GENERATOR = "gen/quant.py"
THREADS = 256
WARPS = THREADS // 32
UNROLL = 2   # vectors per lane per trip; the loop is double-buffered, so 2x this in flight

# Argument block: one .param struct shared by every quant kernel. The runtime fills the C struct
# emitted from this same list (build/gen/quant_args.h), so the two cannot disagree.
ARGS = [
    ("u64", "x"), ("u64", "q"), ("u64", "s"), ("u64", "amax"), ("u64", "gscale"),
    ("u64", "xs0"), ("u64", "xs1"), ("u64", "xs2"),
    ("u64", "qs0"), ("u64", "qs1"), ("u64", "qs2"),
    ("u64", "ss0"), ("u64", "ss1"), ("u64", "ss2"), ("u64", "ssk"),
    ("u32", "d1"), ("u32", "d2"), ("u32", "vpr"), ("u32", "nrows"),
    ("u32", "total"), ("u32", "kb4"), ("u32", "flags"), ("u32", "pad0"),
]
FLAG_STATIC = 1      # FP8_TENSOR / NVFP4: read the (global) scale instead of deriving it
FLAG_WRITE_AMAX = 2  # FP8_TENSOR static: also reduce amax(|x|) into args.amax
FLAG_SF128x4 = 4     # MXFP8/NVFP4: 128x4 interleaved scale layout
FLAG_FLAT = 8        # leading dims of x, q and scales collapse to one row pitch (xs2, qs2, ss2)


def arg_offsets():
    return struct_layout(ARGS)


INPUTS = {"bf16": 2, "f16": 2, "f32": 4}
FMAX = {"e4m3": 448.0, "e5m2": 57344.0, "s8": 127.0}
EMAX = {"e4m3": 8, "e5m2": 15}

# mode -> (block size or None for row/tensor, scale encoding, outputs allowed)
MODES = {
    "amax":     (None, None, [None]),
    "fp8tensor": ("tensor", "f32", ["e4m3", "e5m2"]),
    "fp8row":   ("row", "f32", ["e4m3", "e5m2"]),
    "fp8rowl":  ("rowl", "f32", ["e4m3", "e5m2"]),
    "fp8block": (128, "f32", ["e4m3", "e5m2"]),
    "mx8":      (32, "ue8m0", ["e4m3", "e5m2"]),
    "nvfp4":    (16, "ue4m3", ["e2m1"]),
    "i8row":    ("row", "f32", ["s8"]),
    "i8rowl":   ("rowl", "f32", ["s8"]),
    "i8block32": (32, "f32", ["s8"]),
    "i8block64": (64, "f32", ["s8"]),
    "i8block128": (128, "f32", ["s8"]),
}


def item_vectors(mode, inp):
    """16-byte vectors a lane takes as one item. NVFP4 takes one whole 16-element scale block
    (2 vectors of BF16/F16, 4 of F32): no butterfly, and the per-block scale work and the
    addressing are paid once per block instead of once per vector. Measured on an H200 (BF16,
    static scale): 63% -> 78% of copy."""
    if mode == "nvfp4":
        return INPUTS[inp]
    # other block modes: 32 bytes per lane from 2-byte inputs halves the per-vector overhead too
    if isinstance(MODES[mode][0], int) and INPUTS[inp] == 2:
        return 2
    return 1


def item_unroll(mode, inp):
    """Items per lane per trip (the loop is double-buffered on top of this)."""
    return 1 if item_vectors(mode, inp) > 1 else UNROLL


def kernel_name(mode, inp, out):
    return f"quant_{mode}_{inp}" + (f"_{out}" if out else "")


def variants():
    """Every quant kernel: (name, params). All are assembled for every target."""
    res = []
    for mode, (blk, enc, outs) in MODES.items():
        for inp in INPUTS:
            for out in outs:
                res.append((kernel_name(mode, inp, out),
                            {"mode": mode, "in": inp, "out": out or "none",
                             "block": blk if blk else "none", "scale": enc or "none",
                             "vector": 16 // INPUTS[inp] * item_vectors(mode, inp),
                             "unroll": item_unroll(mode, inp),
                             "threads": THREADS}))
    return res


# -------------------------------------------------------------------------------------------
class Q:
    """Emits one quant kernel for one target."""

    def __init__(self, name, p, target):
        self.k = Kernel(name)
        self.p = p
        self.target = target
        self.inp = p["in"]
        self.out = p["out"]
        self.mode = p["mode"]
        self.V = 16 // INPUTS[self.inp]
        self.NV = item_vectors(self.mode, self.inp)   # 16-byte vectors per item (one lane)
        self.U = item_unroll(self.mode, self.inp)     # items per lane per trip
        self.blk = MODES[self.mode][0]
        self.enc = MODES[self.mode][1]
        self.off, self.argsize = arg_offsets()

    # ---- small pieces --------------------------------------------------------------------
    def arg(self, name):
        return load_arg(self.k, self.off, name)

    def unpack(self, words, dst):
        """16 input bytes (4 .b32) -> V f32 registers, element order preserved."""
        k = self.k
        if self.inp == "f32":
            for i in range(4):
                k(f"mov.b32 {dst[i]}, {words[i]}")
        elif self.inp == "bf16":
            # bf16 is the top half of an f32: shift / mask, exact.
            for i in range(4):
                k(f"shl.b32 {dst[2*i]}, {words[i]}, 16")
                k(f"and.b32 {dst[2*i+1]}, {words[i]}, 0xFFFF0000")
        else:
            h = [k.reg(".b16", "h_lo"), k.reg(".b16", "h_hi")]
            for i in range(4):
                k(f"mov.b32 {{{h[0]}, {h[1]}}}, {words[i]}")
                k(f"cvt.f32.f16 {dst[2*i]}, {h[0]}")
                k(f"cvt.f32.f16 {dst[2*i+1]}, {h[1]}")

    def load16(self, pv, addr, prefix, hint=".L1::no_allocate", off=0, words=None):
        """One predicated 16-byte load into 4 registers zeroed first (an invalid lane then adds
        nothing to an amax)."""
        k = self.k
        wd = words or k.regs(".b32", prefix, 4)
        for j in range(4):
            k(f"mov.b32 {wd[j]}, 0")
        ld = f"ld.global.nc{hint}.v4.b32" if hint is not None else "ld.global.v4.b32"
        k(f"@{pv} {ld} {{{wd[0]}, {wd[1]}, {wd[2]}, {wd[3]}}}, [{addr}{f'+{off}' if off else ''}]")
        return wd

    def absmax_words(self, words, acc):
        """max(|x|) of one 16-byte vector into acc. 2-byte inputs are reduced packed (abs is a
        mask, max.bf16x2 / max.f16x2 takes two at a time): 9 instructions instead of 16."""
        k = self.k
        if self.inp == "f32":
            t = k.reg(".f32", "t_abs")
            for w in words:
                k(f"abs.f32 {t}, {w}")
                k(f"max.f32 {acc}, {acc}, {t}")
            return
        typ = "bf16x2" if self.inp == "bf16" else "f16x2"
        m, t = k.reg(".b32", "t_pm"), k.reg(".b32", "t_pa")
        k(f"and.b32 {m}, {words[0]}, 0x7FFF7FFF")
        for w in words[1:]:
            k(f"and.b32 {t}, {w}, 0x7FFF7FFF")
            k(f"max.{typ} {m}, {m}, {t}")
        lo, hi = k.reg(".f32", "t_mlo"), k.reg(".f32", "t_mhi")
        if self.inp == "bf16":
            k(f"shl.b32 {lo}, {m}, 16")
            k(f"and.b32 {hi}, {m}, 0xFFFF0000")
        else:
            hl, hh = k.reg(".b16", "h_lo"), k.reg(".b16", "h_hi")
            k(f"mov.b32 {{{hl}, {hh}}}, {m}")
            k(f"cvt.f32.f16 {lo}, {hl}")
            k(f"cvt.f32.f16 {hi}, {hh}")
        k(f"max.f32 {acc}, {acc}, {lo}")
        k(f"max.f32 {acc}, {acc}, {hi}")

    def absmax(self, vals, acc):
        k = self.k
        t = k.reg(".f32", "t_abs")
        for v in vals:
            k(f"abs.f32 {t}, {v}")
            k(f"max.f32 {acc}, {acc}, {t}")

    def butterfly_max(self, acc, lanes):
        k = self.k
        t = k.reg(".f32", "t_shfl")
        o = 1
        while o < lanes:
            k(f"shfl.sync.bfly.b32 {t}, {acc}, {o}, 0x1f, 0xffffffff")
            k(f"max.f32 {acc}, {acc}, {t}")
            o *= 2

    def raise_positive(self, dst, x, floor, tag):
        """dst = x, raised to floor where x is positive and below it (NaN and 0 pass through);
        returns the predicate x > 0."""
        k = self.k
        pos, tiny = k.reg(".pred", f"p_{tag}pos"), k.reg(".pred", f"p_{tag}tiny")
        k(f"setp.gt.f32 {pos}, {x}, 0f00000000")
        k(f"setp.lt.and.f32 {tiny}, {x}, {f32(floor)}, {pos}")
        k(f"selp.f32 {dst}, {f32(floor)}, {x}, {tiny}")
        return pos

    def fp8_scale(self, amax, scale, inv, fmax):
        """scale = a / fmax; inv = amax > 0 ? fmax / a : 0 (IEEE divisions), where a is amax
        raised to fmax * 2^-126 when it is positive and below that.
        NOTE: without the floor an amax under fmax / FLT_MAX (1.3e-36 for E4M3) made inv Inf,
        so zeros encoded as NaN (0 * Inf) and every other value saturated (found by review);
        with it the scale is never subnormal and inv at most 2^126."""
        k = self.k
        a = k.reg(".f32", "amax_fl")
        p = self.raise_positive(a, amax, fmax * 2.0 ** -126, "a")
        k(f"div.rn.f32 {scale}, {a}, {f32(fmax)}")
        k(f"div.rn.f32 {inv}, {f32(fmax)}, {a}")
        k(f"selp.f32 {inv}, {inv}, 0f00000000, {p}")

    def encode_store(self, vals, inv, qaddr, valid):
        """vals * inv -> q codes; store them (one byte each, or half for e2m1) at qaddr if valid."""
        k = self.k
        V = len(vals)
        y = k.regs(".f32", "y", V)
        for i in range(V):
            k(f"mul.rn.f32 {y[i]}, {vals[i]}, {inv}")
        if self.out in ("e4m3", "e5m2"):
            pairs = k.regs(".b16", "pk", V // 2)
            for i in range(V // 2):
                # first source -> high byte: (y[2i+1], y[2i]) keeps memory order
                k(f"cvt.rn.satfinite.{self.out}x2.f32 {pairs[i]}, {y[2*i+1]}, {y[2*i]}")
            self.store_bytes(pairs, ".b16", qaddr, valid)
        elif self.out == "s8":
            ints = k.regs(".b32", "iq", V)
            for i in range(V):
                k(f"cvt.rni.sat.s8.f32 {ints[i]}, {y[i]}")
            words = k.regs(".b32", "qw", V // 4)
            for w in range(V // 4):
                # prmt gathers the low byte of four registers: 0x0040 | ... built stepwise
                k(f"prmt.b32 {words[w]}, {ints[4*w]}, {ints[4*w+1]}, 0x3340")
                t = k.reg(".b32", "t_prmt")
                k(f"prmt.b32 {t}, {ints[4*w+2]}, {ints[4*w+3]}, 0x3340")
                k(f"prmt.b32 {words[w]}, {words[w]}, {t}, 0x5410")
            self.store_words(words, qaddr, valid)
        elif self.out == "e2m1":
            nib = self.e2m1_codes(y)
            self.store_fp4(nib, qaddr, valid, V // 2)

    def store_bytes(self, pairs, typ, qaddr, valid):
        """Byte pairs (.b16) -> words -> one 4-, 8- or 16-byte store."""
        k = self.k
        w = k.regs(".b32", "qw", len(pairs) // 2)
        for i in range(len(w)):
            k(f"mov.b32 {w[i]}, {{{pairs[2*i]}, {pairs[2*i+1]}}}")
        self.store_words(w, qaddr, valid)

    def store_words(self, words, qaddr, valid):
        k = self.k
        vec = {1: "", 2: ".v2", 4: ".v4"}[len(words)]
        regs = ", ".join(words)
        k(f"@{valid} st.global{vec}.b32 [{qaddr}], {{{regs}}}" if vec else
          f"@{valid} st.global.b32 [{qaddr}], {words[0]}")

    def e2m1_codes(self, y):
        """V f32 -> V/2 .b32 words, each holding two 4-bit codes at bits 0..3 and 16..19.

        NVFP4 numerics: y is first rounded to f16 (cvt.rn, RNE), then to E2M1 (RNE, saturating).
        The f16 step costs nothing in accuracy that matters (it only moves ties that lie within
        2^-11 of an E2M1 midpoint) and lets both targets work on packed pairs:
        sm_100a/sm_120a have cvt.rn.satfinite.e2m1x2.f16x2; sm_90a rounds with packed f16x2
        arithmetic (each instruction covers two elements)."""
        k = self.k
        V = len(y)
        h = k.regs(".b32", "h2_", V // 2)
        for i in range(V // 2):
            # first source -> upper half: element 2i+1 high, 2i low
            k(f"cvt.rn.f16x2.f32 {h[i]}, {y[2*i+1]}, {y[2*i]}")
        if self.target != "sm_90a":
            b = k.regs(".b8", "fp4", V // 2)
            for i in range(V // 2):
                k(f"cvt.rn.satfinite.e2m1x2.f16x2 {b[i]}, {h[i]}")
            return ("bytes", b)
        # E2M1 rounds |h| onto 0,.5,1,1.5,2 (step .5), 2,3,4 (step 1), 4,6 (step 2). In each
        # binade the code is a plain integer rounding: round(2a), round(a) + 2, round(a/2) + 4;
        # outside its binade each candidate only overshoots, so the code is their minimum,
        # capped at 7. Adding 1024 (an even number) makes one f16 add/fma round to an integer
        # with ties to even and leaves it in the low mantissa bits; min.f16x2 ignores NaN, so
        # NaN and Inf land on the cap (6.0). Sign: +8 for h < 0 (ordered: -0 and NaN unsigned).
        # Checked exhaustively over all f16 against RNE E2M1. All of it runs on the FMA pipe.
        a = k.reg(".b32", "t_a2")
        t = k.reg(".b32", "t_m2")
        codes = k.regs(".b32", "c4_", V // 2)
        for i in range(V // 2):
            c = codes[i]
            k(f"abs.f16x2 {a}, {h[i]}")
            k(f"fma.rn.f16x2 {c}, {a}, %c2, %c1024")
            k(f"add.rn.f16x2 {t}, {a}, %c1026")
            k(f"min.f16x2 {c}, {c}, {t}")
            k(f"fma.rn.f16x2 {t}, {a}, %chalf, %c1028")
            k(f"min.f16x2 {c}, {c}, {t}")
            k(f"min.f16x2 {c}, {c}, %c1031")
            k(f"set.lt.f16x2.f16x2 {t}, {h[i]}, %c0")
            k(f"fma.rn.f16x2 {c}, {t}, %c8, {c}")
            k(f"and.b32 {c}, {c}, 0x000F000F")
        return ("pairs", codes)

    def load_fp4_constants(self):
        """f16x2 constants of the sm_90a FP4 encoder, loaded once at entry."""
        k = self.k
        for name, bits in (("c2", 0x4000), ("chalf", 0x3800), ("c1024", 0x6400),
                           ("c1026", 0x6402), ("c1028", 0x6404), ("c1031", 0x6407),
                           ("c8", 0x4800), ("c0", 0x0000)):
            k(f"mov.b32 {k.reg('.b32', name)}, 0x{bits:04X}{bits:04X}")

    def store_fp4(self, nib, qaddr, valid, nbytes):
        k = self.k
        kind, regs = nib
        if kind == "bytes":
            if nbytes == 8:
                w0, w1 = k.reg(".b32", "qw0"), k.reg(".b32", "qw1")
                k(f"mov.b32 {w0}, {{{regs[0]}, {regs[1]}, {regs[2]}, {regs[3]}}}")
                k(f"mov.b32 {w1}, {{{regs[4]}, {regs[5]}, {regs[6]}, {regs[7]}}}")
                k(f"@{valid} st.global.v2.b32 [{qaddr}], {{{w0}, {w1}}}")
            elif nbytes == 4:
                w = k.reg(".b32", "qw0")
                k(f"mov.b32 {w}, {{{regs[0]}, {regs[1]}, {regs[2]}, {regs[3]}}}")
                k(f"@{valid} st.global.b32 [{qaddr}], {w}")
            else:
                hh = k.reg(".b16", "qh0")
                k(f"mov.b16 {hh}, {{{regs[0]}, {regs[1]}}}")
                k(f"@{valid} st.global.b16 [{qaddr}], {hh}")
            return
        # pair word p: element 2p at bits 0..3, 2p+1 at 16..19 -> byte p = lo | hi << 4, as
        # code + (code >> 12) in one mad.hi (on the FMA pipe, like the encoder)
        bytes_ = []
        for p, c in enumerate(regs):
            t = k.reg(".b32", f"t_fb{p}")
            k(f"mad.hi.u32 {t}, {c}, 1048576, {c}")
            bytes_.append(t)
        w = k.reg(".b32", "qw0")
        if nbytes >= 4:
            ws = k.regs(".b32", "qw", nbytes // 4)
            t = k.reg(".b32", "t_fbw")
            for j, wj in enumerate(ws):
                b = bytes_[4 * j:4 * j + 4]
                k(f"prmt.b32 {wj}, {b[0]}, {b[1]}, 0x3340")
                k(f"prmt.b32 {t}, {b[2]}, {b[3]}, 0x3340")
                k(f"prmt.b32 {wj}, {wj}, {t}, 0x5410")
            if nbytes == 8:
                k(f"@{valid} st.global.v2.b32 [{qaddr}], {{{ws[0]}, {ws[1]}}}")
            else:
                k(f"@{valid} st.global.b32 [{qaddr}], {ws[0]}")
        else:
            hh = k.reg(".b16", "qh0")
            k(f"prmt.b32 {w}, {bytes_[0]}, {bytes_[1]}, 0x3340")
            k(f"cvt.u16.u32 {hh}, {w}")
            k(f"@{valid} st.global.b16 [{qaddr}], {hh}")

    # ---- addressing ----------------------------------------------------------------------
    def row_index(self, row, tag):
        """row -> (i0, i1, i2) as .b64 registers (leading dims d0 x d1 x d2, d0 implied)."""
        k = self.k
        t = k.reg(".b32", f"t_r{tag}")
        i = [k.reg(".b32", f"i{j}_{tag}") for j in range(3)]
        k(f"rem.u32 {i[2]}, {row}, %a_d2")
        k(f"div.u32 {t}, {row}, %a_d2")
        k(f"rem.u32 {i[1]}, {t}, %a_d1")
        k(f"div.u32 {i[0]}, {t}, %a_d1")
        w = [k.reg(".b64", f"w{j}_{tag}") for j in range(3)]
        for j in range(3):
            k(f"cvt.u64.u32 {w[j]}, {i[j]}")
        return w

    def dot3(self, w, strides, dst):
        k = self.k
        k(f"mul.lo.u64 {dst}, {w[0]}, {strides[0]}")
        k(f"mad.lo.u64 {dst}, {w[1]}, {strides[1]}, {dst}")
        k(f"mad.lo.u64 {dst}, {w[2]}, {strides[2]}, {dst}")

    def q_bytes_shift(self):
        """log2 of q elements per byte (e2m1: offsets in elements -> bytes with shr 1)."""
        return 1 if self.out == "e2m1" else 0

    def scale_addr(self, row, srow, kb, dst, tag):
        """Address of the scale of block kb of row (strided: srow is the row's scale offset in
        elements; or the 128x4 layout, from row itself)."""
        k = self.k
        esz = 4 if self.enc == "f32" else 1
        t = k.reg(".b64", f"t_sa{tag}")
        if self.enc in ("ue8m0", "ue4m3"):
            p = k.reg(".pred", "p_sf128")
            lab = k.fresh(f"SF_STRIDED_{tag}")
            done = k.fresh(f"SF_DONE_{tag}")
            k(f"setp.eq.u32 {p}, %f_sf128, 0")
            k(f"@{p} bra {lab}")
            # 128x4 interleave: ((m/128)*kb4 + k/4)*512 + (m%32)*16 + ((m/32)%4)*4 + k%4
            a = k.reg(".b32", "t_sf_a")
            b = k.reg(".b32", "t_sf_b")
            k(f"shr.u32 {a}, {row}, 7")
            k(f"shr.u32 {b}, {kb}, 2")
            k(f"mad.lo.u32 {a}, {a}, %a_kb4, {b}")
            k(f"shl.b32 {a}, {a}, 9")
            k(f"and.b32 {b}, {row}, 31")
            k(f"shl.b32 {b}, {b}, 4")
            k(f"add.u32 {a}, {a}, {b}")
            k(f"bfe.u32 {b}, {row}, 5, 2")
            k(f"shl.b32 {b}, {b}, 2")
            k(f"add.u32 {a}, {a}, {b}")
            k(f"and.b32 {b}, {kb}, 3")
            k(f"add.u32 {a}, {a}, {b}")
            k(f"cvt.u64.u32 {t}, {a}")
            k(f"add.u64 {dst}, %a_s, {t}")
            k(f"bra.uni {done}")
            k.label(lab)
        k(f"mul.wide.u32 {t}, {kb}, %sk32")
        k(f"add.u64 {dst}, {t}, {srow}")
        if esz == 4:
            k(f"shl.b64 {dst}, {dst}, 2")
        k(f"add.u64 {dst}, %a_s, {dst}")
        if self.enc in ("ue8m0", "ue4m3"):
            k.label(done)

    # ---- the kernel ----------------------------------------------------------------------
    def load_args(self):
        k = self.k
        for name in ("x", "q", "s", "amax", "gscale", "xs0", "xs1", "xs2", "qs0", "qs1", "qs2",
                     "ss0", "ss1", "ss2", "ssk", "d1", "d2", "vpr", "nrows", "total", "kb4",
                     "flags"):
            self.arg(name)
        k(f"cvta.to.global.u64 %a_x, %a_x")
        k(f"cvta.to.global.u64 %a_q, %a_q")
        k(f"cvta.to.global.u64 %a_s, %a_s")
        k(f"cvta.to.global.u64 %a_amax, %a_amax")
        k(f"cvta.to.global.u64 %a_gscale, %a_gscale")
        k.reg(".b32", "f_sf128")
        k(f"and.b32 %f_sf128, %a_flags, {FLAG_SF128x4}")
        k.comment("32-bit row pitches for the flat path (the runtime sets FLAT only if they fit)")
        for name, src in (("xp32", "a_xs2"), ("qp32", "a_qs2"), ("sp32", "a_ss2"), ("sk32", "a_ssk")):
            k(f"cvt.u32.u64 {k.reg('.b32', name)}, %{src}")
        t = k.reg(".b32", "t_flat")
        k.reg(".pred", "p_flat")
        k(f"and.b32 {t}, %a_flags, {FLAG_FLAT}")
        k(f"setp.ne.u32 %p_flat, {t}, 0")

    def emit(self):
        k = self.k
        V = self.V
        k.comment("---- arguments (one .param struct; layout in build/gen/quant_args.h)")
        self.load_args()
        tid, lane, gw, nw = (k.reg(".b32", n) for n in ("thread", "lane", "gwarp", "nwarps"))
        k(f"mov.u32 {tid}, %tid.x")
        k(f"mov.u32 {k.reg('.b32', 'thread_id')}, {tid}")
        k(f"and.b32 {lane}, {tid}, 31")
        k(f"mov.u32 {gw}, %ctaid.x")
        k(f"shr.u32 {tid}, {tid}, 5")
        k(f"mad.lo.u32 {gw}, {gw}, {WARPS}, {tid}")
        k(f"mov.u32 {nw}, %nctaid.x")
        k(f"mul.lo.u32 {nw}, {nw}, {WARPS}")
        k.blank()
        if self.blk == "row":
            self.emit_row_cta()
        elif self.blk == "rowl":
            self.emit_row()
        else:
            self.emit_items()
        k("ret")
        params = [f".param .align 8 .b8 args[{self.argsize}]"]
        directives = [f".maxntid {THREADS}, 1, 1"]
        if self.blk == "row":
            # the row lives in registers: let ptxas use them (it otherwise aims at 64 on sm_100a
            # and spills)
            directives.append(".maxnreg 128")
        hdr = header(GENERATOR, k.name, "quant", THREADS, 0, self.p)
        return k.render(hdr, self.target, params, directives)

    def row_offsets(self, row, w, xoff, qoff, tag, soff=None):
        """Element offsets of a row's first element in x, q (and its scales, into soff), with
        (i0, i1, i2) in w. FLAG_FLAT (leading dims collapse to one row pitch below 2^32 in x, q
        and the scales): one 32x32->64 multiply each; otherwise the row is split into its
        leading indices and dotted with the 64-bit strides."""
        k = self.k
        lab_full, lab_done = k.fresh(f"ROW_FULL_{tag}"), k.fresh(f"ROW_DONE_{tag}")
        k(f"@!%p_flat bra.uni {lab_full}")
        k(f"mov.b64 {w[0]}, 0")
        k(f"mov.b64 {w[1]}, 0")
        k(f"cvt.u64.u32 {w[2]}, {row}")
        k(f"mul.wide.u32 {xoff}, {row}, %xp32")
        k(f"mul.wide.u32 {qoff}, {row}, %qp32")
        if soff:
            k(f"mul.wide.u32 {soff}, {row}, %sp32")
        k(f"bra.uni {lab_done}")
        k.label(lab_full)
        ww = self.row_index(row, tag)
        for j in range(3):
            k(f"mov.b64 {w[j]}, {ww[j]}")
        self.dot3(w, ["%a_xs0", "%a_xs1", "%a_xs2"], xoff)
        self.dot3(w, ["%a_qs0", "%a_qs1", "%a_qs2"], qoff)
        if soff:
            self.dot3(w, ["%a_ss0", "%a_ss1", "%a_ss2"], soff)
        k.label(lab_done)

    def item_address(self, rowreg, colreg, xaddr, qaddr, wregs, tag, soff=None):
        """(row, vector col) -> input and output byte addresses (and the row's scale offset)."""
        k = self.k
        qoff = k.reg(".b64", "t_qoff")
        self.row_offsets(rowreg, wregs, xaddr, qoff, tag, soff)
        c = k.reg(".b64", "t_col")
        k(f"mul.wide.u32 {c}, {colreg}, {self.V * self.NV}")
        k(f"add.u64 {xaddr}, {xaddr}, {c}")
        k(f"shl.b64 {xaddr}, {xaddr}, {INPUTS[self.inp].bit_length() - 1}")
        k(f"add.u64 {xaddr}, {xaddr}, %a_x")
        if self.mode == "amax":
            return
        k(f"add.u64 {qaddr}, {qoff}, {c}")
        if self.q_bytes_shift():
            k(f"shr.u64 {qaddr}, {qaddr}, 1")
        k(f"add.u64 {qaddr}, {qaddr}, %a_q")

    def emit_items(self):
        k = self.k
        V, U = self.V, self.U
        mode = self.mode
        trip, step = k.reg(".b32", "trip0"), k.reg(".b32", "step")
        step_r, step_c = k.reg(".b32", "step_r"), k.reg(".b32", "step_c")
        k.comment(f"---- items: warp w takes items [w*{32*U}, +{32*U}) then strides by the grid.\n"
                  "Each lane keeps (row, col) of its items and advances them by the stride:\n"
                  "one division per thread at entry instead of one per item.")
        k(f"mul.lo.u32 {trip}, %gwarp, {32*U}")
        k(f"mul.lo.u32 {step}, %nwarps, {32*U}")
        k(f"div.u32 {step_r}, {step}, %a_vpr")
        k(f"rem.u32 {step_c}, {step}, %a_vpr")
        items, rows, cols = [], [], []
        for u in range(U):
            it, r, c = (k.reg(".b32", f"{n}{u}") for n in ("item", "row", "col"))
            k(f"add.u32 {it}, {trip}, {32*u}")
            k(f"add.u32 {it}, {it}, %lane")
            k(f"div.u32 {r}, {it}, %a_vpr")
            k(f"rem.u32 {c}, {it}, %a_vpr")
            items.append(it); rows.append(r); cols.append(c)
        lmax = k.reg(".f32", "lmax")
        k(f"mov.f32 {lmax}, 0f00000000")
        scale, inv = k.reg(".f32", "scale"), k.reg(".f32", "inv")
        p_first = k.reg(".pred", "p_first")
        gtid = k.reg(".b32", "gtid")
        k(f"mad.lo.u32 {gtid}, %gwarp, 32, %lane")
        k(f"setp.eq.u32 {p_first}, {gtid}, 0")
        if mode == "fp8tensor":
            self.tensor_scale(scale, inv, p_first)
        if mode == "nvfp4":
            g = k.reg(".f32", "gscale")
            ps = k.reg(".pred", "p_static")
            t = k.reg(".b32", "t_flag")
            k.comment("NVFP4 per-tensor scale: given (static), or g = amax / (6 * 448) from the\n"
                      "amax pass, written once by thread 0")
            k(f"and.b32 {t}, %a_flags, {FLAG_STATIC}")
            k(f"setp.ne.u32 {ps}, {t}, 0")
            k(f"@{ps} ld.global.f32 {g}, [%a_gscale]")
            k(f"@{ps} bra.uni G_READY")
            k(f"ld.global.f32 {g}, [%a_amax]")
            k(f"div.rn.f32 {g}, {g}, {f32(6.0 * 448.0)}")
            k.comment("a positive g below 2^-117 is raised to it: dec(s) * g >= 2^-9 * g then stays\n"
                      "normal and its reciprocal finite (a tinier g gave Inf / NaN scales)")
            self.raise_positive(g, g, 2.0 ** -117, "g")
            k(f"@{p_first} st.global.f32 [%a_gscale], {g}")
            k.label("G_READY")
            i6 = k.reg(".f32", "inv6g")
            k(f"mul.rn.f32 {i6}, {g}, {f32(6.0)}")
            k(f"rcp.rn.f32 {i6}, {i6}")
            k.comment("at most FLT_MAX: a static g below 1 / (6 FLT_MAX) (or 0) must not make it Inf")
            k(f"min.f32 {i6}, {i6}, 0f7F7FFFFF")
            if self.target == "sm_90a":
                self.load_fp4_constants()
        k.blank()
        k.comment("double-buffered: the loads of trip t+1 are issued before trip t is processed,\n"
                  f"so {2*U} 16-byte vectors per lane stay in flight across the compute")
        cursor = (items, rows, cols, step, step_r, step_c)
        self.load_set("A", cursor)
        pdone = k.reg(".pred", "p_done")
        k.label("ITEM_LOOP")
        for cur, nxt in (("A", "B"), ("B", "A")):
            k(f"setp.ge.u32 {pdone}, {trip}, %a_total")
            k(f"@{pdone} bra.uni ITEM_DONE")
            self.load_set(nxt, cursor)
            self.process_set(cur, lmax)
            k(f"add.u32 {trip}, {trip}, {step}")
        k("bra.uni ITEM_LOOP")
        k.label("ITEM_DONE")
        if mode == "amax" or mode == "fp8tensor":
            if mode == "fp8tensor":
                p = k.reg(".pred", "p_wamax")
                t = k.reg(".b32", "t_wamax")
                k(f"and.b32 {t}, %a_flags, {FLAG_WRITE_AMAX}")
                k(f"setp.eq.u32 {p}, {t}, 0")
                k(f"@{p} bra.uni AMAX_SKIP")
            k.comment("amax(|x|): warp butterfly, then one atomic max per warp. Non-negative\n"
                      "floats order like their bit patterns, so an integer max is exact.")
            self.butterfly_max(lmax, 32)
            pl = k.reg(".pred", "p_lane0")
            k(f"setp.eq.u32 {pl}, %lane, 0")
            b = k.reg(".b32", "t_bits")
            k(f"mov.b32 {b}, {lmax}")
            k(f"@{pl} red.global.max.u32 [%a_amax], {b}")
            if mode == "fp8tensor":
                k.label("AMAX_SKIP")
        if self.enc in ("ue8m0", "ue4m3"):
            self.sf128_padding()

    def sf128_padding(self):
        """The 128x4 layout's padding (rows past nrows in the last row group, blocks past nk in
        the last block group) written as zeros here rather than by a memset before the launch
        (one stream operation fewer a call). Only the padding bytes are stored, so no byte is
        written twice with different values: the scales proper are the item loop's."""
        k = self.k
        per_item = self.V * self.NV
        shift = (self.blk // per_item).bit_length() - 1
        assert per_item << shift == self.blk, (self.blk, per_item)
        p = k.reg(".pred", "p_pad")
        nk, mg = k.reg(".b32", "pad_nk"), k.reg(".b32", "pad_mg")
        n1, n = k.reg(".b32", "pad_n1"), k.reg(".b32", "pad_n")
        j, st = k.reg(".b32", "pad_j"), k.reg(".b32", "pad_step")
        t, gm, gk, o = (k.reg(".b32", f"pad_{x}") for x in ("t", "gm", "gk", "o"))
        m, kk = k.reg(".b32", "pad_m"), k.reg(".b32", "pad_k")
        a = k.reg(".b64", "pad_addr")
        k.comment("---- 128x4 padding: part 1 is the last row group's kb4 groups of 512 bytes (if\n"
                  "nrows % 128), part 2 every row group's last block group (if nk % 4); the\n"
                  "group both share is walked twice and stores the same zeros both times")
        k(f"setp.eq.u32 {p}, %f_sf128, 0")
        k(f"@{p} bra.uni PAD_DONE")
        k.comment("NOTE: the arguments and the thread index are read again here, not kept from the\n"
                  "entry: kept live across the item loop they cost 6-17 registers (ptxas 13.0; MXFP8\n"
                  "BF16 47 -> 64, a CTA of occupancy); read again, the counts stay as before")
        va, ra, ka, sa = (k.reg(t, f"pad_{x}") for t, x in
                          ((".b32", "vpr"), (".b32", "nrows"), (".b32", "kb4"), (".b64", "s")))
        for r, name in ((va, "vpr"), (ra, "nrows"), (ka, "kb4"), (sa, "s")):
            typ, off = self.off[name]
            k(f"ld.param.{typ} {r}, [args+{off}]")
        k(f"cvta.to.global.u64 {sa}, {sa}")
        k(f"mov.u32 {j}, %ctaid.x")
        k(f"mov.u32 {t}, %ntid.x")
        k(f"mov.u32 {st}, %tid.x")
        k(f"mad.lo.u32 {j}, {j}, {t}, {st}")
        k(f"mov.u32 {st}, %nctaid.x")
        k(f"mul.lo.u32 {st}, {st}, {t}")
        k(f"shr.u32 {nk}, {va}, {shift}")
        k(f"add.u32 {mg}, {ra}, 127")
        k(f"shr.u32 {mg}, {mg}, 7")
        k(f"and.b32 {t}, {ra}, 127")
        k(f"setp.ne.u32 {p}, {t}, 0")
        k(f"selp.b32 {n1}, {ka}, 0, {p}")
        k(f"and.b32 {t}, {nk}, 3")
        k(f"setp.ne.u32 {p}, {t}, 0")
        k(f"selp.b32 {n}, {mg}, 0, {p}")
        k(f"add.u32 {n}, {n}, {n1}")
        k(f"shl.b32 {n}, {n}, 9")
        k(f"shl.b32 {n1}, {n1}, 9")
        k.label("PAD_LOOP")
        k(f"setp.ge.u32 {p}, {j}, {n}")
        k(f"@{p} bra.uni PAD_DONE")
        k.comment("(group row gm, group column gk, byte o of its 512)")
        k(f"setp.lt.u32 {p}, {j}, {n1}")
        k(f"sub.u32 {t}, {j}, {n1}")
        k(f"selp.b32 {t}, {j}, {t}, {p}")
        k(f"and.b32 {o}, {t}, 511")
        k(f"shr.u32 {t}, {t}, 9")
        k(f"add.u32 {gm}, {mg}, -1")
        k(f"selp.b32 {gm}, {gm}, {t}, {p}")
        k(f"add.u32 {gk}, {ka}, -1")
        k(f"selp.b32 {gk}, {t}, {gk}, {p}")
        k.comment("byte o = (m % 32) * 16 + ((m / 32) % 4) * 4 + k % 4 (scale_addr's interleave)")
        k(f"shr.u32 {m}, {o}, 4")
        k(f"bfe.u32 {t}, {o}, 2, 2")
        k(f"shl.b32 {t}, {t}, 5")
        k(f"add.u32 {m}, {m}, {t}")
        k(f"shl.b32 {t}, {gm}, 7")
        k(f"add.u32 {m}, {m}, {t}")
        k(f"and.b32 {kk}, {o}, 3")
        k(f"shl.b32 {t}, {gk}, 2")
        k(f"add.u32 {kk}, {kk}, {t}")
        k(f"setp.ge.u32 {p}, {m}, {ra}")
        k(f"setp.ge.or.u32 {p}, {kk}, {nk}, {p}")
        k(f"mad.lo.u32 {t}, {gm}, {ka}, {gk}")
        k(f"shl.b32 {t}, {t}, 9")
        k(f"add.u32 {t}, {t}, {o}")
        k(f"cvt.u64.u32 {a}, {t}")
        k(f"add.u64 {a}, {sa}, {a}")
        k(f"@{p} st.global.u8 [{a}], 0")
        k(f"add.u32 {j}, {j}, {st}")
        k("bra.uni PAD_LOOP")
        k.label("PAD_DONE")

    def load_set(self, S, cursor):
        """Issue the loads of the items under the cursor into register set S (A or B), keep
        what processing them needs (valid, row, col, leading indices, output address), then
        advance the cursor by the grid stride."""
        k = self.k
        items, rows, cols, step, step_r, step_c = cursor
        for u in range(self.U):
            tag = f"{S}{u}"
            pv = k.reg(".pred", f"p_valid{tag}")
            k(f"setp.lt.u32 {pv}, {items[u]}, %a_total")
            r, c = k.reg(".b32", f"row{tag}"), k.reg(".b32", f"col{tag}")
            k(f"mov.u32 {r}, {rows[u]}")
            k(f"mov.u32 {c}, {cols[u]}")
            xa, qa = k.reg(".b64", f"xaddr{tag}"), k.reg(".b64", f"qaddr{tag}")
            w = [k.reg(".b64", f"rw{j}") for j in range(3)]   # scratch: only srow is kept
            srow = k.reg(".b64", f"srow{tag}") if isinstance(self.blk, int) else None
            self.item_address(r, c, xa, qa, w, tag, srow)
            wd = k.regs(".b32", f"xv{tag}_", 4 * self.NV)
            # NOTE: with two vectors per lane each load instruction uses half of every sector it
            # touches; letting L1 keep the lines makes the second one an L1 hit
            hint = ".L1::no_allocate" if self.NV == 1 else ""
            for v in range(self.NV):
                self.load16(pv, xa, None, hint, 16 * v, wd[4 * v:4 * v + 4])
        pw = k.reg(".pred", "p_wrap")
        for u in range(self.U):
            k(f"add.u32 {items[u]}, {items[u]}, {step}")
            k(f"add.u32 {rows[u]}, {rows[u]}, {step_r}")
            k(f"add.u32 {cols[u]}, {cols[u]}, {step_c}")
            k(f"setp.ge.u32 {pw}, {cols[u]}, %a_vpr")
            k(f"@{pw} sub.u32 {cols[u]}, {cols[u]}, %a_vpr")
            k(f"@{pw} add.u32 {rows[u]}, {rows[u]}, 1")

    def process_set(self, S, lmax):
        k = self.k
        for u in range(self.U):
            tag = f"{S}{u}"
            k.comment(f"item {tag}: unpack, block amax, scale, encode, store")
            words = [f"%xv{tag}_{j}" for j in range(4 * self.NV)]
            valid, qaddr = f"%p_valid{tag}", f"%qaddr{tag}"
            if self.mode in ("amax", "fp8tensor"):
                self.absmax_words(words, lmax)
            if self.mode == "amax":
                continue
            f = k.regs(".f32", "x", self.V * self.NV)
            for v in range(self.NV):
                self.unpack(words[4 * v:4 * v + 4], f[self.V * v:self.V * (v + 1)])
            if isinstance(self.blk, int):
                self.block_quant(f, words, f"%row{tag}", f"%col{tag}", f"%srow{tag}", valid,
                                 qaddr, tag)
            else:
                self.encode_store(f, "%inv", qaddr, valid)

    def tensor_scale(self, scale, inv, p_first):
        k = self.k
        fmax = FMAX[self.out]
        p = k.reg(".pred", "p_static")
        t = k.reg(".b32", "t_flag")
        k.comment("per-tensor scale: static (read) or from the amax pass (derived, thread 0 stores)")
        k(f"and.b32 {t}, %a_flags, {FLAG_STATIC}")
        k(f"setp.ne.u32 {p}, {t}, 0")
        k(f"@{p} bra.uni SCALE_STATIC")
        am = k.reg(".f32", "amax_t")
        k(f"ld.global.f32 {am}, [%a_amax]")
        self.fp8_scale(am, scale, inv, fmax)
        k(f"@{p_first} st.global.f32 [%a_s], {scale}")
        k("bra.uni SCALE_READY")
        k.label("SCALE_STATIC")
        pz = k.reg(".pred", "p_szero")
        k(f"ld.global.f32 {scale}, [%a_s]")
        k(f"setp.gt.f32 {pz}, {scale}, 0f00000000")
        k(f"div.rn.f32 {inv}, 0f3F800000, {scale}")
        k(f"min.f32 {inv}, {inv}, 0f7F7FFFFF")
        k(f"selp.f32 {inv}, {inv}, 0f00000000, {pz}")
        k.label("SCALE_READY")

    def block_quant(self, f, words, row, col, srow, valid, qaddr, tag):
        k = self.k
        L = self.blk // (self.V * self.NV)   # lanes sharing one scale block
        bmax = k.reg(".f32", "bmax")
        k(f"mov.f32 {bmax}, 0f00000000")
        self.absmax_words(words, bmax)
        self.butterfly_max(bmax, L)
        sc, inv = k.reg(".f32", "bscale"), k.reg(".f32", "binv")
        if self.enc == "f32":
            self.fp8_scale(bmax, sc, inv, FMAX[self.out])
            code = None
        elif self.enc == "ue8m0":
            code = k.reg(".b32", "sf_code")
            e = k.reg(".b32", "t_e")
            p = k.reg(".pred", "p_nan")
            k.comment("OCP MX: shared exponent floor(log2 amax) - emax, i.e. the amax's exponent field")
            k(f"mov.b32 {e}, {bmax}")
            k(f"bfe.u32 {e}, {e}, 23, 8")
            k(f"sub.s32 {code}, {e}, {EMAX[self.out]}")
            k(f"max.s32 {code}, {code}, 0")
            k(f"setp.eq.u32 {p}, {e}, 255")
            k(f"selp.b32 {code}, 255, {code}, {p}")
            k.comment("inv = 2^(127 - code), built as float bits; NaN for code 255")
            k(f"sub.s32 {e}, 254, {code}")
            k(f"shl.b32 {e}, {e}, 23")
            k(f"selp.b32 {e}, 0x7FC00000, {e}, {p}")
            k(f"mov.b32 {inv}, {e}")
        else:  # ue4m3 (NVFP4)
            code = k.reg(".b32", "sf_code")
            h = k.reg(".b16", "t_sf16")
            hh = k.reg(".b32", "t_sf32")
            hl = k.reg(".b16", "t_sflo")
            hx = k.reg(".b16", "t_sfhi")
            pz = k.reg(".pred", "p_gz")
            k.comment("NVFP4: s = e4m3(amax16 * inv6g), inv6g = 1 / (6 g) once per thread;\n"
                      "inv = 1 / (dec(s) * g) (rcp.rn: the IEEE reciprocal the host reproduces)")
            k(f"mul.rn.f32 {sc}, {bmax}, %inv6g")
            k(f"setp.gt.f32 {pz}, %gscale, 0f00000000")
            k(f"selp.f32 {sc}, {sc}, 0f00000000, {pz}")
            k(f"cvt.rn.satfinite.e4m3x2.f32 {h}, 0f00000000, {sc}")
            k(f"cvt.u32.u16 {code}, {h}")
            k(f"cvt.rn.f16x2.e4m3x2 {hh}, {h}")
            k(f"mov.b32 {{{hl}, {hx}}}, {hh}")
            k(f"cvt.f32.f16 {sc}, {hl}")
            k(f"mul.rn.f32 {sc}, {sc}, %gscale")
            k(f"setp.gt.f32 {pz}, {sc}, 0f00000000")
            k(f"rcp.rn.f32 {inv}, {sc}")
            k(f"min.f32 {inv}, {inv}, 0f7F7FFFFF")
            k(f"selp.f32 {inv}, {inv}, 0f00000000, {pz}")
        self.encode_store(f, inv, qaddr, valid)
        # the first lane of each block stores its scale
        ps = k.reg(".pred", "p_sstore")
        t = k.reg(".b32", "t_lanemod")
        k(f"and.b32 {t}, %lane, {L - 1}")
        k(f"setp.eq.and.u32 {ps}, {t}, 0, {valid}")
        kb = k.reg(".b32", "t_kb")
        k(f"shr.u32 {kb}, {col}, {(L).bit_length() - 1}")
        sa = k.reg(".b64", "saddr")
        self.scale_addr(row, srow, kb, sa, tag)
        if code is None:
            k(f"@{ps} st.global.f32 [{sa}], {sc}")
        else:
            b = k.reg(".b16", "t_code16")
            k(f"cvt.u16.u32 {b}, {code}")
            k(f"@{ps} st.global.u8 [{sa}], {b}")

    def row_scale(self, amax, w, writer):
        """Row modes: scale = amax / fmax stored by the thread `writer` selects (the row's
        leading indices w address it); returns the register holding inv."""
        k = self.k
        sc, inv = k.reg(".f32", "rscale"), k.reg(".f32", "rinv")
        self.fp8_scale(amax, sc, inv, FMAX[self.out])
        sa = k.reg(".b64", "saddr")
        self.dot3(w, ["%a_ss0", "%a_ss1", "%a_ss2"], sa)
        k(f"shl.b64 {sa}, {sa}, 2")
        k(f"add.u64 {sa}, {sa}, %a_s")
        k(f"@{writer} st.global.f32 [{sa}], {sc}")
        return inv

    def emit_row_cta(self):
        """Row modes, rows up to row_cta_max_k(): a CTA owns a row and keeps it in registers
        (R 16-byte vectors per thread), so x is read once. amax: warp butterfly, one word per
        warp in shared memory, one barrier. NOTE: the shared words are double-buffered by row
        parity, so the next row's writes cannot race a slow thread's reads of this row's."""
        k = self.k
        V = self.V
        R = ROW_CTA_VECTORS[INPUTS[self.inp]]
        row, par, red = k.reg(".b32", "row"), k.reg(".b32", "parity"), k.reg(".b32", "red_base")
        k.shared.append(f".shared .align 16 .f32 red[{2 * WARPS}];   // per-warp amax, two rows deep")
        k.comment(f"---- rows: CTA c takes rows c, c + nctaid, ...; {R} vectors per thread")
        k(f"mov.u32 {row}, %ctaid.x")
        k(f"mov.u32 {par}, 0")
        k(f"mov.u32 {red}, red")
        k.label("ROW_LOOP")
        pd = k.reg(".pred", "p_done")
        k(f"setp.ge.u32 {pd}, {row}, %a_nrows")
        k(f"@{pd} bra.uni ROW_DONE")
        w = [k.reg(".b64", f"rw{j}") for j in range(3)]
        xrow, qrow = k.reg(".b64", "xrow"), k.reg(".b64", "qrow")
        self.row_offsets(row, w, xrow, qrow, "r")
        k(f"mul.lo.u64 {xrow}, {xrow}, {INPUTS[self.inp]}")
        k(f"add.u64 {xrow}, {xrow}, %a_x")
        k(f"add.u64 {qrow}, {qrow}, %a_q")
        words, valid, qaddr = [], [], []
        k.comment(f"load the whole row: vector t + {THREADS}*r of thread t")
        for r in range(R):
            c = k.reg(".b32", f"c{r}")
            pv = k.reg(".pred", f"p_valid{r}")
            xa, qa = k.reg(".b64", f"xaddr{r}"), k.reg(".b64", f"qaddr{r}")
            k(f"add.u32 {c}, %thread_id, {THREADS * r}")
            k(f"setp.lt.u32 {pv}, {c}, %a_vpr")
            k(f"mul.wide.u32 {xa}, {c}, 16")
            k(f"add.u64 {xa}, {xa}, {xrow}")
            k(f"mul.wide.u32 {qa}, {c}, {V // (2 if self.out == 'e2m1' else 1)}")
            k(f"add.u64 {qa}, {qa}, {qrow}")
            wd = self.load16(pv, xa, f"xv{r}_")
            words.append(wd); valid.append(pv); qaddr.append(qa)
        amax = k.reg(".f32", "ramax")
        k(f"mov.f32 {amax}, 0f00000000")
        for r in range(R):
            self.absmax_words(words[r], amax)
        self.butterfly_max(amax, 32)
        k.comment("CTA amax: lane 0 of each warp posts its max; one barrier; all read all")
        sa = k.reg(".b32", "t_red")
        pl = k.reg(".pred", "p_lane0")
        k(f"setp.eq.u32 {pl}, %lane, 0")
        k(f"mad.lo.u32 {sa}, {par}, {WARPS * 4}, {red}")
        t = k.reg(".b32", "t_w4")
        k(f"shr.u32 {t}, %thread_id, 5")
        k(f"mad.lo.u32 {t}, {t}, 4, {sa}")
        k(f"@{pl} st.shared.f32 [{t}], {amax}")
        k("bar.sync 0")
        vals = k.regs(".f32", "redv", WARPS)
        for j in range(0, WARPS, 4):
            k(f"ld.shared.v4.f32 {{{vals[j]}, {vals[j+1]}, {vals[j+2]}, {vals[j+3]}}}, [{sa}+{4*j}]")
        for j in range(WARPS):
            k(f"max.f32 {amax}, {amax}, {vals[j]}")
        p0 = k.reg(".pred", "p_t0")
        k(f"setp.eq.u32 {p0}, %thread_id, 0")
        inv = self.row_scale(amax, w, p0)
        k.comment("encode from registers and store")
        for r in range(R):
            f = k.regs(".f32", "x", V)
            self.unpack(words[r], f)
            self.encode_store(f, inv, qaddr[r], valid[r])
        k(f"xor.b32 {par}, {par}, 1")
        nct = k.reg(".b32", "t_nct")
        k(f"mov.u32 {nct}, %nctaid.x")
        k(f"add.u32 {row}, {row}, {nct}")
        k("bra.uni ROW_LOOP")
        k.label("ROW_DONE")

    def emit_row(self):
        """Row modes: a warp owns a row; pass 1 amax, pass 2 quantize (second read hits L2)."""
        k = self.k
        V, U = self.V, UNROLL
        row = k.reg(".b32", "row")
        k.comment("---- rows: warp w takes rows w, w + nwarps, ...")
        k(f"mov.u32 {row}, %gwarp")
        k.label("ROW_LOOP")
        pd = k.reg(".pred", "p_done")
        k(f"setp.ge.u32 {pd}, {row}, %a_nrows")
        k(f"@{pd} bra.uni ROW_DONE")
        w = self.row_index(row, "r")
        xrow, qrow = k.reg(".b64", "xrow"), k.reg(".b64", "qrow")
        self.dot3(w, ["%a_xs0", "%a_xs1", "%a_xs2"], xrow)
        k(f"mul.lo.u64 {xrow}, {xrow}, {INPUTS[self.inp]}")
        k(f"add.u64 {xrow}, {xrow}, %a_x")
        self.dot3(w, ["%a_qs0", "%a_qs1", "%a_qs2"], qrow)
        k(f"add.u64 {qrow}, {qrow}, %a_q")
        amax = k.reg(".f32", "ramax")
        k(f"mov.f32 {amax}, 0f00000000")
        col = k.reg(".b32", "col")
        k.comment(f"pass 1: amax over the row, {U} vectors per lane in flight")
        k(f"mov.u32 {col}, %lane")
        k.label("AMAX_LOOP")
        pc = k.reg(".pred", "p_col")
        k(f"setp.ge.u32 {pc}, {col}, %a_vpr")
        k(f"@{pc} bra AMAX_END")
        words = []
        for u in range(U):
            c = k.reg(".b32", f"c{u}")
            pv = k.reg(".pred", f"p_valid{u}")
            xa = k.reg(".b64", f"xaddr{u}")
            k(f"add.u32 {c}, {col}, {32*u}")
            k(f"setp.lt.u32 {pv}, {c}, %a_vpr")
            k(f"mul.wide.u32 {xa}, {c}, 16")
            k(f"add.u64 {xa}, {xa}, {xrow}")
            wd = self.load16(pv, xa, f"xv{u}_", hint=None)
            words.append(wd)
        for u in range(U):
            f = k.regs(".f32", f"x{u}_", V)
            self.unpack(words[u], f)
            self.absmax(f, amax)
        k(f"add.u32 {col}, {col}, {32*U}")
        k("bra AMAX_LOOP")
        k.label("AMAX_END")
        self.butterfly_max(amax, 32)
        pl = k.reg(".pred", "p_lane0")
        k(f"setp.eq.u32 {pl}, %lane, 0")
        inv = self.row_scale(amax, w, pl)
        k.comment("pass 2: re-read (L2), encode, store")
        k(f"mov.u32 {col}, %lane")
        k.label("Q_LOOP")
        k(f"setp.ge.u32 {pc}, {col}, %a_vpr")
        k(f"@{pc} bra Q_END")
        words, valid, qaddr = [], [], []
        for u in range(U):
            c = k.reg(".b32", f"c{u}")
            pv = k.reg(".pred", f"p_valid{u}")
            xa = k.reg(".b64", f"xaddr{u}")
            qa = k.reg(".b64", f"qaddr{u}")
            k(f"add.u32 {c}, {col}, {32*u}")
            k(f"setp.lt.u32 {pv}, {c}, %a_vpr")
            k(f"mul.wide.u32 {xa}, {c}, 16")
            k(f"add.u64 {xa}, {xa}, {xrow}")
            k(f"mul.wide.u32 {qa}, {c}, {V}")
            k(f"add.u64 {qa}, {qa}, {qrow}")
            wd = k.regs(".b32", f"xv{u}_", 4)
            k(f"@{pv} ld.global.v4.b32 {{{wd[0]}, {wd[1]}, {wd[2]}, {wd[3]}}}, [{xa}]")
            words.append(wd); valid.append(pv); qaddr.append(qa)
        for u in range(U):
            f = k.regs(".f32", f"x{u}_", V)
            self.unpack(words[u], f)
            self.encode_store(f, inv, qaddr[u], valid[u])
        k(f"add.u32 {col}, {col}, {32*U}")
        k("bra Q_LOOP")
        k.label("Q_END")
        k(f"add.u32 {row}, {row}, %nwarps")
        k("bra.uni ROW_LOOP")
        k.label("ROW_DONE")


ROW_CTA_VECTORS = {2: 4, 4: 8}   # vectors per thread a CTA keeps in registers, by input size


def row_cta_max_k(inp):
    """The longest row the register-resident row kernel takes (elements)."""
    return THREADS * ROW_CTA_VECTORS[INPUTS[inp]] * (16 // INPUTS[inp])


def emit(name, params, target):
    return Q(name, params, target).emit()


def c_header():
    """The C mirror of the argument block (build/gen/quant_args.h)."""
    offs, size = arg_offsets()
    out = ["/* Generated by gen/quant.py: the .param block of every quant kernel. */",
           "#ifndef PTXQ_QUANT_ARGS_H", "#define PTXQ_QUANT_ARGS_H", "#include <stddef.h>",
           "#include <string.h>",
           "#include <stdint.h>", "", "typedef struct ptxq_quant_args {"]
    for typ, name in ARGS:
        out.append(f"    {'uint64_t' if typ == 'u64' else 'uint32_t'} {name};")
    out.append("} ptxq_quant_args;")
    out.append("")
    for typ, name in ARGS:
        out.append(f"_Static_assert(offsetof(ptxq_quant_args, {name}) == {offs[name][1]}, "
                   f"\"{name}\");")
    out.append(f"_Static_assert(sizeof(ptxq_quant_args) == {size}, \"size\");")
    out.append(f"#define PTXQ_QUANT_THREADS {THREADS}")
    out.append(f"#define PTXQ_QUANT_UNROLL {UNROLL}")
    out.append("")
    out.append("/* A lane's item: 16-byte vectors per item and items per trip, by kernel mode and")
    out.append(" * input element size (gen/quant.py item_vectors / item_unroll). */")
    out.append("static inline void ptxq_quant_item_shape(const char *kmode, int esz, int *vectors,")
    out.append("                                         int *unroll) {")
    out.append("    *vectors = 1;")
    out.append(f"    *unroll = {UNROLL};")
    seen = set()
    for mode in MODES:
        for inp, esz in INPUTS.items():
            nv, u = item_vectors(mode, inp), item_unroll(mode, inp)
            if (nv, u) != (1, UNROLL) and (mode, esz) not in seen:
                seen.add((mode, esz))
                out.append(f"    if (!strcmp(kmode, \"{mode}\") && esz == {esz}) {{ *vectors = {nv}; "
                           f"*unroll = {u}; }}")
    out.append("}")
    out.append(f"#define PTXQ_QUANT_FLAG_STATIC {FLAG_STATIC}u")
    out.append(f"#define PTXQ_QUANT_FLAG_WRITE_AMAX {FLAG_WRITE_AMAX}u")
    out.append(f"#define PTXQ_QUANT_FLAG_SF128x4 {FLAG_SF128x4}u")
    out.append(f"#define PTXQ_QUANT_FLAG_FLAT {FLAG_FLAT}u")
    out.append("/* register-resident row kernels (quant_*row_*): vectors per row at most */")
    out.append(f"#define PTXQ_QUANT_ROW_CTA_VPR_2B {THREADS * ROW_CTA_VECTORS[2]}")
    out.append(f"#define PTXQ_QUANT_ROW_CTA_VPR_4B {THREADS * ROW_CTA_VECTORS[4]}")
    out.append("#endif")
    return "\n".join(out) + "\n"
