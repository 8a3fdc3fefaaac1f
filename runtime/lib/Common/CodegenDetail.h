//===- CodegenDetail.h - Helpers shared by the codegen adapters -*- C++ -*-===//

#ifndef HELIX_RUNTIME_LIB_COMMON_CODEGENDETAIL_H
#define HELIX_RUNTIME_LIB_COMMON_CODEGENDETAIL_H

#include "helix/Runtime/Codegen.h"

namespace helix {
namespace rt {
namespace cg {

/// Elements [begin, begin + count) of dimension `axis` (a view for axis 0).
Tensor sliceAxisOf(Context &ctx, const Tensor &x, int64_t axis, int64_t begin,
                   int64_t count);
Ints sliceAxisOf(const Ints &x, int64_t axis, int64_t begin, int64_t count);

/// Positions below `n` that KVP rank `r` holds (#helix.kv_placement:
/// blocks of `block` positions round-robin over `kvp` ranks); position p's
/// entry on its rank is ownedBelow(p + 1, ...) - 1.
int64_t ownedBelow(int64_t n, int64_t r, int64_t block, int64_t kvp);
/// W_UV for MLA (wUV defined), then helix.attention_partial's packing
/// [B, Hq * headSplit, Dv / headSplit + 1] (outputs, then each head's LSE).
Tensor packPartial(Context &ctx, const AttentionPartial &part,
                   const Tensor &wUV, int64_t headSplit);

/// A generated program's driver settings (name, ranks, vocabulary,
/// context, default backend).
DecodeProgram generatedProgram(const std::string &name, int worldSize,
                               int64_t vocab, int64_t maxContext,
                               const std::string &defaultBackend);
/// Throws Error when a prompt file has more rows than the plan's batch.
void checkPromptRows(int64_t rows, int64_t planned);
/// The registered program of the rank's pipeline stage; throws Error when
/// there is none.
const StageProgram &stageProgramOf(Context &ctx);
/// The start-up log of how a state's weights are kept (rank 0's share).
void logWeightFormats(Context &ctx, const std::string &name,
                      const RankState &state);

} // namespace cg
} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_LIB_COMMON_CODEGENDETAIL_H
