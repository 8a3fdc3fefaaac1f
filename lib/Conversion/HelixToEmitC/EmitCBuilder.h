//===- EmitCBuilder.h - Calls of the runtime adapters -----------*- C++ -*-===//
//
// Private to lib/Conversion/HelixToEmitC: the C++ types of rank-IR values
// and a builder of `emitc.call_opaque` ops whose arguments are operands
// and constants (integers, floats, booleans, strings, integer lists).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_CONVERSION_HELIXTOEMITC_EMITCBUILDER_H
#define HELIX_LIB_CONVERSION_HELIXTOEMITC_EMITCBUILDER_H

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace helix::emitc_codegen {

/// The runtime namespace of the adapters.
inline constexpr const char *kNs = "helix::rt::cg::";

/// !emitc.opaque<"text">.
mlir::Type opaque(mlir::MLIRContext *ctx, llvm::StringRef text);
mlir::Type tensorType(mlir::MLIRContext *ctx);  // helix::rt::Tensor
mlir::Type intsType(mlir::MLIRContext *ctx);    // helix::rt::cg::Ints
mlir::Type cacheType(mlir::MLIRContext *ctx);   // helix::rt::KVCache
mlir::Type asyncType(mlir::MLIRContext *ctx);   // helix::rt::cg::Async
mlir::Type ropeType(mlir::MLIRContext *ctx);    // helix::rt::RopeConfig
mlir::Type contextType(mlir::MLIRContext *ctx); // helix::rt::Context&
mlir::Type stateType(mlir::MLIRContext *ctx);   // helix::rt::cg::RankState&

/// A C++ string literal for `s`.
std::string cppString(llvm::StringRef s);

/// Builds one `emitc.call_opaque` of an adapter.
class Call {
public:
  /// `callee` without namespace is an adapter in helix::rt::cg.
  Call(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef callee);

  Call &operand(mlir::Value v);
  /// An optional tensor operand: absent values pass helix::rt::Tensor().
  Call &optional(mlir::Value v);
  Call &i64(int64_t v);
  /// An optional index operand: absent values pass 0.
  Call &indexOr0(mlir::Value v) { return v ? operand(v) : i64(0); }
  Call &f64(double v);
  Call &boolean(bool v);
  Call &str(llvm::StringRef s);
  Call &ints(llvm::ArrayRef<int64_t> v);
  Call &verbatim(llvm::StringRef text);

  mlir::emitc::CallOpaqueOp create(mlir::TypeRange results = {});
  mlir::Value create1(mlir::Type result) {
    return create(mlir::TypeRange{result}).getResult(0);
  }

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
  std::string callee;
  llvm::SmallVector<mlir::Value> operands;
  llvm::SmallVector<mlir::Attribute> args;
};

} // namespace helix::emitc_codegen

#endif // HELIX_LIB_CONVERSION_HELIXTOEMITC_EMITCBUILDER_H
