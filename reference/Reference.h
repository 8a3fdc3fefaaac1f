//===- Reference.h - Unsharded plain-loops model reference ------*- C++ -*-===//
//
// An independent implementation of the decoder architectures helix
// supports, written from the Hugging Face modeling code
// (modeling_llama / mistral / qwen2 / qwen3, modeling_mixtral,
// modeling_qwen3_moe, modeling_deepseek_v2 / v3, modeling_gpt_oss): one
// process, whole tensors, plain loops accumulating in double, and MLA in its
// original (non-absorbed) form. It shares nothing with the runtime's kernels;
// only the safetensors reader and the decode file formats are common.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_REFERENCE_REFERENCE_H
#define HELIX_REFERENCE_REFERENCE_H

#include "helix/Model/ModelSpec.h"
#include "helix/Runtime/Safetensors.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace helix {
namespace reference {

/// A weight matrix or vector in f32.
struct Mat {
  std::vector<int64_t> shape;
  std::vector<float> v;
  bool empty() const { return v.empty(); }
};

class ReferenceModel {
public:
  /// Loads every tensor the architecture needs; throws rt::Error on a
  /// missing tensor, a wrong shape or an unsupported feature.
  ReferenceModel(const ModelSpec &spec, const nlohmann::json &config,
                 const rt::SafetensorsCheckpoint &ckpt, int64_t batch);
  ~ReferenceModel();

  /// Feeds `token` at `position` to batch row `row` (positions must come in
  /// order 0, 1, 2, ... per row) and returns the logits [vocab].
  std::vector<float> step(int64_t row, int64_t token, int64_t position);

  int64_t vocabSize() const { return spec_.vocabSize; }

private:
  struct Layer;
  struct RowCache;
  ModelSpec spec_;
  std::string type_;
  std::string topkMethod_;
  double swigluLimit_ = 7.0;
  Mat embed_, finalNorm_, lmHead_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<std::unique_ptr<RowCache>> rows_;

  std::vector<float> attention(Layer &l, RowCache &c, size_t li,
                               const std::vector<float> &x, int64_t pos);
  std::vector<float> mla(Layer &l, RowCache &c, size_t li,
                         const std::vector<float> &x, int64_t pos);
  std::vector<float> ffn(Layer &l, const std::vector<float> &x);
  std::vector<float> moe(Layer &l, const std::vector<float> &x);
};

} // namespace reference
} // namespace helix

#endif // HELIX_REFERENCE_REFERENCE_H
