//===- EngineData.cpp - data/engines read, files checked against it -------===//

#include "EngineData.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace helix {
namespace engine {

using nlohmann::json;

namespace {

struct Embedded {
  const char *name;
  const char *text;
};
const Embedded kEmbedded[] = {
#include "EngineData.inc"
};

std::string str(const json &j, const char *key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null())
    return "";
  if (it->is_string())
    return it->get<std::string>();
  return it->dump();
}

EngineData load(const char *name) {
  const char *text = nullptr;
  for (const Embedded &e : kEmbedded)
    if (std::string(e.name) == name)
      text = e.text;
  EngineData d;
  try {
    json j = json::parse(text ? text : "");
    d.engine = str(j, "engine");
    d.syntax = str(j, "syntax");
    d.command = str(j, "command");
    d.defaultVersion = str(j, "default_version");
    for (const json &v : j.at("versions"))
      d.versions.push_back({str(v, "name"), str(v, "source")});
    for (auto &[key, f] : j.at("fields").items()) {
      FieldSpec s;
      s.name = key;
      s.var = str(f, "var");
      s.type = str(f, "type");
      s.min = f.value("min", int64_t(0));
      if (f.contains("values"))
        s.values = f.at("values").get<std::vector<std::string>>();
      if (f.contains("default"))
        s.defaultValue = f.at("default").is_string()
                             ? f.at("default").get<std::string>()
                             : f.at("default").dump();
      s.since = str(f, "since");
      s.until = str(f, "until");
      s.file = str(f, "file");
      s.source = str(f, "source");
      d.fields.push_back(s);
    }
    for (auto &[kind, k] : j.at("kv_cache_dtypes").items())
      d.kvDTypes[kind] = {k.at("values").get<std::vector<std::string>>(),
                          str(k, "why"), str(k, "source")};
    for (const json &r : j.at("rules"))
      d.rules.push_back(
          {str(r, "when"), str(r, "check"), str(r, "text"), str(r, "source")});
  } catch (const std::exception &e) {
    std::fprintf(stderr, "helix: data/engines/%s.json: %s\n", name, e.what());
    std::abort();
  }
  return d;
}

//===--- Rule expressions -------------------------------------------------===//
//
// Integers, "strings", true / false and names; ! - * / % + - < <= > >= ==
// != && || and parentheses. Booleans are 0 and 1.

struct Value {
  bool isString = false;
  int64_t i = 0;
  std::string s;
};

class Expr {
public:
  Expr(const std::string &text, const std::map<std::string, Value> &vars)
      : t(text), vars(vars) {}

  /// The value, or false with `error` set.
  bool eval(Value &out, std::string &error) {
    out = orExpr();
    skip();
    if (err.empty() && p != t.size())
      err = "unexpected '" + t.substr(p) + "'";
    error = err;
    return err.empty();
  }

private:
  void skip() {
    while (p < t.size() && std::isspace(static_cast<unsigned char>(t[p])))
      ++p;
  }
  bool eat(const char *op) {
    skip();
    size_t n = std::string(op).size();
    if (t.compare(p, n, op) != 0)
      return false;
    // "<" is not "<=", "!" is not "!=".
    if (n == 1 && p + 1 < t.size() && t[p + 1] == '=' &&
        (op[0] == '<' || op[0] == '>' || op[0] == '!' || op[0] == '='))
      return false;
    p += n;
    return true;
  }
  int64_t num(const Value &v) {
    if (v.isString && err.empty())
      err = "string \"" + v.s + "\" used as a number";
    return v.i;
  }
  static Value make(int64_t i) {
    Value v;
    v.i = i;
    return v;
  }
  Value orExpr() {
    Value v = andExpr();
    while (eat("||")) {
      Value r = andExpr();
      v = make(num(v) || num(r));
    }
    return v;
  }
  Value andExpr() {
    Value v = cmpExpr();
    while (eat("&&")) {
      Value r = cmpExpr();
      v = make(num(v) && num(r));
    }
    return v;
  }
  Value cmpExpr() {
    Value v = addExpr();
    for (const char *op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (!eat(op))
        continue;
      Value r = addExpr();
      std::string o = op;
      if (v.isString || r.isString) {
        if (o != "==" && o != "!=") {
          err = "strings compare with == and != only";
          return v;
        }
        bool same = v.isString == r.isString && v.s == r.s;
        return make(o == "==" ? same : !same);
      }
      int64_t a = v.i, b = r.i;
      return make(o == "=="   ? a == b
                  : o == "!=" ? a != b
                  : o == "<=" ? a <= b
                  : o == ">=" ? a >= b
                  : o == "<"  ? a < b
                              : a > b);
    }
    return v;
  }
  Value addExpr() {
    Value v = mulExpr();
    for (;;) {
      if (eat("+"))
        v = make(num(v) + num(mulExpr()));
      else if (eat("-"))
        v = make(num(v) - num(mulExpr()));
      else
        return v;
    }
  }
  Value mulExpr() {
    Value v = unary();
    for (;;) {
      char op = 0;
      if (eat("*"))
        op = '*';
      else if (eat("/"))
        op = '/';
      else if (eat("%"))
        op = '%';
      else
        return v;
      int64_t a = num(v), b = num(unary());
      if (op != '*' && b == 0) {
        // x / 0 and x % 0: the rule cannot hold.
        v = make(0);
        divByZero = true;
        continue;
      }
      v = make(op == '*' ? a * b : op == '/' ? a / b : a % b);
    }
  }
  Value unary() {
    if (eat("!"))
      return make(!num(unary()));
    if (eat("-"))
      return make(-num(unary()));
    return primary();
  }
  Value primary() {
    skip();
    if (eat("(")) {
      Value v = orExpr();
      if (!eat(")") && err.empty())
        err = "missing ')'";
      return v;
    }
    if (p < t.size() && t[p] == '"') {
      size_t end = t.find('"', p + 1);
      if (end == std::string::npos) {
        err = "unterminated string";
        return Value();
      }
      Value v;
      v.isString = true;
      v.s = t.substr(p + 1, end - p - 1);
      p = end + 1;
      return v;
    }
    size_t start = p;
    while (p < t.size() &&
           (std::isalnum(static_cast<unsigned char>(t[p])) || t[p] == '_'))
      ++p;
    std::string word = t.substr(start, p - start);
    if (word.empty()) {
      if (err.empty())
        err = "expected a value at '" + t.substr(start) + "'";
      return Value();
    }
    if (std::isdigit(static_cast<unsigned char>(word[0])))
      return make(std::atoll(word.c_str()));
    if (word == "true" || word == "false")
      return make(word == "true");
    auto it = vars.find(word);
    if (it == vars.end()) {
      if (err.empty())
        err = "unknown name '" + word + "'";
      return Value();
    }
    return it->second;
  }

public:
  bool divByZero = false;

private:
  const std::string t;
  const std::map<std::string, Value> &vars;
  size_t p = 0;
  std::string err;
};

/// "{name}" replaced by the name's value.
std::string fill(const std::string &text,
                 const std::map<std::string, Value> &vars) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    size_t close = text[i] == '{' ? text.find('}', i) : std::string::npos;
    if (close == std::string::npos) {
      out += text[i];
      continue;
    }
    auto it = vars.find(text.substr(i + 1, close - i - 1));
    if (it == vars.end()) {
      out += text[i];
      continue;
    }
    out += it->second.isString ? it->second.s : std::to_string(it->second.i);
    i = close;
  }
  return out;
}

std::string lineText(int line) { return "line " + std::to_string(line); }

//===--- Reading files ----------------------------------------------------===//

/// Shell words of `text` (quotes removed; '...' and "..." kept whole).
std::vector<std::string> words(const std::string &text) {
  std::vector<std::string> out;
  std::string cur;
  bool any = false;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      any = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (any || !cur.empty())
        out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty())
    out.push_back(cur);
  return out;
}

void parseCLI(const EngineData &d, const std::string &text, ParsedFile &out) {
  std::istringstream in(text);
  std::string line;
  int n = 0, first = 0;
  std::string command;
  std::vector<std::pair<std::string, int>> pieces;
  bool inCommand = false;
  while (std::getline(in, line)) {
    ++n;
    std::string body = line;
    if (!inCommand) {
      size_t at = body.find_first_not_of(" \t");
      if (at == std::string::npos || body.compare(at, 5, "exec ") != 0)
        continue;
      inCommand = true;
      first = n;
      body = body.substr(at + 5);
    }
    bool more = !body.empty() && body.back() == '\\';
    if (more)
      body.pop_back();
    pieces.push_back({body, n});
    if (!more)
      break;
  }
  if (!inCommand) {
    out.problems.push_back("no `exec " + d.command + "` line");
    return;
  }
  // The command, then --flag [value] pairs, then "$@".
  std::string all;
  std::vector<std::pair<std::string, int>> tokens;
  for (auto &[piece, ln] : pieces)
    for (const std::string &w : words(piece))
      tokens.push_back({w, ln});
  std::vector<std::string> expected = words(d.command);
  size_t i = 0;
  for (; i < expected.size(); ++i)
    if (i >= tokens.size() || tokens[i].first != expected[i]) {
      out.problems.push_back(lineText(first) + ": expected `exec " + d.command +
                             "`");
      return;
    }
  for (; i < tokens.size(); ++i) {
    const auto &[w, ln] = tokens[i];
    if (w == "$@")
      continue;
    if (w.rfind("--", 0) != 0) {
      out.problems.push_back(lineText(ln) + ": '" + w +
                             "' is not a --flag of " + d.command);
      continue;
    }
    const FieldSpec *f = d.field(w);
    FieldValue v;
    v.line = ln;
    bool takesValue = !f || f->type != "flag";
    if (takesValue && i + 1 < tokens.size() &&
        tokens[i + 1].first.rfind("--", 0) != 0 && tokens[i + 1].first != "$@")
      v.text = tokens[++i].first;
    else if (!takesValue)
      v.text = "true";
    if (out.values.count(w))
      out.problems.push_back(lineText(ln) + ": " + w + " is given twice");
    out.values[w] = v;
  }
}

void parseYAML(const std::string &text, ParsedFile &out) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  std::vector<std::pair<size_t, std::string>> stack; // indent, key path
  while (std::getline(in, line)) {
    ++n;
    std::string body = line.substr(0, line.find('#'));
    while (!body.empty() &&
           std::isspace(static_cast<unsigned char>(body.back())))
      body.pop_back();
    size_t indent = body.find_first_not_of(' ');
    if (indent == std::string::npos)
      continue;
    std::string item = body.substr(indent);
    while (!stack.empty() && stack.back().first >= indent &&
           item.rfind("- ", 0) != 0)
      stack.pop_back();
    std::string parent = stack.empty() ? "" : stack.back().second;
    if (item.rfind("- ", 0) == 0) {
      // A list item of the key above.
      FieldValue &v = out.values[parent];
      v.text += (v.text.empty() ? "" : ",") + item.substr(2);
      if (!v.line)
        v.line = n;
      continue;
    }
    size_t colon = item.find(':');
    if (colon == std::string::npos) {
      out.problems.push_back(lineText(n) + ": expected `key: value`, got '" +
                             item + "'");
      continue;
    }
    std::string key = item.substr(0, colon);
    std::string value = item.substr(colon + 1);
    size_t v0 = value.find_first_not_of(' ');
    value = v0 == std::string::npos ? "" : value.substr(v0);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    std::string path = parent.empty() ? key : parent + "." + key;
    if (value.empty()) {
      stack.push_back({indent, path});
      continue;
    }
    if (out.values.count(path))
      out.problems.push_back(lineText(n) + ": " + path + " is given twice");
    out.values[path] = {value, n};
  }
  out.disagg = out.values.count("context_servers.num_instances") ||
               out.values.count("generation_servers.num_instances");
}

bool isInteger(const std::string &s) {
  if (s.empty())
    return false;
  for (size_t i = s[0] == '-' ? 1 : 0; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i])))
      return false;
  return s != "-";
}

} // namespace

int EngineData::versionIndex(const std::string &v) const {
  for (size_t i = 0; i < versions.size(); ++i)
    if (versions[i].first == v)
      return int(i);
  return -1;
}

bool EngineData::has(const FieldSpec &f, const std::string &version) const {
  int v = versionIndex(version);
  if (!f.since.empty() && v < versionIndex(f.since))
    return false;
  if (!f.until.empty() && v > versionIndex(f.until))
    return false;
  return true;
}

const FieldSpec *EngineData::field(const std::string &name) const {
  for (const FieldSpec &f : fields)
    if (f.name == name)
      return &f;
  return nullptr;
}

const FieldSpec *EngineData::fieldFor(const std::string &var,
                                      const std::string &version) const {
  for (const FieldSpec &f : fields)
    if (f.var == var && has(f, version))
      return &f;
  return nullptr;
}

const EngineData &engineData(Engine engine) {
  static const EngineData trt = load("trtllm"), vllm = load("vllm"),
                          sglang = load("sglang");
  switch (engine) {
  case Engine::TRTLLM:
    return trt;
  case Engine::VLLM:
    return vllm;
  case Engine::SGLang:
    return sglang;
  }
  return trt;
}

ParsedFile parseEngineFile(const EngineData &data, const std::string &text) {
  ParsedFile f;
  if (data.syntax == "yaml")
    parseYAML(text, f);
  else
    parseCLI(data, text, f);
  return f;
}

std::vector<std::string> checkEngineFile(const EngineData &data,
                                         const std::string &version,
                                         const ModelFacts &m,
                                         const ParsedFile &file, bool checkKV) {
  std::vector<std::string> problems = file.problems;
  std::map<std::string, Value> vars;
  auto setInt = [&](const std::string &name, int64_t v) {
    vars[name] = Value();
    vars[name].i = v;
  };
  // The model.
  vars["model"].isString = true;
  vars["model"].s = m.name;
  vars["model_type"].isString = true;
  vars["model_type"].s = m.modelType;
  setInt("heads", m.heads);
  setInt("kv_heads", m.kvHeads);
  setInt("mla", m.mla);
  setInt("moe", m.moe);
  setInt("experts", m.experts);
  setInt("sinks", m.sinks);
  setInt("sliding", m.slidingWindow);
  setInt("sparse", m.sparse);
  setInt("linear_attention", m.linearAttention);
  setInt("kda", m.kda);
  setInt("mamba", m.mamba);
  setInt("recurrent_heads", m.recurrentHeads);
  setInt("disagg", file.disagg);
  // Every field's default, then the file's values.
  for (const FieldSpec &f : data.fields) {
    if (f.var.empty())
      continue;
    if (f.type == "enum" || f.type == "string" || f.type == "list" ||
        f.type == "json") {
      if (!vars.count(f.var)) {
        vars[f.var].isString = f.type != "json";
        vars[f.var].s = f.defaultValue;
      }
    } else if (!vars.count(f.var)) {
      setInt(f.var, f.type == "bool"   ? f.defaultValue == "true"
                    : f.type == "flag" ? 0
                                       : std::atoll(f.defaultValue.c_str()));
    }
  }
  for (const auto &[name, v] : file.values) {
    const std::string at = lineText(v.line) + ": " + name;
    const FieldSpec *f = data.field(name);
    if (!f) {
      problems.push_back(at + ": not a " + data.engine + " setting");
      continue;
    }
    if ((f->file == "disagg") != file.disagg) {
      problems.push_back(at + ": belongs in the " +
                         std::string(f->file == "disagg"
                                         ? "disaggregated front-end file"
                                         : "server's options file"));
      continue;
    }
    if (!data.has(*f, version)) {
      problems.push_back(at + ": not in " + data.engine + " " + version +
                         (f->since.empty() ? "" : " (since " + f->since + ")") +
                         (f->until.empty() ? "" : " (until " + f->until + ")"));
      continue;
    }
    if (f->type == "int") {
      if (!isInteger(v.text) || std::atoll(v.text.c_str()) < f->min) {
        problems.push_back(at + ": expected an integer >= " +
                           std::to_string(f->min) + ", got '" + v.text + "'");
        continue;
      }
      setInt(f->var, std::atoll(v.text.c_str()));
    } else if (f->type == "bool" || f->type == "flag") {
      if (v.text != "true" && v.text != "false") {
        problems.push_back(at + ": expected true or false, got '" + v.text +
                           "'");
        continue;
      }
      setInt(f->var, v.text == "true");
    } else if (f->type == "enum") {
      bool ok = false;
      std::string list;
      for (const std::string &a : f->values) {
        ok |= a == v.text;
        list += (list.empty() ? "" : ", ") + a;
      }
      if (!ok) {
        problems.push_back(at + ": '" + v.text + "' is not one of " + list);
        continue;
      }
      vars[f->var].isString = true;
      vars[f->var].s = v.text;
    } else if (f->type == "json") {
      try {
        json parsed = json::parse(v.text);
        (void)parsed;
      } catch (const std::exception &) {
        problems.push_back(at + ": not JSON: " + v.text);
        continue;
      }
      setInt(f->var, 1);
    } else {
      vars[f->var].isString = true;
      vars[f->var].s = v.text;
    }
  }
  // The KV cache format for the model's attention.
  auto kv = vars.find("kv_dtype");
  if (checkKV && !file.disagg && kv != vars.end() && kv->second.isString) {
    const std::string kind = m.mla ? "mla" : "gqa";
    auto it = data.kvDTypes.find(kind);
    if (it != data.kvDTypes.end()) {
      bool ok = false;
      for (const std::string &a : it->second.values)
        ok |= a == kv->second.s;
      if (!ok)
        problems.push_back("kv cache dtype '" + kv->second.s + "' for " + kind +
                           " attention: " +
                           (it->second.why.empty() ? "not one the engine stores"
                                                   : it->second.why));
    }
  }
  for (const RuleSpec &r : data.rules) {
    Value when, check;
    std::string error;
    Expr w(r.when.empty() ? "true" : r.when, vars);
    if (!w.eval(when, error)) {
      problems.push_back("rule '" + r.when + "': " + error);
      continue;
    }
    if (!when.i)
      continue;
    Expr c(r.check, vars);
    if (!c.eval(check, error)) {
      problems.push_back("rule '" + r.check + "': " + error);
      continue;
    }
    if (!check.i || c.divByZero)
      problems.push_back(fill(r.text, vars));
  }
  return problems;
}

} // namespace engine
} // namespace helix
