#!/usr/bin/env bash
# Checks gpusched's source files with clang's thread-safety analysis, as errors: every member
# marked GPUSCHED_GUARDED_BY is touched only with its mutex held, and every function annotated
# GPUSCHED_REQUIRES / GPUSCHED_EXCLUDES is called accordingly (common/mutex.h). Syntax only, no
# code is generated. scripts/test.sh runs it after the build; clang comes from scripts/deps.sh.
#
# The annotations exist only where common/mutex.h is included, so only the sources that include
# it, directly or through other headers of ours, are checked: the others cannot break the
# analysis. The include graph is read from the sources themselves (a build's dependency records
# would hide the headers a precompiled header brought in). With --all, every source is checked.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-std=c++20 -fsyntax-only -Werror -Wthread-safety -Wthread-safety-beta
       -Iinclude -Isrc -DGPUSCHED_VERSION=\"check\")

all_sources() { find src -name '*.cc' | sort; }

# The sources that reach common/mutex.h through their #include "..." lines. Keys: a public header
# by its include path (gpusched/...), anything else by its path from the repository root
# (src/..., included through -Isrc).
locking_sources() {
  grep -rH '^#include "' src include |
    awk -F: '{
      file = $1; sub(/^include\//, "", file)
      inc = $2; sub(/^#include "/, "", inc); sub(/".*$/, "", inc)
      if (inc !~ /^gpusched\//) inc = "src/" inc
      from[++n] = file; to[n] = inc; files[file] = 1
    }
    END {
      reach["gpusched/common/mutex.h"] = 1
      do {
        changed = 0
        for (i = 1; i <= n; i++) if ((to[i] in reach) && !(from[i] in reach)) { reach[from[i]] = 1; changed = 1 }
      } while (changed)
      for (f in files) if (f ~ /^src\/.*\.cc$/ && (f in reach)) print f
    }' | sort
}

sources=""
if [ "${1:-}" != "--all" ]; then
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
# The files are checked in batches of 8 of one folder, each batch one translation unit that
# includes its files (as the unity build compiles a library), so that the headers beyond the
# precompiled ones are parsed once per batch. Files batched together may clash (two file-local
# helpers of one name in a library the unity build does not batch): a batch that fails is checked
# again file by file, and only those results count, with their diagnostics.
check_batch() {
  local dir=$1; shift
  local unit="$dir/batch_$$_$RANDOM.cc"
  printf '#include "%s"\n' "$@" > "$unit"
  if clang++ "${flags[@]}" -I. -include-pch "$pch_dir/common.h.pch" "$unit" 2>/dev/null; then
    return 0
  fi
  local status=0
  for file in "$@"; do
    clang++ "${flags[@]}" -include-pch "$pch_dir/common.h.pch" "$file" || status=1
  done
  return $status
}
export -f check_batch
export pch_dir
flags_line=$(printf '%q ' "${flags[@]}")
echo "$sources" | awk -F/ '{ folder = $2; if (count[folder] % 8 == 0) { if (line != "") print line; line = "" }
                              count[folder]++; line = line (line == "" ? "" : " ") $0 } END { if (line != "") print line }' |
  xargs -P "${JOBS:-2}" -L 1 bash -c 'flags=('"$flags_line"'); check_batch "$0" "$@"' "$pch_dir"
echo "thread-safety: $(echo "$sources" | wc -l) of $(all_sources | wc -l) files $scope clean"
