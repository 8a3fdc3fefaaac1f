//===- ModulePatterns.cpp - Glob and "re:" module patterns ----------------===//

#include "helix/Common/ModulePatterns.h"

#include <cctype>
#include <functional>
#include <map>
#include <memory>
#include <utility>

namespace helix {

namespace {

/// Glob match where `*` matches any text.
bool globMatch(const char *p, const char *t) {
  if (*p == 0)
    return *t == 0;
  if (*p == '*') {
    for (const char *u = t;; ++u) {
      if (globMatch(p + 1, u))
        return true;
      if (*u == 0)
        return false;
    }
  }
  return *t != 0 && *p == *t && globMatch(p + 1, t + 1);
}

//===--- A small regular-expression engine --------------------------------===//

struct Node {
  enum Kind { Char, Any, Class, Group } kind = Char;
  char c = 0;
  std::vector<std::pair<char, char>> ranges;   // Class
  bool negated = false;                        // Class
  std::vector<std::vector<Node>> alternatives; // Group: each a sequence
  int min = 1, max = 1;                        // quantifier (max -1: any)
};

class Parser {
public:
  explicit Parser(const std::string &re) : re(re) {}

  bool parse(std::vector<std::vector<Node>> &out, std::string &error) {
    out = alternation();
    if (err.empty() && p != re.size())
      err =
          "unexpected '" + std::string(1, re[p]) + "' at " + std::to_string(p);
    error = err;
    return err.empty();
  }

private:
  std::vector<std::vector<Node>> alternation() {
    std::vector<std::vector<Node>> alts(1);
    while (p < re.size() && err.empty()) {
      char c = re[p];
      if (c == ')')
        break;
      if (c == '|') {
        ++p;
        alts.emplace_back();
        continue;
      }
      Node n;
      if (!atom(n))
        break;
      quantifier(n);
      alts.back().push_back(std::move(n));
    }
    return alts;
  }

  void addClassEscape(char e, Node &n) {
    if (e == 'd')
      n.ranges.push_back({'0', '9'});
    else if (e == 'w') {
      n.ranges.push_back({'a', 'z'});
      n.ranges.push_back({'A', 'Z'});
      n.ranges.push_back({'0', '9'});
      n.ranges.push_back({'_', '_'});
    } else if (e == 's') {
      for (char s : {' ', '\t', '\n', '\r', '\f', '\v'})
        n.ranges.push_back({s, s});
    } else {
      n.ranges.push_back({e, e});
    }
  }

  bool atom(Node &n) {
    char c = re[p++];
    switch (c) {
    case '.':
      n.kind = Node::Any;
      return true;
    case '(': {
      n.kind = Node::Group;
      if (re.compare(p, 2, "?:") == 0)
        p += 2;
      n.alternatives = alternation();
      if (p >= re.size() || re[p] != ')') {
        err = "missing ')'";
        return false;
      }
      ++p;
      return true;
    }
    case '[': {
      n.kind = Node::Class;
      if (p < re.size() && re[p] == '^') {
        n.negated = true;
        ++p;
      }
      bool first = true;
      while (p < re.size() && (re[p] != ']' || first)) {
        first = false;
        char a = re[p++];
        if (a == '\\' && p < re.size()) {
          addClassEscape(re[p++], n);
          continue;
        }
        if (p + 1 < re.size() && re[p] == '-' && re[p + 1] != ']') {
          n.ranges.push_back({a, re[p + 1]});
          p += 2;
        } else {
          n.ranges.push_back({a, a});
        }
      }
      if (p >= re.size()) {
        err = "missing ']'";
        return false;
      }
      ++p;
      return true;
    }
    case '\\': {
      if (p >= re.size()) {
        err = "trailing '\\'";
        return false;
      }
      char e = re[p++];
      if (e == 'd' || e == 'w' || e == 's') {
        n.kind = Node::Class;
        addClassEscape(e, n);
      } else {
        n.kind = Node::Char;
        n.c = e;
      }
      return true;
    }
    case '*':
    case '+':
    case '?':
    case '{':
      err = "'" + std::string(1, c) + "' with nothing to repeat at " +
            std::to_string(p - 1);
      return false;
    case '^':
    case '$':
      err = "anchors are not supported (the match is whole-name)";
      return false;
    default:
      n.kind = Node::Char;
      n.c = c;
      return true;
    }
  }

  void quantifier(Node &n) {
    if (p >= re.size())
      return;
    char q = re[p];
    if (q == '*' || q == '+' || q == '?') {
      ++p;
      n.min = q == '+' ? 1 : 0;
      n.max = q == '?' ? 1 : -1;
      if (p < re.size() && re[p] == '?') // lazy: the same for a full match
        ++p;
    } else if (q == '{') {
      err = "counted repetition {m,n} is not supported";
    }
  }

  const std::string &re;
  size_t p = 0;
  std::string err;
};

bool matchOne(const Node &n, const std::string &t, size_t i) {
  if (i >= t.size())
    return false;
  char c = t[i];
  switch (n.kind) {
  case Node::Char:
    return c == n.c;
  case Node::Any:
    return c != '\n';
  case Node::Class: {
    bool in = false;
    for (auto [a, b] : n.ranges)
      in |= c >= a && c <= b;
    return in != n.negated;
  }
  case Node::Group:
    return false;
  }
  return false;
}

/// Backtracking: what follows a match is a continuation called with each
/// end position the match can have.
using Cont = std::function<bool(size_t)>;

struct Matcher {
  const std::string &t;

  /// Matches s[k..] at i, then calls cont(i') for each end i'.
  bool seq(const std::vector<Node> &s, size_t k, size_t i,
           const Cont &cont) const {
    if (k == s.size())
      return cont(i);
    const Node &n = s[k];
    return repeat(n, 0, i, [&](size_t j) { return seq(s, k + 1, j, cont); });
  }

  /// `n` repeated at least n.min, at most n.max times from i (greedy).
  bool repeat(const Node &n, int count, size_t i, const Cont &cont) const {
    if (n.max < 0 || count < n.max) {
      bool more = once(n, i, [&](size_t j) {
        // A repetition that consumed nothing would loop forever.
        return j != i && repeat(n, count + 1, j, cont);
      });
      if (more)
        return true;
    }
    return count >= n.min && cont(i);
  }

  bool once(const Node &n, size_t i, const Cont &cont) const {
    if (n.kind != Node::Group)
      return matchOne(n, t, i) && cont(i + 1);
    for (const std::vector<Node> &alt : n.alternatives)
      if (seq(alt, 0, i, cont))
        return true;
    return false;
  }
};

struct Compiled {
  bool ok = false;
  std::vector<std::vector<Node>> alternatives;
  std::string error;
};

/// Parsed once per pattern per thread (the planner asks the same few
/// questions for every layout it prices).
const Compiled &compiled(const std::string &re) {
  thread_local std::map<std::string, std::unique_ptr<Compiled>> cache;
  std::unique_ptr<Compiled> &slot = cache[re];
  if (!slot) {
    slot = std::make_unique<Compiled>();
    slot->ok = Parser(re).parse(slot->alternatives, slot->error);
  }
  return *slot;
}

} // namespace

bool regexFullMatch(const std::string &re, const std::string &text) {
  const Compiled &c = compiled(re);
  if (!c.ok)
    return false;
  Matcher m{text};
  for (const std::vector<Node> &alt : c.alternatives)
    if (m.seq(alt, 0, 0, [&](size_t end) { return end == text.size(); }))
      return true;
  return false;
}

bool checkModuleRegex(const std::string &re, std::string &error) {
  const Compiled &c = compiled(re);
  error = c.error;
  return c.ok;
}

bool isExcludedModule(const std::string &name,
                      const std::vector<std::string> &patterns) {
  for (const std::string &p : patterns) {
    if (p.rfind("re:", 0) == 0) {
      if (regexFullMatch(p.substr(3), name))
        return true;
      continue;
    }
    if (globMatch(p.c_str(), name.c_str()) ||
        globMatch((p + ".*").c_str(), name.c_str()))
      return true;
  }
  return false;
}

} // namespace helix
