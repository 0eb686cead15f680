// File: agent.h (cli)
//
// `gpusched agent`: the node side. So far `--once --print`: reads the node's GPUs from
// `nvidia-smi -q -x` (or a saved report) and prints the gpusched.io/gpu-devices value it would
// publish (agent/gpu_devices.h). Publishing on the Node, the drift check and the DaemonSet are
// issue 17's next steps.
#pragma once

namespace gpusched::cli {

// Runs the agent command with its arguments (after "agent"). Returns the process exit code: 0
// with the annotation printed, 1 when the GPUs cannot be read, 2 for bad usage.
int RunAgent(int argc, char** argv);

}  // namespace gpusched::cli
