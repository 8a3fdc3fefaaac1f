//===- ShardRecurrent.cpp - Recurrent layers in global view ---------------===//
//
// A Gated DeltaNet layer (helix.linear_attention) keeps a fixed-size state
// per request: it is sharded over heads, never over the sequence. Each rank
// of a TPA slice runs the key heads of its slice (and their value heads)
// for the whole batch; the ranks of the layout's KVP axis hold replicas
// (the same heads, the same states). The output projection that follows is
// row-parallel over the heads, as after attention (shardLinear).
//
//===----------------------------------------------------------------------===//

#include "ShardRewriter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::helix;

namespace helix::sharding {

/// The step's positions (the model IR function's "positions" argument).
static Value stepPositions(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  for (BlockArgument arg : func.getArguments())
    if (auto name =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attrs::name))
      if (name.getValue() == "positions")
        return arg;
  return Value();
}

LogicalResult shardLinearAttention(ShardRewriter &r, LinearAttentionOp op) {
  GlobalView &g = r.g;
  LinearAttentionConfigAttr c = op.getConfig();
  if (c.getVariant() != LinearAttnVariant::gated_deltanet)
    return op.emitOpError()
           << "is planned and priced, but helix-insert-collectives lowers "
              "only Gated DeltaNet linear attention to rank IR yet, not "
           << stringifyLinearAttnVariant(c.getVariant())
           << " (docs/long-context-architectures.md)";
  if (g.plan.queries > 1)
    return op.emitOpError()
           << "helix-insert-collectives: speculative decoding (a verify step "
              "of "
           << g.plan.queries
           << " query rows per request) is not lowered for recurrent layers: "
              "each draft row would need the request's state in turn, and a "
              "rejected draft its rollback";
  Value positions = stepPositions(op);
  if (!positions)
    return op.emitOpError() << "helix-insert-collectives: the decode step has "
                               "no \"positions\" argument (a recurrent layer "
                               "restarts its state at position 0)";
  Axes heads = g.attn({kTPA}), batch = r.batchAxes();
  int64_t tp = g.size(g.attnGrid, heads);
  int64_t hk = c.getKeyHeads(), hv = c.getValueHeads(), dk = c.getKeyHeadDim(),
          dv = c.getValueHeadDim(), k = c.getConvKernel(), rv = hv / hk;
  if (hk % tp != 0)
    return op.emitOpError()
           << "helix-insert-collectives: the layer's " << hk
           << " key heads cannot be split over TPA = " << tp
           << " (a recurrent layer's state is sharded over whole key heads; "
              "choose a TPA that divides them, e.g. --layer-layout "
              "linear_attention=kvp=1,tpa=N)";
  Value x = r.toStream(r.get(op.getInput()));
  int64_t hidden = cast<RankedTensorType>(x.getType()).getDimSize(1),
          b = g.plan.batch;
  std::string p = op.getPrefix().str();
  int64_t perKey = 2 * dk + 2 * rv * dv, channels = 2 * hk * dk + hv * dv;
  Type act = r.act;
  Value wqkvz = g.weight(p + ".in_proj_qkvz.weight", {hk * perKey, hidden},
                         {hk, perKey, hidden}, act, g.attnGrid, {heads});
  Value wba = g.weight(p + ".in_proj_ba.weight", {2 * hv, hidden},
                       {hk, 2 * rv, hidden}, act, g.attnGrid, {heads});
  // conv1d.weight [C, 1, K] seen as [C, K]: the q, k and v channels.
  auto conv = [&](int64_t from, int64_t n) {
    return g.weightBox(p + ".conv1d.weight", {channels, 1, k}, {channels, k},
                       {from, 0}, {n, k}, act, g.attnGrid, {heads});
  };
  Value convQ = conv(0, hk * dk), convK = conv(hk * dk, hk * dk),
        convV = conv(2 * hk * dk, hv * dv);
  Value aLog = g.weight(p + ".A_log", {hv}, {hv}, act, g.attnGrid, {heads});
  Value dtBias = g.weight(p + ".dt_bias", {hv}, {hv}, act, g.attnGrid, {heads});
  Value norm = g.weight(p + ".norm.weight", {dv}, act);
  double eps = 1e-6;
  op->getParentOfType<func::FuncOp>().walk([&](RMSNormOp n) {
    eps = n.getEps().convertToDouble();
    return WalkResult::interrupt();
  });
  auto type = g.type({b, hv * dv}, act, g.dist(g.attnGrid, {batch, heads}));
  Value out = GDNStepOp::create(
      g.b, g.loc, type, x, r.streamPositions(positions), wqkvz, wba, convQ,
      convK, convV, aLog, dtBias, norm, r.get(op.getState()), r.rowBase, c,
      g.b.getF64FloatAttr(eps), op.getLayerAttr());
  r.set(op.getResult(), out);
  return success();
}

} // namespace helix::sharding
