// File: serve.h
//
// `gpusched serve`: the extender over HTTP, fed by snapshot files or the embedded demo cluster.
#pragma once

namespace gpusched::cli {

// Runs the serve command with its arguments (after "serve"). Returns the process exit code.
int RunServe(int argc, char** argv);

}  // namespace gpusched::cli
