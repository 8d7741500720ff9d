/* bench_quant.h -- `ptxq bench quant` and `ptxq check quant`. */
#ifndef PTXQ_BENCH_QUANT_H
#define PTXQ_BENCH_QUANT_H

int bench_quant_main(int argc, char **argv);
int check_quant_main(int argc, char **argv);

#endif
