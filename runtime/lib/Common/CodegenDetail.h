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

} // namespace cg
} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_LIB_COMMON_CODEGENDETAIL_H
