//===- RopeDefaultsTest.cpp - One set of RoPE defaults everywhere ---------===//
//
// A yarn config that leaves beta_fast / beta_slow out must mean the same
// RoPE to the importer, the #helix.rope attribute (built from the import, or
// written by hand without those parameters) and the runtime.
//
//===----------------------------------------------------------------------===//

#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/Import/HFConfig.h"
#include "helix/ModelIR/ModelIR.h"
#include "helix/Runtime/Rope.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

namespace helix {
namespace {

const char *const kYarnLlama = R"({
  "model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1,
  "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 256,
  "max_position_embeddings": 4096,
  "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                   "original_max_position_embeddings": 1024}
})";

class RopeDefaults : public ::testing::Test {
protected:
  RopeDefaults() {
    context.loadDialect<mlir::helix::HelixDialect, mlir::func::FuncDialect>();
  }

  /// The #helix.rope of the first QKV projection of `spec`'s model IR.
  mlir::helix::RopeAttr importedAttr(const ModelSpec &spec) {
    module = buildModelIR(context, spec);
    mlir::helix::RopeAttr rope;
    module->walk([&](mlir::helix::QKVProjOp op) {
      if (!rope)
        rope = op.getRope();
    });
    return rope;
  }

  /// What the runtime builds for a layer with these parameters.
  static rt::RopeConfig runtimeConfig(const RopeParams &params) {
    rt::RopeConfig c;
    static_cast<RopeParams &>(c) = params;
    c.rotaryDim = 16;
    c.maxPosition = 4096;
    return c;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(RopeDefaults, HuggingFaceYarnDefaults) {
  RopeParams p;
  EXPECT_EQ(p.betaFast, 32.0);
  EXPECT_EQ(p.betaSlow, 1.0);
  EXPECT_EQ(p.theta, 10000.0);
  EXPECT_EQ(p.factor, 1.0);
  EXPECT_EQ(p.mscale, 0.0);
  EXPECT_EQ(p.mscaleAllDim, 0.0);
  // The runtime's configuration starts from the same values.
  rt::RopeConfig c;
  EXPECT_EQ(c.betaFast, p.betaFast);
  EXPECT_EQ(c.betaSlow, p.betaSlow);
}

TEST_F(RopeDefaults, ImportedYarnWithoutBetasMatchesRuntime) {
  ModelSpec spec;
  std::string error;
  ASSERT_TRUE(importHFConfigString(kYarnLlama, "cfg/Yarn.json", ImportOptions(),
                                   spec, error))
      << error;
  const RopeParams &imported = spec.layers[0].attention.rope;
  EXPECT_EQ(imported.scaling, "yarn");
  EXPECT_EQ(imported.betaFast, rt::RopeConfig().betaFast);
  EXPECT_EQ(imported.betaSlow, rt::RopeConfig().betaSlow);

  // The IR carries them unchanged (and prints without them: they are the
  // attribute's defaults).
  mlir::helix::RopeAttr attr = importedAttr(spec);
  ASSERT_TRUE(attr);
  RopeParams fromIR = attr.getParams();
  EXPECT_EQ(fromIR.betaFast, imported.betaFast);
  EXPECT_EQ(fromIR.betaSlow, imported.betaSlow);
  EXPECT_EQ(fromIR.originalMaxPosition, 1024);
  std::string printed;
  llvm::raw_string_ostream os(printed);
  mlir::Attribute(attr).print(os);
  EXPECT_EQ(printed.find("beta_fast"), std::string::npos) << printed;

  // The runtime computes the same frequencies from the IR's parameters as
  // from the importer's.
  rt::Rope fromImport(runtimeConfig(imported)), fromAttr(runtimeConfig(fromIR));
  EXPECT_EQ(fromImport.invFreq(1), fromAttr.invFreq(1));
  EXPECT_EQ(fromImport.attentionFactor(), fromAttr.attentionFactor());
}

TEST_F(RopeDefaults, HandWrittenYarnAttrTakesTheSameDefaults) {
  auto attr = llvm::dyn_cast_or_null<
      mlir::helix::RopeAttr>(mlir::parseAttribute(
      R"(#helix.rope<scaling = "yarn", factor = 4.0, original_max_position = 1024>)",
      &context));
  ASSERT_TRUE(attr);
  RopeParams p = attr.getParams();
  rt::RopeConfig runtime;
  EXPECT_EQ(p.betaFast, runtime.betaFast);
  EXPECT_EQ(p.betaSlow, runtime.betaSlow);
  EXPECT_EQ(p.mscale, runtime.mscale);
  EXPECT_EQ(p.mscaleAllDim, runtime.mscaleAllDim);
  EXPECT_EQ(p.theta, runtime.theta);
  // A builder from the shared struct round-trips.
  EXPECT_EQ(mlir::helix::RopeAttr::get(&context, p), attr);
}

} // namespace
} // namespace helix
