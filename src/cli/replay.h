// File: replay.h
//
// `gpusched replay`: the FGD paper's experiment on the openb trace, or a recorded cluster replayed
// through the extender's own filter/prioritize/bind.
#pragma once

namespace gpusched::cli {

// Runs the replay command with its arguments (after "replay"). Returns the process exit code.
int RunReplay(int argc, char** argv);

}  // namespace gpusched::cli
