/* bench_gemm.h -- `ptxq bench gemm` and `ptxq check gemm` (argv[0] is "gemm"). */
#ifndef PTXQ_BENCH_GEMM_H
#define PTXQ_BENCH_GEMM_H

int bench_gemm_main(int argc, char **argv);
int check_gemm_main(int argc, char **argv);

#endif
