/* cli.h -- what the `ptxq` command's files share (cli.c: info, kernels, bench / check, main;
 * cli_sass.c: sass). */
#ifndef PTXQ_CLI_H
#define PTXQ_CLI_H

#include "ptxq.h"

/* Registry entry i into k; 1 if it exists. */
int cli_kernel_at(int i, ptxq_kernel_info *k);
/* --name VALUE: returns 1 if argv[*i] was it (value in *out, *i past it), 0 if not, -1 if VALUE
 * is missing. */
int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **out);
/* ptxq sass (argv[0] is "sass"); the process's exit status. */
int cli_sass(int argc, char **argv);

#endif
