//===- KindLines.cpp - A per-layer plan's layouts, one line per kind ------===//

#include "KindLines.h"

#include "Format.h"

namespace helix {

void kindLines(std::ostream &os, const PerLayerChoice &c,
               const std::string &indent) {
  for (const KindLayout *k : c.present())
    os << indent << fmt::pad(layerKindName(k->kind), 18)
       << fmt::pad(std::to_string(k->layers), 4, true) << " layers  "
       << k->str() << "\n";
}

} // namespace helix
