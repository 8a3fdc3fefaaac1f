//===- HelixStrategy.td - Sharding strategies --------------*- tablegen -*-===//
//
// The strategies the planner prices and the IR records, defined once: the
// enum `::helix::Strategy` (with stringifyStrategy / symbolizeStrategy) is
// generated from here into HelixStrategy.h.inc for the cost model
// (helix/Common/Strategy.h) and is the type of #helix.plan's `strategy`.
// It is generated on its own (not through Helix.td) so that the cost model
// includes the enum without the dialect.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_STRATEGY_TD
#define HELIX_STRATEGY_TD

include "mlir/IR/EnumAttr.td"

// See include/helix/Cost/Layout.h for what each strategy does.
def Helix_Strategy : I32EnumAttr<"Strategy", "sharding strategy", [
    I32EnumAttrCase<"Helix", 0, "helix">,
    I32EnumAttrCase<"HelixNoHopB", 1, "helix-no-hopb">,
    I32EnumAttrCase<"TP", 2, "tp">,
    I32EnumAttrCase<"TPPP", 3, "tp-pp">,
    I32EnumAttrCase<"EP", 4, "ep">,
    I32EnumAttrCase<"KVP", 5, "kvp">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::helix";
}

#endif // HELIX_STRATEGY_TD
