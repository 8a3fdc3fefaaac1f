//===- RankIRCheck.cpp - Rank IR is complete and consistent ---------------===//
//
// The checks of helix-verify-partition (also run at the end of
// helix-partition): one program per rank with its coordinates; local
// static tensors only; the ranks of a stage run the same program; every
// collective is issued by all members of its group, in the same order,
// with the same shapes; every shard.send meets its shard.recv; the weight
// slices the ranks load cover each checkpoint tensor exactly.
//
//===----------------------------------------------------------------------===//

#include "RankIR.h"

#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

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
  Checker(ModuleOp module, const Grids &grids, StringRef pass)
      : module(module), grids(grids), pass(pass) {}

  LogicalResult run();

private:
  ModuleOp module;
  const Grids &grids;
  StringRef pass;
  SmallVector<func::FuncOp> ranks;

  // (grid, axes) -> rank -> signatures of its collectives in order.
  using Combo = std::pair<std::string, SmallVector<int16_t>>;
  std::map<Combo, std::map<int64_t, SmallVector<std::string>>> groups;
  // (sender, receiver) -> types sent / received, in order.
  std::map<std::pair<int64_t, int64_t>, SmallVector<std::string>> sent,
      received;
  struct Box {
    SmallVector<int64_t> offsets, sizes;
  };
  std::map<std::string, std::pair<SmallVector<int64_t>, SmallVector<Box>>>
      weights;

  InFlightDiagnostic fail(Operation *op) {
    return op->emitError() << pass << ": ";
  }
  LogicalResult collectRanks();
  LogicalResult checkLocal(func::FuncOp func);
  LogicalResult checkStages();
  LogicalResult record(int64_t rank, Operation *op);
  int64_t peer(int64_t rank, StringRef grid, ArrayRef<int16_t> axes,
               ArrayRef<int64_t> index);
  LogicalResult checkGroups();
  LogicalResult checkSendRecv();
  LogicalResult checkWeights();
};

LogicalResult Checker::collectRanks() {
  ranks.assign(grids.devices, func::FuncOp());
  for (auto func : module.getOps<func::FuncOp>()) {
    auto rank = func->getAttrOfType<IntegerAttr>("helix.rank");
    if (!rank)
      return fail(func) << "@" << func.getSymName()
                        << " is not a rank program (every function of rank "
                           "IR has helix.rank)";
    int64_t r = rank.getInt();
    if (r < 0 || r >= grids.devices)
      return fail(func) << "rank " << r << " is outside the grids' "
                        << grids.devices << " devices";
    if (ranks[r])
      return fail(func) << "rank " << r << " has two programs";
    if (func.getSymName() != kRankFuncPrefix + std::to_string(r))
      return fail(func) << "the program of rank " << r << " must be @"
                        << kRankFuncPrefix << r;
    auto coords = func->getAttrOfType<DictionaryAttr>("helix.coords");
    for (const std::string &grid : grids.order) {
      auto c =
          coords ? coords.getAs<DenseI64ArrayAttr>(grid) : DenseI64ArrayAttr();
      if (!c || c.asArrayRef() != ArrayRef(grids.coords(grid, r)))
        return fail(func) << "helix.coords of rank " << r
                          << " must give its row-major coordinates on @"
                          << grid;
    }
    ranks[r] = func;
  }
  for (auto [r, func] : llvm::enumerate(ranks))
    if (!func)
      return module.emitError()
             << pass << ": no program for rank " << r << " (the grids have "
             << grids.devices << " devices)";
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

LogicalResult Checker::checkStages() {
  // Ranks of a stage run one SPMD program: the same ops in the same order
  // (weights aside: a rank loads only the biases it adds).
  std::map<int64_t, std::pair<int64_t, SmallVector<OperationName>>> programs;
  for (auto [r, func] : llvm::enumerate(ranks)) {
    int64_t stage = grids.coords(grids.order.front(), r).front();
    SmallVector<OperationName> ops;
    func.getBody().walk([&](Operation *op) {
      if (!isa<WeightOp>(op))
        ops.push_back(op->getName());
    });
    auto [it, first] = programs.try_emplace(stage, r, ops);
    if (first)
      continue;
    const SmallVector<OperationName> &ref = it->second.second;
    for (size_t i = 0; i < std::max(ops.size(), ref.size()); ++i)
      if (i >= ops.size() || i >= ref.size() || ops[i] != ref[i])
        return fail(func) << "rank " << r << " and rank " << it->second.first
                          << " are on pipeline stage " << stage
                          << " but their programs differ at op #" << i;
  }
  return success();
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

LogicalResult Checker::record(int64_t rank, Operation *op) {
  auto grid = op->getAttrOfType<FlatSymbolRefAttr>("grid");
  if (!grid || !op->getDialect() || op->getDialect()->getNamespace() != "shard")
    return success();
  if (!grids.shapes.count(grid.getValue()))
    return fail(op) << "unknown grid " << grid;
  auto axes = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes");
  ArrayRef<int16_t> a = axes ? axes.asArrayRef() : ArrayRef<int16_t>();
  if (auto members = op->getAttrOfType<DenseI64ArrayAttr>(kGroupAttr))
    if (members.asArrayRef() != ArrayRef(grids.group(grid.getValue(), rank, a)))
      return fail(op) << kGroupAttr << " of rank " << rank
                      << " is not its group on " << grid << " over its "
                      << "grid_axes";
  std::string type = text(op->getOperand(0).getType());
  if (auto send = dyn_cast<shard::SendOp>(op)) {
    sent[{rank, peer(rank, grid.getValue(), a, send.getDestination())}]
        .push_back(type);
    return success();
  }
  if (auto recv = dyn_cast<shard::RecvOp>(op)) {
    if (!recv.getSource())
      return fail(op) << "shard.recv needs its source";
    received[{peer(rank, grid.getValue(), a, *recv.getSource()), rank}]
        .push_back(text(recv.getType()));
    return success();
  }
  groups[{grid.getValue().str(), SmallVector<int16_t>(a)}][rank].push_back(
      signature(op));
  return success();
}

LogicalResult Checker::checkGroups() {
  for (auto &[combo, perRank] : groups) {
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
      const SmallVector<std::string> &ref = perRank[it->second];
      const SmallVector<std::string> &mine = perRank[r];
      for (size_t i = 0; i < std::max(ref.size(), mine.size()); ++i) {
        if (i < ref.size() && i < mine.size() && ref[i] == mine[i])
          continue;
        auto issues = [](const SmallVector<std::string> &s, size_t i) {
          return i < s.size() ? "`" + s[i] + "`" : std::string("nothing");
        };
        return fail(ranks[r])
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
      return fail(ranks[pair.first])
             << "rank " << pair.first << " sends " << s.size()
             << " tensors to rank " << pair.second << " ("
             << llvm::join(s, ", ") << ") but rank " << pair.second
             << " receives " << r.size() << " (" << llvm::join(r, ", ") << ")";
  }
  return success();
}

LogicalResult Checker::checkWeights() {
  for (func::FuncOp func : ranks) {
    WalkResult walk = func.walk([&](WeightOp w) {
      auto &[view, boxes] = weights[w.getName().str()];
      SmallVector<int64_t> mine = w.getViewShape();
      if (!view.empty() && view != mine) {
        fail(w) << "checkpoint tensor " << w.getName()
                << " is seen with two different views";
        return WalkResult::interrupt();
      }
      view = mine;
      Box box{w.getSliceOffsets(),
              SmallVector<int64_t>(w.getType().getShape())};
      if (!llvm::any_of(boxes, [&](const Box &b) {
            return b.offsets == box.offsets && b.sizes == box.sizes;
          }))
        boxes.push_back(box);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  for (auto &[name, entry] : weights) {
    auto &[view, boxes] = entry;
    int64_t total = 1, loaded = 0;
    for (int64_t d : view)
      total *= d;
    for (auto [i, a] : llvm::enumerate(boxes)) {
      int64_t volume = 1;
      for (int64_t d : a.sizes)
        volume *= d;
      loaded += volume;
      for (const Box &b : ArrayRef(boxes).drop_front(i + 1)) {
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
  if (failed(collectRanks()))
    return failure();
  for (auto [r, func] : llvm::enumerate(ranks)) {
    if (failed(checkLocal(func)))
      return failure();
    WalkResult walk = func.walk([&](Operation *op) {
      return failed(record(r, op)) ? WalkResult::interrupt()
                                   : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  return success(succeeded(checkStages()) && succeeded(checkGroups()) &&
                 succeeded(checkSendRecv()) && succeeded(checkWeights()));
}

} // namespace

LogicalResult verifyRankIR(ModuleOp module, StringRef pass) {
  FailureOr<Grids> grids = Grids::read(module, pass);
  if (failed(grids))
    return failure();
  return Checker(module, *grids, pass).run();
}

} // namespace helix::sharding
