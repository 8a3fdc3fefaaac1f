//===- ShardAttention.cpp - KVP x TPA attention in global view ------------===//
//
// Each rank projects the query heads of its TPA slice (and their KV heads,
// duplicated when TPA exceeds them) for the whole batch, attends over its
// KV shard into partial outputs with their log-sum-exp, exchanges them
// (Helix: one all-to-all over the query-head axis within the KVP group;
// Medha-style kvp: an all-gather), combines them exactly, and runs the
// output projection row-parallel over the heads it now holds, followed by
// an all-reduce.
//
//===----------------------------------------------------------------------===//

#include "ShardRewriter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::helix;

namespace helix::sharding {

static std::string join(StringRef prefix, StringRef name) {
  return (prefix + "." + name).str();
}

static LogicalResult shardGQA(ShardRewriter &r, QKVProjOp op) {
  GlobalView &g = r.g;
  AttentionConfigAttr c = op.getConfig();
  StringRef p = op.getPrefix();
  Value x = r.toStream(r.get(op.getInput()));
  int64_t hidden = cast<RankedTensorType>(x.getType()).getDimSize(1);
  int64_t hq = c.getHeads(), kv = c.getKvHeads(), d = c.getHeadDim(),
          dv = c.getVHeadDim(), b = g.plan.batch;
  Axes heads = g.attn({kTPA}), batch = r.batchAxes();
  auto perHead = [&](StringRef name, int64_t n, int64_t dim) {
    return g.weight(join(p, name), {n * dim, hidden}, {n, dim, hidden}, r.act,
                    g.attnGrid, {heads});
  };
  auto bias = [&](StringRef name, int64_t n, int64_t dim) {
    return g.weight(join(p, name), {n * dim}, {n, dim}, r.act, g.attnGrid,
                    {heads});
  };
  // Gated attention output (Qwen3-Next, Qwen3.5): q_proj yields each
  // head's query, then its gate; the query rows here, the gate rows at the
  // output (shardAttentionOf).
  Value wq = c.getOutputGate()
                 ? g.weightBox(join(p, "q_proj.weight"), {hq * 2 * d, hidden},
                               {hq, 2 * d, hidden}, {0, 0, 0}, {hq, d, hidden},
                               r.act, g.attnGrid, {heads})
                 : perHead("q_proj.weight", hq, d);
  Value wk = perHead("k_proj.weight", kv, d);
  Value wv = perHead("v_proj.weight", kv, dv);
  Value bq, bk, bv, qn, kn;
  if (c.getQkvBias()) {
    bq = bias("q_proj.bias", hq, d);
    bk = bias("k_proj.bias", kv, d);
    bv = bias("v_proj.bias", kv, dv);
  }
  if (c.getQkNorm()) {
    qn = g.weight(join(p, "q_norm.weight"), {d}, r.act);
    kn = g.weight(join(p, "k_norm.weight"), {d}, r.act);
  }
  Attribute dist = g.dist(g.attnGrid, {batch, heads});
  auto qkv = QKVOp::create(g.b, g.loc, g.type({b, hq, d}, r.act, dist),
                           g.type({b, kv, d}, r.act, dist),
                           g.type({b, kv, dv}, r.act, dist), x,
                           r.streamPositions(op.getPositions()), wq, wk, wv, bq,
                           bk, bv, qn, kn, c, op.getRope(), op.getLayerAttr());
  r.set(op.getQ(), qkv.getQ());
  r.set(op.getK(), qkv.getK());
  r.set(op.getV(), qkv.getV());
  return success();
}

static LogicalResult shardMLA(ShardRewriter &r, QKVProjOp op) {
  GlobalView &g = r.g;
  AttentionConfigAttr c = op.getConfig();
  StringRef p = op.getPrefix();
  Value x = r.toStream(r.get(op.getInput()));
  int64_t hidden = cast<RankedTensorType>(x.getType()).getDimSize(1);
  int64_t hq = c.getHeads(), lora = c.getKvLoraRank(), rope = c.getRopeDim(),
          nope = c.getHeadDim() - rope, qLora = c.getQLoraRank(),
          b = g.plan.batch;
  Axes heads = g.attn({kTPA}), batch = r.batchAxes();
  Value wqA, qNorm, wqB;
  if (qLora > 0) {
    wqA = g.weight(join(p, "q_a_proj.weight"), {qLora, hidden}, r.act);
    qNorm = g.weight(join(p, "q_a_layernorm.weight"), {qLora}, r.act);
  }
  int64_t qIn = qLora > 0 ? qLora : hidden;
  wqB = g.weight(join(p, qLora > 0 ? "q_b_proj.weight" : "q_proj.weight"),
                 {hq * (nope + rope), qIn}, {hq, nope + rope, qIn}, r.act,
                 g.attnGrid, {heads});
  Value wkvA = g.weight(join(p, "kv_a_proj_with_mqa.weight"),
                        {lora + rope, hidden}, r.act);
  Value kvNorm = g.weight(join(p, "kv_a_layernorm.weight"), {lora}, r.act);
  int64_t upRows = nope + c.getVHeadDim();
  Value wkvB = g.weight(join(p, "kv_b_proj.weight"), {hq * upRows, lora},
                        {hq, upRows, lora}, r.act, g.attnGrid, {heads});
  auto qkv = MLAQKVOp::create(
      g.b, g.loc,
      g.type({b, hq, lora + rope}, r.act, g.dist(g.attnGrid, {batch, heads})),
      g.type({b, 1, lora + rope}, r.act, g.dist(g.attnGrid, {batch})), x,
      r.streamPositions(op.getPositions()), wqA, qNorm, wqB, wkvA, kvNorm, wkvB,
      c, op.getRope(), op.getLayerAttr());
  r.latentUpProj[qkv.getQ()] = wkvB;
  r.set(op.getQ(), qkv.getQ());
  r.set(op.getK(), qkv.getLatent());
  return success();
}

LogicalResult shardQKV(ShardRewriter &r, QKVProjOp op) {
  return op.getConfig().isMLA() ? shardMLA(r, op) : shardGQA(r, op);
}

/// Pieces each head's partial output is cut into so that the all-to-all
/// spreads the TPA slice's heads evenly over the KVP group.
static FailureOr<int64_t> headSplit(ShardRewriter &r, Operation *op,
                                    AttentionConfigAttr c) {
  const Layout &l = r.g.plan.layout;
  if (!r.g.plan.allToAll())
    return int64_t(1);
  int64_t local = c.getHeads() / l.tpa;
  if (int64_t s = helixHeadSplit(local, l.kvp, c.getVHeadDim()))
    return s;
  return op->emitOpError() << "helix-insert-collectives: the " << local
                           << " query heads of a TPA slice cannot be spread "
                              "over the "
                           << l.kvp << " KVP ranks of the all-to-all";
}

/// The partials of each KV shard, exchanged and combined: helix.attention,
/// or (with `selected`) helix.sparse_attention.
static LogicalResult shardAttentionOf(ShardRewriter &r, Operation *op,
                                      AttentionConfigAttr c, Value modelQ,
                                      Value modelK, Value modelV,
                                      Value modelCache, Value selected,
                                      IntegerAttr layer, StringRef prefix,
                                      Value result) {
  GlobalView &g = r.g;
  FailureOr<int64_t> split = headSplit(r, op, c);
  if (failed(split))
    return failure();
  int64_t s = *split, hq = c.getHeads(), dv = c.getVHeadDim(), b = g.plan.batch;
  bool exchange = g.plan.allToAll() || g.plan.allGather();
  Axes kvp = exchange ? g.attn({kKVP}) : Axes();
  int64_t parts = g.size(g.attnGrid, kvp);
  auto partialType =
      g.type({parts, b, hq * s, dv / s + 1}, g.b.getF32Type(),
             g.dist(g.attnGrid, {kvp, r.batchAxes(), g.attn({kTPA})}));
  Value q = r.get(modelQ);
  Value v = modelV ? r.get(modelV) : Value();
  Value wUV = c.isMLA() ? r.latentUpProj.lookup(q) : Value();
  Value partial = AttentionPartialOp::create(
      g.b, g.loc, partialType, q, r.get(modelK), v, r.get(modelCache), wUV,
      Value(), Value(), r.rowBase, selected, /*kvp_rank=*/Value(), c, layer,
      g.b.getI64IntegerAttr(s), g.b.getI64IntegerAttr(0),
      g.b.getI64IntegerAttr(g.plan.cacheRows), KVPlacementAttr(),
      g.b.getI64IntegerAttr(g.plan.queries));
  Value gathered = g.plan.allToAll()
                       ? g.allToAll(partial, g.attnGrid, kvp, 2, 0)
                       : g.allGather(partial, g.attnGrid, kvp, 0);
  Axes headAxes = distOf(gathered).split[2];
  Value sinks;
  if (c.getSinks())
    sinks = g.weight(join(prefix, "sinks"), {hq}, {}, r.act, g.attnGrid,
                     {headAxes});
  auto outType = g.type({b, hq * dv}, r.act,
                        g.dist(g.attnGrid, {r.batchAxes(), headAxes}));
  Value out = LSECombineOp::create(g.b, g.loc, outType, gathered, sinks);
  if (c.getOutputGate()) {
    // The gate rows of a head are one box of q_proj; a rank holding a
    // piece of each head (head_split > 1) would need strided boxes.
    if (s > 1)
      return op->emitOpError()
             << "helix-insert-collectives: the gated attention output is not "
                "lowered when the all-to-all cuts each head into "
             << s
             << " pieces (fewer query heads per TPA slice than KVP ranks); "
                "choose a layout whose KVP divides the query heads of a TPA "
                "slice";
    auto qkv = modelQ.getDefiningOp<QKVProjOp>();
    if (!qkv)
      return op->emitOpError() << "helix-insert-collectives: a gated "
                                  "attention output needs the layer's "
                                  "helix.qkv_proj (its input and q_proj)";
    Value x = r.toStream(r.get(qkv.getInput()));
    int64_t hidden = cast<RankedTensorType>(x.getType()).getDimSize(1),
            d = c.getHeadDim();
    Value wGate =
        g.weightBox(join(prefix, "q_proj.weight"), {hq * 2 * d, hidden},
                    {hq, 2 * d, hidden}, {0, d, 0}, {hq, d, hidden}, r.act,
                    g.attnGrid, {headAxes});
    out = OutputGateOp::create(g.b, g.loc, outType, out, x, wGate);
  }
  r.set(result, out);
  return success();
}

LogicalResult shardAttention(ShardRewriter &r, AttentionOp op) {
  return shardAttentionOf(r, op, op.getConfig(), op.getQ(), op.getK(),
                          op.getV(), op.getCache(), Value(), op.getLayerAttr(),
                          op.getPrefix(), op.getResult());
}

LogicalResult shardSparseAttention(ShardRewriter &r, SparseAttentionOp op) {
  Value selected = r.get(op.getSelected());
  return shardAttentionOf(r, op, op.getConfig(), op.getQ(), op.getK(), Value(),
                          op.getCache(), selected, op.getLayerAttr(),
                          op.getPrefix(), op.getResult());
}

LogicalResult shardIndexer(ShardRewriter &r, DSAIndexerOp op) {
  GlobalView &g = r.g;
  IndexerConfigAttr c = op.getConfig();
  std::string p = op.getPrefix().str();
  // The MLA's q latent: its q_a_proj and q_a_layernorm, beside the indexer.
  StringRef attn = StringRef(p).rsplit('.').first;
  Value x = r.toStream(r.get(op.getInput()));
  int64_t hidden = cast<RankedTensorType>(x.getType()).getDimSize(1),
          b = g.plan.batch, nh = c.getHeads(), d = c.getHeadDim(),
          ql = op.getQLoraRank();
  if (ql <= 0)
    return op.emitOpError() << "helix-insert-collectives: the indexer reads "
                               "the MLA's q latent: the layer needs a "
                               "q_lora_rank";
  QKVProjOp mla;
  for (Operation *user : op.getInput().getUsers())
    if (auto qkv = dyn_cast<QKVProjOp>(user);
        qkv && qkv.getLayer() == op.getLayer())
      mla = qkv;
  if (!mla)
    return op.emitOpError() << "helix-insert-collectives: no helix.qkv_proj "
                               "of layer "
                            << op.getLayer() << " beside the indexer";
  Value wqA = g.weight(join(attn, "q_a_proj.weight"), {ql, hidden}, r.act);
  Value qNorm = g.weight(join(attn, "q_a_layernorm.weight"), {ql}, r.act);
  Value wqB = g.weight(p + ".wq_b.weight", {nh * d, ql}, {nh, d, ql}, r.act,
                       g.attnGrid, {});
  Value wk = g.weight(p + ".wk.weight", {d, hidden}, r.act);
  Value kNorm = g.weight(p + ".k_norm.weight", {d}, r.act);
  Value kBias = g.weight(p + ".k_norm.bias", {d}, r.act);
  Value wProj = g.weight(p + ".weights_proj.weight", {nh, hidden}, r.act);
  double eps = 1e-6;
  op->getParentOfType<func::FuncOp>().walk([&](RMSNormOp n) {
    eps = n.getEps().convertToDouble();
    return WalkResult::interrupt();
  });
  // Each KV shard's candidates, gathered over the KVP group.
  Axes kvp = g.attn({kKVP}), batch = r.batchAxes();
  int64_t parts = g.size(g.attnGrid, kvp);
  auto type = g.type({parts, b, c.getTopK(), 2}, g.b.getF32Type(),
                     g.dist(g.attnGrid, {kvp, batch}));
  Value candidates = IndexCandidatesOp::create(
      g.b, g.loc, type, x, r.streamPositions(op.getPositions()), wqA, qNorm,
      wqB, wk, kNorm, kBias, wProj, r.get(op.getCache()), Value(), Value(),
      r.rowBase, c, mla.getRope(), g.b.getF64FloatAttr(eps), op.getLayerAttr(),
      g.b.getI64IntegerAttr(g.plan.cacheRows), KVPlacementAttr());
  Value all = g.allGather(candidates, g.attnGrid, kvp, 0);
  auto selType =
      g.type({b, c.getTopK()}, g.b.getI64Type(), g.dist(g.attnGrid, {batch}));
  r.set(op.getSelected(),
        TopkMergeOp::create(g.b, g.loc, selType, all,
                            g.b.getI64IntegerAttr(c.getTopK())));
  return success();
}

LogicalResult shardLinear(ShardRewriter &r, LinearOp op) {
  GlobalView &g = r.g;
  Value x = r.get(op.getInput());
  ValueDist d = distOf(x);
  int64_t out = op.getResult().getType().getDimSize(1),
          in = cast<RankedTensorType>(x.getType()).getDimSize(1);
  // Row-parallel over the input columns each rank holds: partial sums over
  // those ranks (as a set: axes in grid order).
  Axes cols = d.split[1], ranks = cols;
  llvm::sort(ranks);
  Value w =
      g.weight(op.getWeight(), {out, in}, {}, r.act, g.attnGrid, {{}, cols});
  Value bias = op.getBias() ? g.weight(*op.getBias(), {out}, r.act) : Value();
  auto type = g.type({g.plan.batch, out}, r.act,
                     g.dist(g.attnGrid, {d.split[0]}, ranks));
  Value y = MatmulOp::create(g.b, g.loc, type, x, w, bias);
  r.set(op.getResult(), g.allReduce(y, g.attnGrid, ranks));
  return success();
}

} // namespace helix::sharding
