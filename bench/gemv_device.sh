#!/usr/bin/env bash
# GEMV on a GPU machine in one call: cmocka from .deps/ (if missing), binaries, test_gemv, benches.
#   bash bench/gemv_device.sh [BIN]     BIN: a folder with prebuilt ptxq and test_gemv (x86-64,
#                                       glibc >= 2.34); without it (or if they do not run) the
#                                       tree is built in build-gdev.
# Then each extra command in $GEMV_BENCH (one per line, e.g. "bench gemv --pdl off,on") is run as
# "$PTXQ <args>", its output in $OUT/bench_<n>.txt. Logs go to $OUT.
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
date -u | tee "$OUT/info.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader | tee -a "$OUT/info.txt"
BIN=${1:-}
if [ -n "$BIN" ] && "$BIN/ptxq" info >/dev/null 2>&1 && ! ldd "$BIN/test_gemv" | grep -q "not found"; then
  PTXQ=$BIN/ptxq TEST=$BIN/test_gemv
  echo "prebuilt binaries from $BIN"
else
  t0=$(date +%s)
  { meson setup build-gdev -Dcudatoolkit="$CUDA_ROOT" >/dev/null && ninja -C build-gdev ptxq tests/test_gemv >"$OUT/build.log" 2>&1; } || { tail -40 "$OUT/build.log"; exit 1; }
  echo "build: $(( $(date +%s) - t0 )) s"
  PTXQ=build-gdev/ptxq TEST=build-gdev/tests/test_gemv
fi
"$PTXQ" info >>"$OUT/info.txt" 2>&1
if [ "${GEMV_TESTS:-1}" = 1 ]; then
  "$TEST" >"$OUT/test_gemv.log" 2>&1
  echo "test_gemv exit $?: $(grep -cE '^\[       OK \]' "$OUT/test_gemv.log") OK, $(grep -cE '^\[  FAILED  \]|^\[  SKIPPED \]' "$OUT/test_gemv.log") failed/skipped"
  grep -E 'FAIL|SKIP|INFO' "$OUT/test_gemv.log" | head -20
fi
n=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  n=$((n + 1))
  echo "== ptxq $line" | tee "$OUT/bench_$n.txt"
  # shellcheck disable=SC2086
  "$PTXQ" $line 2>&1 | tee -a "$OUT/bench_$n.txt" | grep -E '^copy|^(nvfp4|mxfp4|mxfp8) ' 
done <<< "${GEMV_BENCH:-}"
