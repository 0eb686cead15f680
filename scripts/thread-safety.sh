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
# The standard library, fmt and the two headers most checked files read (the inventory's, RapidJSON's
# via json.h), parsed once into a precompiled header that every check reads: they were most of each
# file's parse time (89 s for the check before, 54 s after, on 2 cores). Diagnostics inside those
# headers come from building the precompiled header, with the same flags.
pch_dir=$(mktemp -d)
trap 'rm -rf "$pch_dir"' EXIT
printf '#include <%s>\n' algorithm chrono cstdint functional map memory optional set span string string_view \
  vector fmt/format.h gpusched/inventory/inventory.h gpusched/json/json.h > "$pch_dir/common.h"
pch_flags=()
for f in "${flags[@]}"; do [ "$f" = -fsyntax-only ] || pch_flags+=("$f"); done
clang++ "${pch_flags[@]}" -x c++-header "$pch_dir/common.h" -o "$pch_dir/common.h.pch"
printf '%s\0' $sources | xargs -0 -P "${JOBS:-2}" -n 4 clang++ "${flags[@]}" -include-pch "$pch_dir/common.h.pch"
echo "thread-safety: $(echo "$sources" | wc -l) of $(all_sources | wc -l) files $scope clean"
