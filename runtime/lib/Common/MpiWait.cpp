//===- MpiWait.cpp - MPI waits with a deadline ----------------------------===//

#include "MpiWait.h"
#include "helix/Runtime/Error.h"

#include <chrono>
#include <cstdio>
#include <thread>

namespace helix {
namespace rt {

static std::string rankList(const std::vector<int> &members) {
  std::string s = "[";
  for (size_t i = 0; i < members.size(); ++i)
    s += (i ? ", " : "") + std::to_string(members[i]);
  return s + "]";
}

void waitWithDeadline(MPI_Request &req, double timeoutS,
                      const std::string &what,
                      const std::vector<int> &members) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  // Poll at first at once, then back off to 1 ms: a step's collectives
  // usually complete within microseconds of each other.
  auto pause = std::chrono::microseconds(0);
  for (;;) {
    int done = 0;
    int rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      char msg[MPI_MAX_ERROR_STRING];
      int len = 0;
      MPI_Error_string(rc, msg, &len);
      throw Error(what + " failed: " + std::string(msg, len));
    }
    if (done)
      return;
    double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (timeoutS > 0 && waited >= timeoutS) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", timeoutS);
      throw Error(what + " over ranks " + rankList(members) +
                  ": no answer in " + secs +
                  " s (a peer stopped, deadlocked or died; the limit is "
                  "--step-timeout)");
    }
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::microseconds(1000))
      pause += std::chrono::microseconds(50);
  }
}

} // namespace rt
} // namespace helix
