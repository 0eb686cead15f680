// File: subcommand.h
//
// What the answering subcommands (explain, defrag) share: their run loop (help, usage errors,
// one answer printed) and, offline, a Service over cluster files or the demo cluster.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/extender/service.h"
#include "gpusched/inventory/inventory.h"

namespace gpusched::cli {

// An inventory of the cluster files `snapshots` (the demo cluster when empty) and a Service over it.
class OfflineCluster {
 public:
  static StatusOr<std::unique_ptr<OfflineCluster>> Load(const std::vector<std::string>& snapshots);
  const extender::Service& service() const { return *service_; }

 private:
  OfflineCluster() = default;

  inventory::Inventory inventory_;
  std::unique_ptr<extender::Service> service_;
};

// Runs `gpusched <command>`: --help prints `usage`; arguments `parse` refuses exit 2 with the
// message and the usage; otherwise the answer is printed (exit 0) or its error (exit 1).
template <typename Args>
int RunAnswering(std::string_view command, std::string_view usage, int argc, char** argv,
                 const std::function<StatusOr<Args>(int, char**)>& parse,
                 const std::function<StatusOr<std::string>(const Args&)>& answer) {
  if (argc > 0 && (std::string_view(argv[0]) == "--help" || std::string_view(argv[0]) == "-h")) {
    std::fwrite(usage.data(), 1, usage.size(), stdout);
    return 0;
  }
  StatusOr<Args> args = parse(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "gpusched %.*s: %s\n%.*s", static_cast<int>(command.size()), command.data(),
                 args.status().message().c_str(), static_cast<int>(usage.size()), usage.data());
    return 2;
  }
  StatusOr<std::string> out = answer(*args);
  if (!out.ok()) {
    std::fprintf(stderr, "gpusched %.*s: %s\n", static_cast<int>(command.size()), command.data(),
                 out.status().message().c_str());
    return 1;
  }
  std::fputs(out->c_str(), stdout);
  return 0;
}

}  // namespace gpusched::cli
