/* ptxq.h -- the one public header of libptxq.
 *
 * libptxq: low-precision GPU kernels written in PTX, assembled to cubins at build time, embedded in
 * the library and launched through the CUDA driver API, which is loaded with dlopen when a context
 * is created. Nothing here needs cuda.h: device pointers are uint64_t (a CUdeviceptr) and streams
 * are void * (a CUstream; NULL is the legacy default stream).
 *
 * Rules every entry point follows:
 *   - returns a ptxq_status; on failure ptxq_last_error() gives a per-thread message;
 *   - validates every argument before it enqueues anything: a failing call writes nothing
 *     (one exception: where a call makes several launches, a driver failure of a later launch
 *     leaves the earlier ones' writes: MXFP8 GEMM's dequantize path its workspace, a split GEMM
 *     the counters its memset zeroed in the workspace, quantization desc.amax);
 *   - a launch is stream-ordered and does no allocation and no synchronization, so it can be
 *     captured in a CUDA graph, once its kernels are loaded: the first call that uses a kernel
 *     loads its module (cuModuleLoadData), so make each call once before capturing; memory is
 *     owned by the caller;
 *   - a context may be used from several threads at once.
 */
#ifndef PTXQ_H
#define PTXQ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTXQ_VERSION_MAJOR 0
#define PTXQ_VERSION_MINOR 1
#define PTXQ_VERSION_PATCH 0

/* ---- status ------------------------------------------------------------------------------- */
typedef enum ptxq_status {
    PTXQ_OK = 0,
    PTXQ_ERR_INVALID_ARGUMENT = 1, /* null pointer, bad enum or desc field (a tensor's negative
                                      shape or stride is PTXQ_ERR_SHAPE / PTXQ_ERR_STRIDE; a
                                      scale layout value, PTXQ_ERR_SCALE_SHAPE) */
    PTXQ_ERR_NO_DRIVER = 2,        /* libcuda.so.1 could not be loaded or cuInit failed */
    PTXQ_ERR_NO_DEVICE = 3,        /* no GPU, or the ordinal is out of range */
    PTXQ_ERR_UNSUPPORTED_ARCH = 4, /* the library has no cubin for this device */
    PTXQ_ERR_DTYPE = 5,            /* unsupported dtype or dtype combination */
    PTXQ_ERR_SHAPE = 6,            /* shapes disagree, or a size the kernel cannot take */
    PTXQ_ERR_STRIDE = 7,           /* last dim not contiguous, or a stride the kernel cannot take */
    PTXQ_ERR_ALIGNMENT = 8,        /* a pointer or a row pitch is not aligned as required */
    PTXQ_ERR_SCALE_SHAPE = 9,      /* the scale tensor's dtype, shape or layout is wrong */
    PTXQ_ERR_NOT_FOUND = 10,       /* no such kernel, or its PTXQ_KERNEL_DIR file is unreadable */
    PTXQ_ERR_CUDA = 11,            /* a driver call failed; the message names it */
    PTXQ_ERR_OUT_OF_MEMORY = 12    /* host memory for the context itself */
} ptxq_status;

const char *ptxq_status_name(ptxq_status s);
/* The message of this thread's failing call. Read it right after that call: the thread's next call
 * replaces it, and a call that succeeds may clear it to "". */
const char *ptxq_last_error(void);
/* PTXQ_VERSION_MAJOR * 10000 + MINOR * 100 + PATCH of the library actually linked. */
int ptxq_version(void);

/* ---- element types ------------------------------------------------------------------------ */
typedef enum ptxq_dtype {
    PTXQ_F32 = 1,
    PTXQ_F16 = 2,
    PTXQ_BF16 = 3,
    PTXQ_E4M3 = 4,  /* OCP FP8 E4M3 ("fn": no infinities, NaN = S.1111.111, max 448) */
    PTXQ_E5M2 = 5,  /* OCP FP8 E5M2 (IEEE-like: infinities, max 57344) */
    PTXQ_E2M1 = 6,  /* FP4, two per byte: element 2i in the low nibble, 2i+1 in the high nibble */
    PTXQ_UE8M0 = 7, /* scale: 2^(code-127); code 255 is NaN */
    PTXQ_UE4M3 = 8, /* scale: unsigned E4M3 (the NVFP4 per-16 scale) */
    PTXQ_I8 = 9,
    PTXQ_I32 = 10
} ptxq_dtype;

/* Bits per element (4 for E2M1), 0 for an unknown dtype. */
int ptxq_dtype_bits(ptxq_dtype t);
const char *ptxq_dtype_name(ptxq_dtype t);

/* ---- tensors ------------------------------------------------------------------------------
 * shape[0] is the outermost dimension, shape[rank-1] the innermost. Strides are in elements
 * (for E2M1 in elements too, so they must be even where they step over whole bytes).
 * data is a device address (CUdeviceptr). Every call refuses a tensor of 2^48 elements or more
 * (PTXQ_ERR_SHAPE) or whose addressed span, 1 + sum((shape[i] - 1) * stride[i]), reaches 2^48
 * elements (PTXQ_ERR_STRIDE), so that no size derived from it can wrap. */
#define PTXQ_MAX_RANK 4
typedef struct ptxq_tensor {
    ptxq_dtype dtype;
    int rank;
    int64_t shape[PTXQ_MAX_RANK];
    int64_t stride[PTXQ_MAX_RANK];
    uint64_t data;
} ptxq_tensor;

/* A dense row-major tensor (innermost stride 1). */
ptxq_tensor ptxq_tensor_make(ptxq_dtype t, int rank, const int64_t *shape, uint64_t data);
/* Bytes spanned by a tensor (0 if it is malformed or spans 2^56 elements or more). */
size_t ptxq_tensor_bytes(const ptxq_tensor *t);

/* ---- context ------------------------------------------------------------------------------ */
typedef struct ptxq_context ptxq_context;

typedef struct ptxq_device_info {
    char name[128];
    int ordinal;
    int cc_major, cc_minor;
    int sm_count;
    int driver_version; /* cuDriverGetVersion, e.g. 13000 */
    size_t l2_bytes;
    size_t global_mem_bytes;
    double dram_gbps;  /* memory clock x bus width x 2 (the datasheet's peak; H100 SXM 3352,
                          H200 4915), 0 if the driver does not say */
    char target[16]; /* the cubin target used on this device ("sm_90a"), "" if none */
} ptxq_device_info;

/* Loads the driver (dlopen libcuda.so.1), retains the device's primary context. Kernels are loaded
 * lazily at first use. Fails with NO_DRIVER (also where the driver lacks a function the library
 * needs), NO_DEVICE, UNSUPPORTED_ARCH, CUDA (a driver call failed) or OUT_OF_MEMORY (host memory),
 * and a message. */
ptxq_status ptxq_context_create(int device_ordinal, ptxq_context **out);
void ptxq_context_destroy(ptxq_context *ctx);
ptxq_status ptxq_context_info(const ptxq_context *ctx, ptxq_device_info *out);
/* Make the context's CUDA context current on the calling thread. Calls need not: each makes it
 * current for its own length and puts back whatever context the thread had current before (so a
 * caller working on another device stays there). */
ptxq_status ptxq_context_make_current(ptxq_context *ctx);
/* The CUcontext (as void *) for callers that allocate memory with their own driver calls. */
void *ptxq_context_cuda(const ptxq_context *ctx);

/* ---- kernel registry (for tools) ----------------------------------------------------------
 * Every embedded cubin, one entry per kernel x target, with its ptxas -v report. */
typedef struct ptxq_kernel_info {
    const char *name;      /* PTX entry name, e.g. "quant_mx8_bf16_e4m3" */
    const char *family;    /* "quant", "gemv", ... */
    const char *target;    /* "sm_90a", "sm_100a", "sm_120a" */
    const char *origin;    /* "gen/quant.py" or "ptx/<file>.ptx" */
    int threads;           /* threads per CTA */
    int dynamic_smem;      /* bytes of dynamic shared memory at launch */
    int registers;         /* ptxas -v */
    int static_smem;       /* ptxas -v */
    int spill_stores;      /* bytes, ptxas -v */
    int spill_loads;       /* bytes, ptxas -v */
    int stack_frame;       /* bytes, ptxas -v */
    int wgmma_serialized;  /* ptxas warning C7510 seen */
    const char *allowance; /* why spills/stack/C7510 are accepted ("" if none are) */
    const unsigned char *cubin;
    size_t cubin_size;
} ptxq_kernel_info;

int ptxq_kernel_count(void);
ptxq_status ptxq_kernel_get(int index, ptxq_kernel_info *out);
/* target may be NULL: the first target found. */
ptxq_status ptxq_kernel_find(const char *name, const char *target, ptxq_kernel_info *out);

/* Research override: if the environment variable PTXQ_KERNEL_DIR names a directory, a file
 * <dir>/<kernel>.cubin, else <dir>/<kernel>.ptx (JIT-compiled by the driver), replaces the embedded
 * cubin of that kernel when a context first loads it (the override must suit the device); a
 * directory whose path leaves no room in 4096 bytes for "/<kernel>.cubin" fails every load with
 * PTXQ_ERR_INVALID_ARGUMENT rather than fall back to the embedded cubin. Returns the path that
 * would be used for name, or NULL (buf receives it; bufsize >= 1; NULL also where it does not
 * fit in buf). */
const char *ptxq_override_path(const char *name, char *buf, size_t bufsize);
/* Whether ctx has loaded kernel name from an override file (1), the embedded cubin (0), not yet (-1). */
int ptxq_kernel_overridden(ptxq_context *ctx, const char *name);

/* ---- host codecs --------------------------------------------------------------------------
 * Round to nearest, ties to even. Saturating encoders clamp finite overflow (and, for E5M2,
 * infinities) to the largest finite value; non-saturating ones follow OCP FP8: E4M3 overflow and
 * infinity give NaN (0x7F/0xFF), E5M2 overflow gives infinity. NaN stays NaN (sign kept). */
uint8_t ptxq_e4m3_encode(float x, int saturate);
float ptxq_e4m3_decode(uint8_t code);
uint8_t ptxq_e5m2_encode(float x, int saturate);
float ptxq_e5m2_decode(uint8_t code);
/* E2M1 (values 0, .5, 1, 1.5, 2, 3, 4, 6): always saturating; NaN -> +-6 with its sign, as the
 * sm_100 cvt does. Returns the 4-bit code. */
uint8_t ptxq_e2m1_encode(float x);
float ptxq_e2m1_decode(uint8_t code4);
/* UE4M3: unsigned E4M3; negative input encodes as 0; saturating (max 448); NaN -> 0x7F. */
uint8_t ptxq_ue4m3_encode(float x);
float ptxq_ue4m3_decode(uint8_t code);
/* UE8M0: 2^(code-127). Encoding takes the exponent of x rounded toward zero (floor(log2 x), the
 * OCP MX rule) clamped to [2^-127, 2^127]; x <= 0 -> 0; NaN -> 0xFF. */
uint8_t ptxq_ue8m0_encode(float x);
float ptxq_ue8m0_decode(uint8_t code);
uint16_t ptxq_bf16_encode(float x); /* RNE; NaN stays quiet NaN */
float ptxq_bf16_decode(uint16_t bits);
uint16_t ptxq_f16_encode(float x); /* RNE; overflow -> inf */
float ptxq_f16_decode(uint16_t bits);

/* ---- quantization -------------------------------------------------------------------------
 * x: BF16, F16 or F32, rank 2..4, innermost dimension contiguous (stride 1), 16-byte aligned base
 * and 16-byte multiple pitches. "rows" are all leading indices; K = x.shape[rank-1].
 * q: same shape, dtype per mode below, innermost stride 1, base and pitches aligned to what one
 * lane stores: 16 bytes for FP8_BLOCK, MXFP8 and INT8_BLOCK from BF16/F16; 8 bytes for NVFP4 and
 * the other modes from BF16/F16; 4 bytes for the other modes from F32. K is a multiple of what one
 * lane reads: 16 elements for FP8_BLOCK, MXFP8 and INT8_BLOCK from BF16/F16 and for NVFP4, else 8
 * (BF16/F16) or 4 (F32), and of the scale block. One call takes rows * K / (that vector) below
 * 2^31, and the per-tensor modes' amax pass rows * K / (16 bytes of x) below 2^31; the rows and
 * each leading dimension below 2^32. What the call writes (q, the scale, desc.amax, a derived
 * global scale) must not overlap anything it touches (x, q, the scale, the per-tensor words; two
 * only read may): byte spans from each base to its last element are compared, except that two
 * tensors of rows of one byte pitch and count whose rows interleave without meeting (a row's
 * scale in q's row padding) are apart; an overlap is refused with PTXQ_ERR_INVALID_ARGUMENT (no
 * in-place quantization).
 *
 * mode            q dtype       scale (dequantize: x ~= decode(q) * scale [* global])
 * FP8_TENSOR      E4M3/E5M2     F32, one element (e.g. shape [1]): amax / fmax (amax pass + quantize)
 * FP8_ROW         E4M3/E5M2     F32, shape [rows..., 1]: row amax / fmax
 * FP8_BLOCK       E4M3/E5M2     F32, shape [rows..., K/128]: amax of 1x128 / fmax (DeepGEMM acts)
 * MXFP8           E4M3/E5M2     UE8M0, shape [rows..., K/32]: 2^(floor(log2 amax) - emax_elem),
 *                               the code clamped at 0 (2^-127); Inf or NaN in the block: 255
 * NVFP4           E2M1          UE4M3, shape [rows..., K/16]: rn(amax16 * (1 / (6 * global))),
 *                               plus an F32 per-tensor global = amax / (6 * 448) in desc.global_scale
 * INT8_ROW        I8            F32, shape [rows..., 1]: row amax / 127
 * INT8_BLOCK      I8            F32, shape [rows..., K/block] (block 32, 64 or 128): amax / 127
 *
 * NVFP4 codes are e2m1(f16(x * inv)): the product is rounded to f16 first (RNE), which moves only
 * ties within 2^-11 of an E2M1 midpoint and lets every target encode packed pairs. On sm_90a a
 * -0 or NaN product encodes with a clear sign bit (0x0 / 0x7); the sm_100a/sm_120a cvt keeps it.
 * fmax is 448 (E4M3) or 57344 (E5M2). Values are encoded with round-to-nearest-even and saturate
 * (MXFP8 follows OCP MX v1.0, which saturates values above fmax after the power-of-two scale).
 * A zero block gets zero codes and scale 0 (UE8M0: code 0, which decodes to 2^-127, not 0). F32
 * scales are never subnormal: a
 * positive amax below fmax * 2^-126 (127 * 2^-126 for INT8) is taken as that, and NVFP4's derived
 * global scale is at least 2^-117, so no finite x gives an Inf or NaN scale or code. A static
 * scale too small for its reciprocal (below 1 / FLT_MAX) saturates the codes; an FP8_TENSOR
 * static scale of 0, below 0 or NaN gives zero codes, and NVFP4's static global scale must be
 * positive and finite (device values are not checked: others give meaningless codes).
 * Scale strides are free (the stride along K below 2^32 elements) as long as no two scales share
 * an address (so are q's; overlapping
 * outputs are refused with PTXQ_ERR_STRIDE, as are some interleaved layouts that do not overlap:
 * sorted by stride, each dimension must step past all the ones inside it): [rows, K/128]
 * row-major and the M-major ("column-major, TMA-aligned")
 * layout DeepGEMM consumes are both just strides. With scale_layout = PTXQ_SCALE_128x4 (MXFP8 and
 * NVFP4, rank-2 x only) the scales go to the 128x4-interleaved layout that SM100/SM120
 * block-scaled MMA reads: a rank-1 tensor of ptxq_quant_scale_shape() bytes, where scale (m, k)
 * is at byte ((m/128) * ceil(nk/4) + k/4) * 512 + (m%32) * 16 + ((m/32)%4) * 4 + k%4 and the
 * padding (m >= rows, k >= nk) is written as 0 (by the quantize kernel itself: no memset).
 *
 * Per-tensor modes (FP8_TENSOR, NVFP4) need desc.amax: a device float the call zeroes, fills with
 * amax(|x|) and then reads (all on the stream). With PTXQ_QUANT_STATIC_SCALE, FP8_TENSOR instead
 * reads the scale tensor (delayed scaling: one pass) and, if desc.amax is not 0, writes amax(|x|)
 * there for the next step's scale. NVFP4 with PTXQ_QUANT_STATIC_SCALE likewise reads the global
 * scale from desc.global_scale instead of deriving it (one pass; desc.amax must be 0). desc.amax
 * must be a word of its own: not the FP8_TENSOR scale's, not desc.global_scale. */
typedef enum ptxq_quant_mode {
    PTXQ_QUANT_FP8_TENSOR = 1,
    PTXQ_QUANT_FP8_ROW = 2,
    PTXQ_QUANT_FP8_BLOCK = 3,
    PTXQ_QUANT_MXFP8 = 4,
    PTXQ_QUANT_NVFP4 = 5,
    PTXQ_QUANT_INT8_ROW = 6,
    PTXQ_QUANT_INT8_BLOCK = 7
} ptxq_quant_mode;

typedef enum ptxq_scale_layout {
    PTXQ_SCALE_STRIDED = 0, /* the scale tensor's own shape and strides */
    PTXQ_SCALE_128x4 = 1    /* SM100/SM120 block-scaled MMA layout (see above) */
} ptxq_scale_layout;

#define PTXQ_QUANT_STATIC_SCALE 1u

typedef struct ptxq_quant_desc {
    ptxq_quant_mode mode;
    ptxq_dtype out_dtype;           /* E4M3, E5M2, E2M1 or I8 as the mode allows */
    int block;                      /* INT8_BLOCK: 32, 64 or 128; others: 0 (implied) or the
                                       mode's own block (FP8_BLOCK 128, MXFP8 32, NVFP4 16) */
    ptxq_scale_layout scale_layout;
    unsigned flags;                 /* PTXQ_QUANT_STATIC_SCALE */
    uint64_t amax;                  /* device float*, see above */
    uint64_t global_scale;          /* NVFP4: device float* receiving the per-tensor scale */
} ptxq_quant_desc;

/* The scale tensor a quantization expects for x (dtype, rank, shape, dense row-major strides; data
 * left 0) and its size in bytes. */
ptxq_status ptxq_quant_scale_shape(const ptxq_quant_desc *desc, const ptxq_tensor *x,
                                   ptxq_tensor *scale, size_t *bytes);
/* The inverse of FP8_TENSOR: y = decode(q) * scale[0] as BF16 (f32 product, RNE), where q is
 * E4M3 or E5M2 and scale a device float* (what FP8_TENSOR writes). q and y contiguous, same shape,
 * 16-byte aligned, element count a multiple of 16 and below 2^34. The kernel is hand-written:
 * ptx/dequant_fp8_bf16.ptx. */
ptxq_status ptxq_dequantize_fp8(ptxq_context *ctx, const ptxq_tensor *q, uint64_t scale,
                                const ptxq_tensor *y, void *stream);
ptxq_status ptxq_dequantize_fp8_validate(const ptxq_tensor *q, uint64_t scale, const ptxq_tensor *y);

/* Every check ptxq_quantize makes, without a device: PTXQ_OK if the call would be accepted. */
ptxq_status ptxq_quant_validate(const ptxq_quant_desc *desc, const ptxq_tensor *x,
                                const ptxq_tensor *q, const ptxq_tensor *scale);
/* An empty x (no rows or K = 0) enqueues nothing. */
ptxq_status ptxq_quantize(ptxq_context *ctx, const ptxq_quant_desc *desc, const ptxq_tensor *x,
                          const ptxq_tensor *q, const ptxq_tensor *scale, void *stream);

/* ---- block-scaled GEMV --------------------------------------------------------------------
 * y[l, m] = ga * gx * sum_k A[l, m, k] * sa(l, m, k / B) * x[l, k] * sx(l, k / B)
 *
 * format  A dtype  scale dtype  B   (ga, gx: optional F32 per-tensor scales, desc.a_global/x_global;
 *                                     gx only with x in A's format, else PTXQ_ERR_INVALID_ARGUMENT)
 * NVFP4   E2M1     UE4M3        16  ga is NVFP4's global scale (what ptxq_quantize writes)
 * MXFP4   E2M1     UE8M0        32
 * MXFP8   E4M3     UE8M0        32
 * x is in A's dtype with its own scales (x_scale: same dtype and block, gx optional), or BF16 / F16
 * (x_scale NULL). y is F32, F16 or BF16.
 *
 * Tensors (strides in elements; E2M1 counts elements, two per byte, element 2i in the low nibble):
 *   a        [M, K] or [L, M, K]; innermost stride 1; 16-byte aligned base; row and batch pitches
 *            multiples of 16 bytes (E2M1: stride % 32 == 0, E4M3: % 16) where that dim exceeds 1.
 *   a_scale  PTXQ_SCALE_STRIDED: [M, K/B] or [L, M, K/B] (as a), one byte each, any strides
 *            whose K stride times K/B stays below 4 GiB (else PTXQ_ERR_STRIDE).
 *            Row-major [L][M][K/B] is what ptxq_quantize writes (PTXQ_SCALE_STRIDED); the M-major
 *            layout (rows innermost) is strides too. NVFP4 runs fastest where each pair of
 *            scales (2j, 2j+1) of a row is one aligned 16-bit word, for A and for an NVFP4 x: K
 *            stride 1 and even base and pitches, or 128x4 with an even base; other layouts
 *            take a slower loop.
 *            PTXQ_SCALE_128x4 (desc.a_scale_layout): rank 1, contiguous, at least L * S bytes with
 *            S = ceil(M/128) * ceil((K/B)/4) * 512; batch l starts at l * S and scale (m, kb) is at
 *            ((m/128) * ceil((K/B)/4) + kb/4) * 512 + (m%32) * 16 + ((m/32)%4) * 4 + kb%4, the
 *            layout ptxq_quantize writes with PTXQ_SCALE_128x4 (there for rank-2 x, i.e. L = 1);
 *            S below 2^32 (the kernels' offsets within a batch are 32-bit; else PTXQ_ERR_SHAPE).
 *            With it the CUDA-core kernels give a thread rows 32 apart (plan.rows_step), whose
 *            scales share 16-byte runs. H200, x in A's format: NVFP4 62-108% of the copy on the
 *            bench shapes against 76-114% with row-major scales; MXFP4 and MXFP8 within 0-5
 *            points of row-major (bench/RESULTS.md). The tensor-core kernels read it about as fast as
 *            row-major (-0.2 to +4.9 points).
 *   x        [K] (every batch) or [L, K] / [1, K]; innermost stride 1; 16-byte aligned base and
 *            batch pitch.
 *   x_scale  shaped like x with K/B along K, any strides whose K stride times K/B stays below 4 GiB;
 *            NULL for BF16 / F16 x.
 *   y        [L, M] (or [M] when L = 1), aligned to its element size; strides that, taken in
 *            increasing order, each reach past everything the dimensions inside them address (so
 *            no two elements share one; a few interleaved layouts that would not collide are
 *            refused too), else PTXQ_ERR_STRIDE. y must not overlap a, a_scale (128x4: the
 *            L * S bytes read), x, x_scale or the per-tensor scales (byte spans from each base
 *            to its last element, but rows of one pitch and count that interleave without
 *            meeting, as x and y in one [L, K + M] buffer, are apart; else
 *            PTXQ_ERR_INVALID_ARGUMENT).
 * The (nonnegative) strides of a's, x's and y's dimensions of size 1 are neither checked nor used
 * (the scales' K strides are checked as above even where K/B = 1). K must be a multiple of B (else
 * PTXQ_ERR_SHAPE); M and L below 2^31 each and a row of A at most 16 * (2^31 - 16) bytes (K up to
 * about 2^36 for FP4, 2^35 for FP8); with M > 0, L * (M + 128) must stay below 2^31 (the grid; else
 * PTXQ_ERR_SHAPE); K = 0 writes 0 * a_global * x_global (zeros unless a per-tensor scale is Inf or
 * NaN); M = 0 or L = 0 enqueues nothing. UE8M0 code 0 is
 * 2^-127, 255 NaN; UE4M3's bit 7 is ignored (code 0x7F is NaN).
 *
 * Numerics: FP4 x FP4 block dot products are exact (sm_90a: int32 dp4a of doubled E2M1 values,
 * read back as f32 exactly; sm_100a / sm_120a: f16x2 FMAs whose partial sums stay exactly
 * representable; see gen/gemv.py); MXFP8 and BF16/F16 x use f32 products and sums. Block sums are
 * scaled (sa * sx in f32) and accumulated in f32; ga * gx and the conversion to y come last.
 *
 * Work split (the plan): a thread owns rows_per_thread rows (1, 2, 4: kernel variants), a CTA is 8
 * warps of which k_warps split K; FP4 A with BF16/F16 x also has a tensor-core kernel
 * (rows_per_thread 16: a warp owns 16 rows, its dot products run on mma.sync; the runtime's
 * choice on sm_90a; its twin with a cp.async ring in shared memory, "..._tcr", where a warp
 * walks at least 4 windows of K (8 with BF16 x on GPUs of 4 TB/s or more) and, below 4 TB/s of
 * DRAM, the grid is more than one wave); the runtime scores the combinations for M, K, L, the
 * SM count and each kernel's occupancy (src/gemv.c). Nonzero desc fields fix a choice;
 * ptxq_gemv_plan_for() returns what a call would launch. NVFP4 x NVFP4 has software-pipelined twins
 * (desc.pipelined), and with A's scales in PTXQ_SCALE_128x4 its 2- and 4-row plans run "...v" twins
 * that load a chunk's scale words as one vector where the scale address is 8- or 16-byte aligned
 * (the runtime's choice on sm_90a unless desc.pipelined = -1; plan.kernel names it; a
 * PTXQ_KERNEL_DIR override of those plans needs the twin's name); an optional L2 prefetch of each
 * thread's first trips of A and its scales runs before the loop (desc.prefetch_trips; the last row
 * tile's warps, whose rows run past M, skip it, and with the automatic depth only the first wave's
 * CTAs run it where warps make at most 2 trips: plan.prefetch_ctas; MXFP4, and MXFP8 with x in A's
 * format, leave the scale bytes out at 4 TB/s of DRAM or more, MXFP4 also on short grids below it;
 * the tensor-core kernel prefetches its first windows of A, before the PDL wait). The runtime picks
 * both as measured (src/gemv.c).
 *
 * Launch (desc.flags): by default the kernel is launched with programmatic dependent launch
 * (PDL): it may start while the preceding kernel in the stream drains, and it waits for that
 * kernel's completion (griddepcontrol.wait) before it reads anything or writes y, so the default
 * is safe after any kernel. It also lets a following PDL-launched kernel start early (which must
 * then wait in turn, as these do). PTXQ_GEMV_NO_PDL launches plainly. PTXQ_GEMV_STATIC_WEIGHTS
 * is the caller's promise that a and a_scale are not written by any kernel that may still run
 * when this call's kernel starts (weights written long before): the L2 prefetch of A and its
 * scales (when the plan has one) then runs before the wait, overlapping the preceding kernel's
 * tail, and the bulk-copy ring kernel (pipelined 2) loads its first stages of A there too; x,
 * x_scale, the per-tensor scales and y are still touched only after the wait. While the stream
 * is being captured into a CUDA graph, on GPUs with 4 TB/s of DRAM or more, and where the plan's
 * grid is at most two waves, the L2 prefetch runs before the wait without the promise (the
 * plan's `early` says so for the last two): a prefetch loads nothing into registers and L2 is
 * coherent with every SM's writes, so it is correct either way, and there it measured faster
 * (src/gemv.c). Without PDL (NO_PDL, or a driver without cuLaunchKernelEx) neither changes
 * anything.
 * PTXQ_GEMV_INDEPENDENT is the stronger promise that the call depends on no kernel that may still
 * run when its kernel starts: none of them writes a, a_scale, x, x_scale or the per-tensor scales,
 * or reads or writes y (several GEMVs of one x written earlier: q/k/v or gate/up projections,
 * MoE experts). The kernel then skips the wait and streams while the preceding kernel drains.
 * With PDL the kernels that may still run are the preceding one and, if that one let its
 * dependents start before its own wait, those before it: every kernel of this library signals
 * its dependents only after its wait, so after one of ours that waited only that one may still
 * run; but an INDEPENDENT GEMV has no wait at its start and signals at once, so after it every
 * kernel back to the last one that waited may still run (found by review: the rule read as if
 * only the INDEPENDENT call could).
 * The kernel does not exit before that predecessor has completed (it waits at its end), so a
 * kernel that waits on it still waits on everything before. 2026-11-26, x in A's format, a
 * stream of such calls: (7168, 2048, 4) at 93-98% of the copy on an H200 against 72-78% waiting,
 * 112% on an H100 against 89-91% (bench/RESULTS.md). Without PDL the flag changes nothing. */
typedef enum ptxq_gemv_format {
    PTXQ_GEMV_NVFP4 = 1,
    PTXQ_GEMV_MXFP4 = 2,
    PTXQ_GEMV_MXFP8 = 3
} ptxq_gemv_format;

typedef struct ptxq_gemv_desc {
    ptxq_gemv_format format;
    ptxq_scale_layout a_scale_layout; /* PTXQ_SCALE_STRIDED or PTXQ_SCALE_128x4 */
    uint64_t a_global;                /* device float*: A's per-tensor scale, 0 = none (1) */
    uint64_t x_global;                /* device float*: x's per-tensor scale, 0 = none (1) */
    int rows_per_thread;              /* 0 = chosen by the runtime, else 1, 2 or 4, or 16: the
                                         tensor-core kernel (FP4 A, BF16/F16 x only) */
    int k_warps;                      /* 0 = chosen by the runtime, else 1, 2, 4 or 8 */
    unsigned flags;                   /* PTXQ_GEMV_NO_PDL | PTXQ_GEMV_STATIC_WEIGHTS |
                                         PTXQ_GEMV_INDEPENDENT, 0 = PDL */
    int prefetch_trips;               /* L2 prefetch depth: 0 = chosen by the runtime, -1 =
                                         none, else 1..64 trips (of 32 * k_warps chunks a row;
                                         for the tensor-core kernel windows of 4 * k_warps
                                         chunks, always before the PDL wait) */
    int pipelined;                    /* NVFP4 x NVFP4: 0 = chosen by the runtime (the
                                         plain kernel: it measured faster than both others on
                                         the H100 and the H200), 1 = the
                                         software-pipelined kernel (next trip's loads before this
                                         trip's decode), 2 = the bulk-copy ring kernel (A and
                                         its scales streamed into shared memory; needs K % 256
                                         == 0, strided 16-byte aligned scales, else as 0),
                                         -1 = the plain one (not the "...v" twin either);
                                         1 and 2 on sm_90a only (elsewhere the plain kernel);
                                         the tensor-core kernel (rows_per_thread 16): 0 =
                                         chosen by the runtime (its cp.async ring twin on
                                         sm_90a where a warp walks >= 4 windows, 8 with BF16 x
                                         at >= 4 TB/s of DRAM; below 4 TB/s only on grids
                                         past one wave), 2 = the ring twin (needs A's scales
                                         contiguous along K or 128x4, 4-byte aligned; else as
                                         0), -1 or 1 = the plain one; others: ignored */
} ptxq_gemv_desc;

/* desc.flags (see "Launch" above) */
#define PTXQ_GEMV_NO_PDL 1u           /* plain launch, no programmatic dependent launch */
#define PTXQ_GEMV_STATIC_WEIGHTS 2u   /* a, a_scale not written by a kernel still running */
#define PTXQ_GEMV_INDEPENDENT 4u      /* no dependence on any kernel still running: no PDL wait */

typedef struct ptxq_gemv_plan {
    char kernel[48];       /* e.g. "gemv_nvfp4_nvfp4_r4", "gemv_nvfp4_f16_tc" */
    int rows_per_thread;   /* rows a thread (and a warp) owns; 16: the tensor-core kernel
                              (a warp owns 16 rows) */
    int k_warps;           /* warps of a CTA along K */
    int rows_per_cta;      /* (8 / k_warps) * rows_per_thread */
    unsigned grid;         /* L * ceil(M / rows_per_cta) CTAs; with rows_step 32,
                              L * ceil(M / (32 * R)) * (32 * R / rows_per_cta) */
    unsigned threads;      /* per CTA (256) */
    int registers;         /* of the kernel, ptxas -v */
    int ctas_per_sm;       /* resident CTAs per SM the register count allows */
    int pdl;               /* launched with programmatic dependent launch */
    int early;             /* A's L2 prefetch (ring kernel: its first loads) before the PDL
                              wait: PTXQ_GEMV_STATIC_WEIGHTS, or the prefetch alone from 4 TB/s
                              of DRAM, on a grid of at most two waves, or for the tensor-core
                              kernel always; ptxq_gemv also moves the prefetch there while the
                              stream is captured (not shown here: the plan has no stream) */
    int prefetch_trips;    /* L2 prefetch depth used (trips; tensor-core kernel: windows) */
    unsigned prefetch_ctas; /* CTAs that run it (the others skip it): the grid, or its first
                              wave where warps make at most 2 trips (automatic depth only) */
    int nowait;            /* PDL launch without the wait (PTXQ_GEMV_INDEPENDENT) */
    int pipelined;         /* 1: the software-pipelined kernel (name ends in "s"), 2: the
                              bulk-copy ring kernel (name ends in "b"), 3: the tensor-core
                              kernel's cp.async ring twin (name ends in "r") */
    int rows_step;         /* rows between a thread's rows: 1, or 32 where A's scales are 128x4
                              and rows_per_thread is 2 or 4 (its rows then share the scale
                              layout's 16-byte runs; the grid covers whole 32 * R-row blocks) */
} ptxq_gemv_plan;

/* Every check ptxq_gemv makes, without a device: PTXQ_OK if the call would be accepted. */
ptxq_status ptxq_gemv_validate(const ptxq_gemv_desc *desc, const ptxq_tensor *a,
                               const ptxq_tensor *a_scale, const ptxq_tensor *x,
                               const ptxq_tensor *x_scale, const ptxq_tensor *y);
/* The launch ptxq_gemv would make on ctx's device (after the same checks). */
ptxq_status ptxq_gemv_plan_for(ptxq_context *ctx, const ptxq_gemv_desc *desc, const ptxq_tensor *a,
                               const ptxq_tensor *a_scale, const ptxq_tensor *x,
                               const ptxq_tensor *x_scale, const ptxq_tensor *y,
                               ptxq_gemv_plan *plan);
/* One launch on stream; writes y only. */
ptxq_status ptxq_gemv(ptxq_context *ctx, const ptxq_gemv_desc *desc, const ptxq_tensor *a,
                      const ptxq_tensor *a_scale, const ptxq_tensor *x, const ptxq_tensor *x_scale,
                      const ptxq_tensor *y, void *stream);

/* ---- FP8 and BF16 GEMM (sm_90a) -------------------------------------------------------------
 * D = alpha * (scales . A . B^T) + beta * C + bias, i.e. for each batch
 *   D[m, n] = alpha * scale(m, n, kb...) * sum_k A[m, k] * B[n, k] + beta * C[m, n] + bias[n]
 *   a  E4M3 or E5M2 [M, K] (or [L, M, K]), b E4M3 or E5M2 [N, K] (or [L|G, N, K]): K-major
 *      (innermost stride 1), 16-byte aligned bases, row and batch pitches multiples of 16 bytes
 *      (TMA); any pair of the two types. Or a and b both BF16 (TENSOR scaling only; K a multiple
 *      of 8; the tensor core accumulates in FP32 throughout, no promotion);
 *   d  BF16, F16 or F32 [M, N] (or [L, M, N]), innermost stride 1; 16-bit types: 4-byte aligned
 *      base, even row and batch strides; F32: 4-byte aligned. Batches of d must not overlap.
 * M and N are arbitrary (tails: TMA zero-fills the loads, stores are masked). K must be a multiple
 * of 16 (of 128 for BLOCK and MX); K = 0 gives D = beta * C + bias; M = 0 or N = 0 enqueues nothing.
 *
 * scaling       a_scale (F32)                          b_scale (F32)
 * TENSOR        1 element (any rank): sa               1 element: sb          D = sa*sb*acc
 *               (either may be NULL: 1.0)
 * ROW           [M] or [M, 1], any stride: sa[m]       [N] or [N, 1]: sb[n]   D = sa[m]*sb[n]*acc
 * BLOCK         [M, K/128], any strides: sa(m, kb)     [ceil(N/128), K/128], any strides
 *               (DeepGEMM's M-major "sa[kb*lda_s + m]" is strides {1, lda_s})
 *                                                      D = sum_kb sa(m,kb)*sb(n/128,kb)*acc_kb
 * MX            UE8M0 [M, K/32]: sa(m, j) = 2^(code-127) UE8M0 [N, K/32]: sb(n, j)
 *               both contiguous along K, rows 4-byte aligned (row stride a multiple of 4 bytes)
 *                                                      D = sum_j sa(m,j)*sb(n,j)*acc_j (32 of K)
 *               (the layout ptxq_quantize's MXFP8 mode writes for [rows, K] inputs). sm_90a has no
 *               block-scaled MMA: each k32 product is promoted with its two scales on the CUDA
 *               cores (exact products, FP32 sums), at about a third of the FP8 rate; tile_n 128.
 *               Code 0 is 2^-127; code 255 (NaN in OCP) is taken as +inf.
 * Batched scales: a_scale may carry a leading batch dim ([L], [L, M], [L, M, K/128]) and b_scale
 * one of B's batch count ([Lb], [Lb, N], [Lb, ceil(N/128), K/128]); without it one set serves all.
 *
 * Batches and groups (desc.grouping):
 *   NONE        rank-2 a, b, d: one GEMM. Rank-3 a [L, M, K] and d [L, M, N]: a strided batch,
 *               b [L, N, K] or rank-2 [N, K] (one B for every batch).
 *   MASKED      a [G, M, K], b [G, N, K], d [G, M, N]; group_rows I32 [G] (contiguous, device):
 *               group g uses its first group_rows[g] rows, 0..M (larger counts are clamped to M;
 *               the kernel compares unsigned, so a negative count takes all M rows); other rows
 *               of d are not written (DeepGEMM's masked layout, e.g. MoE decode).
 *   CONTIGUOUS  a [M, K]: the groups' rows back to back; b [G, N, K]; d [M, N]; group_rows I32 [M]
 *               (device): the group of each row, < 0 for padding rows, which are not written,
 *               else < G: the kernel reads B's scales and the bias of that group, and the host
 *               cannot check device data, so a larger id reads past those tensors.
 *               Each 128-row tile (rows 128t..128t+127) must hold rows of one group (and padding
 *               after them: the tile takes its first row's group, and a tile whose first row is
 *               padding is skipped whole): align every group's rows to 128 (DeepGEMM's m_indices
 *               layout). At least one group (b [0, N, K] with M > 0: PTXQ_ERR_SHAPE). Clusters
 *               off.
 *   The device counts and maps are read by the kernel, never by the host (no sync).
 * Epilogue: alpha (0.0f is taken as 1.0f, so a zeroed desc computes the plain product; for
 * alpha = 0, pass zero scales); c NULL or d's dtype and shape, any row/batch strides, may be d
 * itself (read before written, element by element); bias NULL or BF16/F32 [N] or [Lb, N] (B's
 * batch: the group for grouped GEMMs).
 * Numerics: the tensor core accumulates each 128-K block (4 chained k32 wgmmas; Hopper's FP8 MMA
 * keeps about 14 significant bits per k32 step), and each block's partial is added ("promoted")
 * into an FP32 accumulator on the CUDA cores (BLOCK: scaled by sa*sb in FP32 first). Scales,
 * alpha, beta*C and bias are applied in FP32 in that order; D is rounded (RNE) once. BF16
 * operands: exact products summed in FP32 inside the tensor core over all of K (no promotion).
 * Kernels: a persistent, warp-specialised CTA (one TMA producer warpgroup, two wgmma consumer
 * warpgroups) per 128 x tile_n output tile, tile_n 128, 160 or 192 (MX: 128; BF16 also 256),
 * or, asked for by desc.tile_m = 192, three consumer warpgroups per 192 x 128 tile (E4M3 x E4M3,
 * TENSOR / ROW / BLOCK, TMA store, no split-K; the runtime picks them itself only for BLOCK
 * with K <= 2048, M >= 4096 and N not a multiple of 192, where they measured 4-5% faster,
 * bench/RESULTS.md, thirtieth session), optionally in
 * clusters of two CTAs along M that multicast B (desc fields at 0: the runtime picks). BF16 or F16
 * output without C, with 16-byte aligned rows and N a multiple of 8 (a TMA store writes whole
 * 16-byte chunks: past N it would overwrite the row's padding), is written by TMA stores from a
 * shared-memory staging tile (desc.store; the consumers go on to the next tile meanwhile), bias
 * and groups included: a 64-row part of a tile that holds rows the call must not write (masked
 * or padding rows) stores the rows it owns from that tile with 16-byte stores instead (H100:
 * grouped MoE GEMMs 24-118% faster than the register stores on nine of DeepGEMM's ten grouped
 * shapes, masked 2 x 512 x 4096 x 7168 5% slower, bench/RESULTS.md); other plain BF16 tiles take a
 * pair-store path; anything else a per-element epilogue.
 * Masked groups: the persistent grid walks the valid tiles only (each group's first
 * min(group_rows[g], M) rows, read on the device), so no CTA waits on tiles of rows past the
 * counts; the walk goes on from the group of a CTA's previous tile, so a tile start reads a
 * count or two, not all groups' counts. The host cannot see the counts: the tile-width pick
 * counts G x M rows (whole 128-row tiles a group), or desc.expected_rows a group when given, and
 * the capacity also sizes the grid and the pair and split picks.
 * Split-K (for few output tiles, e.g. small M): the K blocks of each tile are cut into `split_k`
 * ranges run by different CTAs, which store FP32 partials in a caller-owned workspace; the last
 * CTA of each tile sums them in split order (deterministic: the same D whatever the timing) and
 * runs the epilogue. Where every split tile's units fit on the GPU at once (at most 8 splits, no
 * CTA pairs or groups, tile_n 128: the runtime's width for few tiles), they run instead as
 * clusters of `splits` CTAs that sum their partials through distributed shared memory (the same
 * sum in the same order; the workspace is not touched; a split the runtime picked may shrink to
 * fit; plan.cluster_split says so; PTXQ_GEMM_NO_CLUSTER_SPLIT keeps the workspace path). Tail
 * split (split_k = 0 with many tiles): when the last wave of tiles fills at most half of the SMs,
 * only its tiles are split that way, so that it ends sooner (the whole waves before it are not
 * split). Both need desc.workspace of ptxq_gemm_workspace_size() bytes (256-byte aligned, as
 * any workspace given is, split or not; planned for 132 SMs, as that call sees no device, with
 * desc.ctas capping the grid (the splits count it; the tile width counts the SMs only), and so
 * are ptxq_gemm_validate's answers where a split or width depends on the SM count:
 * ptxq_gemm_plan_for gives the figure for ctx's device, and a runtime-picked split that needs
 * more than desc.workspace_bytes
 * is dropped, unless it runs across a cluster, which needs none); split_k = 1: no
 * split. The runtime zeroes the workspace's counters with a memset on the stream before each
 * launch that sums through the workspace (PTXQ_GEMM_COUNTERS_ZEROED: not, the caller vouches for
 * them; a cluster sum uses no counters); one workspace must not serve two launches that may run
 * concurrently.
 * Launch (desc.flags): by default the GEMM kernel is launched with programmatic dependent launch
 * (PDL), as the GEMVs are: its CTAs may start (barriers, tensor-map prefetch) while the preceding
 * kernel in the stream drains, and every thread waits for that kernel's completion
 * (griddepcontrol.wait) before it touches global memory, so the default is safe after any kernel.
 * It then lets a following PDL-launched kernel start early (which must wait in turn, as the
 * library's kernels do). PTXQ_GEMM_NO_PDL launches plainly; a driver without cuLaunchKernelEx
 * does too. The MX path's decode launches and the split-K memset are plain either way (with
 * PTXQ_GEMM_COUNTERS_ZEROED there is no memset). */
typedef enum ptxq_gemm_scaling {
    PTXQ_GEMM_SCALE_TENSOR = 1,
    PTXQ_GEMM_SCALE_ROW = 2,
    PTXQ_GEMM_SCALE_BLOCK = 3,
    PTXQ_GEMM_SCALE_MX = 4      /* MXFP8 (OCP MX): UE8M0 per 32 of K on both operands */
} ptxq_gemm_scaling;

/* MXFP8 on sm_90a (desc.mx_path). PROMOTE: each k32 product is scaled and added on the CUDA cores
 * (no workspace). DEQUANTIZE: A and B are first decoded to BF16 into desc.workspace (exact: an
 * E4M3/E5M2 value times a power of two fits BF16, unless the product leaves BF16's range: scale
 * codes >= 247 with large values overflow to inf, codes near 0 underflow, where PROMOTE's
 * separate factors stay finite), then a BF16 GEMM runs (per-tensor, FP32 accumulation); it
 * needs ptxq_gemm_workspace_size() bytes, (L*M + Lb*N) * K * 2 for the copies plus any split-K,
 * and makes two more launches. AUTO takes DEQUANTIZE where the workspace holds the copies and a
 * cost model (src/gemm.c mx_prefers_dequant, from H100 measurements) says it is faster: large M
 * and N; never for MASKED groups (the copies would cover every group's capacity rows). */
typedef enum ptxq_gemm_mx_path {
    PTXQ_GEMM_MX_AUTO = 0,
    PTXQ_GEMM_MX_PROMOTE = 1,
    PTXQ_GEMM_MX_DEQUANTIZE = 2
} ptxq_gemm_mx_path;

typedef enum ptxq_gemm_grouping {
    PTXQ_GEMM_GROUP_NONE = 0,
    PTXQ_GEMM_GROUP_MASKED = 1,
    PTXQ_GEMM_GROUP_CONTIGUOUS = 2
} ptxq_gemm_grouping;

typedef struct ptxq_gemm_desc {
    ptxq_gemm_scaling scaling;
    const ptxq_tensor *a_scale; /* see the table above; device data */
    const ptxq_tensor *b_scale;
    int tile_n;                 /* 0 = chosen by the runtime, else 128, 160 or 192 (BF16: or 256) */
    int tile_m;                 /* 0 = chosen by the runtime (src/gemm.c pick_m192), else 128,
                                   or 192: three consumer warpgroups of 64 rows (E4M3 x E4M3,
                                   TENSOR / ROW / BLOCK, tile_n 128, the TMA-store epilogue,
                                   so BF16 D with N a multiple of 8, no split-K; BLOCK with
                                   K > 0) */
    int group_m;                /* grouped rasterization: M tiles per group (0 = default, 8) */
    int cluster;                /* 0 = chosen by the runtime; 1; 2 = CTA pairs along M that share
                                   each B tile through TMA multicast (less DRAM traffic). The
                                   runtime pairs FP8 TENSOR / ROW calls (any FP8 pair) from 16
                                   waves of tiles on, MX calls from one wave, never BLOCK, BF16
                                   or contiguous groups (src/gemm.c) */
    int ctas;                   /* persistent grid: 0 = one CTA per SM, else at most this many
                                   in whole clusters (rounded down, but at least one cluster);
                                   the tail split and the cluster sum plan for it, an automatic
                                   split_k for the SM count */
    float alpha;                /* 0.0f = 1.0f */
    float beta;                 /* with c only */
    const ptxq_tensor *c;       /* NULL, or accumulate: d's dtype and shape */
    const ptxq_tensor *bias;    /* NULL, or BF16/F32 [N] or [Lb, N] */
    ptxq_gemm_grouping grouping;
    const ptxq_tensor *group_rows; /* I32: MASKED [G] rows used per group; CONTIGUOUS [M] group of
                                      each row (< 0: padding) */
    int64_t expected_rows;      /* MASKED only: the rows a group is expected to use (DeepGEMM's
                                   expected_m), a host-side hint for the tile-width pick, which
                                   counts the tiles the kernel will run (0 = M, the capacity);
                                   any value is correct, a close one is faster */
    int split_k;                /* 0 = the runtime's pick (without a workspace: only a split
                                   summed across a cluster), 1 = none, or
                                   2..64 (needs the workspace) */
    uint64_t workspace;         /* device memory for split-K and MX's BF16 copies, 0 = none */
    size_t workspace_bytes;
    int store;                  /* epilogue: 0 = chosen by the runtime, 1 = TMA store (the tile
                                   staged in shared memory, written by bulk tensor copies) where
                                   the call allows it: BF16 or F16 D without c (bias and
                                   groups allowed), 16-byte
                                   aligned D rows and batches, N a multiple of 8, tile_n 128 or 192 (BF16: 256
                                   too; FP8 TENSOR / ROW: 160 too), any FP8 pair or BF16 x BF16;
                                   elsewhere as 0; -1 = stores straight from registers */
    ptxq_gemm_mx_path mx_path;  /* MX scaling only: see ptxq_gemm_mx_path */
    unsigned flags;             /* PTXQ_GEMM_NO_PDL | PTXQ_GEMM_COUNTERS_ZEROED |
                                   PTXQ_GEMM_NO_CLUSTER_SPLIT, 0 = programmatic dependent
                                   launch, the counters zeroed by the runtime */
} ptxq_gemm_desc;

#define PTXQ_GEMM_NO_PDL 1u     /* plain launch of the GEMM kernel, no programmatic dependent launch */
/* The caller promises that the split-K counters of desc.workspace (bytes plan.counters_offset to
 * plan.workspace_bytes of ptxq_gemm_plan_for) are zero, so the runtime makes no memset before the
 * launch. Every call leaves the counters it used at zero: after one call without the flag that
 * summed through the workspace (plan.cluster_split 0; a cluster sum neither uses nor zeroes the
 * counters), or a caller's zeroing of those bytes, further calls with the same plan on the same
 * workspace may pass it, and a chain of split-K GEMMs then keeps programmatic dependent launch
 * from call to call (the memset is a plain stream operation between the kernels). Calls whose plans differ can
 * place partials where another plan keeps counters: zero the counters first, or drop the flag.
 * Measured back to back (bench/RESULTS.md): 2-3 us a call less on most split small-M shapes on
 * an H100 and an H200, but one H200 shape (64 x 7168 x 16384, 2 splits) 10% slower with PDL. */
#define PTXQ_GEMM_COUNTERS_ZEROED 2u
/* No cluster sum: split-K through the workspace only (without one, a runtime-picked split is then
 * dropped), e.g. for comparisons. */
#define PTXQ_GEMM_NO_CLUSTER_SPLIT 4u

/* Every check ptxq_gemm makes, without a device: PTXQ_OK if the call would be accepted. */
ptxq_status ptxq_gemm_validate(const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                               const ptxq_tensor *b, const ptxq_tensor *d);
/* The kernel name a call would launch ("gemm_e4m3_e4m3_tensor_n192h2_c2"), after the same checks. */
ptxq_status ptxq_gemm_kernel_for(const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                                 const ptxq_tensor *b, const ptxq_tensor *d, char *name,
                                 size_t n);
/* The launch ptxq_gemm would make on ctx's device, after the same checks. */
typedef struct ptxq_gemm_plan {
    char kernel[64];
    int tile_n, cluster;
    int tile_m;              /* output tile rows: 128, or 192 ("_m192" kernels) */
    int store;               /* 1: TMA-store epilogue (kernel name has "_ts") */
    int splits;              /* split-K ranges per split tile (1: none) */
    unsigned grid;           /* persistent CTAs */
    unsigned units;          /* work units: whole tiles + split tiles x splits */
    size_t workspace_bytes;  /* used of desc.workspace */
    unsigned split_tiles;    /* output tiles cut into `splits` ranges: all of them (split-K), or
                                the last wave's (tail split), or 0 */
    int dequant;             /* MX: 1 = A and B are decoded to BF16 in the workspace first (two
                                gemm_mx_dequant launches), and `kernel` is the BF16 GEMM */
    int pdl;                 /* the GEMM kernel is launched with programmatic dependent launch */
    size_t counters_offset;  /* split-K tile counters: workspace bytes counters_offset to
                                workspace_bytes (= workspace_bytes: none) */
    int cluster_split;       /* 1: the split tiles' units run as clusters of `splits` CTAs and
                                sum through distributed shared memory (the workspace unused) */
} ptxq_gemm_plan;
ptxq_status ptxq_gemm_plan_for(ptxq_context *ctx, const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                               const ptxq_tensor *b, const ptxq_tensor *d, ptxq_gemm_plan *plan);
/* Bytes of workspace the call would use (0: none): MX's BF16 copies where the runtime would take the
 * dequantize path given them (or desc->mx_path asks for it), plus split-K with the split the
 * runtime picks for desc->split_k = 0 (or the one given). */
ptxq_status ptxq_gemm_workspace_size(const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                                     const ptxq_tensor *b, const ptxq_tensor *d, size_t *bytes);
/* One GEMM launch on stream (MX dequantize path: two decode launches before it; split-K through
 * the workspace: a memset of its counters; a cluster sum: a cluster launch); writes d (and the
 * workspace) only. A call that fails leaves d untouched. */
ptxq_status ptxq_gemm(ptxq_context *ctx, const ptxq_gemm_desc *desc, const ptxq_tensor *a,
                      const ptxq_tensor *b, const ptxq_tensor *d, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* PTXQ_H */
