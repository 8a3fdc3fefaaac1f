//===- DecodeIO.h - Prompt files and decode dumps ---------------*- C++ -*-===//
//
// The file formats of helix-decode (and helix-reference, which shares them):
//
//   --prompts FILE     one line per batch row, comma-separated token ids;
//                      rows may have different lengths; blank lines and
//                      lines starting with '#' are skipped.
//   --dump-tokens FILE one line per row: the prompt and the generated ids,
//                      comma-separated.
//   --dump-logits FILE float32 little-endian, row-major [steps, batch, vocab]:
//                      the logits of every row at every decode step.
//
// The greedy schedule both programs follow: every row starts at position 0
// and advances one position per step. Row r with a prompt of L_r tokens is
// fed its prompt one token per step (steps 0 .. L_r - 1); the logits of step
// L_r - 1 + j give its generated token j (j = 0 .. K - 1), which is fed at the
// next step. The batch runs in lockstep for max_r(L_r) + K - 1 steps; a row
// that has its K tokens keeps decoding greedily (its extra tokens are not
// reported) until the longest row finishes, so every step has logits for
// every row. Positions used: 0 .. max_r(L_r) + K - 2.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_DECODEIO_H
#define HELIX_RUNTIME_DECODEIO_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace helix {
namespace rt {

using Prompts = std::vector<std::vector<int64_t>>;

/// Parses prompt-file text; throws Error naming `sourceName` and the line on
/// a malformed line (non-integer, empty field), or when there are no rows.
Prompts parsePrompts(const std::string &text, const std::string &sourceName);

/// Reads the whole file; throws Error when it cannot be read.
std::string readTextFile(const std::string &path);

/// Number of decode steps the schedule runs: max prompt length + K - 1.
int64_t scheduleSteps(const Prompts &prompts, int64_t generate);

/// Throws Error when a token id is outside [0, vocab), K < 1, or the
/// schedule needs more than `maxContext` positions (0: no limit). Messages
/// name the row (1-based line of the non-comment rows) and the token.
void validatePrompts(const Prompts &prompts, int64_t vocab, int64_t generate,
                     int64_t maxContext, const std::string &sourceName);

/// Greedy bookkeeping shared by drivers: which token each row is fed and
/// what it generated.
class GreedySchedule {
public:
  GreedySchedule(Prompts prompts, int64_t generate);
  int64_t batch() const { return static_cast<int64_t>(prompts_.size()); }
  int64_t steps() const { return steps_; }
  /// Tokens fed at `step` (one per row).
  std::vector<int64_t> tokensAt(int64_t step) const;
  /// Records the argmax of `step`'s logits for every row.
  void record(int64_t step, const std::vector<int64_t> &next);
  /// The K generated tokens of each row.
  const std::vector<std::vector<int64_t>> &generated() const {
    return generated_;
  }
  /// Prompt followed by the generated tokens, per row.
  std::vector<std::vector<int64_t>> sequences() const;

private:
  Prompts prompts_;
  int64_t generate_;
  int64_t steps_;
  std::vector<std::vector<int64_t>> fed_;       // everything fed or to feed
  std::vector<std::vector<int64_t>> generated_; // the K reported tokens
};

/// Writes [steps, batch, vocab] float32 little-endian logits, one step at a
/// time, into PATH.partial; commit() renames it to PATH once every step is
/// written, so an interrupted run never leaves a partial file under the
/// name asked for.
class LogitsWriter {
public:
  LogitsWriter() = default;
  ~LogitsWriter();
  LogitsWriter(const LogitsWriter &) = delete;
  LogitsWriter &operator=(const LogitsWriter &) = delete;
  /// Throws Error when the file cannot be created.
  void open(const std::string &path);
  bool isOpen() const { return file_ != nullptr; }
  void write(const float *logits, size_t count);
  /// Closes the file and gives it its name; throws Error on failure.
  void commit();
  /// Closes without committing (the .partial file stays).
  void close();

private:
  std::FILE *file_ = nullptr;
  std::string path_;
};

/// Writes one line per row, comma-separated; throws Error on failure.
void writeTokens(const std::string &path,
                 const std::vector<std::vector<int64_t>> &rows);

/// "1,2,3".
std::string joinIds(const std::vector<int64_t> &ids);

/// The line the drivers print first when dumping logits.
std::string logitsShapeLine(int64_t steps, int64_t batch, int64_t vocab,
                            const std::string &path);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_DECODEIO_H
