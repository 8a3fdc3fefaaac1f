//===- InitAllHelix.h - Register everything helix provides ------*- C++ -*-===//
//
// One place that registers the helix dialect with the upstream dialects its
// IR uses, every helix pass and every helix translation, so tools (and other
// compilers embedding helix) stay thin.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_INITALLHELIX_H
#define HELIX_INITALLHELIX_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace helix {

/// The helix dialect and the upstream dialects helix IR is made of (func,
/// arith, tensor, shard, emitc).
void registerAllHelixDialects(mlir::DialectRegistry &registry);

/// Every helix pass and pipeline.
void registerAllHelixPasses();

/// Every helix translation (helix-translate).
void registerAllHelixTranslations();

} // namespace helix

#endif // HELIX_INITALLHELIX_H
