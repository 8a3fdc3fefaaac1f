//===- OutlineLayers.cpp - One function per distinct kind of layer --------===//
//
// Part of helix-partition: a stage program lists every decoder layer; this
// outlines each layer into a private function and lets identical layers
// share it, so a 126-layer model is a handful of layer functions called
// once per layer. A layer's ops are the ops that depend on its weights
// (`model.layers.<L>.*`) or carry `layer = L`; its weights load inside the
// function under `model.layers.{layer}.*` with the layer index the call
// passes, and the rank's offsets are recomputed there from its
// coordinates. Layers whose ops are not contiguous, or that leave more
// than one value to the rest of the program, stay inline.
//
//===----------------------------------------------------------------------===//

#include "RankIR.h"

#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/ModelIR/ModelIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"

#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::helix;

namespace helix::sharding {

namespace {

constexpr int64_t kPrologue = -1;
constexpr int64_t kEpilogue = std::numeric_limits<int64_t>::max();
constexpr llvm::StringLiteral kLayersPrefix = "model.layers.";

std::optional<int64_t> layerOfName(StringRef name) {
  return ::helix::layerOfCheckpointName(name);
}

/// Index values the rank computes from its coordinates alone: recomputed
/// inside a layer function rather than passed.
class IndexValues {
public:
  bool recomputable(Value v) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    if (auto it = known.find(def); it != known.end())
      return it->second;
    bool ok =
        isa<shard::ProcessMultiIndexOp, shard::ProcessLinearIndexOp>(def) ||
        (isa<arith::ArithDialect>(def->getDialect()) &&
         llvm::all_of(def->getOperands(),
                      [&](Value o) { return recomputable(o); }));
    known[def] = ok;
    return ok;
  }

private:
  DenseMap<Operation *, bool> known;
};

class Outliner {
public:
  Outliner(func::FuncOp stage) : stage(stage), body(stage.getBody().front()) {}
  void run();

private:
  func::FuncOp stage;
  Block &body;
  IndexValues index;
  DenseMap<Operation *, int64_t> layerOf;
  std::map<std::string, func::FuncOp> kinds;

  void assignLayers();
  void outline(int64_t layer, ArrayRef<Operation *> ops);
};

void Outliner::assignLayers() {
  for (Operation &op : body) {
    int64_t l = kPrologue;
    if (auto w = dyn_cast<WeightOp>(op)) {
      std::optional<int64_t> n = layerOfName(w.getName());
      l = n ? *n
            : (w.getName().starts_with("model.embed_tokens") ? kPrologue
                                                             : kEpilogue);
      layerOf[&op] = l;
      continue;
    }
    if (auto a = op.getAttrOfType<IntegerAttr>("layer"))
      l = a.getInt();
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (Operation *def = v.getDefiningOp())
          if (Operation *top = body.findAncestorOpInBlock(*def);
              top && top != &op)
            l = std::max(l, layerOf.lookup(top));
    });
    layerOf[&op] = l;
  }
}

void Outliner::run() {
  assignLayers();
  // Each layer's ops, in order, when no other layer's op lies among them.
  std::map<int64_t, SmallVector<Operation *>> layers;
  for (Operation &op : body)
    if (int64_t l = layerOf.lookup(&op);
        l >= 0 && l != kEpilogue && !isa<func::ReturnOp>(op))
      layers[l].push_back(&op);
  for (auto &[l, ops] : layers) {
    bool contiguous = true;
    for (Operation *op = ops.front(); op != ops.back();
         op = op->getNextNode()) {
      int64_t other = layerOf.lookup(op);
      contiguous &= other == l || other == kPrologue;
    }
    if (contiguous)
      outline(l, ops);
  }
  // Index values only the layers used are recomputed there now.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (op.use_empty() && op.getNumResults() > 0 &&
        index.recomputable(op.getResult(0)))
      op.erase();
}

void Outliner::outline(int64_t layer, ArrayRef<Operation *> ops) {
  MLIRContext *ctx = stage.getContext();
  Location loc = ops.front()->getLoc();
  llvm::SmallPtrSet<Operation *, 32> inLayer(ops.begin(), ops.end());
  auto inside = [&](Value v) {
    Operation *def = v.getDefiningOp();
    Operation *top = def ? body.findAncestorOpInBlock(*def) : nullptr;
    return top && inLayer.contains(top);
  };
  // What the layer takes (in order of first use) and leaves.
  SetVector<Value> inputs;
  SmallVector<Value> outputs;
  for (Operation *op : ops) {
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        bool nested = v.getParentRegion() != &stage.getBody() &&
                      op->isAncestor(v.getParentRegion()->getParentOp());
        if (!nested && !inside(v) && !index.recomputable(v))
          inputs.insert(v);
      }
    });
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *user) {
            return !inLayer.contains(body.findAncestorOpInBlock(*user));
          }))
        outputs.push_back(r);
  }
  // A layer leaves its hidden state; one that would return a weight (a layer
  // of nothing but loads, its ops elsewhere) stays inline, where
  // helix-resident-formats can retype the weight.
  if (outputs.size() != 1 ||
      isa_and_nonnull<WeightOp, KeepIfOp>(outputs[0].getDefiningOp()))
    return;

  // The candidate function: the layer index, then the inputs.
  SmallVector<Type> argTypes = {IndexType::get(ctx)};
  for (Value v : inputs)
    argTypes.push_back(v.getType());
  OpBuilder mb(stage);
  auto fn = func::FuncOp::create(
      mb, loc, "", FunctionType::get(ctx, argTypes, {outputs[0].getType()}));
  Block *entry = fn.addEntryBlock();
  IRMapping map;
  for (auto [v, arg] : llvm::zip(inputs, entry->getArguments().drop_front()))
    map.map(v, arg);
  OpBuilder fb = OpBuilder::atBlockEnd(entry);
  std::function<void(Value)> recompute = [&](Value v) {
    if (map.contains(v) || !index.recomputable(v))
      return;
    Operation *def = v.getDefiningOp();
    for (Value o : def->getOperands())
      recompute(o);
    fb.clone(*def, map);
  };
  for (Operation *op : ops) {
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        recompute(v);
    });
    Operation *copy = fb.clone(*op, map);
    if (auto w = dyn_cast<WeightOp>(copy)) {
      std::string prefix = (kLayersPrefix + Twine(layer) + ".").str();
      w.setName(
          (kLayersPrefix + "{layer}." + w.getName().drop_front(prefix.size()))
              .str());
      w.getLayerMutable().assign(entry->getArgument(0));
    }
    copy->walk([&](Operation *o) {
      if (o->hasAttr("layer"))
        o->setAttr("layer", fb.getI64IntegerAttr(0));
    });
  }
  func::ReturnOp::create(fb, loc, map.lookup(outputs[0]));

  // Identical layers share one function: compare the text with the layer
  // attributes neutral.
  std::string key;
  {
    llvm::raw_string_ostream os(key);
    fn->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  }
  func::FuncOp kind;
  if (auto it = kinds.find(key); it != kinds.end()) {
    kind = it->second;
    fn.erase();
  } else {
    kind = fn;
    kind.setSymName(
        (stage.getSymName() + "_layer_kind" + Twine(kinds.size())).str());
    kind.setPrivate();
    kind->walk([&](Operation *o) {
      if (o->hasAttr("layer"))
        o->setAttr("layer", mb.getI64IntegerAttr(layer));
    });
    kinds[key] = kind;
  }
  SmallVector<int64_t> layersOfKind;
  if (auto a =
          kind->getAttrOfType<DenseI64ArrayAttr>(::mlir::helix::attrs::layers))
    layersOfKind.assign(a.asArrayRef().begin(), a.asArrayRef().end());
  layersOfKind.push_back(layer);
  kind->setAttr(::mlir::helix::attrs::layers,
                mb.getDenseI64ArrayAttr(layersOfKind));

  // The call replaces the layer's ops.
  OpBuilder cb(ctx);
  cb.setInsertionPointAfter(ops.back());
  SmallVector<Value> args = {arith::ConstantIndexOp::create(cb, loc, layer)};
  args.append(inputs.begin(), inputs.end());
  auto call = func::CallOp::create(cb, loc, kind, args);
  outputs[0].replaceUsesWithIf(call.getResult(0), [&](OpOperand &use) {
    return !inLayer.contains(body.findAncestorOpInBlock(*use.getOwner()));
  });
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

} // namespace

void outlineLayers(func::FuncOp stage) { Outliner(stage).run(); }

} // namespace helix::sharding
