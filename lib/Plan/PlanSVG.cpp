//===- PlanSVG.cpp - SVG chart of the Pareto fronts -----------------------===//

#include "helix/Plan/PlanSVG.h"

#include "Format.h"
#include "helix/Plan/Gains.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace helix {

namespace {

struct Style {
  const char *color;
  double width;
  const char *dash; // "" for solid
};

Style styleOf(const std::string &name) {
  if (name == "helix")
    return {"#d62728", 3.0, ""};
  if (name == "helix-no-hopb")
    return {"#ff7f0e", 1.6, "6 4"};
  if (name == "tp")
    return {"#1f77b4", 1.8, ""};
  if (name == "tp-pp")
    return {"#17becf", 1.8, ""};
  if (name == "ep")
    return {"#2ca02c", 1.8, ""};
  if (name == "kvp")
    return {"#9467bd", 1.8, ""};
  return {"#222222", 2.6, "9 5"}; // baseline
}

/// A log10 axis between 1-2-5 values around [lo, hi].
struct LogAxis {
  double lo, hi; // data range after snapping
  double p0, p1; // pixel range
  double map(double v) const {
    return p0 + (std::log10(v) - std::log10(lo)) /
                    (std::log10(hi) - std::log10(lo)) * (p1 - p0);
  }
};

/// Rounds down / up to the 1-1.5-2-3-5-7 sequence, so axes end close to the
/// data.
double snapDown(double v) {
  double d = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {7.0, 5.0, 3.0, 2.0, 1.5, 1.0})
    if (m * d <= v)
      return m * d;
  return d;
}

double snapUp(double v) {
  double d = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0})
    if (m * d >= v)
      return m * d;
  return 10 * d;
}

bool samePoints(const Frontier &a, const Frontier &b) {
  if (a.points.size() != b.points.size())
    return false;
  for (size_t i = 0; i < a.points.size(); ++i)
    if (a.points[i].ttlS != b.points[i].ttlS ||
        a.points[i].tokensPerSecPerGPU != b.points[i].tokensPerSecPerGPU)
      return false;
  return true;
}

/// 1-2-5 tick values inside [lo, hi]; all of them when the axis spans few
/// decades, else powers of ten only.
std::vector<double> ticks(double lo, double hi) {
  std::vector<double> t;
  bool dense = std::log10(hi / lo) <= 3.2;
  for (double d = std::pow(10.0, std::floor(std::log10(lo))); d <= hi * 1.001;
       d *= 10)
    for (double m : {1.0, 2.0, 5.0}) {
      double v = m * d;
      if (v >= lo * 0.999 && v <= hi * 1.001 && (dense || m == 1.0))
        t.push_back(v);
    }
  return t;
}

std::string tickLabel(double v) {
  char buf[32];
  if (v >= 1000)
    std::snprintf(buf, sizeof(buf), "%gk", v / 1000);
  else
    std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

} // namespace

void writePlanSVG(std::ostream &os, const PlanResult &r,
                  const SVGOptions &opt) {
  const double left = 90, top = 78, right = opt.width - 230.0,
               bottom = opt.height - 78.0;
  double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0;
  for (const auto &entry : r.frontiers)
    for (const PlanPoint &p : entry.second.points) {
      xlo = std::min(xlo, p.tokensPerSecPerUser);
      xhi = std::max(xhi, p.tokensPerSecPerUser);
      ylo = std::min(ylo, p.tokensPerSecPerGPU);
      yhi = std::max(yhi, p.tokensPerSecPerGPU);
    }
  if (xhi <= 0) { // nothing fits: an empty chart still says so
    xlo = ylo = 1;
    xhi = yhi = 10;
  }
  if (r.options.ttlMs > 0) {
    xlo = std::min(xlo, 1000.0 / r.options.ttlMs);
    xhi = std::max(xhi, 1000.0 / r.options.ttlMs);
  }
  LogAxis x{snapDown(xlo / 1.08), snapUp(xhi * 1.08), left, right};
  LogAxis y{snapDown(ylo / 1.08), snapUp(yhi * 1.08), bottom, top};

  std::string title = opt.title.empty()
                          ? r.model + " on " + r.hardware + ": Pareto fronts"
                          : opt.title;
  const Precision &pr = r.workload.precision;
  std::string subtitle = fmt::count(r.workload.context) + "-token context, " +
                         pr.describe() + ", " +
                         std::to_string(r.options.minGPUs) + "-" +
                         std::to_string(r.options.maxGPUs) + " GPUs";

  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << opt.width
     << "\" height=\"" << opt.height << "\" viewBox=\"0 0 " << opt.width << ' '
     << opt.height << "\" font-family=\"Helvetica, Arial, sans-serif\">\n";
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"" << (left + right) / 2 << "\" y=\"32\" font-size=\"19\" "
     << "font-weight=\"bold\" text-anchor=\"middle\">" << fmt::xml(title)
     << "</text>\n";
  os << "<text x=\"" << (left + right) / 2 << "\" y=\"54\" font-size=\"13\" "
     << "fill=\"#555\" text-anchor=\"middle\">" << fmt::xml(subtitle)
     << "</text>\n";

  // Grid, ticks and the frame.
  os << "<g font-size=\"12\" fill=\"#333\">\n";
  for (double v : ticks(x.lo, x.hi)) {
    double px = x.map(v);
    bool major = std::fabs(std::log10(v) - std::round(std::log10(v))) < 1e-9;
    os << "<line x1=\"" << px << "\" y1=\"" << top << "\" x2=\"" << px
       << "\" y2=\"" << bottom << "\" stroke=\"" << (major ? "#ccc" : "#eee")
       << "\"/>\n<text x=\"" << px << "\" y=\"" << bottom + 18
       << "\" text-anchor=\"middle\">" << tickLabel(v) << "</text>\n";
  }
  for (double v : ticks(y.lo, y.hi)) {
    double py = y.map(v);
    bool major = std::fabs(std::log10(v) - std::round(std::log10(v))) < 1e-9;
    os << "<line x1=\"" << left << "\" y1=\"" << py << "\" x2=\"" << right
       << "\" y2=\"" << py << "\" stroke=\"" << (major ? "#ccc" : "#eee")
       << "\"/>\n<text x=\"" << left - 8 << "\" y=\"" << py + 4
       << "\" text-anchor=\"end\">" << tickLabel(v) << "</text>\n";
  }
  os << "</g>\n<rect x=\"" << left << "\" y=\"" << top << "\" width=\""
     << right - left << "\" height=\"" << bottom - top
     << "\" fill=\"none\" stroke=\"#444\"/>\n";
  os << "<text x=\"" << (left + right) / 2 << "\" y=\"" << bottom + 44
     << "\" font-size=\"14\" text-anchor=\"middle\">Interactivity "
        "(tokens/s/user = 1 / TTL)</text>\n";
  os << "<text transform=\"translate(" << left - 58 << "," << (top + bottom) / 2
     << ") rotate(-90)\" font-size=\"14\" text-anchor=\"middle\">Throughput "
        "(tokens/s/GPU)</text>\n";

  if (r.options.ttlMs > 0) {
    double px = x.map(1000.0 / r.options.ttlMs);
    os << "<line x1=\"" << px << "\" y1=\"" << top << "\" x2=\"" << px
       << "\" y2=\"" << bottom
       << "\" stroke=\"#777\" stroke-width=\"1.5\" stroke-dasharray=\"4 4\"/>\n"
       << "<text x=\"" << px + 5 << "\" y=\"" << top + 16
       << "\" font-size=\"12\" fill=\"#555\">TTL budget "
       << fmt::number(r.options.ttlMs) << " ms</text>\n";
  }

  // Fronts: the single baselines, then their combination, then Helix, then
  // the dashed HOP-B-off front on top so that it shows even where equal.
  std::vector<std::string> order = r.order;
  std::stable_sort(order.begin(), order.end(),
                   [](const std::string &a, const std::string &b) {
                     auto rank = [](const std::string &n) {
                       return n == "helix-no-hopb" ? 3
                              : n == "helix"       ? 2
                              : n == "baseline"    ? 1
                                                   : 0;
                     };
                     return rank(a) < rank(b);
                   });
  for (const std::string &name : order) {
    const Frontier &f = r.frontiers.at(name);
    if (f.empty())
      continue;
    Style s = styleOf(name);
    bool faint =
        name != "helix" && name != "baseline" && name != "helix-no-hopb";
    os << "<g stroke=\"" << s.color << "\" fill=\"" << s.color << "\""
       << (faint ? " opacity=\"0.75\"" : "") << ">\n<polyline fill=\"none\" "
       << "stroke-width=\"" << s.width << "\" stroke-linejoin=\"round\""
       << (*s.dash ? std::string(" stroke-dasharray=\"") + s.dash + "\"" : "")
       << " points=\"";
    for (const PlanPoint &p : f.points)
      os << x.map(p.tokensPerSecPerUser) << ',' << y.map(p.tokensPerSecPerGPU)
         << ' ';
    os << "\"/>\n";
    // Markers on solid lines only; dashed ones stay see-through.
    for (const PlanPoint &p : f.points)
      if (!*s.dash || name == "baseline")
        os << "<circle cx=\"" << x.map(p.tokensPerSecPerUser) << "\" cy=\""
           << y.map(p.tokensPerSecPerGPU) << "\" r=\"" << (faint ? 2.2 : 2.8)
           << "\" stroke=\"none\"/>\n";
    if (const PlanPoint *c = chosenPoint(r, f))
      if (name == "helix" || name == "baseline")
        os << "<circle cx=\"" << x.map(c->tokensPerSecPerUser) << "\" cy=\""
           << y.map(c->tokensPerSecPerGPU)
           << "\" r=\"7\" fill=\"none\" stroke-width=\"2\"/>\n";
    os << "</g>\n";
  }

  // Legend.
  double lx = right + 24, ly = top + 8;
  os << "<g font-size=\"13\">\n<text x=\"" << lx << "\" y=\"" << ly
     << "\" font-weight=\"bold\">Strategy</text>\n";
  ly += 10;
  for (const std::string &name : r.order) {
    const Frontier &f = r.frontiers.at(name);
    Style s = styleOf(name);
    ly += 24;
    os << "<line x1=\"" << lx << "\" y1=\"" << ly - 4 << "\" x2=\"" << lx + 30
       << "\" y2=\"" << ly - 4 << "\" stroke=\"" << s.color
       << "\" stroke-width=\"" << s.width << "\""
       << (*s.dash ? std::string(" stroke-dasharray=\"") + s.dash + "\"" : "")
       << "/>\n<text x=\"" << lx + 38 << "\" y=\"" << ly << "\">"
       << fmt::xml(name) << (f.empty() ? " (none fit)" : "");
    const Frontier *helix = r.frontier("helix");
    if (name == "helix-no-hopb" && helix && !f.empty() && samePoints(f, *helix))
      os << " (= helix)";
    os << "</text>\n";
  }
  if (r.options.ttlMs > 0) {
    ly += 30;
    os << "<circle cx=\"" << lx + 15 << "\" cy=\"" << ly - 4
       << "\" r=\"7\" fill=\"none\" stroke=\"#555\" stroke-width=\"2\"/>\n"
       << "<text x=\"" << lx + 38 << "\" y=\"" << ly
       << "\">best under budget</text>\n";
  }
  Gains g = computeGains(r);
  if (g.interactivity > 0) {
    ly += 34;
    os << "<text x=\"" << lx << "\" y=\"" << ly
       << "\" font-weight=\"bold\">Helix vs baseline</text>\n";
    ly += 20;
    os << "<text x=\"" << lx << "\" y=\"" << ly << "\">interactivity "
       << fmt::ratio(g.interactivity) << "</text>\n";
    if (g.haveBudget) {
      ly += 18;
      os << "<text x=\"" << lx << "\" y=\"" << ly << "\">throughput "
         << fmt::ratio(g.throughput) << " at budget</text>\n";
      ly += 18;
      os << "<text x=\"" << lx << "\" y=\"" << ly << "\">batch "
         << fmt::ratio(g.batch) << " at budget</text>\n";
    }
  }
  os << "</g>\n</svg>\n";
}

} // namespace helix
