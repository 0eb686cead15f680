// File: agent.h (cli)
//
// `gpusched agent`: the node side. Reads the node's GPUs from `nvidia-smi -q -x` (or a saved
// report), publishes gpusched.io/gpu-devices (agent/gpu_devices.h) on its Node when the value
// changes, and checks the GPUs against what the node's pods book (agent/drift.h), posting
// GPUAccountingDrift Events (kubeapi/node_agent_api.h), every few seconds; `--print` prints the
// annotation instead; `--metrics-listen` serves its /metrics (cli/agent_metrics.h).
#pragma once

namespace gpusched::cli {

// Runs the agent command with its arguments (after "agent"). Returns the process exit code: 0
// (printed or published; the loop until SIGTERM), 1 when the GPUs cannot be read or published
// (--once), 2 for bad usage.
int RunAgent(int argc, char** argv);

}  // namespace gpusched::cli
