//===- TimeTable.h - "Where time goes" table ---------------------*- C++ -*-=//
//
// Private to lib/Plan.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_PLAN_TIMETABLE_H
#define HELIX_LIB_PLAN_TIMETABLE_H

#include "helix/Cost/Roofline.h"

#include <ostream>
#include <string>

namespace helix {

/// Rows "KV read", "weight read", "compute", "kernel overhead", "exposed
/// communication" (and "pipeline stall" when non-zero): time and share of
/// the total, each line prefixed by `indent`.
void writeTimeTable(std::ostream &os, const TimeBreakdown &t,
                    const std::string &indent);

} // namespace helix

#endif // HELIX_LIB_PLAN_TIMETABLE_H
