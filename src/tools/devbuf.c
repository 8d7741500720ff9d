/* devbuf.c -- device plumbing for tools and tests (see devbuf.h). */
#include "devbuf.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const ptxq_dev *d, CUresult r, const char *what) {
    const char *name = "?";
    if (d && d->drv) d->drv->cuGetErrorName(r, &name);
    fprintf(stderr, "fatal: %s failed: %s\n", what, name);
    exit(3);
}

int dev_open(ptxq_dev *d, char *why, size_t whyn) {
    memset(d, 0, sizeof *d);
    ptxq_status st = ptxq_context_create(0, &d->ctx);
    if (st != PTXQ_OK) {
        snprintf(why, whyn, "%s: %s", ptxq_status_name(st), ptxq_last_error());
        return st == PTXQ_ERR_NO_DRIVER || st == PTXQ_ERR_NO_DEVICE ? 1 : -1;
    }
    d->drv = ptxq_cudrv_get(NULL);
    ptxq_context_info(d->ctx, &d->info);
    ptxq_context_make_current(d->ctx);
    CUresult r = d->drv->cuStreamCreate(&d->stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
        snprintf(why, whyn, "cuStreamCreate failed (%d)", (int)r);
        ptxq_context_destroy(d->ctx);
        return -1;
    }
    return 0;
}

void dev_close(ptxq_dev *d) {
    if (!d->ctx) return;
    ptxq_context_make_current(d->ctx);
    d->drv->cuStreamDestroy(d->stream);
    ptxq_context_destroy(d->ctx);
    memset(d, 0, sizeof *d);
}

/* Guard mode (PTXQ_TEST_GUARD=1, or =A: the buffers' alignment A, a power of two, default 16, the
 * library's strictest requirement): every dev_alloc buffer is placed by CUDA's virtual memory
 * management so that it ends where an unmapped granule begins (its size rounded up to A), so a
 * kernel that reads or writes past the end of any buffer faults instead of touching its
 * neighbour. The entry points come from the library's driver loader (ptxq_cudrv_proc). */
typedef struct guard_map {
    uint64_t p, va;
    size_t map, gran;
    CUmemGenericAllocationHandle h;
} guard_map;

static struct {
    pthread_once_t once;
    pthread_mutex_t mu;
    int on;
    size_t align;
    guard_map *m;
    size_t n, cap;
    __typeof__(cuMemAddressReserve) *reserve;
    __typeof__(cuMemAddressFree) *addr_free;
    __typeof__(cuMemCreate) *create;
    __typeof__(cuMemRelease) *release;
    __typeof__(cuMemMap) *map;
    __typeof__(cuMemUnmap) *unmap;
    __typeof__(cuMemSetAccess) *access;
    __typeof__(cuMemGetAllocationGranularity) *granularity;
} g_guard = {.once = PTHREAD_ONCE_INIT, .mu = PTHREAD_MUTEX_INITIALIZER};

static void guard_init(void) {
    const char *e = getenv("PTXQ_TEST_GUARD");
    if (!e || !*e || !strcmp(e, "0")) return;
    long a = atol(e);
    g_guard.align = a > 1 && (a & (a - 1)) == 0 ? (size_t)a : 16;
    *(void **)&g_guard.reserve = ptxq_cudrv_proc("cuMemAddressReserve");
    *(void **)&g_guard.addr_free = ptxq_cudrv_proc("cuMemAddressFree");
    *(void **)&g_guard.create = ptxq_cudrv_proc("cuMemCreate");
    *(void **)&g_guard.release = ptxq_cudrv_proc("cuMemRelease");
    *(void **)&g_guard.map = ptxq_cudrv_proc("cuMemMap");
    *(void **)&g_guard.unmap = ptxq_cudrv_proc("cuMemUnmap");
    *(void **)&g_guard.access = ptxq_cudrv_proc("cuMemSetAccess");
    *(void **)&g_guard.granularity = ptxq_cudrv_proc("cuMemGetAllocationGranularity");
    g_guard.on = g_guard.reserve && g_guard.addr_free && g_guard.create && g_guard.release &&
                 g_guard.map && g_guard.unmap && g_guard.access && g_guard.granularity;
    if (!g_guard.on) fprintf(stderr, "PTXQ_TEST_GUARD: no driver or no VMM entry points, ignored\n");
}

int dev_guarded(void) {
    pthread_once(&g_guard.once, guard_init);
    return g_guard.on;
}

static uint64_t guard_alloc(ptxq_dev *d, size_t bytes, size_t align) {
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = d->info.ordinal;
    guard_map g = {0};
    CUresult r = g_guard.granularity(&g.gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    if (r != CUDA_SUCCESS) die(d, r, "cuMemGetAllocationGranularity");
    if (align < g_guard.align) align = g_guard.align;
    size_t body = (bytes + align - 1) & ~(align - 1);
    g.map = (body + g.gran - 1) / g.gran * g.gran;
    CUdeviceptr va = 0;
    /* the mapped granules, then one left unmapped: the guard */
    if ((r = g_guard.reserve(&va, g.map + g.gran, 0, 0, 0)) != CUDA_SUCCESS) die(d, r, "cuMemAddressReserve");
    if ((r = g_guard.create(&g.h, g.map, &prop, 0)) != CUDA_SUCCESS) die(d, r, "cuMemCreate");
    if ((r = g_guard.map(va, g.map, 0, g.h, 0)) != CUDA_SUCCESS) die(d, r, "cuMemMap");
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if ((r = g_guard.access(va, g.map, &acc, 1)) != CUDA_SUCCESS) die(d, r, "cuMemSetAccess");
    g.va = (uint64_t)va;
    g.p = g.va + g.map - body;
    pthread_mutex_lock(&g_guard.mu);
    if (g_guard.n == g_guard.cap) {
        size_t cap = g_guard.cap ? 2 * g_guard.cap : 256;
        guard_map *m = realloc(g_guard.m, cap * sizeof *m);
        if (!m) {
            fprintf(stderr, "fatal: out of host memory\n");
            exit(3);
        }
        g_guard.m = m;
        g_guard.cap = cap;
    }
    g_guard.m[g_guard.n++] = g;
    pthread_mutex_unlock(&g_guard.mu);
    return g.p;
}

static int guard_free(uint64_t p) {
    guard_map g = {0};
    int found = 0;
    pthread_mutex_lock(&g_guard.mu);
    for (size_t i = 0; i < g_guard.n; ++i)
        if (g_guard.m[i].p == p) {
            g = g_guard.m[i];
            g_guard.m[i] = g_guard.m[--g_guard.n];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&g_guard.mu);
    if (!found) return 0;
    g_guard.unmap((CUdeviceptr)g.va, g.map);
    g_guard.release(g.h);
    g_guard.addr_free((CUdeviceptr)g.va, g.map + g.gran);
    return 1;
}

uint64_t dev_alloc_aligned(ptxq_dev *d, size_t bytes, size_t align) {
    CUdeviceptr p = 0;
    ptxq_context_make_current(d->ctx);
    if (dev_guarded()) return guard_alloc(d, bytes ? bytes : 1, align);
    /* cuMemAlloc aligns to 256 bytes: enough for every caller here */
    CUresult r = d->drv->cuMemAlloc(&p, bytes ? bytes : 1);
    if (r != CUDA_SUCCESS) die(d, r, "cuMemAlloc");
    return (uint64_t)p;
}

uint64_t dev_alloc(ptxq_dev *d, size_t bytes) { return dev_alloc_aligned(d, bytes, 1); }

void dev_free(ptxq_dev *d, uint64_t p) {
    if (!p) return;
    ptxq_context_make_current(d->ctx);
    if (dev_guarded() && guard_free(p)) return;
    d->drv->cuMemFree((CUdeviceptr)p);
}

void dev_upload(ptxq_dev *d, uint64_t dst, const void *src, size_t bytes) {
    dev_sync(d);
    CUresult r = d->drv->cuMemcpyHtoD((CUdeviceptr)dst, src, bytes);
    if (r != CUDA_SUCCESS) die(d, r, "cuMemcpyHtoD");
}

void dev_download(ptxq_dev *d, void *dst, uint64_t src, size_t bytes) {
    dev_sync(d);
    CUresult r = d->drv->cuMemcpyDtoH(dst, (CUdeviceptr)src, bytes);
    if (r != CUDA_SUCCESS) die(d, r, "cuMemcpyDtoH");
}

void dev_fill(ptxq_dev *d, uint64_t dst, unsigned char byte, size_t bytes) {
    dev_sync(d);
    CUresult r = d->drv->cuMemsetD8((CUdeviceptr)dst, byte, bytes);
    if (r != CUDA_SUCCESS) die(d, r, "cuMemsetD8");
    dev_sync(d);
}

void dev_sync(ptxq_dev *d) {
    CUresult r = d->drv->cuStreamSynchronize(d->stream);
    if (r != CUDA_SUCCESS) die(d, r, "cuStreamSynchronize");
    r = d->drv->cuCtxSynchronize();
    if (r != CUDA_SUCCESS) die(d, r, "cuCtxSynchronize");
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double dev_time_ms(ptxq_dev *d, int (*fn)(void *), void *arg, int warmup, int reps) {
    return dev_time_flushed_ms(d, fn, arg, warmup, reps, 0, 0);
}

typedef struct flush_lead {
    ptxq_dev *d;
    uint64_t flush;
    size_t words;
} flush_lead;

static int memset_lead(void *p) {
    const flush_lead *f = p;
    return f->d->drv->cuMemsetD32Async((CUdeviceptr)f->flush, 0, f->words, f->d->stream) != 0;
}

double dev_time_flushed_ms(ptxq_dev *d, int (*fn)(void *), void *arg, int warmup, int reps,
                           uint64_t flush, size_t flush_words) {
    flush_lead f = {d, flush, flush_words};
    return dev_time_lead_ms(d, fn, arg, warmup, reps, flush_words ? memset_lead : NULL, &f);
}

double dev_time_lead_ms(ptxq_dev *d, int (*fn)(void *), void *arg, int warmup, int reps,
                        int (*lead)(void *), void *lead_arg) {
    CUevent e0, e1;
    const ptxq_cudrv *D = d->drv;
    if (reps < 1) reps = 1;
    if (D->cuEventCreate(&e0, CU_EVENT_DEFAULT)) return -1;
    if (D->cuEventCreate(&e1, CU_EVENT_DEFAULT)) {
        D->cuEventDestroy(e0);
        return -1;
    }
    double *t = malloc(sizeof *t * (size_t)reps);
    double med = -1;
    int bad = t == NULL;
    for (int i = 0; i < warmup && !bad; ++i) bad = fn(arg) != 0;
    if (!bad) dev_sync(d);
    for (int i = 0; i < reps && !bad; ++i) {
        float ms = 0;
        if (lead && lead(lead_arg)) {
            bad = 1;
            break;
        }
        D->cuEventRecord(e0, d->stream);
        if (fn(arg)) {
            bad = 1;
            break;
        }
        D->cuEventRecord(e1, d->stream);
        D->cuEventSynchronize(e1);
        D->cuEventElapsedTime(&ms, e0, e1);
        t[i] = ms;
    }
    if (!bad) {
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        med = t[reps / 2];
    }
    free(t);
    D->cuEventDestroy(e0);
    D->cuEventDestroy(e1);
    return med;
}

uint64_t rng_next(rng64 *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

double rng_uniform(rng64 *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

double rng_normal(rng64 *r) {
    double u = rng_uniform(r), v = rng_uniform(r);
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

int rng_pick(rng64 *r, int n) { return (int)(rng_uniform(r) * n); }

int rng_chance(rng64 *r, int one_in) { return rng_pick(r, one_in) == 0; }

int64_t rng_span(rng64 *r, int64_t lo, int64_t hi) {
    return lo + (int64_t)(rng_uniform(r) * (double)(hi - lo + 1));
}
