// Parses a helix module with the dialect registered from an installed helix,
// verifies it and checks that it holds one helix.attention.
#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/InitAllHelix.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cstdio>

static const char *kModule = R"mlir(
func.func @f(%q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>,
             %c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = f32>)
    -> tensor<?x128xf32> {
  %o = helix.attention %q, %k, %v cache(%c : !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = f32>)
      {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16>,
       layer = 0 : i64, prefix = "model.layers.0.self_attn"}
      : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
)mlir";

int main() {
  mlir::DialectRegistry registry;
  helix::registerAllHelixDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kModule, &context);
  if (!module) {
    std::fprintf(stderr, "consumer: failed to parse the helix module\n");
    return 1;
  }
  int attention = 0;
  module->walk([&](mlir::helix::AttentionOp) { ++attention; });
  std::printf("parsed a helix module with %d helix.attention\n", attention);
  return attention == 1 ? 0 : 1;
}
