//===- main.cpp - helix-reference -----------------------------------------===//
//
//   helix-reference --config CONFIG --weights PATH --prompts FILE --steps K
//                   [--kv-dtype f32|bf16|fp8|fp4]
//                   [--dump-logits FILE] [--dump-tokens FILE]
//                   [--dump-draft-logits FILE]
//
// Greedy decoding with the unsharded reference model, with the interface and
// the output formats of helix-decode (see helix/Runtime/DecodeIO.h for the
// schedule). One process, no MPI. Checkpoints may be bf16 / f16 / f32 or
// quantized (fp8-block, fp8-tensor, nvfp4, mxfp4: dequantized at load);
// --kv-dtype rounds the KV cache as docs/quantization.md specifies (see
// Reference.h). --dump-draft-logits runs the model's MTP layer too: at
// every step, on the pair (the step's hidden state, the next token), and
// writes its logits per position as helix-decode --dump-draft-logits does
// (docs/speculative-decoding.md).
//
// --dense-sparse-attention (for tests, not in --help) makes DeepSeek Sparse
// Attention's layers attend to every cached token, ignoring the indexer's
// top-k: what the same checkpoint gives with an index_topk at least as
// long as the context.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include "helix/Import/HFConfig.h"
#include "helix/Runtime/DecodeIO.h"
#include "helix/Runtime/Error.h"

#include <cstdio>

using namespace helix;

static int fail(const std::string &msg) {
  std::fprintf(stderr, "helix-reference: error: %s\n", msg.c_str());
  return 1;
}

int main(int argc, char **argv) {
  std::string config, weights, prompts, dumpLogits, dumpTokens, dumpDraftLogits;
  reference::KvDtype kvDtype = reference::KvDtype::F32;
  long long steps = -1;
  bool denseSparseAttention = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf(
          "usage: helix-reference --config CONFIG --weights PATH\n"
          "         --prompts FILE --steps K [--kv-dtype f32|bf16|fp8|fp4]\n"
          "         [--dump-logits FILE] [--dump-tokens FILE]\n"
          "\n"
          "Greedy decoding with the unsharded plain-loops reference.\n"
          "\n"
          "  --weights PATH  safetensors file, index or directory: BF16,\n"
          "                  F16, F32, or quantized as config.json's\n"
          "                  quantization_config says (fp8-block,\n"
          "                  fp8-tensor, nvfp4, mxfp4; docs/quantization.md),\n"
          "                  dequantized to f32 at load by the reference\n"
          "  --kv-dtype D    KV-cache format; K and V (MLA: the cached\n"
          "                  latent and roped k_pe) are rounded when\n"
          "                  appended and read back rounded:\n"
          "                    f32   as computed (default)\n"
          "                    bf16  round to nearest even\n"
          "                    fp8   E4M3, per-tensor scale 1.0, saturating\n"
          "                    fp4   NVFP4: E4M3 scale e4m3(amax/6) per 16\n"
          "                          values along the head dim, E2M1 values\n"
          "                          (head dims must be multiples of 16)\n"
          "  --dump-logits F write the logits of every step (as helix-decode)\n"
          "  --dump-tokens F write prompts + generated tokens\n"
          "  --dump-draft-logits F\n"
          "                  run the MTP layer (num_nextn_predict_layers) on\n"
          "                  each step's hidden state and next token; write\n"
          "                  its logits per position, [steps, batch, vocab]\n");
      return 0;
    }
    if (a == "--dense-sparse-attention") {
      denseSparseAttention = true;
      continue;
    }
    if (i + 1 >= argc)
      return fail(a + ": missing value");
    std::string v = argv[++i];
    if (a == "--config")
      config = v;
    else if (a == "--weights")
      weights = v;
    else if (a == "--prompts")
      prompts = v;
    else if (a == "--dump-logits")
      dumpLogits = v;
    else if (a == "--dump-tokens")
      dumpTokens = v;
    else if (a == "--dump-draft-logits")
      dumpDraftLogits = v;
    else if (a == "--kv-dtype") {
      if (!reference::parseKvDtype(v, kvDtype))
        return fail("--kv-dtype: expected f32, bf16, fp8 or fp4, got \"" + v +
                    "\"");
    } else if (a == "--steps") {
      try {
        size_t used = 0;
        steps = std::stoll(v, &used);
        if (used != v.size())
          throw std::exception();
      } catch (const std::exception &) {
        return fail("--steps: expected an integer, got \"" + v + "\"");
      }
    } else
      return fail("unknown option " + a);
  }
  if (config.empty() || weights.empty() || prompts.empty() || steps < 0)
    return fail("--config, --weights, --prompts and --steps are required");

  ModelSpec spec;
  std::string err;
  if (!importHFConfigFile(config, ImportOptions(), spec, err))
    return fail(err);
  try {
    nlohmann::json raw = nlohmann::json::parse(rt::readTextFile(config));
    rt::Prompts rows = rt::parsePrompts(rt::readTextFile(prompts), prompts);
    rt::validatePrompts(rows, spec.vocabSize, steps, spec.maxPositionEmbeddings,
                        prompts);
    rt::SafetensorsCheckpoint ckpt = rt::SafetensorsCheckpoint::open(weights);
    int64_t B = static_cast<int64_t>(rows.size());
    bool drafts = !dumpDraftLogits.empty();
    reference::ReferenceModel model(spec, raw, ckpt, B, kvDtype, drafts);
    model.setSparseSelection(!denseSparseAttention);
    int64_t V = spec.vocabSize;

    // The greedy schedule, written out on its own (see DecodeIO.h).
    int64_t longest = 0;
    for (const auto &r : rows)
      longest = std::max<int64_t>(longest, r.size());
    int64_t total = longest + steps - 1;
    std::vector<std::vector<int64_t>> feed = rows, generated(B);
    rt::LogitsWriter out, draftOut;
    if (!dumpLogits.empty()) {
      out.open(dumpLogits);
      std::printf("%s\n", rt::logitsShapeLine(total, B, V, dumpLogits).c_str());
    }
    if (drafts) {
      draftOut.open(dumpDraftLogits);
      std::printf("draft %s\n",
                  rt::logitsShapeLine(total, B, V, dumpDraftLogits).c_str());
    }
    std::vector<float> all(B * V), draftAll(B * V);
    for (int64_t t = 0; t < total; ++t) {
      for (int64_t r = 0; r < B; ++r) {
        std::vector<float> l = model.step(r, feed[r][t], t);
        std::copy(l.begin(), l.end(), all.begin() + r * V);
        int64_t best = 0;
        for (int64_t v = 1; v < V; ++v)
          if (l[v] > l[best])
            best = v;
        int64_t L = static_cast<int64_t>(rows[r].size());
        if (t >= L - 1 && static_cast<int64_t>(generated[r].size()) < steps)
          generated[r].push_back(best);
        if (static_cast<int64_t>(feed[r].size()) == t + 1)
          feed[r].push_back(best);
        if (drafts) {
          // The MTP layer at position t: this step's hidden state and the
          // token at t + 1.
          auto d = model.mtpStep(r, feed[r][t + 1], t, model.lastHidden(r));
          std::copy(d.logits.begin(), d.logits.end(), draftAll.begin() + r * V);
        }
      }
      if (out.isOpen())
        out.write(all.data(), all.size());
      if (draftOut.isOpen())
        draftOut.write(draftAll.data(), draftAll.size());
    }
    out.commit();
    draftOut.commit();
    for (int64_t r = 0; r < B; ++r)
      std::printf("row %lld: %s\n", static_cast<long long>(r),
                  rt::joinIds(generated[r]).c_str());
    if (!dumpTokens.empty()) {
      std::vector<std::vector<int64_t>> seqs = rows;
      for (int64_t r = 0; r < B; ++r)
        seqs[r].insert(seqs[r].end(), generated[r].begin(), generated[r].end());
      rt::writeTokens(dumpTokens, seqs);
    }
  } catch (const std::exception &e) {
    return fail(e.what());
  }
  return 0;
}
