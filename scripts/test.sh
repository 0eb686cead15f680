#!/usr/bin/env bash
# Installs dependencies, builds everything (library, server, tests, benchmarks), checks the locking
# with clang's thread-safety analysis and runs the whole test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
./scripts/thread-safety.sh
ctest --test-dir build -j "${JOBS:-2}" --output-on-failure --timeout 300
