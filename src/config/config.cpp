#include "config/config.h"

#include <yaml-cpp/yaml.h>

#include <fnmatch.h>
#include <algorithm>
#include <cctype>
#include <cmath>

#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/strings.h"
#include "ops/implementation.h"

namespace genbench {

std::optional<std::int64_t> parse_size(const std::string& raw) {
  std::string s;
  for (char c : raw)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  if (s.empty()) return std::nullopt;
  std::size_t i = 0;
  if (s[0] == '-' || s[0] == '+') return std::nullopt;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || i > 19) return std::nullopt;
  std::uint64_t value = std::stoull(s.substr(0, i));
  std::string suffix = s.substr(i);
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = -1;
  const char* units = "KMGT";
  if (suffix.empty() || suffix == "B") shift = 0;
  for (int u = 0; u < 4; ++u)
    for (const char* tail : {"", "B", "IB"})
      if (suffix == std::string(1, units[u]) + tail) shift = 10 * (u + 1);
  if (shift < 0) return std::nullopt;
  if (shift > 0 && value > (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) >> shift))
    return std::nullopt;
  value <<= shift;
  if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  return static_cast<std::int64_t>(value);
}

std::uint64_t Config::fingerprint() const {
  // A whole config's fingerprint is its text's, as before selections existed (older files resume).
  return selection.empty() ? fnv1a64(text) : fnv1a64(text + '\0' + "selection " + selection);
}

namespace {

constexpr std::size_t kMaxPoints = 1000000;
constexpr std::int64_t kMaxAxisValues = 10000;  // values one range may produce
constexpr long long kMaxConfigBytes = 1 << 20;
constexpr int kMaxDepth = 64;    // flow brackets or "- " entries nested on one line
constexpr int kMaxIndent = 400;  // columns of leading indentation

class Parser {
 public:
  Parser(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const YAML::Mark& m, const std::string& msg) const {
    if (m.is_null() || m.line < 0) throw UsageError(path_ + ": " + msg);
    throw UsageError(strprintf("%s:%d:%d: %s", path_.c_str(), m.line + 1, m.column + 1, msg.c_str()));
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const { fail(n.Mark(), msg); }

  // Every key of `map` must be in `allowed`; otherwise name it and suggest the closest.
  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& where) const {
    if (!map.IsMap()) fail(map, where + " must be a mapping of key: value");
    std::set<std::string> seen;
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) fail(kv.first, "keys in " + where + " must be plain names");
      const std::string key = kv.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string msg = "unknown key '" + key + "' in " + where;
        const std::string guess = closest_match(key, allowed);
        if (!guess.empty()) msg += " (did you mean '" + guess + "'?)";
        else msg += " (allowed: " + join(allowed, ", ") + ")";
        fail(kv.first, msg);
      }
      if (!seen.insert(key).second) fail(kv.first, "duplicate key '" + key + "' in " + where);
    }
  }

  std::string scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, "'" + key + "' must be a single value");
    return n.Scalar();
  }

  std::int64_t integer(const YAML::Node& n, const std::string& key, std::int64_t lo, std::int64_t hi,
                       bool allow_suffix) const {
    const std::string s = scalar(n, key);
    std::optional<std::int64_t> v;
    if (allow_suffix) {
      v = parse_size(s);
    } else {
      try {
        std::size_t used = 0;
        const long long x = std::stoll(s, &used, 10);
        if (used == s.size()) v = x;
      } catch (const std::exception&) {
      }
    }
    if (!v) {
      bool negative = !s.empty() && s[0] == '-';
      fail(n, "'" + key + "' must be " +
                  (negative       ? "positive"
                   : allow_suffix ? "a size such as 4096, 64K, 1M or 4G"
                                  : "an integer") +
                  ", not '" + s + "'");
    }
    if (*v < lo || *v > hi)
      fail(n, strprintf("'%s' = %lld is out of range [%lld, %lld]", key.c_str(), static_cast<long long>(*v),
                        static_cast<long long>(lo), static_cast<long long>(hi)));
    return *v;
  }

  double real(const YAML::Node& n, const std::string& key, double lo, double hi) const {
    const std::string s = scalar(n, key);
    double v = 0;
    try {
      std::size_t used = 0;
      v = std::stod(s, &used);
      if (used != s.size()) throw std::invalid_argument(s);
    } catch (const std::exception&) {
      fail(n, "'" + key + "' must be a number, not '" + s + "'");
    }
    if (!std::isfinite(v) || v < lo || v > hi)
      fail(n, strprintf("'%s' = %s is out of range [%g, %g]", key.c_str(), s.c_str(), lo, hi));
    return v;
  }

  bool boolean(const YAML::Node& n, const std::string& key) const {
    const std::string s = scalar(n, key);
    if (s == "true" || s == "True" || s == "yes" || s == "on" || s == "1") return true;
    if (s == "false" || s == "False" || s == "no" || s == "off" || s == "0") return false;
    fail(n, "'" + key + "' must be true or false, not '" + s + "'");
  }

  TimingPolicy timing(const YAML::Node& n, TimingPolicy t) const {
    check_keys(n,
               {"warmup", "warmup_time", "min_iterations", "max_iterations", "min_time", "max_time", "target_noise",
                "launches_per_sample", "state_period", "retime_held", "cooldown", "cache", "rounds"},
               "timing");
    if (n["warmup"]) t.warmup = static_cast<int>(integer(n["warmup"], "warmup", 0, 100000, false));
    if (n["warmup_time"]) t.warmup_time_s = real(n["warmup_time"], "warmup_time", 0, 3600);
    if (n["min_iterations"])
      t.min_iterations = static_cast<int>(integer(n["min_iterations"], "min_iterations", 1, 1000000, false));
    if (n["max_iterations"])
      t.max_iterations = static_cast<int>(integer(n["max_iterations"], "max_iterations", 1, 1000000, false));
    if (n["min_time"]) t.min_time_s = real(n["min_time"], "min_time", 0, 3600);
    if (n["max_time"]) t.max_time_s = real(n["max_time"], "max_time", 1e-6, 86400);
    if (n["target_noise"]) t.target_rel_noise = real(n["target_noise"], "target_noise", 0, 1);
    if (n["launches_per_sample"])
      t.launches_per_sample =
          static_cast<int>(integer(n["launches_per_sample"], "launches_per_sample", 1, 100000, false));
    if (n["state_period"]) t.state_period_s = real(n["state_period"], "state_period", 0, 60);
    if (n["retime_held"]) t.retime_held = static_cast<int>(integer(n["retime_held"], "retime_held", 0, 100, false));
    if (n["cooldown"]) t.cooldown_s = real(n["cooldown"], "cooldown", 0, 3600);
    if (n["rounds"]) t.rounds = static_cast<int>(integer(n["rounds"], "rounds", 1, kMaxRounds, false));
    if (n["cache"]) {
      const std::string c = scalar(n["cache"], "cache");
      if (c != "hot" && c != "cold") fail(n["cache"], "timing: cache must be hot or cold, not '" + c + "'");
      t.cold_cache = c == "cold";
    }
    if (t.min_iterations > t.max_iterations)
      fail(n, strprintf("timing: min_iterations (%d) exceeds max_iterations (%d)", t.min_iterations, t.max_iterations));
    return t;
  }

  void check_allowed(const AxisSpec& a, std::int64_t v, const YAML::Node& n) const {
    if (a.allowed.empty() || std::find(a.allowed.begin(), a.allowed.end(), v) != a.allowed.end()) return;
    std::vector<std::string> names;
    for (auto x : a.allowed) names.push_back(std::to_string(x));
    fail(n, strprintf("unsupported %s %lld (supported: %s)", a.name.c_str(), static_cast<long long>(v),
                      join(names, ", ").c_str()));
  }

  // One value of an axis, typed and range-checked.
  AxisValue axis_value(const AxisSpec& a, const YAML::Node& n) const {
    switch (a.type) {
      case AxisType::integer:
      case AxisType::size: {
        const std::int64_t v = integer(n, a.name, a.min, a.max, a.type == AxisType::size);
        check_allowed(a, v, n);
        return v;
      }
      case AxisType::real: return real(n, a.name, 0, 1e30);
      case AxisType::boolean: return std::int64_t{boolean(n, a.name) ? 1 : 0};
      case AxisType::choice: {
        const std::string s = scalar(n, a.name);
        if (std::find(a.choices.begin(), a.choices.end(), s) == a.choices.end()) {
          std::string msg = "'" + s + "' is not a valid " + a.name + " (choose from " + join(a.choices, ", ") + ")";
          const std::string guess = closest_match(s, a.choices);
          if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
          fail(n, msg);
        }
        return s;
      }
    }
    fail(n, "unknown axis type");
  }

  // A scalar, a list, or (integer/size axes) a range {from, to, factor|step}.
  std::vector<AxisValue> axis_values(const AxisSpec& a, const YAML::Node& n) const {
    std::vector<AxisValue> out;
    if (a.auto_all && n.IsScalar() && n.Scalar() == "auto") {
      for (const auto& c : a.choices) out.emplace_back(c);
      return out;
    }
    if (n.IsSequence()) {
      if (n.size() == 0) fail(n, "axis '" + a.name + "' has an empty list of values");
      for (const auto& item : n) out.push_back(axis_value(a, item));
    } else if (n.IsMap()) {
      if (a.type != AxisType::integer && a.type != AxisType::size)
        fail(n, "axis '" + a.name + "' takes a value or a list, not a range");
      check_keys(n, {"from", "to", "factor", "step"}, "range of '" + a.name + "'");
      if (!n["from"] || !n["to"]) fail(n, "range of '" + a.name + "' needs 'from' and 'to'");
      if (n["factor"] && n["step"]) fail(n, "range of '" + a.name + "' takes 'factor' or 'step', not both");
      const bool sz = a.type == AxisType::size;
      const std::int64_t from = integer(n["from"], "from", a.min, a.max, sz);
      const std::int64_t to = integer(n["to"], "to", a.min, a.max, sz);
      if (to < from) fail(n["to"], "range of '" + a.name + "': 'to' is below 'from'");
      // from and to are in range, so every value between them is; only `allowed` remains.
      if (n["step"]) {
        const std::int64_t step = integer(n["step"], "step", 1, INT64_MAX, sz);
        if ((to - from) / step >= kMaxAxisValues)
          fail(n, strprintf("range of '%s' has more than %lld values; use a larger step or a factor", a.name.c_str(),
                            static_cast<long long>(kMaxAxisValues)));
        for (std::int64_t v = from;; v += step) {
          check_allowed(a, v, n);
          out.emplace_back(v);
          if (v > to - step) break;
        }
      } else {
        const std::int64_t factor = n["factor"] ? integer(n["factor"], "factor", 2, 1 << 20, false) : 2;
        if (from == 0) fail(n["from"], "a geometric range cannot start at 0");
        for (std::int64_t v = from; v <= to; v *= factor) {
          check_allowed(a, v, n);
          out.emplace_back(v);
          if (v > INT64_MAX / factor) break;
        }
      }
    } else if (n.IsScalar()) {
      out.push_back(axis_value(a, n));
    } else {
      fail(n, "axis '" + a.name + "' has no value");
    }
    return out;
  }

  BenchmarkConfig benchmark(const YAML::Node& n, const Config& cfg, std::size_t index) const {
    check_keys(n, {"name", "op", "implementations", "axes", "timing", "tags"}, strprintf("benchmark #%zu", index + 1));
    BenchmarkConfig b;
    b.line = n.Mark().line + 1;
    if (!n["name"]) fail(n, strprintf("benchmark #%zu has no 'name'", index + 1));
    b.name = scalar(n["name"], "name");
    if (b.name.empty() || b.name.find('/') != std::string::npos || b.name.size() > 64)
      fail(n["name"], "benchmark name must be 1-64 characters without '/'");
    const std::string where = "benchmark '" + b.name + "'";
    if (!n["op"]) fail(n, where + " has no 'op' (one of: " + join(op_names(), ", ") + ")");
    const std::string opname = scalar(n["op"], "op");
    b.op = find_op(opname);
    if (!b.op) {
      std::string msg = "unknown op '" + opname + "' in " + where;
      const std::string guess = closest_match(opname, op_names());
      msg += guess.empty() ? " (one of: " + join(op_names(), ", ") + ")" : " (did you mean '" + guess + "'?)";
      fail(n["op"], msg);
    }
    const auto known = Registry::instance().names(opname);
    if (!n["implementations"]) fail(n, where + " has no 'implementations' (available: " + join(known, ", ") + ")");
    const YAML::Node impls = n["implementations"];
    std::vector<YAML::Node> impl_nodes;
    if (impls.IsSequence()) {
      if (impls.size() == 0) fail(impls, where + ": 'implementations' is empty");
      for (const auto& i : impls) impl_nodes.push_back(i);
    } else {
      impl_nodes.push_back(impls);
    }
    for (const auto& i : impl_nodes) {
      const std::string s = scalar(i, "implementations");
      if (std::find(known.begin(), known.end(), s) == known.end()) {
        std::string msg = "unknown implementation '" + s + "' of op '" + opname + "'";
        const std::string guess = closest_match(s, known);
        msg += guess.empty() ? " (available: " + join(known, ", ") + ")" : " (did you mean '" + guess + "'?)";
        fail(i, msg);
      }
      if (std::find(b.implementations.begin(), b.implementations.end(), s) != b.implementations.end())
        fail(i, "implementation '" + s + "' listed twice");
      b.implementations.push_back(s);
    }
    const auto& specs = b.op->axes();
    for (const auto& a : specs) b.axis_values.push_back({a.default_value});
    if (n["axes"]) {
      std::vector<std::string> names;
      for (const auto& a : specs) names.push_back(a.name);
      check_keys(n["axes"], names, "axes of " + where);
      for (const auto& kv : n["axes"]) {
        const std::string key = kv.first.Scalar();
        const std::size_t idx = b.op->axis_index(key);
        b.axis_values[idx] = axis_values(specs[idx], kv.second);
        if (specs[idx].auto_all && kv.second.IsScalar() && kv.second.Scalar() == "auto") b.uses_auto = true;
      }
    }
    b.timing = n["timing"] ? timing(n["timing"], cfg.timing) : cfg.timing;
    if (const YAML::Node t = n["tags"]) {
      if (!t.IsMap()) fail(t, where + ": 'tags' must be a map of names to values (model: llama3-8b)");
      for (const auto& kv : t) {
        const std::string key = kv.first.Scalar();
        if (key.empty() || key.size() > 32 ||
            key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
          fail(kv.first, where + ": tag name '" + key + "' must be 1-32 characters of a-z, 0-9 and _");
        if (!kv.second.IsScalar()) fail(kv.second, where + ": tag '" + key + "' must have one value");
        const std::string value = kv.second.Scalar();
        if (value.size() > 64) fail(kv.second, where + ": tag '" + key + "' is longer than 64 characters");
        b.tags.emplace_back(key, value);
      }
    }
    std::size_t total = b.implementations.size();
    for (const auto& v : b.axis_values) {
      total *= v.size();
      if (total > kMaxPoints) fail(n, strprintf("%s expands to more than %zu points", where.c_str(), kMaxPoints));
    }
    return b;
  }

  // Before yaml-cpp sees the text: no NUL bytes, valid UTF-8, and a nesting depth that its
  // recursive parser and node destructor handle without exhausting the stack.
  void check_bytes(const std::string& text) const {
    int line = 1, col = 1;
    auto at = [&](const std::string& msg) {
      return UsageError(strprintf("%s:%d:%d: %s", path_.c_str(), line, col, msg.c_str()));
    };
    int flow = 0, dashes = 0;
    bool line_start = true, comment = false;
    char quote = 0, prev = ' ';
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c == 0) throw at("the file contains NUL bytes; is it a YAML file?");
      if (c >= 0x80) {
        // One UTF-8 sequence: lead byte, then 1-3 continuation bytes; no overlongs or surrogates.
        std::size_t n = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 0;
        bool ok = n > 0;
        for (std::size_t k = 1; ok && k <= n; ++k)
          ok = i + k < text.size() && (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
        if (ok && n >= 2) {
          const auto c1 = static_cast<unsigned char>(text[i + 1]);
          if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) ||
              (c == 0xF4 && c1 > 0x8F))
            ok = false;
        }
        if (!ok)
          throw at(strprintf("invalid UTF-8 (byte 0x%02X); configs must be UTF-8 text", static_cast<unsigned>(c)));
        i += n;
        ++col;
        line_start = false;
        prev = 'x';
        continue;
      }
      if (c == '\n') {
        ++line;
        col = 1;
        line_start = true;
        comment = false;
        dashes = 0;
        quote = 0;  // a quoted scalar may span lines; counting its brackets is only conservative
        prev = ' ';
        continue;
      }
      if (!comment) {
        if (quote) {
          if (quote == '"' && c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
            ++i;
            ++col;
          } else if (static_cast<char>(c) == quote) {
            quote = 0;
          }
        } else if (c == '#' && (prev == ' ' || prev == '\t')) {
          comment = true;
        } else if ((c == '"' || c == '\'') && std::strchr(" \t[{,:-?", prev)) {
          quote = static_cast<char>(c);
        } else if (c == '[' || c == '{') {
          if (++flow > kMaxDepth) throw at(strprintf("nesting deeper than %d levels", kMaxDepth));
        } else if (c == ']' || c == '}') {
          if (flow > 0) --flow;
        } else if ((c == '-' || c == '?') && line_start) {
          // "- - - x" nests one sequence per dash on a single line.
          if (++dashes > kMaxDepth) throw at(strprintf("nesting deeper than %d levels", kMaxDepth));
        } else if (c != ' ' && c != '\t') {
          line_start = false;
        }
      }
      prev = static_cast<char>(c);
      if (line_start && col > kMaxIndent)
        throw at(strprintf("indented more than %d columns; nesting this deep is not a config", kMaxIndent));
      ++col;
    }
  }

  Config parse(const std::string& text) const {
    check_bytes(text);
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      fail(e.mark, "YAML syntax error: " + e.msg);
    }
    if (!root || root.IsNull()) throw UsageError(path_ + ":1:1: the config is empty");
    if (!root.IsMap()) fail(root, "the config must be a mapping with 'settings' and 'benchmarks'");
    check_keys(root, {"genbench", "settings", "benchmarks"}, "the top level");
    Config cfg;
    cfg.path = path_;
    cfg.text = text;
    if (root["genbench"] && integer(root["genbench"], "genbench", 1, 1, false) != 1)
      fail(root["genbench"], "unsupported config format version");
    if (const auto s = root["settings"]) {
      check_keys(s, {"backend", "output", "seed", "timing", "allow_shared_devices", "watchdog_s", "measure_ceilings"},
                 "settings");
      if (s["backend"]) {
        cfg.backend = scalar(s["backend"], "backend");
        if (cfg.backend != "auto" && cfg.backend != "cuda" && cfg.backend != "host")
          fail(s["backend"], "backend must be auto, cuda or host, not '" + cfg.backend + "'");
      }
      if (s["output"]) cfg.output = scalar(s["output"], "output");
      if (s["seed"]) cfg.seed = static_cast<std::uint64_t>(integer(s["seed"], "seed", 0, INT64_MAX, false));
      if (s["allow_shared_devices"])
        cfg.allow_shared_devices = boolean(s["allow_shared_devices"], "allow_shared_devices");
      if (s["timing"]) cfg.timing = timing(s["timing"], cfg.timing);
      if (s["watchdog_s"]) cfg.watchdog_s = real(s["watchdog_s"], "watchdog_s", 0, 1e7);
      if (s["measure_ceilings"]) cfg.measure_ceilings = boolean(s["measure_ceilings"], "measure_ceilings");
    }
    const YAML::Node bs = root["benchmarks"];
    if (!bs) fail(root, "the config has no 'benchmarks' list");
    if (!bs.IsSequence()) fail(bs, "'benchmarks' must be a list");
    if (bs.size() == 0) fail(bs, "'benchmarks' is empty: nothing to run");
    std::set<std::string> names;
    for (std::size_t i = 0; i < bs.size(); ++i) {
      cfg.benchmarks.push_back(benchmark(bs[i], cfg, i));
      if (!names.insert(cfg.benchmarks.back().name).second)
        fail(bs[i]["name"], "duplicate benchmark name '" + cfg.benchmarks.back().name + "'");
    }
    return cfg;
  }

 private:
  std::string path_;
};

}  // namespace

Config parse_config(const std::string& text, const std::string& path) { return Parser(path).parse(text); }

void apply_selection(Config& cfg, const Selection& sel) {
  if (sel.empty()) return;
  if (sel.rounds < 0 || sel.rounds > kMaxRounds)
    throw UsageError(strprintf("--rounds %d: expected 1 to %d", sel.rounds, kMaxRounds));
  std::vector<std::string> names;
  for (const auto& b : cfg.benchmarks) names.push_back(b.name);
  std::vector<bool> keep(cfg.benchmarks.size(), sel.benchmarks.empty());
  for (const auto& pattern : sel.benchmarks) {
    if (pattern.empty()) throw UsageError("-b: an empty benchmark name");
    bool any = false;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (::fnmatch(pattern.c_str(), names[i].c_str(), 0) == 0) keep[i] = any = true;
    if (!any) {
      std::string msg =
          "-b " + pattern + ": no benchmark of " + cfg.path + " is named so (benchmarks: " + join(names, ", ") + ")";
      const std::string guess = closest_match(pattern, names);
      if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
      throw UsageError(msg);
    }
  }
  std::vector<BenchmarkConfig> kept;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (keep[i]) kept.push_back(std::move(cfg.benchmarks[i]));
  cfg.benchmarks = std::move(kept);

  const Parser parser("-a");
  std::vector<std::string> canonical;
  for (const auto& spec : sel.axes) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("-a " + spec + ": expected axis=value[,value...], e.g. -a seq=4096,8192");
    const std::string axis = spec.substr(0, eq), text = spec.substr(eq + 1);
    const std::string where = "-a " + spec;
    std::vector<std::string> values;
    for (std::size_t from = 0;;) {
      const std::size_t comma = text.find(',', from);
      std::string v = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
      v.erase(0, v.find_first_not_of(" \t"));
      v.erase(v.find_last_not_of(" \t") + 1);
      if (v.empty()) throw UsageError(where + ": an empty value");
      values.push_back(v);
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
    const bool impl_axis = axis == "implementation" || axis == "impl";
    std::set<std::string> known_axes;
    bool applied = false;
    for (auto& b : cfg.benchmarks) {
      if (impl_axis) {
        const auto known = Registry::instance().names(b.op->name());
        std::vector<std::string> impls;
        for (const auto& v : values) {
          if (std::find(known.begin(), known.end(), v) == known.end()) {
            std::string msg = where + ": '" + v + "' is not an implementation of op '" + b.op->name() +
                              "' (benchmark '" + b.name + "'; available: " + join(known, ", ") + ")";
            throw UsageError(msg);
          }
          if (std::find(impls.begin(), impls.end(), v) == impls.end()) impls.push_back(v);
        }
        b.implementations = impls;
        applied = true;
        continue;
      }
      for (const auto& a : b.op->axes()) known_axes.insert(a.name);
      const std::size_t idx = b.op->axis_index(axis);
      if (idx == std::string::npos) continue;
      const AxisSpec& a = b.op->axes()[idx];
      YAML::Node list(YAML::NodeType::Sequence);
      for (const auto& v : values) list.push_back(YAML::Node(v));
      std::vector<AxisValue> parsed;
      try {
        parsed = (values.size() == 1 && a.auto_all && values[0] == "auto") ? parser.axis_values(a, YAML::Node("auto"))
                                                                           : parser.axis_values(a, list);
      } catch (const UsageError& e) {
        throw UsageError(strprintf("benchmark '%s': %s", b.name.c_str(), e.what()));
      }
      b.axis_values[idx] = parsed;
      if (a.auto_all && values.size() == 1 && values[0] == "auto") b.uses_auto = true;
      applied = true;
    }
    if (!applied) {
      std::vector<std::string> choices(known_axes.begin(), known_axes.end());
      choices.push_back("implementation");
      std::string msg =
          where + ": no selected benchmark has an axis '" + axis + "' (axes: " + join(choices, ", ") + ")";
      const std::string guess = closest_match(axis, choices);
      if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
      throw UsageError(msg);
    }
    canonical.push_back("-a " + (impl_axis ? std::string("implementation") : axis) + "=" + join(values, ","));
  }
  for (const auto& b : cfg.benchmarks) {
    std::size_t total = b.implementations.size();
    for (const auto& v : b.axis_values) {
      total *= v.size();
      if (total > kMaxPoints)
        throw UsageError(
            strprintf("benchmark '%s' expands to more than %zu points with the selection", b.name.c_str(), kMaxPoints));
    }
  }
  std::vector<std::string> parts;
  for (const auto& pattern : sel.benchmarks) parts.push_back("-b " + pattern);
  parts.insert(parts.end(), canonical.begin(), canonical.end());
  if (sel.rounds > 0) {
    for (auto& b : cfg.benchmarks) b.timing.rounds = sel.rounds;
    parts.push_back(strprintf("--rounds %d", sel.rounds));
  }
  cfg.selection = join(parts, " ");
}

Config load_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open the config file");
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  // yaml-cpp needs about 0.5 KB of memory and 15 us per value: a size limit keeps a stray file
  // from taking minutes and gigabytes before it is rejected. Real configs are a few KB.
  if (size > kMaxConfigBytes)
    throw UsageError(strprintf("%s:1:1: the config is %.1f MiB; a config may be at most %lld KiB", path.c_str(),
                               static_cast<double>(size) / (1 << 20), kMaxConfigBytes / 1024));
  in.seekg(0);
  std::ostringstream os;
  os << in.rdbuf();
  return parse_config(os.str(), path);
}

}  // namespace genbench
