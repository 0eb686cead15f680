#!/usr/bin/env bash
# The topology scenario (docs/replay.md, "Topology"): 12 NVLink domains of 18 GB200 nodes with 4
# GPUs each (scenarios/marin-gb200), a week of CPU-only jobs and one-GPU pods, and 16-node gangs
# of 4 GPUs per member mixed in at 40% of the GPU time. softmix runs topology-aware, side by side
# with fgd and binpack, 10 seeds; then again with CPU-only pods confined to domains in use
# (--steer-cpu-pods, as gpusched steers CPU-only pods that name its scheduler: the domain kept
# for a waiting gang then drains, and gangs wait up to 4 hours for it, topology.drainWaitSeconds);
# then that again with gangs waiting 300 s only (--topology-drain-wait 0). Builds gpusched first.
# Prints the 10-seed means of each run.
# Usage: scripts/topology-replay.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-replay-topology}"
./scripts/build.sh gpusched >/dev/null
for run in plain cpu-confined cpu-confined-no-drain-wait; do
  flags=()
  [ "$run" != plain ] && flags=(--steer-cpu-pods)
  [ "$run" = cpu-confined-no-drain-wait ] && flags+=(--topology-drain-wait 0)
  ./build/gpusched replay --timeline --nodes scenarios/marin-gb200/nodes.csv --pods scenarios/marin-gb200/pods.csv \
    --time-compress 1 --domains 12 --gangs members=16,gpus=4,share=0.4,cpu=64000,memory=262144 \
    --policy softmix,fgd,binpack --seeds 42-51 "${flags[@]}" --out "$out/$run" >/dev/null
  echo "== $run"
  # summary.csv columns: 2 policy, 12 alloc_rate_mean, 15 pending_p99_s, 22 gangs, 23 gang_wait_p50_s,
  # 24 gang_wait_p99_s, 25 gangs_one_domain_pct, 26 stranded_gpus_mean.
  awk -F, 'NR > 1 { p = $2; n[p]++; a[p] += $12; q[p] += $15; g[p] += $22; w5[p] += $23; w9[p] += $24; d[p] += $25; s[p] += $26 }
  END {
    printf "%-10s %6s %9s %8s %9s %9s %8s %9s\n", "policy", "alloc%", "podP99 s", "gangs", "gangP50 s", "gangP99 s", "oneDom%", "stranded"
    for (p in n) printf "%-10s %6.2f %9.0f %8.0f %9.0f %9.0f %8.1f %9.1f\n", p, a[p]/n[p], q[p]/n[p], g[p]/n[p], w5[p]/n[p], w9[p]/n[p], d[p]/n[p], s[p]/n[p]
  }' "$out/$run/summary.csv"
done
echo "wrote $out/plain, $out/cpu-confined and $out/cpu-confined-no-drain-wait: summary.csv, report.html"
