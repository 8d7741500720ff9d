/* bench_gemv.h -- `ptxq bench gemv` and `ptxq check gemv` (argv[0] is "gemv"). */
#ifndef PTXQ_BENCH_GEMV_H
#define PTXQ_BENCH_GEMV_H

int bench_gemv_main(int argc, char **argv);
int check_gemv_main(int argc, char **argv);

#endif
