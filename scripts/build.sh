#!/usr/bin/env bash
# Configures and builds gpusched in build/ (Release, Ninja). Extra arguments are ninja targets.
# GPUSCHED_BUILD_BENCH=OFF leaves out the Google Benchmark programs (scripts/test.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUSCHED_BUILD_BENCH="${GPUSCHED_BUILD_BENCH:-ON}" >/dev/null
ninja -C build -j "${JOBS:-2}" "$@"
