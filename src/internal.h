/* internal.h -- what the runtime's files share. Not installed. */
#ifndef PTXQ_INTERNAL_H
#define PTXQ_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cudrv.h"
#include "kernel_entry.h"
#include "ptxq.h"

/* Sets the per-thread message (printf-style) and returns status. */
int ptxq_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clears the per-thread message; returns PTXQ_OK. */
int ptxq_ok(void);
/* 1 if the driver loaded but reported no device. */
int ptxq_cudrv_no_device(void);
/* cuLaunchKernelEx (CUDA 12.0 ABI), NULL if the driver has none (or did not load). */
typedef CUresult (*ptxq_launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
ptxq_launch_ex_fn ptxq_cudrv_launch_ex(void);

/* The cubin target for a compute capability ("sm_90a"), NULL if the library has none. */
const char *ptxq_target_for(int cc_major, int cc_minor);
/* PTXQ_OK and *target, or UNSUPPORTED_ARCH with a message naming the device and built targets. */
int ptxq_arch_check(int ordinal, const char *devname, int cc_major, int cc_minor,
                    const char **target);
/* "sm_90a, sm_100a, sm_120a": targets that have at least one embedded cubin. */
void ptxq_built_targets(char *buf, size_t n);
const ptxq_kernel_entry *ptxq_entry_find(const char *name, const char *target);
/* GEMV: the magic multiplier m and shift sh with (b * m) >> sh == b / d for every b < 2^31 (the
 * kernels' batch index; src/gemv.c). */
void ptxq_gemv_tile_magic(uint32_t d, uint32_t *m, uint32_t *sh);
/* GEMM: multiplier and shift dividing n < 2^31 by d (1 <= d < 2^31): n / d = (mulhi(n, mul) + n)
 * >> shr, the sum taken in 32 bits (src/gemm.c; the tile coordinates). NOTE: the same job as
 * ptxq_gemv_tile_magic in another form: the GEMM's consumers, at their register limit, take no
 * 64-bit temporary (a select of two more 32-bit registers already spilled two of them); test_runtime
 * checks both. */
void ptxq_fast_div(uint32_t d, uint32_t *mul, uint32_t *shr);

/* A loaded kernel. */
typedef struct ptxq_loaded {
    const ptxq_kernel_entry *entry;
    CUmodule module;
    CUfunction fn;   /* published last (release store): non-NULL means every field is set */
    int overridden;
    int ctas_per_sm; /* resident CTAs per SM at the entry's threads and dynamic smem (>= 1) */
    int max_clusters[9]; /* clusters of 2..8 CTAs resident at once (ptxq_max_clusters): 0 = not
                            asked yet, -1 = none (or the driver cannot say); under ctx->lock */
} ptxq_loaded;

#define PTXQ_TMAP_CACHE 64
typedef struct ptxq_tmap_slot {
    int used;
    unsigned long long key[12];
    CUtensorMap map;
} ptxq_tmap_slot;

struct ptxq_context {
    const ptxq_cudrv *drv;
    CUdevice dev;
    CUcontext cu;
    ptxq_device_info info;
    const char *target;
    pthread_mutex_t lock;      /* guards loaded[] and tmaps[] */
    ptxq_loaded *loaded;       /* one slot per registry entry, filled lazily */
    int *index;                /* name hash -> registry index for this target (read-only) */
    int index_size;            /* power of two, > 2x the kernels of this target */
    ptxq_tmap_slot tmaps[PTXQ_TMAP_CACHE];
    int tmap_next;
};

/* The buffer the loader builds an override's path in ("<dir>/<kernel>.cubin" and its NUL), and
 * whether PTXQ_KERNEL_DIR is too long for kernel name's path there: its load then fails rather
 * than fall back to the embedded cubin (src/context.c; `ptxq info` warns). */
#define PTXQ_OVERRIDE_PATH_MAX 4096
int ptxq_override_too_long(const char *name);
/* A PTX override's header line ("// ptxq: ... threads=T smem=S ...", gen/ptx.py header) against
 * the embedded kernel it replaces: the launch keeps the embedded threads and dynamic shared
 * memory, so an override that says other threads or more shared memory is refused (an edited
 * ring depth would otherwise write past the shared memory the launch gives it; less is safe, as
 * an older build's kernel timed against this one). Text without the line passes: a cubin, or
 * hand-written PTX, is the user's to match. */
int ptxq_override_check(const char *name, int threads, int dynamic_smem, const char *text);
/* Makes ctx's CUDA context current on the calling thread for the length of a call, keeping in
 * *prev what was current (a caller on another device, or none), which ptxq_ctx_leave puts back:
 * a call must not move its caller's thread to our device (found by review: cudaMalloc after a
 * call went to the context's device). Nested pairs cost a cuCtxGetCurrent each. */
int ptxq_ctx_enter(ptxq_context *ctx, CUcontext *prev);
void ptxq_ctx_leave(ptxq_context *ctx, CUcontext prev);
/* The function for kernel name on this context's target; loads its module once. */
int ptxq_get_kernel(ptxq_context *ctx, const char *name, const ptxq_loaded **out);
/* cuLaunchKernel with the context current; params as for cuLaunchKernel. */
int ptxq_launch(ptxq_context *ctx, const ptxq_loaded *k, unsigned grid, unsigned block,
                unsigned smem, void *stream, void **params);
/* ptxq_launch with options: PTXQ_LAUNCH_PDL launches with programmatic stream serialization
 * (programmatic dependent launch: the kernel may start before the preceding kernel in the stream
 * has finished, and must griddepcontrol.wait before touching anything that kernel writes).
 * Without cuLaunchKernelEx in the driver it falls back to a plain launch (griddepcontrol is then
 * a no-op). */
#define PTXQ_LAUNCH_PDL 1u
/* cluster > 1: a launch in clusters of that many CTAs along x (grid a multiple of it; needs
 * cuLaunchKernelEx: PTXQ_ERR_CUDA without it, so check ptxq_max_clusters first). */
int ptxq_launch_ex(ptxq_context *ctx, const ptxq_loaded *k, unsigned grid, unsigned block,
                   unsigned smem, void *stream, void **params, unsigned flags, unsigned cluster);
/* ptxq_launch_ex for a caller inside ptxq_ctx_enter / ptxq_ctx_leave: the entry points that
 * enqueue more than one thing (quantize, GEMM) or ask the driver first (GEMV's capture query)
 * make the context current once for all of it. */
int ptxq_launch_ex_current(ptxq_context *ctx, const ptxq_loaded *k, unsigned grid, unsigned block,
                           unsigned smem, void *stream, void **params, unsigned flags,
                           unsigned cluster);
/* How many clusters of `cluster` (2..8) CTAs of k, at block threads and smem bytes, the device
 * holds at once (cuOccupancyMaxActiveClusters, asked once per kernel and size); 0 where the
 * driver cannot launch or count clusters. */
int ptxq_max_clusters(ptxq_context *ctx, const ptxq_loaded *k, unsigned cluster, unsigned block,
                      unsigned smem);
/* A tiled tensor map (rank <= 5), cached by its arguments; copied into *out. */
int ptxq_tmap_get(ptxq_context *ctx, CUtensorMapDataType dtype, unsigned rank, uint64_t addr,
                  const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                  CUtensorMapSwizzle swizzle, CUtensorMap *out);

/* 1 if the leading dimensions of t step by one uniform row pitch (quantization's flat path, the
 * overlap test's rows); src/tensor.c. */
int ptxq_rows_collapse(const ptxq_tensor *t);
/* Tensor checks shared by every family; each sets the message and returns its status. */
int ptxq_check_tensor(const ptxq_tensor *t, const char *what, int need_data);
/* For outputs, after ptxq_check_tensor: no two elements of t share an address. */
int ptxq_check_disjoint(const ptxq_tensor *t, const char *what);
/* The product of n sizes: 0 if any is 0, else saturating at INT64_MAX (an empty tensor may hold
 * other dimensions up to 2^48 each, whose product overflowed; found by review, UBSan). */
int64_t ptxq_shape_product(const int64_t *shape, int n);
/* 1 if the byte ranges [a, a + na) and [b, b + nb) share a byte (an empty range shares none). */
int ptxq_bytes_overlap(uint64_t a, size_t na, uint64_t b, size_t nb);
/* 1 if tensors a and b may share a byte: their spans (ptxq_tensor_bytes) overlap and, where both
 * are rows of one byte pitch and count (leading dimensions collapsing as ptxq_rows_collapse
 * says), some row of one meets some row of the other; 0 if they cannot. Interleaved rows (a
 * row's scale in q's row padding, x and y in one [L, K + M] buffer) are disjoint. */
int ptxq_tensors_overlap(const ptxq_tensor *a, const ptxq_tensor *b);

#endif
