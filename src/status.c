/* status.c -- status names, the per-thread error message, the version. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char t_msg[1024];

int ptxq_fail(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_msg, sizeof t_msg, fmt, ap);
    va_end(ap);
    return status;
}

int ptxq_ok(void) {
    t_msg[0] = 0;
    return PTXQ_OK;
}

const char *ptxq_last_error(void) { return t_msg; }

int ptxq_version(void) {
    return PTXQ_VERSION_MAJOR * 10000 + PTXQ_VERSION_MINOR * 100 + PTXQ_VERSION_PATCH;
}

const char *ptxq_status_name(ptxq_status s) {
    switch (s) {
    case PTXQ_OK: return "PTXQ_OK";
    case PTXQ_ERR_INVALID_ARGUMENT: return "PTXQ_ERR_INVALID_ARGUMENT";
    case PTXQ_ERR_NO_DRIVER: return "PTXQ_ERR_NO_DRIVER";
    case PTXQ_ERR_NO_DEVICE: return "PTXQ_ERR_NO_DEVICE";
    case PTXQ_ERR_UNSUPPORTED_ARCH: return "PTXQ_ERR_UNSUPPORTED_ARCH";
    case PTXQ_ERR_DTYPE: return "PTXQ_ERR_DTYPE";
    case PTXQ_ERR_SHAPE: return "PTXQ_ERR_SHAPE";
    case PTXQ_ERR_STRIDE: return "PTXQ_ERR_STRIDE";
    case PTXQ_ERR_ALIGNMENT: return "PTXQ_ERR_ALIGNMENT";
    case PTXQ_ERR_SCALE_SHAPE: return "PTXQ_ERR_SCALE_SHAPE";
    case PTXQ_ERR_NOT_FOUND: return "PTXQ_ERR_NOT_FOUND";
    case PTXQ_ERR_CUDA: return "PTXQ_ERR_CUDA";
    case PTXQ_ERR_OUT_OF_MEMORY: return "PTXQ_ERR_OUT_OF_MEMORY";
    }
    return "PTXQ_ERR_UNKNOWN";
}
