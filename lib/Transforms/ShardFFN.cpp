//===- ShardFFN.cpp - Dense FFN and MoE in global view --------------------===//
//
// Dense FFNs: TPF over the FFN group (column-parallel gate/up, row-parallel
// down) and an all-reduce. MoE (TPF x EP): a replicated router, each expert
// group's experts with TP inside the group (plus the group's slice of the
// shared experts), an intra-expert all-reduce over TPF, an inter-expert
// all-gather over EP and a local sum. With data-parallel attention (ep) the
// tokens are all-gathered first and the partial results reduce-scattered
// back to the DP replicas.
//
//===----------------------------------------------------------------------===//

#include "CheckpointNames.h"
#include "ShardRewriter.h"

using namespace mlir;
using namespace mlir::helix;

namespace helix::sharding {

/// The FFN's input: every token on every rank of the FFN group.
static Value gatherTokens(ShardRewriter &r, Value old) {
  return r.replicate(r.get(old));
}

/// Sums partial FFN results and returns them in the stream's distribution.
/// `partial` lists the axes of `grid` the value is partial over.
static Value finishFFN(ShardRewriter &r, Value y, FlatSymbolRefAttr grid,
                       const Axes &partial) {
  GlobalView &g = r.g;
  if (!g.plan.tokensSplit())
    return g.allReduce(y, grid, partial);
  // ep: partial over the whole stage; all-reduce inside each DP replica's
  // TP group, then reduce-scatter the tokens back to the replicas.
  y = g.allReduce(y, g.attnGrid, g.attn({kKVP, kTPA}));
  return g.reduceScatter(y, g.attnGrid, r.batchAxes(), 0);
}

/// The type of a [B, H] result that is partial over the FFN group.
static std::pair<RankedTensorType, std::pair<FlatSymbolRefAttr, Axes>>
partialResult(ShardRewriter &r, int64_t hidden, const Axes &ffnAxes) {
  GlobalView &g = r.g;
  // With DP attention the group is the whole stage; say it on the attention
  // grid, where the reduce-scatter back to the replicas happens.
  FlatSymbolRefAttr grid = g.plan.tokensSplit() ? g.attnGrid : g.ffnGrid;
  Axes axes = g.plan.tokensSplit() ? g.attn({kDP, kKVP, kTPA}) : ffnAxes;
  return {g.type({g.plan.batch, hidden}, r.act, g.dist(grid, {}, axes)),
          {grid, axes}};
}

LogicalResult shardFFN(ShardRewriter &r, FFNOp op) {
  GlobalView &g = r.g;
  Value x = gatherTokens(r, op.getInput());
  int64_t hidden = cast<RankedTensorType>(x.getType()).getDimSize(1),
          inter = op.getIntermediate();
  std::string p = op.getPrefix().str();
  Axes tp = g.ffn({kEP, kTPF});
  auto column = [&](StringRef name) {
    return g.weight(p + "." + name.str(), {inter, hidden}, {}, r.act, g.ffnGrid,
                    {tp});
  };
  Value wg = column("gate_proj.weight"), wu = column("up_proj.weight");
  Value wd = g.weight(p + ".down_proj.weight", {hidden, inter}, {}, r.act,
                      g.ffnGrid, {{}, tp});
  Value bg, bu, bd;
  if (op.getBias()) {
    bg = g.weight(p + ".gate_proj.bias", {inter}, {}, r.act, g.ffnGrid, {tp});
    bu = g.weight(p + ".up_proj.bias", {inter}, {}, r.act, g.ffnGrid, {tp});
    bd = g.weight(p + ".down_proj.bias", {hidden}, r.act);
  }
  auto [type, group] = partialResult(r, hidden, tp);
  Value y = GatedMLPOp::create(g.b, g.loc, type, x, wg, wu, wd, bg, bu, bd,
                               op.getActivationAttr());
  r.set(op.getResult(), finishFFN(r, y, group.first, group.second));
  return success();
}

LogicalResult shardMoE(ShardRewriter &r, MoEOp op) {
  GlobalView &g = r.g;
  MoEConfigAttr c = op.getConfig();
  Value x = gatherTokens(r, op.getInput());
  int64_t hidden = cast<RankedTensorType>(x.getType()).getDimSize(1),
          experts = c.getExperts(), inter = c.getExpertIntermediate(),
          shared = c.getSharedExperts() * c.getSharedIntermediate(),
          b = g.plan.batch, k = c.getTopK();
  MoENames n = moeNames(
      g.plan.modelType, op.getPrefix(),
      hasRouterBias(g.plan.modelType, c.getScoring() == ScoringFunc::sigmoid),
      c.getSharedExpertGate());

  // Router: replicated, every token.
  Value wr = g.weight(n.router, {experts, hidden}, r.act);
  Value br =
      n.routerBias.empty() ? Value() : g.weight(n.routerBias, {experts}, r.act);
  auto router =
      MoERouterOp::create(g.b, g.loc, g.replicated({b, k}, g.b.getF32Type()),
                          g.replicated({b, k}, g.b.getI32Type()), x, wr, br, c);

  // Routed experts: stacked over EP, each expert's intermediate over TPF.
  Axes ep = g.ffn({kEP}), tpf = g.ffn({kTPF});
  SmallVector<Value> weights, biases, sharedWeights;
  auto stacked = [&](StringRef name, ArrayRef<int64_t> one,
                     ArrayRef<Axes> split) {
    SmallVector<int64_t> view = {experts};
    view.append(one.begin(), one.end());
    return g.weight(name, one, view, r.act, g.ffnGrid, split);
  };
  auto whole = [&](StringRef name, ArrayRef<int64_t> shape,
                   ArrayRef<Axes> split) {
    return g.weight(name, shape, {}, r.act, g.ffnGrid, split);
  };
  if (n.fused) {
    weights = {whole(n.gateUp, {experts, hidden, 2 * inter}, {ep, {}, tpf}),
               whole(n.down, {experts, inter, hidden}, {ep, tpf})};
    if (c.getExpertBias())
      biases = {whole(n.gateUpBias, {experts, 2 * inter}, {ep, tpf}),
                whole(n.downBias, {experts, hidden}, {ep})};
  } else {
    weights = {stacked(n.gate, {inter, hidden}, {ep, tpf}),
               stacked(n.up, {inter, hidden}, {ep, tpf}),
               stacked(n.down, {hidden, inter}, {ep, {}, tpf})};
    if (c.getExpertBias())
      biases = {stacked(n.gateBias, {inter}, {ep, tpf}),
                stacked(n.upBias, {inter}, {ep, tpf}),
                stacked(n.downBias, {hidden}, {ep})};
  }
  // Shared experts: their intermediate over the whole FFN group.
  if (shared > 0) {
    Axes all = g.ffn({kEP, kTPF});
    sharedWeights = {whole(n.sharedGate, {shared, hidden}, {all}),
                     whole(n.sharedUp, {shared, hidden}, {all}),
                     whole(n.sharedDown, {hidden, shared}, {{}, all})};
    // Qwen3-Next's sigmoid gate on the shared expert: [1, H], replicated.
    if (c.getSharedExpertGate())
      sharedWeights.push_back(whole(n.sharedExpertGate, {1, hidden}, {}));
  }

  // Helix with EP > 1: each group's sum in its slot of [EP, B, H].
  bool groups = !ep.empty() && !g.plan.tokensSplit();
  auto [partialType, group] = partialResult(r, hidden, g.ffn({kEP, kTPF}));
  Type type = groups ? g.type({g.size(g.ffnGrid, ep), b, hidden}, r.act,
                              g.dist(g.ffnGrid, {ep}, tpf))
                     : Type(partialType);
  Value y = MoEExpertsOp::create(g.b, g.loc, type, x, router.getWeights(),
                                 router.getIds(), weights, biases,
                                 sharedWeights, /*expert_offset=*/Value(), c,
                                 n.fused ? g.b.getUnitAttr() : UnitAttr());
  if (!groups) {
    r.set(op.getResult(), finishFFN(r, y, group.first, group.second));
    return success();
  }
  // Intra-expert all-reduce, inter-expert all-gather, local reduction.
  y = g.allReduce(y, g.ffnGrid, tpf);
  y = g.allGather(y, g.ffnGrid, ep, 0);
  r.set(op.getResult(),
        GroupSumOp::create(g.b, g.loc, g.replicated({b, hidden}, r.act), y));
  return success();
}

} // namespace helix::sharding
