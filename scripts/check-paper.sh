#!/usr/bin/env bash
# Checks the replay against the FGD paper's artifact on every openb trace present:
#   - each of random, dotprod, clustering, packing, bestfit and fgd within 0.5 pp of the
#     artifact's 10-seed mean unallocated GPU % at 100% arrived;
#   - softmix (ours) below fgd on every trace.
# The trace is research-use data kept outside the repository: OPENB_DIR (default
# ../shared/data/openb). Builds gpusched first. Usage: scripts/check-paper.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${OPENB_DIR:-../shared/data/openb}"
out="${1:-replay-paper}"
if [ ! -f "$dir/openb_node_list_gpu_node.csv" ]; then
  echo "no openb trace in $dir: nothing to check" >&2
  exit 0
fi
./scripts/build.sh gpusched >/dev/null
pods=()
for trace in default gpushare40 gpushare60 gpushare80 gpushare100 multigpu20 multigpu30 multigpu40 multigpu50 \
             gpuspec10 gpuspec20 gpuspec25 gpuspec33 cpu050 cpu100 cpu200 cpu250; do
  [ -f "$dir/openb_pod_list_$trace.csv" ] && pods+=(--pods "$dir/openb_pod_list_$trace.csv")
done
./build/gpusched replay --nodes "$dir/openb_node_list_gpu_node.csv" "${pods[@]}" \
  --policy random,dotprod,clustering,packing,bestfit,fgd,softmix --seeds 42-51 --out "$out"
awk -F, 'NR > 1 { key = $1 "," $2; sum[key] += $7; n[key]++; paper[key] = $9; traces[$1] = 1 }
END {
  bad = 0
  for (key in sum) {
    mean = sum[key] / n[key]
    if (paper[key] != "" && (mean - paper[key] > 0.5 || paper[key] - mean > 0.5)) {
      printf "MISS %-24s mean %.2f, paper %.2f\n", key, mean, paper[key]; bad = 1
    }
  }
  for (t in traces) {
    f = sum[t ",fgd"] / n[t ",fgd"]; s = sum[t ",softmix"] / n[t ",softmix"]
    if (s >= f) { printf "MISS %-24s softmix %.2f is not below fgd %.2f\n", t, s, f; bad = 1 }
    else printf "ok   %-24s softmix %.2f < fgd %.2f\n", t, s, f
  }
  if (bad) exit 1
  print "every paper policy within 0.5 pp of the artifact; softmix below fgd on every trace"
}' "$out/summary.csv"
