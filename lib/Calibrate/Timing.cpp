//===- Timing.cpp - Running helix-calibrate-gpu ---------------------------===//

#include "helix/Calibrate/Timing.h"

#include "helix/Calibrate/MeasurementsJSON.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace helix {
namespace calibrate {

namespace {
/// "what: rest" -> "rest" when `line` starts with `what`, else "".
std::string after(const std::string &line, const std::string &what) {
  size_t at = line.find(what);
  return at == std::string::npos ? "" : line.substr(at + what.size());
}
} // namespace

TimingStatus timeOnGPU(const std::vector<std::string> &candidates,
                       const TimingOptions &options, MeasurementSet &set,
                       std::string &reason) {
  std::string path;
  for (const std::string &c : candidates)
    if (std::ifstream(c).good()) {
      path = c;
      break;
    }
  if (path.empty()) {
    reason = "helix-calibrate-gpu is not installed (looked for ";
    for (size_t i = 0; i < candidates.size(); ++i)
      reason += (i ? ", " : "") + candidates[i];
    reason += ")";
    return TimingStatus::NoGPU;
  }
  if (access(path.c_str(), X_OK) != 0) {
    reason = "cannot run " + path + " (not executable)";
    return TimingStatus::NoGPU;
  }
  char tmpl[] = "/tmp/helix-calibrate-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) {
    reason = "cannot create a temporary file in /tmp";
    return TimingStatus::Failed;
  }
  close(fd);
  std::string out = tmpl;
  int pipefd[2];
  if (pipe(pipefd) != 0) {
    std::remove(out.c_str());
    reason = "cannot create a pipe";
    return TimingStatus::Failed;
  }
  std::string device = std::to_string(options.device);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], 2);
    close(pipefd[0]);
    close(pipefd[1]);
    execl(path.c_str(), path.c_str(), "--device", device.c_str(), "-o",
          out.c_str(), static_cast<char *>(nullptr));
    std::fprintf(stderr, "helix-calibrate-gpu: error: cannot run %s\n",
                 path.c_str());
    _exit(3);
  }
  close(pipefd[1]);
  // Its standard error, line by line: progress, or the reason it stopped.
  std::string noGPU, failure, pending;
  char buf[4096];
  auto line = [&](const std::string &l) {
    if (l.empty())
      return;
    std::string r = after(l, "no CUDA GPU: ");
    if (!r.empty()) {
      noGPU = r.substr(0, r.rfind("; nothing measured"));
      return;
    }
    r = after(l, "error: ");
    if (!r.empty()) {
      failure =
          after(r, "timing failed: ").empty() ? r : after(r, "timing failed: ");
      return;
    }
    if (options.progress)
      options.progress(after(l, "helix-calibrate-gpu: ").empty()
                           ? l
                           : after(l, "helix-calibrate-gpu: "));
  };
  for (ssize_t n; (n = read(pipefd[0], buf, sizeof buf)) > 0;) {
    pending.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      line(pending.substr(0, nl));
      pending.erase(0, nl + 1);
    }
  }
  line(pending);
  close(pipefd[0]);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) {
    std::remove(out.c_str());
    reason = "cannot run " + path;
    return TimingStatus::Failed;
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 1) {
    std::remove(out.c_str());
    reason = noGPU.empty() ? path + " found no GPU" : noGPU;
    return TimingStatus::NoGPU;
  }
  if (code != 0) {
    std::remove(out.c_str());
    reason = !failure.empty() ? failure
             : code < 0       ? path + " was killed by a signal"
                        : path + " exited with status " + std::to_string(code);
    return TimingStatus::Failed;
  }
  std::stringstream text;
  text << std::ifstream(out).rdbuf();
  std::remove(out.c_str());
  if (!parseMeasurementsJSON(text.str(), path, set, reason))
    return TimingStatus::Failed;
  return TimingStatus::Measured;
}

std::string presetForGPU(const std::string &gpuName) {
  std::string u = gpuName;
  std::transform(u.begin(), u.end(), u.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  // Most specific first: "GB200" contains "B200".
  if (u.find("GB300") != std::string::npos)
    return "gb300-nvl72";
  if (u.find("GB200") != std::string::npos)
    return "gb200-nvl72";
  if (u.find("B200") != std::string::npos)
    return "b200";
  if (u.find("H200") != std::string::npos)
    return "h200";
  if (u.find("H100") != std::string::npos)
    return "h100";
  return "";
}

} // namespace calibrate
} // namespace helix
