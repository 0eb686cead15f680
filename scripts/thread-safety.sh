#!/usr/bin/env bash
# Checks every source file of gpusched with clang's thread-safety analysis, as errors: every member
# marked GPUSCHED_GUARDED_BY is touched only with its mutex held, and every function annotated
# GPUSCHED_REQUIRES / GPUSCHED_EXCLUDES is called accordingly (common/mutex.h). Syntax only, no
# code is generated, so it adds no build. scripts/test.sh runs it; clang comes from scripts/deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-std=c++20 -fsyntax-only -Werror -Wthread-safety -Wthread-safety-beta
       -Iinclude -Isrc -DGPUSCHED_VERSION=\"check\")
find src -name '*.cc' -print0 | sort -z |
  xargs -0 -P "${JOBS:-2}" -n 4 clang++ "${flags[@]}"
echo "thread-safety: $(find src -name '*.cc' | wc -l) files clean"
