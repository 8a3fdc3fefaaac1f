//===- RankIRNames.h - The names SPMD rank IR gives its programs -*- C++
//-*-===//
//
// SPMD rank IR (helix-partition's output) holds one function per pipeline
// stage, @decode_step_stage<S> with `helix.stage` = S, and, in a
// speculative program (helix compile --mtp), the MTP drafter's
// @draft_step_stage<S> with `helix.draft_stage` = S. The passes that write
// and check it (lib/Transforms) and code generation that reads it
// (lib/Conversion/HelixToEmitC) spell the names from here.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_DIALECT_HELIX_RANKIRNAMES_H
#define HELIX_DIALECT_HELIX_RANKIRNAMES_H

namespace helix::rankir {

/// The prefix of a stage program's name: decode_step_stage<S>.
inline constexpr const char *kStageFuncPrefix = "decode_step_stage";
/// The prefix of the MTP drafter's program: draft_step_stage<S>.
inline constexpr const char *kDraftFuncPrefix = "draft_step_stage";

} // namespace helix::rankir

#endif // HELIX_DIALECT_HELIX_RANKIRNAMES_H
