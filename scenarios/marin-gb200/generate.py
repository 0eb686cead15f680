#!/usr/bin/env python3
"""Writes the marin-gb200 scenario (docs/replay.md, "Topology"): 12 NVLink domains of 18 GB200
nodes with 4 GPUs each, after marin-community/marin PR #8249, and a week of pods in openb's
columns: CPU-only jobs whose pods each take most of a node's CPUs (the job that "held 64 GB200
nodes spread across nine of twelve domains"), and one-GPU pods arriving steadily. The 16-node
gangs are mixed in by `gpusched replay --gangs`. Deterministic: seeded.

Usage: scenarios/marin-gb200/generate.py  (rewrites nodes.csv and pods.csv beside it)
"""
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
DOMAINS, NODES_PER_DOMAIN, GPUS = 12, 18, 4
NODE_CPU, NODE_MEM = 144000, 884736  # 2 x 72 Grace cores, 864 GiB
WEEK = 7 * 24 * 3600

rng = random.Random(8249)
with open(os.path.join(HERE, "nodes.csv"), "w") as f:
    f.write("sn,cpu_milli,memory_mib,gpu,model\n")
    for d in range(DOMAINS):
        for n in range(NODES_PER_DOMAIN):
            f.write(f"gb200-d{d + 1:02d}-n{n + 1:02d},{NODE_CPU},{NODE_MEM},{GPUS},GB200\n")

pods = []
# CPU-only jobs: two a day, each of 8-64 pods taking 120 of 144 CPUs, running 6-36 hours.
t = 0.0
while True:
    t += rng.expovariate(1 / (12 * 3600))
    if t >= WEEK:
        break
    width = rng.choice([8, 16, 32, 64])
    duration = int(rng.uniform(6, 36) * 3600)
    for _ in range(width):
        pods.append((120000, 131072, 0, 0, int(t), int(t) + duration))
# One-GPU pods: about one every 40 s, log-uniform 10 minutes to 16 hours (a third of the GPUs).
t = 0.0
while True:
    t += rng.expovariate(1 / 40)
    if t >= WEEK:
        break
    duration = int(math.exp(rng.uniform(math.log(600), math.log(16 * 3600))))
    pods.append((8000, 65536, 1, 1000, int(t), int(t) + duration))

with open(os.path.join(HERE, "pods.csv"), "w") as f:
    f.write("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n")
    for i, (cpu, mem, gpus, milli, created, deleted) in enumerate(pods):
        f.write(f"marin-pod-{i:05d},{cpu},{mem},{gpus},{milli},,LS,Succeeded,{created},{deleted},{created}\n")
