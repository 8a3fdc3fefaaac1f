//===- Layout.cpp - Strategy names and layout strings ---------------------===//

#include "helix/Cost/Layout.h"

#include "helix/Common/Numbers.h"

#include <algorithm>
#include <cctype>

namespace helix {

const std::vector<Strategy> &allStrategies() {
  static const std::vector<Strategy> all = {
      Strategy::Helix, Strategy::HelixNoHopB, Strategy::TP,
      Strategy::TPPP,  Strategy::EP,          Strategy::KVP};
  return all;
}

bool isBaselineStrategy(Strategy s) {
  return s == Strategy::TP || s == Strategy::TPPP || s == Strategy::EP ||
         s == Strategy::KVP;
}

static std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

static std::vector<std::string> splitCommas(const std::string &text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    items.push_back(trim(text.substr(start, comma - start)));
    if (comma == std::string::npos)
      return items;
    start = comma + 1;
  }
}

bool parseStrategy(const std::string &text, Strategy &strategy,
                   std::string &error) {
  if (std::optional<Strategy> s = symbolizeStrategy(text)) {
    strategy = *s;
    return true;
  }
  error = "unknown strategy '" + text +
          "' (expected helix, helix-no-hopb, tp, tp-pp, ep, kvp, baseline "
          "or all)";
  return false;
}

bool parseStrategyList(const std::string &text,
                       std::vector<Strategy> &strategies, std::string &error) {
  std::vector<bool> wanted(allStrategies().size(), false);
  for (const std::string &item : splitCommas(text)) {
    if (item.empty()) {
      error = "empty strategy name in '" + text + "'";
      return false;
    }
    if (item == "all" || item == "baseline") {
      for (size_t i = 0; i < allStrategies().size(); ++i)
        if (item == "all" || isBaselineStrategy(allStrategies()[i]))
          wanted[i] = true;
      continue;
    }
    Strategy s;
    if (!parseStrategy(item, s, error))
      return false;
    wanted[static_cast<size_t>(s)] = true;
  }
  strategies.clear();
  for (size_t i = 0; i < allStrategies().size(); ++i)
    if (wanted[i])
      strategies.push_back(allStrategies()[i]);
  return true;
}

std::string Layout::str() const {
  std::string s = "kvp=" + std::to_string(kvp) + ",tpa=" + std::to_string(tpa) +
                  ",tpf=" + std::to_string(tpf) + ",ep=" + std::to_string(ep);
  if (pp != 1)
    s += ",pp=" + std::to_string(pp);
  if (dp != 1)
    s += ",dp=" + std::to_string(dp);
  return s;
}

bool parseLayout(const std::string &text, Layout &layout, std::string &error) {
  Layout l;
  std::vector<std::string> seen;
  for (const std::string &item : splitCommas(text)) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      error = "layout item '" + item + "' is not key=value (in '" + text + "')";
      return false;
    }
    std::string key = trim(item.substr(0, eq));
    std::string value = trim(item.substr(eq + 1));
    int64_t *field = key == "kvp"   ? &l.kvp
                     : key == "tpa" ? &l.tpa
                     : key == "tpf" ? &l.tpf
                     : key == "ep"  ? &l.ep
                     : key == "pp"  ? &l.pp
                     : key == "dp"  ? &l.dp
                                    : nullptr;
    if (!field) {
      error = "unknown layout key '" + key +
              "' (expected kvp, tpa, tpf, ep, pp or dp)";
      return false;
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      error = "layout key '" + key + "' given twice";
      return false;
    }
    seen.push_back(key);
    if (!parseInteger(key, value, 1, kMaxGPUs, *field, error))
      return false;
  }
  layout = l;
  return true;
}

int64_t helixHeadSplit(int64_t localHeads, int64_t kvp, int64_t vHeadDim) {
  if (localHeads < 1 || kvp < 1)
    return 0;
  if (localHeads % kvp == 0)
    return 1;
  if (kvp % localHeads != 0)
    return 0;
  const int64_t pieces = kvp / localHeads;
  return vHeadDim % pieces == 0 ? pieces : 0;
}

} // namespace helix
