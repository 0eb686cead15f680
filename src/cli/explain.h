// File: explain.h
//
// `gpusched explain`: why a pod fits where it does, or does not fit anywhere (extender/explain.h),
// offline against a cluster file or the demo, or asked of a running gpusched.
#pragma once

namespace gpusched::cli {

// Runs the explain command with its arguments (after "explain"). Returns the process exit code:
// 0 with an answer, 1 when the pod cannot be judged or the server refused, 2 for bad usage.
int RunExplain(int argc, char** argv);

}  // namespace gpusched::cli
