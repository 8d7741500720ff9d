#!/usr/bin/env bash
# One call on a GPU machine: build, run every test (GPU tests included), run the benches, and
# print a short table last. Logs go to $OUT (the device tool brings that folder back).
#   bash bench/device.sh            (cmocka .debs in .deps/ are unpacked if cmocka is missing)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/ptxq-out}
mkdir -p "$OUT"
CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
export PATH="$CUDA_ROOT/bin:$PATH"
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
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader | tee "$OUT/info.txt"
B=build-dev
t0=$(date +%s)
{ meson setup "$B" -Dcudatoolkit="$CUDA_ROOT" >/dev/null && ninja -C "$B" >"$OUT/build.log" 2>&1; } || { tail -40 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
meson test -C "$B" --print-errorlogs --verbose >"$OUT/tests.log" 2>&1
trc=$?
grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|FAIL  |\[ FAIL|Ok:|Fail:|Skipped:' "$OUT/tests.log" | tail -30
"$B/ptxq" info | tee -a "$OUT/info.txt"
"$B/ptxq" kernels >"$OUT/kernels.txt" 2>&1
for in in bf16 f32; do
  "$B/ptxq" bench quant --in $in --rows 16384 --k 8192 | tee "$OUT/bench_quant_$in.txt"
done
if "$B/ptxq" help 2>&1 | grep -q gemv; then
  "$B/ptxq" bench gemv | tee "$OUT/bench_gemv.txt"
fi
if "$B/ptxq" help 2>&1 | grep -q gemm; then
  "$B/ptxq" bench gemm 2>&1 | tee "$OUT/bench_gemm.txt"
fi
echo
echo "==== summary ($(head -1 "$OUT/info.txt"))"
echo "tests exit $trc: $(grep -E '^Ok:|^Fail:|^Skipped:' "$OUT/tests.log" | tr '\n' ' ')"
for f in "$OUT"/bench_*.txt; do echo "-- $(basename "$f")"; grep -E '^(copy|mode|tensor|row|block|mx8|nvfp4|mxfp|i8|dequant|gemv|shape|  ?[0-9])' "$f"; done
