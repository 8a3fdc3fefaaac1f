//===- DecodeIO.cpp - Prompt files and decode dumps -----------------------===//

#include "helix/Runtime/DecodeIO.h"
#include "helix/Runtime/Error.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace helix {
namespace rt {

std::string readTextFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path + ": cannot read: " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad())
    throw Error(path + ": read failed");
  return s.str();
}

static std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

Prompts parsePrompts(const std::string &text, const std::string &sourceName) {
  Prompts rows;
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#')
      continue;
    std::vector<int64_t> row;
    std::string field;
    std::istringstream fields(t);
    int col = 0;
    while (std::getline(fields, field, ',')) {
      ++col;
      std::string f = trim(field);
      std::string where = sourceName + ":" + std::to_string(lineNo) +
                          ": token " + std::to_string(col);
      if (f.empty())
        throw Error(where + ": empty field (expected a token id)");
      size_t used = 0;
      long long v = 0;
      try {
        v = std::stoll(f, &used, 10);
      } catch (const std::exception &) {
        used = 0;
      }
      if (used != f.size())
        throw Error(where + ": \"" + f + "\" is not an integer token id");
      row.push_back(static_cast<int64_t>(v));
    }
    if (!t.empty() && t.back() == ',')
      throw Error(sourceName + ":" + std::to_string(lineNo) +
                  ": trailing comma (expected a token id after it)");
    rows.push_back(std::move(row));
  }
  if (rows.empty())
    throw Error(sourceName + ": no prompts (expected one line of "
                             "comma-separated token ids per batch row)");
  return rows;
}

int64_t scheduleSteps(const Prompts &prompts, int64_t generate) {
  int64_t longest = 0;
  for (const auto &p : prompts)
    longest = std::max<int64_t>(longest, static_cast<int64_t>(p.size()));
  // Refuse a count whose step total overflows (validatePrompts calls this
  // before the run, on every rank).
  if (generate > std::numeric_limits<int64_t>::max() - longest)
    throw Error("--steps: " + std::to_string(generate) +
                " generated tokens after a prompt of " +
                std::to_string(longest) + " is too many steps");
  return longest + generate - 1;
}

void validatePrompts(const Prompts &prompts, int64_t vocab, int64_t generate,
                     int64_t maxContext, const std::string &sourceName) {
  if (generate < 1)
    throw Error("--steps: expected at least 1 generated token, got " +
                std::to_string(generate));
  for (size_t r = 0; r < prompts.size(); ++r)
    for (size_t i = 0; i < prompts[r].size(); ++i)
      if (prompts[r][i] < 0 || prompts[r][i] >= vocab)
        throw Error(
            sourceName + ": row " + std::to_string(r + 1) + ", token " +
            std::to_string(i + 1) + ": id " + std::to_string(prompts[r][i]) +
            " is out of range (vocabulary size " + std::to_string(vocab) + ")");
  if (maxContext > 0) {
    if (generate > maxContext)
      throw Error("--steps: expected at most the planned context of " +
                  std::to_string(maxContext) + " tokens, got " +
                  std::to_string(generate));
    for (size_t r = 0; r < prompts.size(); ++r) {
      // 1 <= generate <= maxContext: neither side overflows (the sum
      // prompt + generate - 1 would for a maxContext near INT64_MAX).
      int64_t length = static_cast<int64_t>(prompts[r].size());
      if (length - 1 > maxContext - generate)
        throw Error(sourceName + ": row " + std::to_string(r + 1) +
                    ": prompt of " + std::to_string(prompts[r].size()) +
                    " tokens plus " + std::to_string(generate) +
                    " generated needs a context of " +
                    std::to_string(uint64_t(length) + uint64_t(generate) - 1) +
                    " positions, longer than the planned context of " +
                    std::to_string(maxContext));
    }
  }
  scheduleSteps(prompts, generate); // throws when the step count overflows
}

GreedySchedule::GreedySchedule(Prompts prompts, int64_t generate)
    : prompts_(std::move(prompts)), generate_(generate) {
  steps_ = scheduleSteps(prompts_, generate_);
  fed_ = prompts_;
  generated_.resize(prompts_.size());
}

std::vector<int64_t> GreedySchedule::tokensAt(int64_t step) const {
  std::vector<int64_t> out(prompts_.size());
  for (size_t r = 0; r < prompts_.size(); ++r) {
    check(step < static_cast<int64_t>(fed_[r].size()),
          "GreedySchedule: no token recorded for row " + std::to_string(r) +
              " at step " + std::to_string(step));
    out[r] = fed_[r][step];
  }
  return out;
}

void GreedySchedule::record(int64_t step, const std::vector<int64_t> &next) {
  check(next.size() == prompts_.size(), "GreedySchedule: wrong batch");
  for (size_t r = 0; r < prompts_.size(); ++r) {
    int64_t L = static_cast<int64_t>(prompts_[r].size());
    if (step < L - 1)
      continue; // still feeding the prompt
    if (static_cast<int64_t>(generated_[r].size()) < generate_)
      generated_[r].push_back(next[r]);
    if (static_cast<int64_t>(fed_[r].size()) == step + 1)
      fed_[r].push_back(next[r]);
  }
}

std::vector<std::vector<int64_t>> GreedySchedule::sequences() const {
  std::vector<std::vector<int64_t>> out = prompts_;
  for (size_t r = 0; r < out.size(); ++r)
    out[r].insert(out[r].end(), generated_[r].begin(), generated_[r].end());
  return out;
}

LogitsWriter::~LogitsWriter() { close(); }

void LogitsWriter::open(const std::string &path) {
  close();
  std::string partial = path + ".partial";
  file_ = std::fopen(partial.c_str(), "wb");
  if (!file_)
    throw Error(partial + ": cannot create: " + std::strerror(errno));
  path_ = path;
}

void LogitsWriter::commit() {
  if (!file_)
    return;
  bool ok = std::fflush(file_) == 0;
  ok = std::fclose(file_) == 0 && ok;
  file_ = nullptr;
  std::string partial = path_ + ".partial";
  if (!ok)
    throw Error(partial + ": write failed");
  if (std::rename(partial.c_str(), path_.c_str()) != 0)
    throw Error(path_ + ": cannot rename " + partial + ": " +
                std::strerror(errno));
}

void LogitsWriter::write(const float *logits, size_t count) {
  check(file_ != nullptr, "LogitsWriter: not open");
  // The format is little-endian float32; x86 and arm64 hosts are.
  if (std::fwrite(logits, sizeof(float), count, file_) != count)
    throw Error(path_ + ".partial: write failed");
}

void LogitsWriter::close() {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
}

std::string joinIds(const std::vector<int64_t> &ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i)
      s += ",";
    s += std::to_string(ids[i]);
  }
  return s;
}

void writeTokens(const std::string &path,
                 const std::vector<std::vector<int64_t>> &rows) {
  std::ofstream out(path);
  if (!out)
    throw Error(path + ": cannot create: " + std::strerror(errno));
  for (const auto &r : rows)
    out << joinIds(r) << "\n";
  if (!out)
    throw Error(path + ": write failed");
}

std::string logitsShapeLine(int64_t steps, int64_t batch, int64_t vocab,
                            const std::string &path) {
  return "logits: [" + std::to_string(steps) + ", " + std::to_string(batch) +
         ", " + std::to_string(vocab) +
         "] float32 little-endian [steps, batch, vocab] -> " + path;
}

} // namespace rt
} // namespace helix
