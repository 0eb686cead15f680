#!/usr/bin/env bash
# The main job: installs dependencies, builds gpusched and serves the embedded demo cluster on
# 127.0.0.1:8888 (arguments are passed to `gpusched serve`, e.g. --snapshot cluster.json).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh gpusched
exec ./build/gpusched serve "$@"
