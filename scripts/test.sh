#!/usr/bin/env bash
# Installs dependencies, builds gpusched and its tests (not the benchmarks, which no test runs:
# scripts/build.sh builds them; leaving them out keeps CI from a clean clone under 10 minutes on 2
# cores), checks the locking with clang's thread-safety analysis and runs the whole test suite
# with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
GPUSCHED_BUILD_BENCH=OFF ./scripts/build.sh
./scripts/thread-safety.sh
ctest --test-dir build -j "${JOBS:-2}" --output-on-failure --timeout 300
