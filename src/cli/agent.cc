#include "cli/agent.h"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>

#include "cli/subcommand.h"
#include "gpusched/agent/gpu_devices.h"
#include "gpusched/agent/nvidia_smi.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::cli {
namespace {

constexpr std::string_view kUsage = R"(usage: gpusched agent --once --print [flags]

Reads this node's GPUs from `nvidia-smi -q -x` and prints the value of the annotation
gpusched.io/gpu-devices that describes them (index, UUID, model, memory MiB, NUMA node, health:
unhealthy on uncorrectable ECC errors, a pending or failed row remap, pages pending retirement).
Publishing it on the Node is not built yet: --once --print are required (README: Node agent).

  --once              read once and exit
  --print             print the annotation's value instead of publishing it
  --nvidia-smi-xml F  read a saved `nvidia-smi -q -x` report instead of running nvidia-smi
  --sysfs DIR         where sysfs is mounted, for the GPUs' NUMA nodes (default /sys)
)";

struct Args {
  bool once = false;
  bool print = false;
  std::string xml_file;
  std::string sysfs = "/sys";
};

StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 0; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--once") {
      a.once = true;
    } else if (flag == "--print") {
      a.print = true;
    } else if (flag == "--nvidia-smi-xml" || flag == "--sysfs") {
      if (i + 1 >= argc) return InvalidArgumentError(fmt::format("{} needs a value", flag));
      (flag == "--sysfs" ? a.sysfs : a.xml_file) = argv[++i];
    } else {
      return InvalidArgumentError(fmt::format("unknown flag {}", flag));
    }
  }
  if (!a.once || !a.print) return InvalidArgumentError("publishing on the Node is not built yet: give --once --print");
  return a;
}

// The report: the saved file, or nvidia-smi's output.
StatusOr<std::string> Report(const Args& a) {
  std::stringstream text;
  if (!a.xml_file.empty()) {
    std::ifstream in(a.xml_file);
    if (!in) return NotFoundError(fmt::format("--nvidia-smi-xml {}: cannot be read", a.xml_file));
    text << in.rdbuf();
    return text.str();
  }
  FILE* p = popen("nvidia-smi -q -x 2>&1", "r");
  if (p == nullptr) return UnavailableError("cannot run nvidia-smi");
  std::array<char, 65536> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) text.write(buf.data(), static_cast<std::streamsize>(n));
  int status = pclose(p);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 127) return UnavailableError("nvidia-smi is not on this machine's PATH (give --nvidia-smi-xml to read a saved report)");
  if (code != 0) return UnavailableError(fmt::format("nvidia-smi -q -x exited {}: {}", code, text.str().substr(0, 300)));
  return text.str();
}

StatusOr<std::string> Describe(const Args& a) {
  GPUSCHED_ASSIGN_OR_RETURN(std::string xml, Report(a));
  GPUSCHED_ASSIGN_OR_RETURN(std::vector<agent::PhysicalGpu> gpus, agent::ParseNvidiaSmiXml(xml));
  agent::ResolveNumaNodes(a.sysfs, &gpus);
  return kubejson::EncodeGpuDevices(agent::ToGpuDevices(gpus)) + "\n";
}

}  // namespace

int RunAgent(int argc, char** argv) { return RunAnswering<Args>("agent", kUsage, argc, argv, ParseArgs, Describe); }

}  // namespace gpusched::cli
