/* kernel_entry.h -- one embedded cubin, as gen/assemble.py writes it. Not installed. */
#ifndef PTXQ_KERNEL_ENTRY_H
#define PTXQ_KERNEL_ENTRY_H

#include <stddef.h>

typedef struct ptxq_kernel_entry {
    const char *name, *family, *target, *origin;
    int threads, dynamic_smem;
    int registers, static_smem, spill_stores, spill_loads, stack_frame, wgmma_serialized;
    const char *allowance;
    const unsigned char *cubin;
    size_t cubin_size;
} ptxq_kernel_entry;

extern const ptxq_kernel_entry *const ptxq_kernel_table[];
extern const int ptxq_kernel_table_size;

#endif
