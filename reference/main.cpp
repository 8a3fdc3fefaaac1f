//===- main.cpp - helix-reference -----------------------------------------===//
//
//   helix-reference --config CONFIG --weights PATH --prompts FILE --steps K
//                   [--dump-logits FILE] [--dump-tokens FILE]
//
// Greedy decoding with the unsharded reference model, with the interface and
// the output formats of helix-decode (see helix/Runtime/DecodeIO.h for the
// schedule). One process, no MPI.
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
  std::string config, weights, prompts, dumpLogits, dumpTokens;
  long long steps = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf("usage: helix-reference --config CONFIG --weights PATH "
                  "--prompts FILE --steps K [--dump-logits FILE] "
                  "[--dump-tokens FILE]\n");
      return 0;
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
    else if (a == "--steps") {
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
    reference::ReferenceModel model(spec, raw, ckpt, B);
    int64_t V = spec.vocabSize;

    // The greedy schedule, written out on its own (see DecodeIO.h).
    int64_t longest = 0;
    for (const auto &r : rows)
      longest = std::max<int64_t>(longest, r.size());
    int64_t total = longest + steps - 1;
    std::vector<std::vector<int64_t>> feed = rows, generated(B);
    rt::LogitsWriter out;
    if (!dumpLogits.empty()) {
      out.open(dumpLogits);
      std::printf("%s\n", rt::logitsShapeLine(total, B, V, dumpLogits).c_str());
    }
    std::vector<float> all(B * V);
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
      }
      if (out.isOpen())
        out.write(all.data(), all.size());
    }
    out.close();
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
