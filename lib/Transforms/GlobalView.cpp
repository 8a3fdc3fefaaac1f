//===- GlobalView.cpp - Building sharded IR in global view ----------------===//

#include "GlobalView.h"

#include "helix/Transforms/ApplyPlan.h"

#include "helix/ModelIR/ModelIR.h"

using namespace mlir;
using namespace mlir::helix;

namespace helix::sharding {

// The dialect's collective kinds (not the cost model's helix::CollectiveKind).
using CollectiveKind = mlir::helix::CollectiveKind;

//===----------------------------------------------------------------------===//
// ShardPlan
//===----------------------------------------------------------------------===//

int64_t ShardPlan::stageOf(int64_t layer) const {
  // Contiguous stages, as the cost model places them (lib/Cost/Prepare.cpp).
  int64_t stage = 0;
  while (stage + 1 < layout.pp && layer >= ((stage + 1) * layers) / layout.pp)
    ++stage;
  return stage;
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A speculative verify step (helix.mtp): K + 1 query rows per request,
/// request-major, over the same cache rows.
static LogicalResult readSpeculative(func::FuncOp func, ShardPlan &p) {
  auto mtp = func->getAttrOfType<MTPAttr>(::mlir::helix::attrs::mtp);
  if (!mtp)
    return success();
  if (p.layout.pp > 1)
    return func.emitError()
           << "helix-insert-collectives: speculative (helix.mtp) steps run "
              "without pipeline stages; the plan has pp = "
           << p.layout.pp;
  p.queries = mtp.getQueryTokens();
  p.batch *= p.queries;
  return success();
}

FailureOr<ShardPlan> ShardPlan::read(func::FuncOp func) {
  auto fail = [&](const Twine &why) {
    func.emitError() << "helix-insert-collectives: " << why;
    return failure();
  };
  auto planAttr = func->getAttrOfType<PlanAttr>(::mlir::helix::attrs::plan);
  auto model = func->getAttrOfType<ModelAttr>(::helix::kModelAttrName);
  if (!planAttr || !model)
    return fail("the decode step has no helix.plan (run helix-search-layouts "
                "or helix-apply-layout first)");
  // The plan and its layouts, read (and checked against the strategy's
  // rules) as helix-apply-layout wrote them.
  ::helix::PlanRecord record;
  std::string error;
  if (!::helix::readPlan(func, record, error))
    return fail(error);
  ShardPlan p;
  p.strategy = record.config.strategy;
  p.layout = record.config.layout;
  p.modelType = model.getModelType().str();
  int64_t layers = 0;
  func.walk([&](AttentionOp) { ++layers; });
  p.layers = layers;
  Config config;
  config.strategy = p.strategy;
  config.layout = p.layout;
  p.place = placementFor(config);
  p.replicas = p.place.ffnReplicas();
  p.perLayer = record.perLayer;
  if (p.perLayer) {
    // The representative layout's FFN group is replicated like its kind's.
    const Layout &l = p.layout;
    p = p.forLayout(LayoutAttr::get(func.getContext(), l.gpus(), l.kvp, l.tpa,
                                    l.tpf, l.ep, 1, 1));
  }

  int64_t b = planAttr.getBatch();
  p.planBatch = b;
  p.batch = p.cacheRows = b;
  if (p.tokensSplit()) {
    // Each DP replica attends for ceil(B / dp) requests (the cost model's
    // share); the step runs that many rows per replica.
    p.batch = p.cacheRows = ceilDiv(b, p.layout.dp) * p.layout.dp;
  } else if (p.layout.pp > 1) {
    // tp-pp: M = min(pp, B) micro-batches of ceil(B / M) requests circulate
    // through the stages; one step processes one micro-batch.
    p.microBatches = std::min(p.layout.pp, b);
    p.batch = ceilDiv(b, p.microBatches);
    p.cacheRows = p.batch * p.microBatches;
  }
  if (failed(readSpeculative(func, p)))
    return failure();
  return p;
}

ShardPlan ShardPlan::forLayout(LayoutAttr layout) const {
  ShardPlan p = *this;
  KindLayout attn, ffn;
  attn.kind = LayerKind::FullAttention;
  attn.kvp = layout.getKvp();
  attn.tpa = layout.getTpa();
  ffn.kind = LayerKind::MoEFFN;
  ffn.tpf = layout.getTpf();
  ffn.ep = layout.getEp();
  const int64_t gpus = layout.getGpus();
  ffn.replicas = gpus / (ffn.tpf * ffn.ep);
  Placement place = kindPlacement(attn, gpus, attn, this->place.slices);
  Placement group = kindPlacement(ffn, gpus, attn, this->place.slices);
  place.tpf = group.tpf;
  place.ep = group.ep;
  place.ffnWidth = group.ffnWidth;
  place.sharedWidth = group.sharedWidth;
  p.place = place;
  p.layout.kvp = attn.kvp;
  p.layout.tpa = attn.tpa;
  p.layout.tpf = ffn.tpf;
  p.layout.ep = ffn.ep;
  p.replicas = ffn.replicas;
  return p;
}

//===----------------------------------------------------------------------===//
// GlobalView
//===----------------------------------------------------------------------===//

static std::array<int64_t, 4> attnShapeOf(const ShardPlan &p) {
  const Layout &l = p.layout;
  return {l.pp, l.dp, l.kvp, l.tpa};
}

static std::array<int64_t, 4> ffnShapeOf(const ShardPlan &p) {
  const Layout &l = p.layout;
  return {l.pp, p.replicas, l.ep, l.tpf};
}

GlobalView::GlobalView(OpBuilder &b, const ShardPlan &plan)
    : b(b), plan(plan), loc(b.getUnknownLoc()), base(plan) {
  attnGrid = replicatedGrid = grid(kAttnGrid, attnShapeOf(plan));
  ffnGrid = grid(kFFNGrid, ffnShapeOf(plan));
}

FlatSymbolRefAttr GlobalView::grid(const std::string &name,
                                   const std::array<int64_t, 4> &shape) {
  if (llvm::none_of(declared,
                    [&](const GridDecl &g) { return g.name == name; }))
    declared.push_back({name, shape});
  return FlatSymbolRefAttr::get(b.getContext(), name);
}

const std::array<int64_t, 4> &
GlobalView::shapeOf(FlatSymbolRefAttr grid) const {
  for (const GridDecl &g : declared)
    if (g.name == grid.getValue())
      return g.shape;
  llvm_unreachable("a grid the global view did not declare");
}

void GlobalView::select(Operation *op) {
  auto carrier = dyn_cast_or_null<LayoutCarrier>(op);
  LayoutAttr layout = carrier ? carrier.getLayoutOrNull() : LayoutAttr();
  if (!base.perLayer || !layout) {
    plan = base;
    attnGrid = replicatedGrid;
    ffnGrid = grid(kFFNGrid, ffnShapeOf(base));
    return;
  }
  plan = base.forLayout(layout);
  // The plan's own grids where the widths are its; otherwise one grid per
  // layout, named by its widths.
  std::array<int64_t, 4> a = attnShapeOf(plan), f = ffnShapeOf(plan);
  auto named =
      [](const char *prefix,
         std::initializer_list<std::pair<const char *, int64_t>> widths) {
        std::string name = prefix;
        for (auto [key, value] : widths)
          name += "_" + std::string(key) + std::to_string(value);
        return name;
      };
  attnGrid = a == attnShapeOf(base)
                 ? replicatedGrid
                 : grid(named(kAttnGrid, {{"kvp", a[2]}, {"tpa", a[3]}}), a);
  ffnGrid = f == ffnShapeOf(base)
                ? grid(kFFNGrid, f)
                : grid(named(kFFNGrid, {{"tpf", f[3]}, {"ep", f[2]}}), f);
}

Axes GlobalView::attn(std::initializer_list<int16_t> axes) const {
  const std::array<int64_t, 4> &shape = shapeOf(attnGrid);
  Axes out;
  for (int16_t a : axes)
    if (shape[a] > 1)
      out.push_back(a);
  return out;
}

Axes GlobalView::ffn(std::initializer_list<int16_t> axes) const {
  const std::array<int64_t, 4> &shape = shapeOf(ffnGrid);
  Axes out;
  for (int16_t a : axes)
    if (shape[a] > 1)
      out.push_back(a);
  return out;
}

int64_t GlobalView::size(FlatSymbolRefAttr grid, ArrayRef<int16_t> axes) const {
  const std::array<int64_t, 4> &shape = shapeOf(grid);
  int64_t n = 1;
  for (int16_t a : axes)
    n *= shape[a];
  return n;
}

Attribute GlobalView::dist(FlatSymbolRefAttr grid, ArrayRef<Axes> split,
                           ArrayRef<int16_t> partial) const {
  bool replicated = partial.empty() && llvm::all_of(split, [](const Axes &a) {
                      return a.empty();
                    });
  if (replicated && plan.layout.pp == 1)
    return {};
  return DistAttr::getFromAxes(b.getContext(),
                               replicated ? replicatedGrid : grid, split,
                               partial, stage);
}

RankedTensorType GlobalView::type(ArrayRef<int64_t> shape, Type elem,
                                  Attribute dist) const {
  return RankedTensorType::get(shape, elem, dist);
}

RankedTensorType GlobalView::replicated(ArrayRef<int64_t> shape,
                                        Type elem) const {
  return type(shape, elem, dist(attnGrid, {}));
}

RankedTensorType GlobalView::withDist(Type type, Attribute dist) {
  auto t = cast<RankedTensorType>(type);
  return RankedTensorType::get(t.getShape(), t.getElementType(), dist);
}

Value GlobalView::weight(StringRef name, ArrayRef<int64_t> shape,
                         ArrayRef<int64_t> view, Type elem,
                         FlatSymbolRefAttr grid, ArrayRef<Axes> split) {
  ArrayRef<int64_t> seen = view.empty() ? shape : view;
  auto t = type(seen, elem, dist(grid, split));
  DenseI64ArrayAttr viewAttr =
      view.empty() ? DenseI64ArrayAttr() : b.getDenseI64ArrayAttr(view);
  return WeightOp::create(b, loc, t, b.getStringAttr(name),
                          b.getDenseI64ArrayAttr(shape), viewAttr, ValueRange(),
                          DenseI64ArrayAttr(), /*layer=*/Value());
}

Value GlobalView::weightBox(StringRef name, ArrayRef<int64_t> shape,
                            ArrayRef<int64_t> view, ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> box, Type elem,
                            FlatSymbolRefAttr grid, ArrayRef<Axes> split) {
  auto t = type(box, elem, dist(grid, split));
  return WeightOp::create(b, loc, t, b.getStringAttr(name),
                          b.getDenseI64ArrayAttr(shape),
                          b.getDenseI64ArrayAttr(view), ValueRange(),
                          b.getDenseI64ArrayAttr(offsets), /*layer=*/Value());
}

ValueDist distOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  ValueDist d;
  d.split.resize(t.getRank());
  if (auto attr = dyn_cast_or_null<DistAttr>(t.getEncoding())) {
    for (unsigned i = 0; i < d.split.size(); ++i)
      d.split[i].assign(attr.getSplitAxes(i).begin(),
                        attr.getSplitAxes(i).end());
    d.partial.assign(attr.getPartial().begin(), attr.getPartial().end());
  }
  return d;
}

Value GlobalView::collective(CollectiveKind kind, Value v,
                             FlatSymbolRefAttr grid, const Axes &axes,
                             Attribute resultDist,
                             ArrayRef<NamedAttribute> extra) {
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("kind", CollectiveKindAttr::get(b.getContext(), kind)),
      b.getNamedAttr("grid", grid),
      b.getNamedAttr("grid_axes", b.getDenseI16ArrayAttr(axes))};
  attrs.append(extra.begin(), extra.end());
  Type result = withDist(v.getType(), resultDist);
  return CollectiveOp::create(b, loc, TypeRange{result}, ValueRange{v}, attrs)
      .getResult();
}

static Axes without(ArrayRef<int16_t> list, ArrayRef<int16_t> drop) {
  Axes out;
  for (int16_t a : list)
    if (!llvm::is_contained(drop, a))
      out.push_back(a);
  return out;
}

Value GlobalView::allReduce(Value v, FlatSymbolRefAttr grid, const Axes &axes) {
  if (axes.empty())
    return v;
  ValueDist d = distOf(v);
  return collective(CollectiveKind::all_reduce, v, grid, axes,
                    dist(grid, d.split, without(d.partial, axes)), {});
}

Value GlobalView::allGather(Value v, FlatSymbolRefAttr grid, const Axes &axes,
                            int64_t dim) {
  if (axes.empty())
    return v;
  ValueDist d = distOf(v);
  d.split[dim].resize(d.split[dim].size() - axes.size());
  return collective(CollectiveKind::all_gather, v, grid, axes,
                    dist(grid, d.split, d.partial),
                    {b.getNamedAttr("gather_axis", b.getI64IntegerAttr(dim))});
}

Value GlobalView::reduceScatter(Value v, FlatSymbolRefAttr grid,
                                const Axes &axes, int64_t dim) {
  if (axes.empty())
    return v;
  ValueDist d = distOf(v);
  d.split[dim].append(axes.begin(), axes.end());
  return collective(CollectiveKind::reduce_scatter, v, grid, axes,
                    dist(grid, d.split, without(d.partial, axes)),
                    {b.getNamedAttr("scatter_axis", b.getI64IntegerAttr(dim))});
}

Value GlobalView::allSlice(Value v, FlatSymbolRefAttr grid, const Axes &axes,
                           int64_t dim) {
  if (axes.empty())
    return v;
  ValueDist d = distOf(v);
  d.split[dim].append(axes.begin(), axes.end());
  return collective(CollectiveKind::all_slice, v, grid, axes,
                    dist(grid, d.split, d.partial),
                    {b.getNamedAttr("slice_axis", b.getI64IntegerAttr(dim))});
}

Value GlobalView::allToAll(Value v, FlatSymbolRefAttr grid, const Axes &axes,
                           int64_t splitDim, int64_t concatDim) {
  if (axes.empty())
    return v;
  ValueDist d = distOf(v);
  d.split[concatDim].resize(d.split[concatDim].size() - axes.size());
  d.split[splitDim].append(axes.begin(), axes.end());
  return collective(
      CollectiveKind::all_to_all, v, grid, axes, dist(grid, d.split, d.partial),
      {b.getNamedAttr("split_axis", b.getI64IntegerAttr(splitDim)),
       b.getNamedAttr("concat_axis", b.getI64IntegerAttr(concatDim))});
}

Value GlobalView::sendRecv(Value v, int64_t from) {
  auto in = cast<DistAttr>(cast<RankedTensorType>(v.getType()).getEncoding());
  return collective(
      CollectiveKind::send_recv, v, in.getGrid(), {kPP}, in.withStage(from + 1),
      {b.getNamedAttr("source", b.getDenseI64ArrayAttr({from})),
       b.getNamedAttr("destination", b.getDenseI64ArrayAttr({from + 1}))});
}

} // namespace helix::sharding
