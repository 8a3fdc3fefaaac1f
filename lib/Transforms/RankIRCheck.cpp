//===- RankIRCheck.cpp - Rank IR is complete and consistent ---------------===//
//
// The checks of helix-verify-partition (also run at the end of
// helix-partition) on SPMD rank IR: one program per pipeline stage; local
// static tensors only; then, for every rank of the grids, its
// rank-dependent values evaluated from its coordinates: every collective
// is issued by all members of its group, in the same order, with the same
// shapes; every shard.send meets its shard.recv; the weight slices the
// ranks load lie in their tensors and cover each exactly.
//
//===----------------------------------------------------------------------===//

#include "RankIR.h"

#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/StringExtras.h"

#include <map>
#include <set>
#include <tuple>

using namespace mlir;
using namespace mlir::helix;

namespace helix::sharding {

namespace {

std::string text(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// What must agree between the members of a collective's group.
std::string signature(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getName() << " " << op->getAttrDictionary() << " : ";
  llvm::interleaveComma(op->getOperandTypes(), os);
  os << " -> ";
  llvm::interleaveComma(op->getResultTypes(), os);
  return s;
}

class Checker {
public:
  /// `drafts`: check the MTP drafter's programs (helix.draft_stage)
  /// instead of the stage programs; each is an SPMD program of its own.
  Checker(ModuleOp module, const Grids &grids, StringRef pass, bool drafts)
      : module(module), grids(grids), pass(pass), drafts(drafts) {}

  LogicalResult run();

private:
  ModuleOp module;
  const Grids &grids;
  StringRef pass;
  bool drafts;
  SmallVector<func::FuncOp> programs; // by stage
  SmallVector<func::FuncOp> layerFunctions;

  // (grid, axes) -> stage -> signatures of its collectives in order.
  using Combo = std::pair<std::string, SmallVector<int16_t>>;
  std::map<Combo, std::map<int64_t, SmallVector<std::string>>> groups;
  // (sender, receiver) -> types sent / received, in order.
  std::map<std::pair<int64_t, int64_t>, SmallVector<std::string>> sent,
      received;
  struct Box {
    SmallVector<int64_t> offsets, sizes;
    bool operator<(const Box &o) const {
      return std::tie(offsets, sizes) < std::tie(o.offsets, o.sizes);
    }
  };
  std::map<std::string, std::pair<SmallVector<int64_t>, std::set<Box>>> weights;

  InFlightDiagnostic fail(Operation *op) {
    return op->emitError() << pass << ": ";
  }
  LogicalResult collectPrograms();
  LogicalResult checkLocal(func::FuncOp func);
  LogicalResult recordCollective(int64_t stage, Operation *op);
  LogicalResult checkRank(int64_t rank);
  LogicalResult recordWeight(int64_t rank, WeightOp w, RankValues &values);
  int64_t peer(int64_t rank, StringRef grid, ArrayRef<int16_t> axes,
               ArrayRef<int64_t> index);
  LogicalResult checkGroups();
  LogicalResult checkSendRecv();
  LogicalResult checkWeights();
};

LogicalResult Checker::collectPrograms() {
  programs.assign(grids.stages(), func::FuncOp());
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func->hasAttr(::mlir::helix::attrs::layers)) {
      if (!func.isPrivate())
        return fail(func) << "layer function @" << func.getSymName()
                          << " must be private (its stage programs call it)";
      layerFunctions.push_back(func);
      continue;
    }
    if (auto draft = func->getAttrOfType<IntegerAttr>(
            ::mlir::helix::attrs::draftStage)) {
      if (drafts) {
        int64_t s = draft.getInt();
        if (s < 0 || s >= grids.stages() || programs[s] ||
            func.getSymName() != kDraftFuncPrefix + std::to_string(s))
          return fail(func) << "the drafter of stage " << s << " must be @"
                            << kDraftFuncPrefix << s << ", one per stage";
        programs[s] = func;
      }
      continue;
    }
    auto stage = func->getAttrOfType<IntegerAttr>(::mlir::helix::attrs::stage);
    if (!stage)
      return fail(func) << "@" << func.getSymName()
                        << " is not a stage program (every function of rank "
                           "IR has "
                        << ::mlir::helix::attrs::stage << ", or "
                        << ::mlir::helix::attrs::layers
                        << " on a layer function, or "
                        << ::mlir::helix::attrs::draftStage
                        << " on the MTP drafter)";
    if (drafts)
      continue;
    int64_t s = stage.getInt();
    if (s < 0 || s >= grids.stages())
      return fail(func) << "stage " << s << " is outside the grids' "
                        << grids.stages() << " pipeline stages";
    if (programs[s])
      return fail(func) << "stage " << s << " has two programs";
    if (func.getSymName() != kStageFuncPrefix + std::to_string(s))
      return fail(func) << "the program of stage " << s << " must be @"
                        << kStageFuncPrefix << s;
    programs[s] = func;
  }
  for (auto [s, func] : llvm::enumerate(programs))
    if (!func && !drafts)
      return module.emitError()
             << pass << ": no program for stage " << s << " (the grids have "
             << grids.stages() << " pipeline stages)";
  // The drafter runs with one pipeline stage (helix compile --mtp).
  if (drafts && !(programs.size() == 1 && programs.front()))
    return module.emitError()
           << pass << ": the MTP drafter needs one "
           << "pipeline stage and its program @" << kDraftFuncPrefix << "0";
  return success();
}

LogicalResult Checker::checkLocal(func::FuncOp func) {
  auto localType = [&](Operation *at, Type t) -> LogicalResult {
    if (auto async = dyn_cast<AsyncType>(t))
      t = async.getValue();
    if (isa<KVCacheType>(t))
      return fail(at) << "global KV cache " << t
                      << " left in rank IR (each rank holds a !helix.kv_shard)";
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (tensor && (!tensor.hasStaticShape() || tensor.getEncoding()))
      return fail(at) << "global or dynamic shape " << t << " left in rank IR";
    return success();
  };
  for (Type t : func.getArgumentTypes())
    if (failed(localType(func, t)))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    if (isa<CollectiveOp>(op)) {
      fail(op) << "global-view helix.collective left in rank IR";
      return WalkResult::interrupt();
    }
    for (Type t : op->getResultTypes())
      if (failed(localType(op, t)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

int64_t Checker::peer(int64_t rank, StringRef grid, ArrayRef<int16_t> axes,
                      ArrayRef<int64_t> index) {
  SmallVector<int64_t> c = grids.coords(grid, rank);
  ArrayRef<int64_t> shape = grids.shapes.find(grid)->second;
  for (auto [a, i] : llvm::zip(axes, index))
    c[a] = i;
  int64_t r = 0;
  for (auto [d, x] : llvm::zip(shape, c))
    r = r * d + x;
  return r;
}

/// Collectives are the same on every rank of a stage: their signatures
/// are recorded once per stage.
LogicalResult Checker::recordCollective(int64_t stage, Operation *op) {
  auto grid = op->getAttrOfType<FlatSymbolRefAttr>("grid");
  if (!grid || !op->getDialect() ||
      op->getDialect()->getNamespace() != "shard" ||
      isa<shard::SendOp, shard::RecvOp>(op))
    return success();
  // (The shard ops' verifiers check that the grid exists.)
  if (isa<shard::ProcessMultiIndexOp, shard::ProcessLinearIndexOp>(op))
    return success();
  auto axes = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes");
  ArrayRef<int16_t> a = axes ? axes.asArrayRef() : ArrayRef<int16_t>();
  groups[{grid.getValue().str(), SmallVector<int16_t>(a)}][stage].push_back(
      signature(op));
  return success();
}

LogicalResult Checker::recordWeight(int64_t rank, WeightOp w,
                                    RankValues &values) {
  std::string name = w.getName().str();
  if (Value layer = w.getLayer()) {
    std::string error;
    FailureOr<int64_t> l = values.eval(layer, error);
    if (failed(l))
      return fail(w) << "the layer of " << w.getName() << " on rank " << rank
                     << ": " << error;
    name = w.getNameOfLayer(*l);
  }
  auto &[view, boxes] = weights[name];
  SmallVector<int64_t> mine = w.getViewShape();
  if (!view.empty() && view != mine)
    return fail(w) << "checkpoint tensor " << name
                   << " is seen with two different views";
  view = mine;
  Box box{{}, SmallVector<int64_t>(w.getType().getShape())};
  for (auto [d, o] : llvm::enumerate(w.getMixedSliceOffsets())) {
    int64_t at = 0;
    if (auto v = dyn_cast<Value>(o)) {
      std::string error;
      FailureOr<int64_t> e = values.eval(v, error);
      if (failed(e))
        return fail(w) << "offset " << d << " of " << name << " on rank "
                       << rank << ": " << error;
      at = *e;
    } else {
      at = cast<IntegerAttr>(cast<Attribute>(o)).getInt();
    }
    if (at < 0 || at + box.sizes[d] > view[d])
      return fail(w) << "rank " << rank << " loads [" << at << ", "
                     << at + box.sizes[d] << ") of dimension " << d << " of "
                     << name << ", outside its view of " << view[d];
    box.offsets.push_back(at);
  }
  boxes.insert(box);
  return success();
}

/// Everything of `rank`: its stage program with its values evaluated.
LogicalResult Checker::checkRank(int64_t rank) {
  func::FuncOp func = programs[grids.stageOf(rank)];
  RankValues values(grids, rank);
  return walkProgram(func, &values, [&](Operation *op) -> LogicalResult {
    if (auto w = dyn_cast<WeightOp>(op))
      return recordWeight(rank, w, values);
    // Every rank-dependent scalar must evaluate on every rank.
    // (Index arguments are step inputs: the micro-batch's first row.)
    for (Value v : op->getOperands())
      if ((v.getType().isIndex() || v.getType().isInteger(1)) &&
          !isa<BlockArgument>(v)) {
        std::string error;
        if (failed(values.eval(v, error)))
          return fail(op) << "operand " << v << " on rank " << rank << ": "
                          << error;
      }
    auto grid = op->getAttrOfType<FlatSymbolRefAttr>("grid");
    auto axes = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes");
    ArrayRef<int16_t> a = axes ? axes.asArrayRef() : ArrayRef<int16_t>();
    if (auto send = dyn_cast<shard::SendOp>(op))
      sent[{rank, peer(rank, grid.getValue(), a, send.getDestination())}]
          .push_back(text(op->getOperand(0).getType()));
    if (auto recv = dyn_cast<shard::RecvOp>(op)) {
      if (!recv.getSource())
        return fail(op) << "shard.recv needs its source";
      received[{peer(rank, grid.getValue(), a, *recv.getSource()), rank}]
          .push_back(text(recv.getType()));
    }
    return success();
  });
}

LogicalResult Checker::checkGroups() {
  for (auto &[combo, perStage] : groups) {
    const auto &[grid, axes] = combo;
    // Group of each rank: its coordinates off the collective's axes.
    std::map<SmallVector<int64_t>, int64_t> firstOf;
    for (int64_t r = 0; r < grids.devices; ++r) {
      SmallVector<int64_t> key = grids.coords(grid, r);
      for (int16_t x : axes)
        key[x] = -1;
      auto [it, first] = firstOf.try_emplace(key, r);
      if (first)
        continue;
      const SmallVector<std::string> &ref = perStage[grids.stageOf(it->second)];
      const SmallVector<std::string> &mine = perStage[grids.stageOf(r)];
      for (size_t i = 0; i < std::max(ref.size(), mine.size()); ++i) {
        if (i < ref.size() && i < mine.size() && ref[i] == mine[i])
          continue;
        auto issues = [](const SmallVector<std::string> &s, size_t i) {
          return i < s.size() ? "`" + s[i] + "`" : std::string("nothing");
        };
        return fail(programs[grids.stageOf(r)])
               << "collective #" << i << " on @" << grid << " grid_axes = ["
               << llvm::join(
                      llvm::map_range(
                          axes, [](int16_t x) { return std::to_string(x); }),
                      ", ")
               << "] in the group of ranks " << it->second << " and " << r
               << ": rank " << it->second << " issues " << issues(ref, i)
               << " but rank " << r << " issues " << issues(mine, i);
      }
    }
  }
  return success();
}

LogicalResult Checker::checkSendRecv() {
  auto all = sent;
  for (auto &[pair, types] : received)
    all.try_emplace(pair);
  for (auto &[pair, unused] : all) {
    const SmallVector<std::string> &s = sent[pair], &r = received[pair];
    if (s != r)
      return fail(programs[grids.stageOf(pair.first)])
             << "rank " << pair.first << " sends " << s.size()
             << " tensors to rank " << pair.second << " ("
             << llvm::join(s, ", ") << ") but rank " << pair.second
             << " receives " << r.size() << " (" << llvm::join(r, ", ") << ")";
  }
  return success();
}

LogicalResult Checker::checkWeights() {
  for (auto &[name, entry] : weights) {
    auto &[view, boxes] = entry;
    int64_t total = 1, loaded = 0;
    for (int64_t d : view)
      total *= d;
    SmallVector<Box> list(boxes.begin(), boxes.end());
    for (auto [i, a] : llvm::enumerate(list)) {
      int64_t volume = 1;
      for (int64_t d : a.sizes)
        volume *= d;
      loaded += volume;
      for (const Box &b : ArrayRef(list).drop_front(i + 1)) {
        bool overlap = true;
        for (size_t d = 0; d < view.size(); ++d)
          overlap &= a.offsets[d] < b.offsets[d] + b.sizes[d] &&
                     b.offsets[d] < a.offsets[d] + a.sizes[d];
        if (overlap)
          return module.emitError()
                 << pass << ": checkpoint tensor " << name
                 << ": the ranks load overlapping but different slices";
      }
    }
    if (loaded != total)
      return module.emitError()
             << pass << ": checkpoint tensor " << name << ": the ranks load "
             << loaded << " of its " << total << " values";
  }
  return success();
}

LogicalResult Checker::run() {
  if (failed(collectPrograms()))
    return failure();
  for (func::FuncOp f : layerFunctions)
    if (failed(checkLocal(f)))
      return failure();
  for (auto [stage, func] : llvm::enumerate(programs)) {
    if (failed(checkLocal(func)))
      return failure();
    int64_t s = stage;
    if (failed(walkProgram(func, nullptr, [&](Operation *op) {
          return recordCollective(s, op);
        })))
      return failure();
  }
  for (int64_t r = 0; r < grids.devices; ++r)
    if (failed(checkRank(r)))
      return failure();
  return success(succeeded(checkGroups()) && succeeded(checkSendRecv()) &&
                 succeeded(checkWeights()));
}

} // namespace

LogicalResult verifyRankIR(ModuleOp module, StringRef pass) {
  FailureOr<Grids> grids = Grids::read(module, pass);
  if (failed(grids))
    return failure();
  bool drafter = llvm::any_of(module.getOps<func::FuncOp>(), [](auto f) {
    return f->hasAttr(::mlir::helix::attrs::draftStage);
  });
  return success(
      succeeded(Checker(module, *grids, pass, false).run()) &&
      (!drafter || succeeded(Checker(module, *grids, pass, true).run())));
}

} // namespace helix::sharding
