/* bench_common.c -- see bench_common.h. */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h" /* ptxq_cudrv_launch_ex: the PDL launch the library's kernels use */

typedef struct copy_arg {
    ptxq_dev *d;
    uint64_t dst, src;
    size_t bytes;
} copy_arg;

static int do_copy(void *p) {
    copy_arg *a = p;
    return a->d->drv->cuMemcpyDtoDAsync((CUdeviceptr)a->dst, (CUdeviceptr)a->src, a->bytes,
                                        a->d->stream) != CUDA_SUCCESS;
}

int bench_copy_run(ptxq_dev *d, size_t bytes, int reps, bench_copy *out) {
    copy_arg a = {d, dev_alloc(d, bytes), dev_alloc(d, bytes), bytes};
    dev_fill(d, a.src, 0x3C, bytes);
    out->bytes = bytes;
    out->ms = dev_time_ms(d, do_copy, &a, 3, reps);
    out->gbps = out->ms > 0 ? 2.0 * (double)bytes / (out->ms * 1e6) : 0;
    dev_free(d, a.dst);
    dev_free(d, a.src);
    return out->ms > 0 ? 0 : -1;
}

typedef struct chain_arg {
    ptxq_dev *d;
    uint64_t dst, src;
    size_t bytes, pitch;
    int n, batch;
} chain_arg;

static int do_chain(void *p) {
    chain_arg *a = p;
    for (int i = 0; i < a->batch; ++i) {
        size_t o = (size_t)(i % a->n) * a->pitch;
        if (a->d->drv->cuMemcpyDtoDAsync((CUdeviceptr)(a->dst + o), (CUdeviceptr)(a->src + o),
                                         a->bytes, a->d->stream) != CUDA_SUCCESS)
            return 1;
    }
    return 0;
}

/* The rotation of a chain: n buffers of `pitch` (bytes rounded up to 256), each slot holding
 * `per` of them, so that the data between two uses of one slot exceeds 4 x L2 (at least 2 slots);
 * batch rounded up to whole rotations, so every batch starts where the last one left off.
 * -1 where the slots would exceed a third of the device memory. */
static int chain_rotation(const ptxq_dev *d, size_t bytes, size_t per, size_t *pitch, int *n,
                          int *batch) {
    *pitch = (bytes + 255) / 256 * 256;
    size_t slot = per * *pitch, want = 4 * d->info.l2_bytes;
    *n = (int)((want + slot - 1) / slot);
    if (*n < 2) *n = 2;
    if (slot * (size_t)*n > d->info.global_mem_bytes / 3) return -1;
    *batch = (*batch + *n - 1) / *n * *n;
    return 0;
}

int bench_copy_chain(ptxq_dev *d, size_t bytes, int batch, int reps, bench_copy *out) {
    memset(out, 0, sizeof *out);
    if (bytes == 0 || batch < 1) return -1;
    size_t pitch;
    int n;
    if (chain_rotation(d, bytes, 2, &pitch, &n, &batch)) return -1; /* too large to hold */
    chain_arg a = {d, dev_alloc(d, pitch * (size_t)n), dev_alloc(d, pitch * (size_t)n), bytes,
                   pitch, n, batch};
    dev_fill(d, a.src, 0x3C, pitch * (size_t)n);
    out->bytes = bytes;
    double ms = dev_time_ms(d, do_chain, &a, 2, reps);
    out->ms = ms > 0 ? ms / batch : -1;
    out->gbps = ms > 0 ? 2.0 * (double)bytes / (out->ms * 1e6) : 0;
    dev_free(d, a.dst);
    dev_free(d, a.src);
    return ms > 0 ? 0 : -1;
}

typedef struct read_arg {
    ptxq_dev *d;
    CUfunction fn;
    ptxq_launch_ex_fn ex;
    uint64_t src, out;
    size_t bytes, pitch;
    unsigned ctas, loads, threads;
    int n, batch;
} read_arg;

static int do_read(void *p) {
    read_arg *a = p;
    for (int i = 0; i < a->batch; ++i) {
        uint64_t src = a->src + (uint64_t)(i % a->n) * a->pitch, n16 = (a->bytes + 15) / 16;
        void *params[] = {&src, &n16, &a->out, &a->loads};
        CUlaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = a->ctas;
        cfg.gridDimY = cfg.gridDimZ = 1;
        cfg.blockDimX = a->threads;
        cfg.blockDimY = cfg.blockDimZ = 1;
        cfg.hStream = a->d->stream;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        if (a->ex(&cfg, a->fn, params, NULL) != CUDA_SUCCESS) return 1;
    }
    return 0;
}

int bench_read_chain(ptxq_dev *d, size_t bytes, int batch, int reps, unsigned ctas, unsigned loads,
                     unsigned threads, bench_copy *out, char *why, size_t whyn) {
    memset(out, 0, sizeof *out);
    snprintf(why, whyn, "%s", "");
    if (bytes == 0 || batch < 1) {
        snprintf(why, whyn, "nothing to read");
        return -1;
    }
    ptxq_kernel_info k;
    read_arg a;
    memset(&a, 0, sizeof a);
    a.ex = ptxq_cudrv_launch_ex();
    if (!a.ex) {
        snprintf(why, whyn, "the driver has no cuLaunchKernelEx");
        return -1;
    }
    if (ptxq_kernel_find("read_stream", d->info.target, &k) != PTXQ_OK) {
        snprintf(why, whyn, "no read_stream cubin for %s", d->info.target);
        return -1;
    }
    a.batch = batch;
    if (chain_rotation(d, bytes, 1, &a.pitch, &a.n, &a.batch)) {
        snprintf(why, whyn, "%d copies of %zu bytes exceed a third of the device memory", a.n,
                 bytes);
        return -1;
    }
    CUmodule mod = NULL;
    const ptxq_cudrv *D = d->drv;
    if (D->cuModuleLoadData(&mod, k.cubin) != CUDA_SUCCESS ||
        D->cuModuleGetFunction(&a.fn, mod, "read_stream") != CUDA_SUCCESS) {
        snprintf(why, whyn, "cannot load read_stream");
        if (mod) D->cuModuleUnload(mod);
        return -1;
    }
    a.d = d;
    a.bytes = bytes;
    a.loads = loads >= 1 && loads <= 8 ? loads : 8;
    a.threads = threads == 32 || threads == 64 || threads == 128 ? threads : 256; /* .maxntid 256 */
    a.ctas = ctas ? ctas : 12u * (unsigned)(d->info.sm_count > 0 ? d->info.sm_count : 1);
    a.src = dev_alloc(d, a.pitch * (size_t)a.n);
    a.out = dev_alloc(d, 16);
    dev_fill(d, a.src, 0x3C, a.pitch * (size_t)a.n);
    out->bytes = bytes;
    double ms = dev_time_ms(d, do_read, &a, 2, reps);
    out->ms = ms > 0 ? ms / a.batch : -1;
    out->gbps = ms > 0 ? (double)bytes / (out->ms * 1e6) : 0;
    dev_free(d, a.out);
    dev_free(d, a.src);
    D->cuModuleUnload(mod);
    if (ms <= 0) snprintf(why, whyn, "launch failed");
    return ms > 0 ? 0 : -1;
}

int bench_pci_bus_id(ptxq_dev *d, char *out, size_t n) {
    CUdevice dev;
    int dom = 0, bus = 0, slot = 0;
    const ptxq_cudrv *D = d->drv;
    if (D->cuDeviceGet(&dev, d->info.ordinal) != CUDA_SUCCESS ||
        D->cuDeviceGetAttribute(&dom, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev) != CUDA_SUCCESS ||
        D->cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev) != CUDA_SUCCESS ||
        D->cuDeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev) != CUDA_SUCCESS)
        return -1;
    int k = snprintf(out, n, "%08x:%02x:%02x.0", dom, bus, slot);
    return k > 0 && (size_t)k < n ? 0 : -1;
}

double bench_datasheet_gbps(const char *name) {
    if (strstr(name, "H200")) return 4800.0;
    if (strstr(name, "H100") && strstr(name, "PCIe")) return 2000.0;
    if (strstr(name, "H100")) return 3350.0;
    if (strstr(name, "B200")) return 8000.0;
    return 0.0;
}

const char *bench_opt(int argc, char **argv, const char *name, const char *def) {
    for (int i = 0; i + 1 < argc; ++i)
        if (!strcmp(argv[i], name)) return argv[i + 1];
    return def;
}

long long bench_opt_int(int argc, char **argv, const char *name, long long def) {
    const char *v = bench_opt(argc, argv, name, NULL);
    return v ? strtoll(v, NULL, 0) : def;
}

int bench_flag(int argc, char **argv, const char *name) {
    for (int i = 0; i < argc; ++i)
        if (!strcmp(argv[i], name)) return 1;
    return 0;
}

int bench_open(ptxq_dev *d) {
    char why[512];
    int rc = dev_open(d, why, sizeof why);
    if (rc) fprintf(stderr, "no device: %s\n", why);
    return rc;
}

int bench_spin_open(ptxq_dev *d, bench_spin *s, unsigned long long ns) {
    memset(s, 0, sizeof *s);
    ptxq_kernel_info k;
    if (ptxq_kernel_find("spin_ns", d->info.target, &k) != PTXQ_OK) return -1;
    const ptxq_cudrv *D = d->drv;
    if (D->cuModuleLoadData(&s->mod, k.cubin) != CUDA_SUCCESS) return -1;
    if (D->cuModuleGetFunction(&s->fn, s->mod, "spin_ns") != CUDA_SUCCESS) {
        D->cuModuleUnload(s->mod);
        memset(s, 0, sizeof *s);
        return -1;
    }
    s->d = d;
    s->ns = ns;
    return 0;
}

void bench_spin_close(bench_spin *s) {
    if (s->d) s->d->drv->cuModuleUnload(s->mod);
    memset(s, 0, sizeof *s);
}

int bench_spin_lead(void *p) {
    bench_spin *s = p;
    void *params[] = {&s->ns};
    return s->d->drv->cuLaunchKernel(s->fn, 1, 1, 1, 32, 1, 1, 0, s->d->stream, params, NULL) !=
           CUDA_SUCCESS;
}
