#!/usr/bin/env bash
# Installs dependencies, builds everything (library, server, tests, benchmarks) and runs the
# whole test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
ctest --test-dir build -j "${JOBS:-2}" --output-on-failure --timeout 300
