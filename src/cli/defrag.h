// File: defrag.h (cli)
//
// `gpusched defrag`: a dry-run plan of pod moves that makes room for a pod or lowers the
// cluster's fragmentation (extender/defrag.h), offline against cluster files or the demo, or
// asked of a running gpusched (POST /debug/defrag).
#pragma once

namespace gpusched::cli {

// Runs the defrag command with its arguments (after "defrag"). Returns the process exit code:
// 0 with a plan (one that fits or not: "fits" says), 1 when it cannot be planned or the server
// refused, 2 for bad usage.
int RunDefrag(int argc, char** argv);

}  // namespace gpusched::cli
