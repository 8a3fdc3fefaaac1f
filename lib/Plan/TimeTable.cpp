//===- TimeTable.cpp - "Where time goes" table ----------------------------===//

#include "TimeTable.h"

#include "Format.h"

namespace helix {

void writeTimeTable(std::ostream &os, const TimeBreakdown &t,
                    const std::string &indent) {
  double total = t.total();
  auto row = [&](const char *what, double v) {
    os << indent << fmt::pad(what, 24) << fmt::pad(fmt::duration(v), 10, true)
       << fmt::pad(fmt::percent(total > 0 ? v / total : 0), 8, true) << "\n";
  };
  row("KV read", t.kvRead);
  row("weight read", t.weightRead);
  row("compute", t.compute);
  row("kernel overhead", t.overhead);
  row("exposed communication", t.exposedComm);
  if (t.pipelineStall > 0)
    row("pipeline stall", t.pipelineStall);
}

} // namespace helix
