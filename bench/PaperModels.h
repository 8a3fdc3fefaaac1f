//===- PaperModels.h - The Helix paper's models, built by hand --*- C++ -*-===//
//
// ModelSpecs of the models the Helix paper evaluates, written out from their
// published configs so that benchmarks and unit tests do not depend on the
// config importer or on data files.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_BENCH_PAPERMODELS_H
#define HELIX_BENCH_PAPERMODELS_H

#include "helix/Model/ModelSpec.h"

namespace helix {
namespace paper {

/// DeepSeek-R1 (= DeepSeek-V3 shape): 61 layers, the first 3 with a dense
/// FFN; MLA; 256 routed experts top-8 plus one shared expert.
ModelSpec deepSeekR1();

/// Llama-3.1-405B: 126 layers, GQA with 128 query and 8 KV heads.
ModelSpec llama405B();

/// The dense model of the paper's Figure 1 / Appendix A: Q=128, K=8, Hsz=128,
/// H=16384, F=65536 (SwiGLU), `layers` identical layers.
ModelSpec figure1Model(int64_t layers = 1);

} // namespace paper
} // namespace helix

#endif // HELIX_BENCH_PAPERMODELS_H
