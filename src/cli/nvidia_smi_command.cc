// File: nvidia_smi_command.cc
//
// Running nvidia-smi without a shell: fork and execvp from the PATH, stdout and stderr read from
// one pipe until the time limit (then SIGKILL), and the exit status turned into a Status (127: not
// on the PATH).
#include "cli/nvidia_smi_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <csignal>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace gpusched::cli {
namespace {

// Reads `fd` until it closes or `deadline`; false if the deadline came first.
bool ReadUntil(int fd, std::chrono::steady_clock::time_point deadline, std::string* out) {
  std::array<char, 65536> buf;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{.fd = fd, .events = POLLIN};
    int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return ready == 0 ? false : true;
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n <= 0) return true;
    out->append(buf.data(), static_cast<size_t>(n));
  }
}

}  // namespace

StatusOr<std::string> RunNvidiaSmi(std::vector<const char*> args, std::chrono::milliseconds limit) {
  std::string command = fmt::format("nvidia-smi {}", fmt::join(args, " "));
  args.insert(args.begin(), "nvidia-smi");
  args.push_back(nullptr);
  int out[2];
  if (pipe(out) != 0) return UnavailableError(fmt::format("cannot run {}: no pipe", command));
  pid_t pid = fork();
  if (pid < 0) {
    close(out[0]);
    close(out[1]);
    return UnavailableError(fmt::format("cannot run {}: fork failed", command));
  }
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    execvp("nvidia-smi", const_cast<char* const*>(args.data()));
    _exit(127);
  }
  close(out[1]);
  std::string text;
  bool done = ReadUntil(out[0], std::chrono::steady_clock::now() + limit, &text);
  close(out[0]);
  if (!done) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!done) return UnavailableError(fmt::format("{} did not finish within {} s: killed", command, limit.count() / 1000.0));
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 127) return UnavailableError("nvidia-smi is not on this machine's PATH (give --nvidia-smi-xml to read a saved report)");
  if (code != 0) {
    std::string said = text.substr(0, 300);
    while (!said.empty() && std::isspace(static_cast<unsigned char>(said.back()))) said.pop_back();
    return UnavailableError(fmt::format("{} exited {}: {}", command, code, said));
  }
  return text;
}

}  // namespace gpusched::cli
