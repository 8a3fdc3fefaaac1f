//===- KindLines.h - A per-layer plan's layouts, one line per kind -*- C++ -*-//
//
// Private to lib/Plan: helix plan's per-layer block and helix cost's
// per-layer header print the kinds' layouts the same way.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_PLAN_KINDLINES_H
#define HELIX_LIB_PLAN_KINDLINES_H

#include "helix/Cost/PerLayer.h"

#include <ostream>
#include <string>

namespace helix {

/// "full attention      18 layers  kvp=16,tpa=4", one line per kind the
/// model has.
void kindLines(std::ostream &os, const PerLayerChoice &c,
               const std::string &indent);

} // namespace helix

#endif // HELIX_LIB_PLAN_KINDLINES_H
