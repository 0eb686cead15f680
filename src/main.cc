// File: main.cc
//
// gpusched: a Kubernetes GPU scheduler extender. This file only dispatches subcommands.
#include <cstdio>
#include <string_view>

#include "cli/agent.h"
#include "cli/defrag.h"
#include "cli/explain.h"
#include "cli/replay.h"
#include "cli/serve.h"

namespace {

constexpr std::string_view kUsage = R"(usage: gpusched <command> [flags]

commands:
  serve     run the scheduler extender (see gpusched serve --help)
  replay    replay the openb trace or a recorded cluster (see gpusched replay --help)
  explain   why a pod fits where it does, or nowhere (see gpusched explain --help)
  defrag    plan pod moves that make room for a pod or lower fragmentation (gpusched defrag --help)
  agent     the node side: the GPUs nvidia-smi reports, as gpusched.io/gpu-devices (gpusched agent --help)
  version   print the version
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage.data(), stderr);
    return 2;
  }
  std::string_view command = argv[1];
  if (command == "serve") return gpusched::cli::RunServe(argc - 2, argv + 2);
  if (command == "replay") return gpusched::cli::RunReplay(argc - 2, argv + 2);
  if (command == "explain") return gpusched::cli::RunExplain(argc - 2, argv + 2);
  if (command == "defrag") return gpusched::cli::RunDefrag(argc - 2, argv + 2);
  if (command == "agent") return gpusched::cli::RunAgent(argc - 2, argv + 2);
  if (command == "version" || command == "--version") {
    std::printf("gpusched %s\n", GPUSCHED_VERSION);
    return 0;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::fputs(kUsage.data(), stdout);
    return 0;
  }
  std::fprintf(stderr, "gpusched: unknown command \"%s\"\n%s", argv[1], kUsage.data());
  return 2;
}
