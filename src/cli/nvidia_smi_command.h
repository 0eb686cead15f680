// File: nvidia_smi_command.h (cli)
//
// Runs nvidia-smi for the node agent: fork and exec from the PATH, no shell (the image is
// distroless; the NVIDIA runtime puts nvidia-smi on the PATH), stdout and stderr read together,
// and a time limit: a GPU falling off the bus is exactly when nvidia-smi hangs, and the agent must
// go on publishing what it can.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "gpusched/common/status.h"

namespace gpusched::cli {

// What `nvidia-smi <args>` prints. Errors (Unavailable, naming the command): nvidia-smi not on the
// PATH, a non-zero exit (with the start of its output), or no exit within `limit` (the process is
// killed).
StatusOr<std::string> RunNvidiaSmi(std::vector<const char*> args, std::chrono::milliseconds limit = std::chrono::seconds(30));

}  // namespace gpusched::cli
