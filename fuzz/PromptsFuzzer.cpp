//===- PromptsFuzzer.cpp - Fuzz helix-decode's prompt files ---------------===//
//
// Input: the text of a --prompts file, with the vocabulary size, the
// number of tokens to generate and the planned context taken from a hash of
// it (so that every input is also a valid-looking prompt file). The reader
// and validatePrompts must throw rt::Error or accept; an accepted file runs
// the greedy schedule (capped at 4096 steps) as the drivers do.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "helix/Runtime/DecodeIO.h"
#include "helix/Runtime/Error.h"

#include <cstdint>
#include <limits>

using namespace helix;
using namespace helix::rt;

static uint64_t hash(const uint8_t *data, size_t size) {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  Prompts prompts;
  try {
    prompts = parsePrompts(text, "fuzz/prompts.txt");
  } catch (const Error &e) {
    fuzz::checkErrorLine(e.what(), "parsePrompts");
    return 0;
  }
  FUZZ_CHECK(!prompts.empty(), text);

  uint64_t h = hash(data, size);
  static const int64_t kVocab[] = {
      1, 2, 1024, 129280, 201088, std::numeric_limits<int64_t>::max()};
  static const int64_t kGenerate[] = {1,
                                      2,
                                      3,
                                      16,
                                      0,
                                      -1,
                                      std::numeric_limits<int64_t>::max(),
                                      std::numeric_limits<int64_t>::min(),
                                      4096};
  static const int64_t kContext[] = {
      0, 1, 8, 64, 4096, std::numeric_limits<int64_t>::max()};
  int64_t vocab = kVocab[h % 6];
  int64_t generate = kGenerate[(h >> 8) % 9];
  int64_t context = kContext[(h >> 16) % 6];
  try {
    validatePrompts(prompts, vocab, generate, context, "fuzz/prompts.txt");
  } catch (const Error &e) {
    fuzz::checkErrorLine(e.what(), "validatePrompts");
    return 0;
  }
  GreedySchedule schedule(prompts, generate);
  FUZZ_CHECK(schedule.batch() == int64_t(prompts.size()), text);
  FUZZ_CHECK(schedule.steps() >= 0, text);
  if (schedule.steps() > 4096)
    return 0;
  for (int64_t step = 0; step < schedule.steps(); ++step) {
    std::vector<int64_t> fed = schedule.tokensAt(step);
    for (int64_t &t : fed)
      t = (t + 1) % vocab; // the "argmax"
    schedule.record(step, fed);
  }
  for (const std::vector<int64_t> &g : schedule.generated())
    FUZZ_CHECK(int64_t(g.size()) == generate, "generated tokens per row");
  for (const std::vector<int64_t> &row : schedule.sequences())
    (void)joinIds(row);
  return 0;
}
