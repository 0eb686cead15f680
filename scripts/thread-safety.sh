#!/usr/bin/env bash
# Checks gpusched's source files with clang's thread-safety analysis, as errors: every member
# marked GPUSCHED_GUARDED_BY is touched only with its mutex held, and every function annotated
# GPUSCHED_REQUIRES / GPUSCHED_EXCLUDES is called accordingly (common/mutex.h). Syntax only, no
# code is generated. scripts/test.sh runs it after the build; clang comes from scripts/deps.sh.
#
# The annotations exist only where common/mutex.h is included, so after a build (its dependency
# records in build/) only the sources that include it, directly or not, are checked: the others
# cannot break the analysis. Without a build, or with --all, every source is checked.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-std=c++20 -fsyntax-only -Werror -Wthread-safety -Wthread-safety-beta
       -Iinclude -Isrc -DGPUSCHED_VERSION=\"check\")

all_sources() { find src -name '*.cc' | sort; }

# The sources whose objects depend on common/mutex.h, by ninja's dependency records.
locking_sources() {
  ninja -C build -t deps 2>/dev/null |
    awk '/^[^ ].*\.o: #deps/ { obj = $1 } /include\/gpusched\/common\/mutex\.h$/ { print obj }' |
    sed -n 's|^CMakeFiles/[^/]*\.dir/\(src/.*\.cc\)\.o:$|\1|p' | sort -u
}

sources=""
if [ "${1:-}" != "--all" ] && [ -f build/build.ninja ]; then
  sources=$(locking_sources)
fi
scope="that include common/mutex.h"
if [ -z "$sources" ]; then
  sources=$(all_sources)
  scope="(all)"
fi
printf '%s\0' $sources | xargs -0 -P "${JOBS:-2}" -n 4 clang++ "${flags[@]}"
echo "thread-safety: $(echo "$sources" | wc -l) of $(all_sources | wc -l) files $scope clean"
