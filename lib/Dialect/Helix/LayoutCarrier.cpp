//===- LayoutCarrier.cpp - Ops that carry a #helix.layout -----------------===//

#include "helix/Dialect/Helix/HelixOps.h"

using namespace mlir;
using namespace mlir::helix;

#include "helix/Dialect/Helix/HelixInterfaces.cpp.inc"

LayoutKind QKVProjOp::getLayoutKind() { return LayoutKind::attention; }
LayoutKind AttentionOp::getLayoutKind() { return LayoutKind::attention; }
LayoutKind LinearAttentionOp::getLayoutKind() { return LayoutKind::attention; }
LayoutKind MambaOp::getLayoutKind() { return LayoutKind::attention; }
LayoutKind DSAIndexerOp::getLayoutKind() { return LayoutKind::attention; }
LayoutKind SparseAttentionOp::getLayoutKind() { return LayoutKind::attention; }
LayoutKind LinearOp::getLayoutKind() { return LayoutKind::linear; }
LayoutKind FFNOp::getLayoutKind() { return LayoutKind::ffn; }
LayoutKind MoEOp::getLayoutKind() { return LayoutKind::moe; }
LayoutKind LMHeadOp::getLayoutKind() { return LayoutKind::lm_head; }
