//===- FidelityBaseline.h - Committed fidelity figures, and the gate
//-------===//
//
// data/fidelity/baseline.json holds the MAPE of every group
// helix-bench-fidelity reports, as last reviewed. `--check` compares the
// current figures with it and fails when a group is more than
// kBaselineTolerancePoints worse; `--write-baseline FILE` writes the current
// figures (a change to the committed file is a reviewed commit that says
// why). Everything here is a computation on the table, never a timing.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_BENCH_FIDELITYBASELINE_H
#define HELIX_BENCH_FIDELITYBASELINE_H

#include <map>
#include <string>
#include <vector>

namespace helix::fidelity {

/// How many percentage points a group's MAPE may worsen before --check
/// fails (issue 26's rule).
inline constexpr double kBaselineTolerancePoints = 2.0;

/// One group's figure: scored rows and MAPE in percent.
struct GroupFigure {
  std::string name;
  int n = 0;
  double mapePct = 0;
};

/// Writes `figures` to `path` as a baseline of `table`. On failure returns
/// false with `error` naming the file.
bool writeBaseline(const std::string &path, const std::string &table,
                   const std::vector<GroupFigure> &figures, std::string &error);

/// Reads a baseline. On failure returns false with `error` naming the file
/// and the field.
bool readBaseline(const std::string &path,
                  std::map<std::string, GroupFigure> &figures,
                  std::string &error);

/// What --check found: `failures` (a group worse than the baseline by more
/// than the tolerance, or a baseline group with no scored row now) and
/// `notices` (a group whose row count changed, a group the baseline lacks).
struct BaselineCheck {
  int compared = 0;
  std::vector<std::string> failures;
  std::vector<std::string> notices;
};

BaselineCheck checkBaseline(const std::map<std::string, GroupFigure> &baseline,
                            const std::vector<GroupFigure> &current,
                            double tolerancePoints = kBaselineTolerancePoints);

} // namespace helix::fidelity

#endif // HELIX_BENCH_FIDELITYBASELINE_H
