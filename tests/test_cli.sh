#!/usr/bin/env bash
# test_cli.sh -- the `ptxq` command's exit statuses and output shape, CPU only: help, refusals,
# and (where nvdisasm exists, else exit 77: meson's SKIP) sass --kloop / --diff / --kloops on
# embedded kernels and on the build's own cubin files. Usage: test_cli.sh PTXQ (meson passes the
# binary; PTXQ_BUILD_GEN_DIR names the build's gen/ directory).
set -u
P=$1
G=${PTXQ_BUILD_GEN_DIR:?PTXQ_BUILD_GEN_DIR is not set}
fails=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# expect STATUS PATTERN -- CMD...: CMD's exit status is STATUS and its stdout + stderr match the
# extended regex PATTERN
expect() {
  local want=$1 pat=$2
  shift 3
  "$@" >"$T/out" 2>&1
  local rc=$?
  if [ "$rc" != "$want" ] || ! grep -qE -- "$pat" "$T/out"; then
    echo "FAIL: $* -> exit $rc (want $want), output (want /$pat/):"
    head -5 "$T/out"
    fails=$((fails + 1))
  else
    echo "ok: $* -> $rc"
  fi
}
expect 0 'sass --kloops DIR' -- "$P" help
expect 2 'unknown command' -- "$P" frobnicate
expect 2 "unknown kernel 'nosuch'" -- "$P" sass nosuch
expect 2 'takes no other option' -- "$P" sass gemm_e4m3_e4m3_tensor_n192_tsg --kloop x --diff y
expect 2 'takes no kernel' -- "$P" sass gemm_e4m3_e4m3_tensor_n192_tsg --kloops "$T"
expect 2 'cannot open directory' -- "$P" sass --kloops "$T/none"
if ! "$P" sass gemm_e4m3_e4m3_tensor_n192_tsg --target sm_90a --loops >"$T/probe" 2>&1; then
  if grep -q 'nvdisasm not found' "$T/probe"; then
    echo "SKIPPED: no nvdisasm here: $(head -1 "$T/probe")"
    [ "$fails" = 0 ] && exit 77
    exit 1
  fi
  echo "FAIL: ptxq sass --loops: $(head -3 "$T/probe")"
  exit 1
fi
A=gemm_e4m3_e4m3_tensor_n192_tsg
B=gemm_e4m3_e4m3_row_n192_tsg
expect 0 'opcode sequences equal' -- "$P" sass $A --target sm_90a --kloop $A
expect 1 'opcode sequences differ: [0-9]+ edits' -- "$P" sass $A --target sm_90a --kloop $B
expect 1 'net per opcode' -- "$P" sass $A --target sm_90a --diff $B
expect 2 'no loop of quant_i8rowl_bf16_s8 holds' -- "$P" sass quant_i8rowl_bf16_s8 --target sm_90a --kloop $A
# a directory of the build's own cubins: every K loop equal; a file of no embedded kernel and a
# kernel without a K loop are listed, not compared
mkdir "$T/d"
cp "$G/$A.sm_90a.cubin" "$T/d/$A.cubin"
cp "$G/$B.sm_90a.cubin" "$T/d/$B.cubin"
cp "$G/quant_i8rowl_bf16_s8.sm_90a.cubin" "$T/d/quant_i8rowl_bf16_s8.cubin"
echo junk >"$T/d/junk.cubin"
expect 0 '2 compared: 2 equal, 0 differ .*; 2 skipped, 0 failed' -- "$P" sass --kloops "$T/d" --target sm_90a
expect 0 'junk +skipped: no sm_90a kernel' -- "$P" sass --kloops "$T/d" --target sm_90a
expect 0 'quant_i8rowl_bf16_s8 +skipped: no loop of .* holds' -- "$P" sass --kloops "$T/d" --target sm_90a
# the row kernel's cubin saved under the tensor kernel's file name: its own (ELF) name decides,
# and the line names the file too
rm "$T/d/$A.cubin"
cp "$G/$B.sm_90a.cubin" "$T/d/$A.cubin"
expect 0 "$B \\($A.cubin\\) +[0-9]+ @[0-9]+ +[0-9]+ @[0-9]+ +0" -- "$P" sass --kloops "$T/d" --target sm_90a
# another K loop under a kernel's name: row_n128_tsg's cubin with its name bytes rewritten to
# row_n192_tsg (same length), so this build's row_n192_tsg loop meets n128's: they differ
mkdir "$T/e"
perl -pe 's/row_n128_tsg/row_n192_tsg/g' "$G/gemm_e4m3_e4m3_row_n128_tsg.sm_90a.cubin" >"$T/e/x.cubin"
expect 1 'row_n192_tsg \(x.cubin\) .* size differs' -- "$P" sass --kloops "$T/e" --target sm_90a
# nothing comparable, or a file that cannot be read: 2
rm "$T/e/x.cubin"
cp "$G/quant_i8rowl_bf16_s8.sm_90a.cubin" "$T/e/q.cubin"
expect 2 '0 compared: .*1 skipped' -- "$P" sass --kloops "$T/e" --target sm_90a
: >"$T/d/empty.cubin"
expect 2 '1 failed' -- "$P" sass --kloops "$T/d" --target sm_90a
echo "$fails failed"
[ "$fails" = 0 ]
