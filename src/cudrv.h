/* cudrv.h -- the CUDA driver API, loaded at run time with dlopen (no link-time libcuda).
 *
 * cuda.h is used for types and prototypes only; every entry point is fetched once through
 * cuGetProcAddress, asking for the CUDA 12.0 ABI of each function, so the versioned symbol names
 * (_v2, _ptsz) are the driver's business. Internal header: the library, its tools and its tests
 * share it; it is not installed. */
#ifndef PTXQ_CUDRV_H
#define PTXQ_CUDRV_H

#include <cuda.h>

/* One line per driver function: name as in cuda.h (the prototype gives the pointer type). */
#define PTXQ_CUDRV_FUNCS(X)                                                                        \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount)     \
    X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)                 \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)                   \
    X(cuCtxGetCurrent) X(cuCtxSynchronize) X(cuModuleLoadData) X(cuModuleLoadDataEx)              \
    X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncSetAttribute) X(cuFuncGetAttribute)          \
    X(cuLaunchKernel) X(cuMemsetD32Async) X(cuMemsetD8Async) X(cuMemsetD8) X(cuMemAlloc)          \
    X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoDAsync) X(cuStreamCreate)           \
    X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate) X(cuEventRecord)                   \
    X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy) X(cuTensorMapEncodeTiled)       \
    X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags)                 \
    X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
    X(cuStreamIsCapturing)

typedef struct ptxq_cudrv {
#define PTXQ_CUDRV_FIELD(f) __typeof__(f) *f;
    PTXQ_CUDRV_FUNCS(PTXQ_CUDRV_FIELD)
#undef PTXQ_CUDRV_FIELD
} ptxq_cudrv;

/* Loads libcuda.so.1 and cuInit(0)s it once per process (thread-safe). Returns the table, or NULL
 * with *why set to a static message. */
const ptxq_cudrv *ptxq_cudrv_get(const char **why);
/* Any other driver entry point at the same (12.0) ABI as the table, NULL if the driver lacks it
 * or is not loaded (the tools' test guard mode takes CUDA's VMM functions from here). */
void *ptxq_cudrv_proc(const char *name);

/* "cuFoo failed: CUDA_ERROR_X (text)" into the per-thread message; returns PTXQ_ERR_CUDA. */
int ptxq_cuda_fail(const ptxq_cudrv *d, CUresult r, const char *what);

#endif
