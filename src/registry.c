/* registry.c -- the embedded cubins (gen/ptxq_gen.py table), target selection, overrides. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Exact compute capability -> arch-specific cubin target. An sm_90a cubin runs only on 9.0. */
static const struct {
    int major, minor;
    const char *target;
} k_targets[] = {
    {9, 0, "sm_90a"},
    {10, 0, "sm_100a"},
    {12, 0, "sm_120a"},
};

const char *ptxq_target_for(int cc_major, int cc_minor) {
    for (size_t i = 0; i < sizeof k_targets / sizeof k_targets[0]; ++i) {
        if (k_targets[i].major != cc_major || k_targets[i].minor != cc_minor) continue;
        for (int j = 0; j < ptxq_kernel_table_size; ++j)
            if (!strcmp(ptxq_kernel_table[j]->target, k_targets[i].target))
                return k_targets[i].target;
    }
    return NULL;
}

int ptxq_arch_check(int ordinal, const char *devname, int cc_major, int cc_minor,
                    const char **target) {
    *target = ptxq_target_for(cc_major, cc_minor);
    if (*target) return PTXQ_OK;
    char built[128];
    ptxq_built_targets(built, sizeof built);
    return ptxq_fail(PTXQ_ERR_UNSUPPORTED_ARCH,
                     "unsupported architecture: device %d (%s) is sm_%d%d; this build has cubins "
                     "for %s (each runs only on its exact compute capability)",
                     ordinal, devname, cc_major, cc_minor, built);
}

void ptxq_built_targets(char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof k_targets / sizeof k_targets[0]; ++i) {
        int have = 0;
        for (int j = 0; j < ptxq_kernel_table_size && !have; ++j)
            have = !strcmp(ptxq_kernel_table[j]->target, k_targets[i].target);
        if (!have) continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", k_targets[i].target);
        if (w < 0 || (size_t)w >= n - used) break;
        used += (size_t)w;
    }
}

const ptxq_kernel_entry *ptxq_entry_find(const char *name, const char *target) {
    for (int i = 0; i < ptxq_kernel_table_size; ++i) {
        const ptxq_kernel_entry *e = ptxq_kernel_table[i];
        if (!strcmp(e->name, name) && (!target || !strcmp(e->target, target))) return e;
    }
    return NULL;
}

int ptxq_kernel_count(void) { return ptxq_kernel_table_size; }

static void fill(const ptxq_kernel_entry *e, ptxq_kernel_info *out) {
    out->name = e->name;
    out->family = e->family;
    out->target = e->target;
    out->origin = e->origin;
    out->threads = e->threads;
    out->dynamic_smem = e->dynamic_smem;
    out->registers = e->registers;
    out->static_smem = e->static_smem;
    out->spill_stores = e->spill_stores;
    out->spill_loads = e->spill_loads;
    out->stack_frame = e->stack_frame;
    out->wgmma_serialized = e->wgmma_serialized;
    out->allowance = e->allowance;
    out->cubin = e->cubin;
    out->cubin_size = e->cubin_size;
}

ptxq_status ptxq_kernel_get(int index, ptxq_kernel_info *out) {
    if (!out) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "ptxq_kernel_get: out is NULL");
    if (index < 0 || index >= ptxq_kernel_table_size)
        return ptxq_fail(PTXQ_ERR_NOT_FOUND, "ptxq_kernel_get: index %d not in [0, %d)", index,
                         ptxq_kernel_table_size);
    fill(ptxq_kernel_table[index], out);
    return ptxq_ok();
}

ptxq_status ptxq_kernel_find(const char *name, const char *target, ptxq_kernel_info *out) {
    if (!name || !out) return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT, "ptxq_kernel_find: NULL argument");
    const ptxq_kernel_entry *e = ptxq_entry_find(name, target);
    if (!e)
        return ptxq_fail(PTXQ_ERR_NOT_FOUND, "no kernel '%s'%s%s", name, target ? " for " : "",
                         target ? target : "");
    fill(e, out);
    return ptxq_ok();
}

int ptxq_override_too_long(const char *name) {
    const char *dir = getenv("PTXQ_KERNEL_DIR");
    return dir && *dir && name && strlen(dir) + strlen(name) + 8 > PTXQ_OVERRIDE_PATH_MAX;
}

/* the integer after " key=" in line [p, end), or -1 */
static long header_value(const char *p, const char *end, const char *key) {
    size_t n = strlen(key);
    for (; p + n + 2 <= end; ++p)
        if (p[0] == ' ' && !strncmp(p + 1, key, n) && p[n + 1] == '=') {
            char *stop = NULL;
            long v = strtol(p + n + 2, &stop, 10);
            return stop != p + n + 2 ? v : -1;
        }
    return -1;
}

int ptxq_override_check(const char *name, int threads, int dynamic_smem, const char *text) {
    const char *line = text ? strstr(text, "// ptxq: name=") : NULL;
    if (!line) return ptxq_ok();
    const char *end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    long t = header_value(line, end, "threads"), s = header_value(line, end, "smem");
    if ((t >= 0 && t != threads) || s > dynamic_smem)
        return ptxq_fail(PTXQ_ERR_INVALID_ARGUMENT,
                         "override of %s says threads=%ld smem=%ld in its header; the build's kernel "
                         "launches with threads=%d smem=%d, which the override would get: rebuild "
                         "to change them",
                         name, t, s, threads, dynamic_smem);
    return ptxq_ok();
}

const char *ptxq_override_path(const char *name, char *buf, size_t bufsize) {
    const char *dir = getenv("PTXQ_KERNEL_DIR");
    if (!dir || !*dir || !name || !buf || bufsize < 1) return NULL;
    static const char *const exts[] = {".cubin", ".ptx"};
    for (int i = 0; i < 2; ++i) {
        int w = snprintf(buf, bufsize, "%s/%s%s", dir, name, exts[i]);
        if (w > 0 && (size_t)w < bufsize && access(buf, R_OK) == 0) return buf;
    }
    return NULL;
}
