/* context.c -- one context per device: the driver, the primary CUDA context, lazily loaded kernels
 * and cached tensor maps. Everything mutable sits behind ctx->lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* FNV-1a */
static unsigned name_hash(const char *s) {
    unsigned h = 2166136261u;
    for (; *s; ++s) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int attr(ptxq_context *c, CUdevice_attribute a, int *v) {
    CUresult r = c->drv->cuDeviceGetAttribute(v, a, c->dev);
    return r == CUDA_SUCCESS ? PTXQ_OK : ptxq_cuda_fail(c->drv, r, "cuDeviceGetAttribute");
}

ptxq_status ptxq_context_create(int ordinal, ptxq_context **out) {
    if (!out) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "ptxq_context_create: out is NULL");
    *out = NULL;
    const char *why = NULL;
    const ptxq_cudrv *d = ptxq_cudrv_get(&why);
    if (!d) {
        if (ptxq_cudrv_no_device()) return ptxq_fail(PTXQ_ERR_NO_DEVICE, "%s", why);
        return ptxq_fail(PTXQ_ERR_NO_DRIVER, "%s", why);
    }
    int count = 0;
    CUresult r = d->cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS) return ptxq_cuda_fail(d, r, "cuDeviceGetCount");
    if (ordinal < 0 || ordinal >= count)
        return ptxq_fail(PTXQ_ERR_NO_DEVICE, "device %d requested, %d present", ordinal, count);

    ptxq_context *c = calloc(1, sizeof *c);
    if (!c) return ptxq_fail(PTXQ_ERR_OUT_OF_MEMORY, "ptxq_context_create: out of host memory");
    c->loaded = calloc((size_t)ptxq_kernel_table_size + 1, sizeof *c->loaded);
    if (!c->loaded) {
        free(c);
        return ptxq_fail(PTXQ_ERR_OUT_OF_MEMORY, "ptxq_context_create: out of host memory");
    }
    c->drv = d;
    int st = PTXQ_OK;
    if ((r = d->cuDeviceGet(&c->dev, ordinal)) != CUDA_SUCCESS) st = ptxq_cuda_fail(d, r, "cuDeviceGet");
    ptxq_device_info *in = &c->info;
    in->ordinal = ordinal;
    if (!st && (r = d->cuDeviceGetName(in->name, sizeof in->name, c->dev)) != CUDA_SUCCESS)
        st = ptxq_cuda_fail(d, r, "cuDeviceGetName");
    if (!st) st = attr(c, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &in->cc_major);
    if (!st) st = attr(c, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &in->cc_minor);
    if (!st) st = attr(c, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &in->sm_count);
    int l2 = 0;
    if (!st) st = attr(c, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2);
    in->l2_bytes = (size_t)l2;
    int mclk = 0, mbus = 0; /* kHz, bits; optional: 0 where the driver does not report them */
    if (!st && attr(c, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &mclk) == PTXQ_OK &&
        attr(c, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &mbus) == PTXQ_OK)
        in->dram_gbps = 2.0 * mclk * 1e3 * mbus / 8.0 / 1e9;
    if (!st && (r = d->cuDeviceTotalMem(&in->global_mem_bytes, c->dev)) != CUDA_SUCCESS)
        st = ptxq_cuda_fail(d, r, "cuDeviceTotalMem");
    if (!st && (r = d->cuDriverGetVersion(&in->driver_version)) != CUDA_SUCCESS)
        st = ptxq_cuda_fail(d, r, "cuDriverGetVersion");
    if (!st) st = ptxq_arch_check(ordinal, in->name, in->cc_major, in->cc_minor, &c->target);
    if (!st) snprintf(in->target, sizeof in->target, "%s", c->target);
    if (!st && (r = d->cuDevicePrimaryCtxRetain(&c->cu, c->dev)) != CUDA_SUCCESS)
        st = ptxq_cuda_fail(d, r, "cuDevicePrimaryCtxRetain");
    if (st) {
        free(c->loaded);
        free(c);
        return st;
    }
    /* name -> registry index for this target: launches look kernels up without a scan */
    c->index_size = 16;
    while (c->index_size < 2 * ptxq_kernel_table_size + 1) c->index_size *= 2;
    c->index = malloc(sizeof *c->index * (size_t)c->index_size);
    if (!c->index) {
        d->cuDevicePrimaryCtxRelease(c->dev);
        free(c->loaded);
        free(c);
        return ptxq_fail(PTXQ_ERR_OUT_OF_MEMORY, "ptxq_context_create: out of host memory");
    }
    for (int i = 0; i < c->index_size; ++i) c->index[i] = -1;
    for (int i = 0; i < ptxq_kernel_table_size; ++i) {
        if (strcmp(ptxq_kernel_table[i]->target, c->target)) continue;
        unsigned slot = name_hash(ptxq_kernel_table[i]->name) & (unsigned)(c->index_size - 1);
        while (c->index[slot] >= 0) slot = (slot + 1) & (unsigned)(c->index_size - 1);
        c->index[slot] = i;
    }
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return ptxq_ok();
}

int ptxq_ctx_enter(ptxq_context *c, CUcontext *prev) {
    CUcontext cur = NULL;
    if (c->drv->cuCtxGetCurrent(&cur) != CUDA_SUCCESS) cur = NULL;
    *prev = cur;
    if (cur == c->cu) return PTXQ_OK;
    CUresult r = c->drv->cuCtxSetCurrent(c->cu);
    return r == CUDA_SUCCESS ? PTXQ_OK : ptxq_cuda_fail(c->drv, r, "cuCtxSetCurrent");
}

void ptxq_ctx_leave(ptxq_context *c, CUcontext prev) {
    if (prev != c->cu) c->drv->cuCtxSetCurrent(prev);
}

void ptxq_context_destroy(ptxq_context *c) {
    if (!c) return;
    CUcontext prev;
    if (ptxq_ctx_enter(c, &prev) == PTXQ_OK) {
        for (int i = 0; i < ptxq_kernel_table_size; ++i)
            if (c->loaded[i].module) c->drv->cuModuleUnload(c->loaded[i].module);
        ptxq_ctx_leave(c, prev);
    }
    c->drv->cuDevicePrimaryCtxRelease(c->dev);
    pthread_mutex_destroy(&c->lock);
    free(c->index);
    free(c->loaded);
    free(c);
}

ptxq_status ptxq_context_info(const ptxq_context *c, ptxq_device_info *out) {
    if (!c || !out) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "ptxq_context_info: NULL argument");
    *out = c->info;
    return ptxq_ok();
}

ptxq_status ptxq_context_make_current(ptxq_context *c) {
    if (!c) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "ptxq_context_make_current: ctx is NULL");
    CUresult r = c->drv->cuCtxSetCurrent(c->cu);
    return r == CUDA_SUCCESS ? ptxq_ok() : ptxq_cuda_fail(c->drv, r, "cuCtxSetCurrent");
}

void *ptxq_context_cuda(const ptxq_context *c) { return c ? (void *)c->cu : NULL; }

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0; /* PTX text must be NUL-terminated for the JIT */
        *len = (size_t)n;
    }
    return buf;
}

/* Loads slot i (lock held): the override file if there is one, else the embedded cubin. */
static int load_slot(ptxq_context *c, int i, const ptxq_kernel_entry *e) {
    ptxq_loaded *L = &c->loaded[i];
    const ptxq_cudrv *d = c->drv;
    char path[PTXQ_OVERRIDE_PATH_MAX];
    /* a directory whose path does not fit must not fall back to the embedded cubin unnoticed
     * (found by review: `ptxq info` listed the override while the embedded one ran) */
    if (ptxq_override_too_long(e->name))
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "PTXQ_KERNEL_DIR is longer than %zu bytes",
                         sizeof path - strlen(e->name) - 8);
    const char *ov = ptxq_override_path(e->name, path, sizeof path);
    CUresult r;
    CUfunction fn = NULL;
    if (ov) {
        size_t len = 0;
        unsigned char *img = read_file(ov, &len);
        if (!img) return ptxq_fail(PTXQ_ERR_NOT_FOUND, "override %s could not be read", ov);
        size_t ol = strlen(ov);
        int st = ol > 4 && !strcmp(ov + ol - 4, ".ptx")
                     ? ptxq_override_check(e->name, e->threads, e->dynamic_smem, (const char *)img)
                     : PTXQ_OK;
        if (st != PTXQ_OK) {
            free(img);
            return st;
        }
        char log[4096] = {0};
        CUjit_option opt[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void *val[2] = {log, (void *)(size_t)sizeof log};
        r = d->cuModuleLoadDataEx(&L->module, img, 2, opt, val);
        free(img);
        if (r != CUDA_SUCCESS) {
            const char *en = NULL;
            if (d->cuGetErrorName(r, &en) != CUDA_SUCCESS || !en) en = "?";
            return ptxq_fail(PTXQ_ERR_CUDA, "override %s failed to load (cuModuleLoadDataEx: %s): %s",
                             ov, en, log);
        }
        L->overridden = 1;
    } else {
        r = d->cuModuleLoadData(&L->module, e->cubin);
        if (r != CUDA_SUCCESS) return ptxq_cuda_fail(d, r, "cuModuleLoadData");
    }
    const char *what = "cuModuleGetFunction";
    r = d->cuModuleGetFunction(&fn, L->module, e->name);
    if (r == CUDA_SUCCESS && e->dynamic_smem > 48 * 1024) {
        what = "cuFuncSetAttribute (dynamic shared memory)";
        r = d->cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  e->dynamic_smem);
    }
    if (r != CUDA_SUCCESS) {
        d->cuModuleUnload(L->module);
        /* fn was never published: only what this load set goes back (a memset would also store
         * to fn, which other threads read without the lock) */
        L->module = NULL;
        L->overridden = 0;
        return ptxq_cuda_fail(d, r, what);
    }
    /* persistent kernels size their grid to what is resident: a larger grid runs in waves */
    int occ = 0;
    if (d->cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, e->threads,
                                                       (size_t)e->dynamic_smem) != CUDA_SUCCESS)
        occ = 1;
    L->ctas_per_sm = occ > 0 ? occ : 1;
    L->entry = e;
    /* NOTE: last, with release order: ptxq_get_kernel reads fn without the lock */
    __atomic_store_n(&L->fn, fn, __ATOMIC_RELEASE);
    return PTXQ_OK;
}

int ptxq_get_kernel(ptxq_context *c, const char *name, const ptxq_loaded **out) {
    int idx = -1;
    unsigned slot = name_hash(name) & (unsigned)(c->index_size - 1);
    for (; c->index[slot] >= 0; slot = (slot + 1) & (unsigned)(c->index_size - 1))
        if (!strcmp(ptxq_kernel_table[c->index[slot]]->name, name)) {
            idx = c->index[slot];
            break;
        }
    if (idx < 0)
        return ptxq_fail(PTXQ_ERR_NOT_FOUND, "no kernel '%s' for %s in this build", name, c->target);
    /* loaded already: no lock (found by review: every launch took the lock, and waited out other
     * threads' first-use loads, seconds for a .ptx override's JIT) */
    if (__atomic_load_n(&c->loaded[idx].fn, __ATOMIC_ACQUIRE)) {
        *out = &c->loaded[idx];
        return PTXQ_OK;
    }
    int st = PTXQ_OK;
    pthread_mutex_lock(&c->lock);
    if (!c->loaded[idx].fn) {
        CUcontext prev;
        st = ptxq_ctx_enter(c, &prev);
        if (!st) {
            st = load_slot(c, idx, ptxq_kernel_table[idx]);
            ptxq_ctx_leave(c, prev);
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (st) return st;
    *out = &c->loaded[idx];
    return PTXQ_OK;
}

int ptxq_kernel_overridden(ptxq_context *c, const char *name) {
    if (!c || !name) return -1;
    int res = -1;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < ptxq_kernel_table_size; ++i)
        if (c->loaded[i].fn && !strcmp(ptxq_kernel_table[i]->name, name)) res = c->loaded[i].overridden;
    pthread_mutex_unlock(&c->lock);
    return res;
}

int ptxq_launch(ptxq_context *c, const ptxq_loaded *k, unsigned grid, unsigned block,
                unsigned smem, void *stream, void **params) {
    return ptxq_launch_ex(c, k, grid, block, smem, stream, params, 0u, 0u);
}

/* The launch configuration of ptxq_launch_ex (attr: room for two). */
static void launch_config(CUlaunchConfig *cfg, CUlaunchAttribute *attr, unsigned grid,
                          unsigned block, unsigned smem, void *stream, unsigned flags,
                          unsigned cluster) {
    memset(attr, 0, 2 * sizeof *attr);
    memset(cfg, 0, sizeof *cfg);
    unsigned n = 0;
    if (flags & PTXQ_LAUNCH_PDL) {
        attr[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr[n++].value.programmaticStreamSerializationAllowed = 1;
    }
    if (cluster > 1) {
        attr[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr[n].value.clusterDim.x = cluster;
        attr[n].value.clusterDim.y = attr[n].value.clusterDim.z = 1;
        n++;
    }
    cfg->gridDimX = grid;
    cfg->gridDimY = cfg->gridDimZ = 1;
    cfg->blockDimX = block;
    cfg->blockDimY = cfg->blockDimZ = 1;
    cfg->sharedMemBytes = smem;
    cfg->hStream = (CUstream)stream;
    cfg->attrs = attr;
    cfg->numAttrs = n;
}

int ptxq_max_clusters(ptxq_context *c, const ptxq_loaded *k, unsigned cluster, unsigned block,
                      unsigned smem) {
    if (!c || !k || cluster < 2 || cluster > 8 || !ptxq_cudrv_launch_ex()) return 0;
    typedef CUresult (*occ_fn)(int *, CUfunction, const CUlaunchConfig *);
    size_t idx = (size_t)(k - c->loaded);
    if (idx >= (size_t)ptxq_kernel_table_size) return 0;
    pthread_mutex_lock(&c->lock);
    int n = c->loaded[idx].max_clusters[cluster];
    if (n == 0) {
        void *p = ptxq_cudrv_proc("cuOccupancyMaxActiveClusters");
        occ_fn occ;
        memcpy(&occ, &p, sizeof p);
        CUlaunchConfig cfg;
        CUlaunchAttribute attr[2];
        launch_config(&cfg, attr, cluster, block, smem, NULL, 0, cluster);
        int got = 0;
        CUcontext prev;
        if (!p) {
            n = -1;
        } else if (ptxq_ctx_enter(c, &prev) != PTXQ_OK) {
            n = 0; /* not cached: asked again next time */
        } else {
            n = occ(&got, k->fn, &cfg) == CUDA_SUCCESS && got > 0 ? got : -1;
            ptxq_ctx_leave(c, prev);
        }
        if (n) c->loaded[idx].max_clusters[cluster] = n;
    }
    pthread_mutex_unlock(&c->lock);
    return n > 0 ? n : 0;
}

int ptxq_launch_ex_current(ptxq_context *c, const ptxq_loaded *k, unsigned grid, unsigned block,
                           unsigned smem, void *stream, void **params, unsigned flags,
                           unsigned cluster) {
    ptxq_launch_ex_fn ex = (flags & PTXQ_LAUNCH_PDL) || cluster > 1 ? ptxq_cudrv_launch_ex() : NULL;
    if (!ex && cluster > 1)
        return ptxq_fail(PTXQ_ERR_CUDA, "cluster launch: the driver has no cuLaunchKernelEx");
    CUresult r;
    if (!ex) {
        r = c->drv->cuLaunchKernel(k->fn, grid, 1, 1, block, 1, 1, smem, (CUstream)stream, params,
                                   NULL);
        return r == CUDA_SUCCESS ? PTXQ_OK : ptxq_cuda_fail(c->drv, r, "cuLaunchKernel");
    }
    CUlaunchAttribute attr[2];
    CUlaunchConfig cfg;
    launch_config(&cfg, attr, grid, block, smem, stream, flags, cluster);
    r = ex(&cfg, k->fn, params, NULL);
    if (r != CUDA_SUCCESS) return ptxq_cuda_fail(c->drv, r, "cuLaunchKernelEx");
    return PTXQ_OK;
}

int ptxq_launch_ex(ptxq_context *c, const ptxq_loaded *k, unsigned grid, unsigned block,
                   unsigned smem, void *stream, void **params, unsigned flags, unsigned cluster) {
    CUcontext prev;
    int st = ptxq_ctx_enter(c, &prev);
    if (st) return st;
    st = ptxq_launch_ex_current(c, k, grid, block, smem, stream, params, flags, cluster);
    ptxq_ctx_leave(c, prev);
    return st;
}

int ptxq_tmap_get(ptxq_context *c, CUtensorMapDataType dtype, unsigned rank, uint64_t addr,
                  const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                  CUtensorMapSwizzle swizzle, CUtensorMap *out) {
    if (rank < 1 || rank > 5) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "tensor map rank %u", rank);
    /* key: everything the map depends on (dims/strides/box packed two per word) */
    unsigned long long key[12] = {(unsigned long long)dtype | (unsigned long long)rank << 8 |
                                      (unsigned long long)swizzle << 16,
                                  addr};
    for (unsigned i = 0; i < rank; ++i) {
        key[2 + i] = dims[i];
        key[7 + i] = (unsigned long long)box[i] << 40 ^ (i ? strides[i - 1] : 0);
    }
    int st = PTXQ_OK;
    pthread_mutex_lock(&c->lock);
    ptxq_tmap_slot *hit = NULL;
    for (int i = 0; i < PTXQ_TMAP_CACHE && !hit; ++i)
        if (c->tmaps[i].used && !memcmp(c->tmaps[i].key, key, sizeof key)) hit = &c->tmaps[i];
    if (!hit) {
        ptxq_tmap_slot *s = &c->tmaps[c->tmap_next];
        cuuint32_t estr[5] = {1, 1, 1, 1, 1};
        CUresult r = c->drv->cuTensorMapEncodeTiled(
            &s->map, dtype, rank, (void *)(uintptr_t)addr, dims, strides, box, estr,
            CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r == CUDA_SUCCESS) {
            s->used = 1;
            memcpy(s->key, key, sizeof key);
            c->tmap_next = (c->tmap_next + 1) % PTXQ_TMAP_CACHE;
            hit = s;
        } else {
            s->used = 0;
            st = ptxq_cuda_fail(c->drv, r, "cuTensorMapEncodeTiled");
        }
    }
    /* NOTE: copied out under the lock: another thread may evict the slot right after. */
    if (!st) memcpy(out, &hit->map, sizeof *out);
    pthread_mutex_unlock(&c->lock);
    return st;
}
