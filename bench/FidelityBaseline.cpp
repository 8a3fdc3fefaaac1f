//===- FidelityBaseline.cpp - Committed fidelity figures, and the gate
//-----===//

#include "FidelityBaseline.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

namespace helix::fidelity {

namespace {

const char *kFormat = "helix-fidelity-baseline-1";

/// `x` with `decimals` digits after the point.
std::string num(double x, int decimals = 2) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(decimals);
  o << x;
  return o.str();
}

} // namespace

bool writeBaseline(const std::string &path, const std::string &table,
                   const std::vector<GroupFigure> &figures,
                   std::string &error) {
  nlohmann::ordered_json groups = nlohmann::ordered_json::object();
  for (const GroupFigure &g : figures)
    groups[g.name] = {{"n", g.n},
                      {"mape_pct", std::round(g.mapePct * 100) / 100}};
  nlohmann::ordered_json out = {
      {"format", kFormat},
      {"note",
       "MAPE per group of helix-bench-fidelity on " +
           table.substr(table.find_last_of('/') + 1) +
           ", written by --write-baseline. --check fails when a group is "
           "more than " +
           num(kBaselineTolerancePoints, 0) +
           " points worse. A change to this file is a reviewed commit that "
           "says why (docs/fidelity.md)."},
      {"groups", groups}};
  std::ofstream f(path);
  f << out.dump(2) << "\n";
  f.close();
  if (!f) {
    error = path + ": cannot write the file";
    return false;
  }
  return true;
}

bool readBaseline(const std::string &path,
                  std::map<std::string, GroupFigure> &figures,
                  std::string &error) {
  std::ifstream f(path);
  if (!f) {
    error = path + ": cannot read the file";
    return false;
  }
  std::stringstream text;
  text << f.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    error = path + ": not valid JSON (expected an object)";
    return false;
  }
  if (!j.contains("format") || j["format"] != kFormat) {
    error =
        path + ": field 'format': expected \"" + std::string(kFormat) + "\"";
    return false;
  }
  if (!j.contains("groups") || !j["groups"].is_object() ||
      j["groups"].empty()) {
    error = path + ": field 'groups': expected a non-empty object of "
                   "{\"n\": rows, \"mape_pct\": percent} by group name";
    return false;
  }
  for (auto it = j["groups"].begin(); it != j["groups"].end(); ++it) {
    const nlohmann::json &g = it.value();
    std::string where = path + ": group '" + it.key() + "': ";
    if (!g.is_object() || !g.contains("n") || !g["n"].is_number_integer() ||
        g["n"].get<long long>() < 1) {
      error = where + "field 'n': expected a positive integer";
      return false;
    }
    if (!g.contains("mape_pct") || !g["mape_pct"].is_number() ||
        !std::isfinite(g["mape_pct"].get<double>()) ||
        g["mape_pct"].get<double>() < 0) {
      error = where + "field 'mape_pct': expected a number >= 0";
      return false;
    }
    figures[it.key()] = {it.key(), g["n"].get<int>(),
                         g["mape_pct"].get<double>()};
  }
  return true;
}

BaselineCheck checkBaseline(const std::map<std::string, GroupFigure> &baseline,
                            const std::vector<GroupFigure> &current,
                            double tolerancePoints) {
  BaselineCheck c;
  std::map<std::string, const GroupFigure *> now;
  for (const GroupFigure &g : current)
    now[g.name] = &g;
  for (const auto &[name, base] : baseline) {
    auto it = now.find(name);
    if (it == now.end() || it->second->n == 0) {
      c.failures.push_back("group '" + name +
                           "' is in the baseline but has no scored row now");
      continue;
    }
    const GroupFigure &g = *it->second;
    ++c.compared;
    double worse = g.mapePct - base.mapePct;
    if (worse > tolerancePoints)
      c.failures.push_back("group '" + name + "': MAPE " + num(g.mapePct) +
                           "% is " + num(worse) +
                           " points worse than the baseline's " +
                           num(base.mapePct) + "% (tolerance " +
                           num(tolerancePoints, 0) + " points)");
    if (g.n != base.n)
      c.notices.push_back("group '" + name + "': " + std::to_string(g.n) +
                          " scored rows, the baseline " +
                          std::to_string(base.n));
  }
  for (const GroupFigure &g : current)
    if (g.n > 0 && !baseline.count(g.name))
      c.notices.push_back("group '" + g.name +
                          "' is not in the baseline (--write-baseline)");
  return c;
}

} // namespace helix::fidelity
