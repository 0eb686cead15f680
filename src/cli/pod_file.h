// File: pod_file.h
//
// A pod as a person hands it to a subcommand: a file (or "-" for stdin) in JSON or in YAML as
// kubectl writes it, returned as the JSON the API server would have sent.
#pragma once

#include <string>

#include "gpusched/common/status.h"

namespace gpusched::cli {

// Returns the pod in `file` as JSON. YAML plain scalars that read as numbers, booleans or null
// become those; quoted ones stay strings. Errors: NotFound (unreadable), InvalidArgument
// (neither JSON nor YAML), naming the flag `flag` and the file.
StatusOr<std::string> ReadPodFile(const std::string& file, const std::string& flag = "--pod");

}  // namespace gpusched::cli
