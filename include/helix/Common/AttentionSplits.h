//===- AttentionSplits.h - Split-K of the decode attention kernel *- C++
//-*-===//
//
// How many parts the runtime's decode attention kernel cuts each row's key
// range into (split-K, flash-decoding), and so whether it launches the
// merge kernel after it. The CUDA backend launches by this rule and the
// cost model counts the kernels by it: one rule, read by both.
// Header-only and dependency-free.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_ATTENTIONSPLITS_H
#define HELIX_COMMON_ATTENTIONSPLITS_H

#include <algorithm>
#include <cstdint>

namespace helix {

/// Each split keeps at least this many keys (a split's fixed work: loading
/// q, the final write, the merge).
constexpr int64_t kMinKeysPerSplit = 256;
constexpr int kMaxAttentionSplits = 64;
/// Blocks per SM the splits aim for. The kernel holds 6 to 7 blocks of 4
/// warps an SM (registers); eight a SM keep it full through the last wave.
/// (Measured on an H100, docs/gpu.md "Measured on a GPU": at two a SM, 64
/// query heads at 128K tokens ran 320 blocks, 0.4 waves, 2.4 warps a
/// scheduler, 4% of DRAM bandwidth.)
constexpr int64_t kAttentionBlocksPerSM = 8;

/// Split-K for `blocks` (rows x query heads) over at most `maxKeys` keys a
/// row on `sms` SMs: enough parts that blocks x splits fill the device
/// (kAttentionBlocksPerSM a SM) while each keeps kMinKeysPerSplit keys; at most
/// kMaxAttentionSplits. 1: no split, no merge kernel.
inline int attentionSplits(int64_t blocks, int64_t maxKeys, int sms) {
  if (blocks <= 0 || maxKeys < 2 * kMinKeysPerSplit)
    return 1;
  int64_t wanted = (kAttentionBlocksPerSM * int64_t(sms) + blocks - 1) / blocks;
  int64_t most = maxKeys / kMinKeysPerSplit;
  return static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>({wanted, most, int64_t(kMaxAttentionSplits)})));
}

/// Kernels one decode attention launch issues: the attention kernel, and
/// the merge of its parts when it splits.
inline int attentionLaunches(int64_t blocks, int64_t maxKeys, int sms) {
  return attentionSplits(blocks, maxKeys, sms) > 1 ? 2 : 1;
}

} // namespace helix

#endif // HELIX_COMMON_ATTENTIONSPLITS_H
