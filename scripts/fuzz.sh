#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer (clang, ASan + UBSan).
#   scripts/fuzz.sh TARGET [SECONDS]     TARGET: extender_args, quantity, snapshot or config
# Builds in build-fuzz/, grows a working corpus in build-fuzz/corpus/TARGET from the seed corpus
# in fuzz/corpus/TARGET, and writes any crashing input to build-fuzz/crash-*. A crash found this
# way becomes a test: add the input to fuzz/corpus/TARGET (the test suite replays it) and a unit
# test for the bug.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: scripts/fuzz.sh TARGET [SECONDS]}"
seconds="${2:-600}"
if ! command -v clang++ >/dev/null; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get install -y -q clang libclang-rt-dev
fi
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
  -DGPUSCHED_LIBFUZZER=ON -DGPUSCHED_BUILD_TESTS=OFF -DGPUSCHED_BUILD_BENCH=OFF >/dev/null
ninja -C build-fuzz -j "${JOBS:-2}" "fuzz_$target"
mkdir -p "build-fuzz/corpus/$target"
cd build-fuzz
exec "./fuzz/fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
  "corpus/$target" "../fuzz/corpus/$target"
