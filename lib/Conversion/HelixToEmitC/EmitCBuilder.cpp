//===- EmitCBuilder.cpp - Calls of the runtime adapters -------------------===//

#include "EmitCBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace helix::emitc_codegen {

Type opaque(MLIRContext *ctx, llvm::StringRef text) {
  return emitc::OpaqueType::get(ctx, text);
}
Type tensorType(MLIRContext *ctx) { return opaque(ctx, "helix::rt::Tensor"); }
Type intsType(MLIRContext *ctx) { return opaque(ctx, "helix::rt::cg::Ints"); }
Type cacheType(MLIRContext *ctx) { return opaque(ctx, "helix::rt::KVCache"); }
Type asyncType(MLIRContext *ctx) { return opaque(ctx, "helix::rt::cg::Async"); }
Type ropeType(MLIRContext *ctx) { return opaque(ctx, "helix::rt::RopeConfig"); }
Type contextType(MLIRContext *ctx) {
  return opaque(ctx, "helix::rt::Context&");
}
Type stateType(MLIRContext *ctx) {
  return opaque(ctx, "helix::rt::cg::RankState&");
}

std::string cppString(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

Call::Call(OpBuilder &b, Location loc, llvm::StringRef name)
    : b(b), loc(loc),
      callee(name.contains("::") ? name.str() : std::string(kNs) + name.str()) {
}

Call &Call::operand(Value v) {
  args.push_back(b.getIndexAttr(operands.size()));
  operands.push_back(v);
  return *this;
}

Call &Call::optional(Value v) {
  return v ? operand(v) : verbatim("helix::rt::Tensor()");
}

Call &Call::i64(int64_t v) {
  args.push_back(b.getI64IntegerAttr(v));
  return *this;
}

Call &Call::f64(double v) {
  args.push_back(b.getF64FloatAttr(v));
  return *this;
}

Call &Call::boolean(bool v) {
  args.push_back(b.getBoolAttr(v));
  return *this;
}

Call &Call::str(llvm::StringRef s) { return verbatim(cppString(s)); }

Call &Call::ints(llvm::ArrayRef<int64_t> v) {
  auto type =
      RankedTensorType::get({static_cast<int64_t>(v.size())}, b.getI64Type());
  args.push_back(DenseIntElementsAttr::get(type, v));
  return *this;
}

Call &Call::verbatim(llvm::StringRef text) {
  args.push_back(emitc::OpaqueAttr::get(b.getContext(), text));
  return *this;
}

emitc::CallOpaqueOp Call::create(TypeRange results) {
  return emitc::CallOpaqueOp::create(b, loc, results, callee, operands,
                                     b.getArrayAttr(args), ArrayAttr());
}

} // namespace helix::emitc_codegen
