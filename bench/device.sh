#!/usr/bin/env bash
# One call on a GPU machine: build, run every test (GPU tests included), run the benches, and
# print a short table last. Logs go to $OUT (the device tool brings that folder back).
#   bash bench/device.sh            (cmocka .debs in .deps/ are unpacked if cmocka is missing)
# Environment:
#   TESTS=0            skip the test programs; TESTS="test_gemm test_gemv": only these
#   BENCHES="gemv gemm" which family benches to run (default: quant gemv gemm)
#   EXTRA="bench gemv --pipelined 0,2
#          PTXQ_KERNEL_DIR=.exp/old bench gemm --scaling block"
#                                     more ptxq commands, one per line, after the benches, each
#                                     optionally after VAR=value words (its environment);
#                                     output in $OUT/extra_<n>.txt
#   STEP_TIMEOUT=300   seconds before any one test program or bench command is killed
#   ROUNDS=5           rounds of the two GEMM target rows timed against cuBLASLt in turn
#   PTXQ_TEST_BIG=1    also test_gemv's big-A test (4.3 GB of A; about 3 minutes of host time)
#   PTXQ_TEST_RANDOM=N random configurations a program's test_random_configs draws (test_gemm
#                      40, test_gemv and test_quant 60 by default)
#   PTXQ_TEST_GUARD=1  (the default here, 0 under SANITIZE) the test programs place every device
#                      buffer so that it ends where an unmapped page begins (src/tools/devbuf.c):
#                      a kernel that runs past the end of any buffer faults and fails its test
#   SANITIZE=memcheck  run the test programs under compute-sanitizer with that tool (memcheck,
#                      racecheck, synccheck, initcheck; memcheck adds --leak-check full): any
#                      error it reports fails the program (exit 86); meson's timeouts x 4
# While the benches run, nvidia-smi samples SM clock, power and temperature every 200 ms into
# $OUT/clocks.txt. Its SM clock is the requested one: FP8 GEMMs that it showed at 1980 MHz ran at
# about 1540 (bench gemm measures that clock itself, ptx/clock_stamp.ptx).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/ptxq-out}
mkdir -p "$OUT"
CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
export PATH="$CUDA_ROOT/bin:$PATH"
T=${STEP_TIMEOUT:-300}
if ! pkg-config --exists cmocka 2>/dev/null && [ -d .deps ]; then
  P=/tmp/cmocka-root
  mkdir -p "$P"
  for f in .deps/*.deb; do dpkg -x "$f" "$P"; done
  L=$(dirname "$(find "$P" -name 'libcmocka.so*' | head -1)")
  export CPATH="$P/usr/include:${CPATH:-}" LIBRARY_PATH="$L:${LIBRARY_PATH:-}" LD_LIBRARY_PATH="$L:${LD_LIBRARY_PATH:-}"
  mkdir -p "$P/pc"
  sed "s#^prefix=.*#prefix=$P/usr#" "$(find "$P" -name cmocka.pc | head -1)" > "$P/pc/cmocka.pc"
  export PKG_CONFIG_PATH="$P/pc:${PKG_CONFIG_PATH:-}"
fi
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv,noheader; } | tee "$OUT/info.txt"
B=build-dev
t0=$(date +%s)
{ meson setup "$B" -Dcudatoolkit="$CUDA_ROOT" >/dev/null && ninja -C "$B" >"$OUT/build.log" 2>&1; } || { tail -40 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
trc=skipped
if [ "${TESTS:-1}" != 0 ]; then
  t0=$(date +%s)
  sel=""
  [ "${TESTS:-1}" != 1 ] && sel=$TESTS
  # the guard by default, but not under a sanitizer (whose memcheck sees each guard mapping as one
  # allocation) unless asked for; never exported to the benches below
  if [ -n "${SANITIZE:-}" ]; then guard=${PTXQ_TEST_GUARD:-0}; else guard=${PTXQ_TEST_GUARD:-1}; fi
  unset PTXQ_TEST_GUARD
  echo "test buffers end at an unmapped page: PTXQ_TEST_GUARD=$guard"
  wrap=()
  if [ -n "${SANITIZE:-}" ]; then
    extra=""
    [ "$SANITIZE" = memcheck ] && extra="--leak-check full"
    wrap=(--timeout-multiplier 4 --wrapper "compute-sanitizer --tool $SANITIZE $extra --error-exitcode 86 --print-limit 40")
    echo "tests under compute-sanitizer --tool $SANITIZE $extra"
  fi
  # shellcheck disable=SC2086
  # the guard for the test programs only: the benches below allocate as a caller would
  PTXQ_TEST_GUARD=$guard meson test -C "$B" --print-errorlogs --verbose ${wrap[@]+"${wrap[@]}"} $sel >"$OUT/tests.log" 2>&1
  trc=$?
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|FAIL  |\[ FAIL|Ok:|Fail:|Skipped:|Timeout:' "$OUT/tests.log" | tail -30
  [ -n "${SANITIZE:-}" ] && grep -E 'ERROR SUMMARY|LEAK SUMMARY|LEAKED' "$OUT/tests.log" | sort | uniq -c
  echo "tests: $(( $(date +%s) - t0 )) s"
fi
"$B/ptxq" info | tee -a "$OUT/info.txt"
"$B/ptxq" kernels >"$OUT/kernels.txt" 2>&1
# one nvidia-smi call per sample: a looping nvidia-smi buffers its output and loses it when killed
( while :; do nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader; sleep 0.2; done ) >>"$OUT/clocks.txt" 2>/dev/null &
smi=$!
# why the clock is below its maximum (0x4 software power cap, 0x8 hardware slowdown, 0x20 / 0x40
# software / hardware thermal, 0x1 idle),
# sampled apart so that a field this driver lacks cannot empty clocks.txt
rf=clocks_event_reasons.active
nvidia-smi --query-gpu=$rf --format=csv,noheader >/dev/null 2>&1 || rf=clocks_throttle_reasons.active
( while :; do nvidia-smi -i 0 --query-gpu=timestamp,$rf,power.draw --format=csv,noheader | sed 's/^/R, /'; sleep 0.2; done ) >>"$OUT/clocks.txt" 2>/dev/null &
rsn=$!
# each bench's exit status (a failed check or a crash), for the summary; tee would hide it
bench_rc=""
run_bench() { # name, then the ptxq arguments
  local name=$1
  shift
  timeout "$T" "$B/ptxq" "$@" 2>&1 | tee "$OUT/$name.txt"
  local rc=${PIPESTATUS[0]}
  [ "$rc" != 0 ] && bench_rc="$bench_rc $name=$rc"
}
for fam in ${BENCHES-quant gemv gemm}; do
  case $fam in
    quant) for in in bf16 f32; do
             run_bench "bench_quant_$in" bench quant --in $in --rows 16384 --k 8192
           done
           # the 128x4 scale layout (MXFP8, NVFP4), large and small, beside a memset of its bytes
           run_bench bench_quant_sf128 bench quant --rows 16384 --k 8192 --layout 128x4
           run_bench bench_quant_sf128_small bench quant --rows 129 --k 7168 --layout 128x4 ;;
    *) echo "== bench $fam $(date -u +%T)" >>"$OUT/clocks.txt"
       run_bench "bench_$fam" bench "$fam"
       # GEMV: also the chain of independent calls (PTXQ_GEMV_INDEPENDENT: no PDL wait), and
       # BF16 x (the tensor-core kernels for FP4 A, CUDA cores for MXFP8)
       if [ "$fam" = gemv ]; then
         run_bench bench_gemv_indep bench gemv --pdl indep --read off
         run_bench bench_gemv_bf16 bench gemv --x bf16 --read off
       fi
       # GEMM: the two target rows again, ours and cuBLASLt alternating who goes first (a single
       # shot times ours first, when the GPU is coolest: RESULTS.md, "rounds")
       if [ "$fam" = gemm ]; then
         run_bench bench_gemm_rounds_tensor bench gemm --m 8192 --n 8192 --k 8192 --scaling tensor --rounds ${ROUNDS:-5}
         run_bench bench_gemm_rounds_block bench gemm --m 4096 --n 7168 --k 16384 --scaling block --rounds ${ROUNDS:-5}
         # grouped (MoE) GEMMs on DeepGEMM's shapes, beside the register-store epilogue
         run_bench bench_gemm_moe_contig bench gemm --moe contiguous --store 0,-1 --no-cublas
         run_bench bench_gemm_moe_masked bench gemm --moe masked --store 0,-1 --no-cublas
       fi ;;
  esac
done
n=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  n=$((n + 1))
  echo "== ptxq $line $(date -u +%T)" | tee "$OUT/extra_$n.txt" >>"$OUT/clocks.txt"
  # shellcheck disable=SC2086
  set -- $line
  envs=()
  while [ $# -gt 0 ] && [[ $1 == [A-Z_]*=* ]]; do envs+=("$1"); shift; done
  timeout "$T" env "${envs[@]}" "$B/ptxq" "$@" >>"$OUT/extra_$n.txt" 2>&1
done <<< "${EXTRA:-}"
kill "$smi" "$rsn" 2>/dev/null
# the device tool returns at most 8 files: every log also goes into one archive
tar czf "$OUT/logs.tgz" -C "$OUT" --exclude logs.tgz . 2>/dev/null
echo
echo "==== summary ($(sed -n 2p "$OUT/info.txt"))"
echo "tests exit $trc: $(grep -E '^Ok:|^Fail:|^Skipped:|^Timeout:' "$OUT/tests.log" 2>/dev/null | tr -s ' ' | tr '\n' ' ')"
echo "bench exits: ${bench_rc:- all 0}"
for f in "$OUT"/bench_*.txt "$OUT"/extra_*.txt; do
  [ -f "$f" ] || continue
  echo "-- $(basename "$f"): $(head -1 "$f" | cut -c1-100)"
  grep -E '^(copy|mode|tensor|row|block|mx8|mxfp8|nvfp4|mxfp4|i8|dequant|gemv|gemm|shape|  ?[0-9]|  same-traffic|  read-only|  memset)|rounds' "$f" | cut -c1-300
done
load() { grep -v -e '^==' -e '^R, ' "$OUT/clocks.txt" | awk -F', ' -v c="$1" '$3+0 > 200 {print $c+0}' | sort -n | awk '{v[NR]=$1} END {if (NR) printf "%d / %d / %d", v[1], v[int((NR+1)/2)], v[NR]}'; }
echo "-- under load (power > 200 W), min / median / max: SM clock as nvidia-smi reports it (the requested clock; bench gemm prints the measured one) $(load 2) MHz, power $(load 3) W"
echo "-- clock event reasons under load (power > 200 W; samples per mask; 0x4 software power cap, 0x8 hardware slowdown): $(grep '^R, ' "$OUT/clocks.txt" | awk -F', ' '$4+0 > 200 {print $3}' | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
