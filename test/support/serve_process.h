// File: serve_process.h
//
// A running `gpusched serve` child process for tests; its stderr is collected. The test target
// defines GPUSCHED_BINARY (the path of the gpusched executable).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace gpusched::testing {

class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> args) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDERR_FILENO);
      close(fds[0]);
      std::vector<char*> argv;
      std::string binary = GPUSCHED_BINARY;
      argv.push_back(binary.data());
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    close(fds[1]);
    err_ = fds[0];
    fcntl(err_, F_SETFL, O_NONBLOCK);
  }

  ~ServeProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (err_ >= 0) close(err_);
  }

  // Returns the port once "serving on HOST:PORT" was logged, or 0 after a timeout or exit.
  uint16_t WaitForPort() {
    std::regex serving("serving [A-Za-z /]+ on [0-9.]+:([0-9]+)");
    for (int i = 0; i < 200; ++i) {
      Drain();
      std::smatch m;
      if (std::regex_search(stderr_, m, serving)) return static_cast<uint16_t>(std::stoi(m[1]));
      if (Exited()) return 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return 0;
  }

  // Returns the exit status after waiting up to 10 s, or -1.
  int WaitExit() {
    for (int i = 0; i < 400; ++i) {
      if (Exited()) return status_;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return -1;
  }

  void Signal(int sig) { kill(pid_, sig); }
  const std::string& Stderr() {
    Drain();
    return stderr_;
  }

 private:
  bool Exited() {
    if (exited_) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      Drain();
    }
    return exited_;
  }
  void Drain() {
    char buf[4096];
    ssize_t n;
    while ((n = read(err_, buf, sizeof buf)) > 0) stderr_.append(buf, static_cast<size_t>(n));
  }

  pid_t pid_ = -1;
  int err_ = -1;
  bool exited_ = false;
  int status_ = -1;
  std::string stderr_;
};

}  // namespace gpusched::testing
