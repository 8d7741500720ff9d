/* cudrv.c -- dlopen libcuda.so.1 and fetch the driver entry points (see cudrv.h). */
#include "cudrv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static ptxq_cudrv g_drv;
static ptxq_launch_ex_fn g_launch_ex; /* optional: NULL where the driver lacks it */
typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);
static get_proc_fn g_gp; /* cuGetProcAddress_v2, kept for ptxq_cudrv_proc */
static const char *g_why;
static int g_ok;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* name -> slot in ptxq_cudrv, one row per function of PTXQ_CUDRV_FUNCS */
static const struct {
    const char *name;
    size_t offset;
} k_funcs[] = {
#define PTXQ_CUDRV_ROW(f) {#f, offsetof(ptxq_cudrv, f)},
    PTXQ_CUDRV_FUNCS(PTXQ_CUDRV_ROW)
#undef PTXQ_CUDRV_ROW
};

static void load(void) {
    const char *env = getenv("PTXQ_LIBCUDA"); /* tests point this at a missing file */
    void *h = dlopen(env && *env ? env : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        g_why = "libcuda.so.1 not found (no NVIDIA driver on this machine)";
        return;
    }
    get_proc_fn gp = (get_proc_fn)dlsym(h, "cuGetProcAddress_v2");
    g_gp = gp;
    if (!gp) {
        g_why = "libcuda.so.1 has no cuGetProcAddress_v2 (driver older than CUDA 12)";
        return;
    }
    /* The 12.0 ABI of every function; cuda.h's prototypes describe exactly those. */
    for (size_t i = 0; i < sizeof k_funcs / sizeof k_funcs[0]; ++i) {
        void *p = NULL;
        CUdriverProcAddressQueryResult q;
        if (gp(k_funcs[i].name, &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS || !p) {
            g_why = "libcuda.so.1 lacks a driver function ptxq needs (driver older than CUDA 12)";
            return;
        }
        memcpy((char *)&g_drv + k_funcs[i].offset, &p, sizeof p);
    }
    /* Optional entry points (outside the table: a driver without them still loads). */
    {
        void *p = NULL;
        CUdriverProcAddressQueryResult q;
        if (gp("cuLaunchKernelEx", &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &q) == CUDA_SUCCESS && p)
            memcpy(&g_launch_ex, &p, sizeof p);
    }
    CUresult r = g_drv.cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
        g_why = "cuInit: no CUDA device";
        g_ok = 2;
        return;
    }
    if (r != CUDA_SUCCESS) {
        g_why = "cuInit failed (driver present but not usable)";
        return;
    }
    g_ok = 1;
}

const ptxq_cudrv *ptxq_cudrv_get(const char **why) {
    pthread_once(&g_once, load);
    if (g_ok == 1) return &g_drv;
    if (why) *why = g_why;
    return NULL;
}

ptxq_launch_ex_fn ptxq_cudrv_launch_ex(void) {
    pthread_once(&g_once, load);
    return g_ok == 1 ? g_launch_ex : NULL;
}

void *ptxq_cudrv_proc(const char *name) {
    pthread_once(&g_once, load);
    void *p = NULL;
    CUdriverProcAddressQueryResult q;
    if (g_ok != 1 || !g_gp || g_gp(name, &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS)
        return NULL;
    return p;
}

int ptxq_cudrv_no_device(void) {
    pthread_once(&g_once, load);
    return g_ok == 2;
}

int ptxq_cuda_fail(const ptxq_cudrv *d, CUresult r, const char *what) {
    const char *name = NULL, *text = NULL;
    if (d && d->cuGetErrorName) d->cuGetErrorName(r, &name);
    if (d && d->cuGetErrorString) d->cuGetErrorString(r, &text);
    return ptxq_fail(PTXQ_ERR_CUDA, "%s failed: %s (%s)", what, name ? name : "?",
                     text ? text : "?");
}
