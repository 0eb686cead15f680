// File: agent.h (cli)
//
// `gpusched agent`: the node side. Reads the node's GPUs from `nvidia-smi -q -x` (or a saved
// report) and publishes gpusched.io/gpu-devices (agent/gpu_devices.h) on its Node when the value
// changes (kubeapi/node_agent_api.h), every few seconds; `--print` prints it instead. The drift
// check against the ledger is not built yet.
#pragma once

namespace gpusched::cli {

// Runs the agent command with its arguments (after "agent"). Returns the process exit code: 0
// (printed or published; the loop until SIGTERM), 1 when the GPUs cannot be read or published
// (--once), 2 for bad usage.
int RunAgent(int argc, char** argv);

}  // namespace gpusched::cli
