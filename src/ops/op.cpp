#include "ops/op.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/strings.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

std::vector<const Op*>& op_list() {
  static std::vector<const Op*> ops;
  return ops;
}

const char* axis_type_name(AxisType t) {
  switch (t) {
    case AxisType::integer: return "integer";
    case AxisType::size: return "size";
    case AxisType::real: return "real";
    case AxisType::boolean: return "boolean";
    case AxisType::choice: return "choice";
  }
  return "?";
}

const char* column_type_name(ColumnType t) {
  switch (t) {
    case ColumnType::i64: return "i64";
    case ColumnType::f64: return "f64";
    case ColumnType::str: return "str";
  }
  return "?";
}

}  // namespace

OpRegistrar::OpRegistrar(const Op& (*get)()) {
  auto& ops = op_list();
  const Op* op = &get();
  ops.insert(
      std::lower_bound(ops.begin(), ops.end(), op, [](const Op* a, const Op* b) { return a->name() < b->name(); }), op);
}

std::string Op::describe(const Point& p) const {
  std::string out;
  const auto& ax = axes();
  for (std::size_t i = 0; i < ax.size() && i < p.values.size(); ++i) {
    if (ax[i].tuning && std::holds_alternative<std::string>(p.values[i]) &&
        std::get<std::string>(p.values[i]) == "auto")
      continue;
    if (!out.empty()) out += ' ';
    out += ax[i].name + "=" + to_string(p.values[i]);
  }
  return out;
}

Point point_of(const Op& op, const std::string& impl, const std::vector<std::pair<std::string, AxisValue>>& values) {
  Point p;
  p.impl = impl;
  for (const auto& a : op.axes()) p.values.push_back(a.default_value);
  for (const auto& [name, v] : values) {
    const std::size_t i = op.axis_index(name);
    if (i >= p.values.size()) throw Error("op " + op.name() + " has no axis " + name);
    if (v.index() != p.values[i].index())
      throw Error("op " + op.name() + ": axis " + name + " takes another kind of value than " + to_string(v));
    p.values[i] = v;
  }
  return p;
}

std::string Op::skip_reason(const Point&, int) const { return ""; }

std::string Op::ceiling(const Point&) const { return ""; }

std::vector<ColumnValue> Op::effective(const Point&, int) const { return {}; }

const std::vector<AxisSpec>& Op::axes() const {
  static std::mutex m;
  const std::lock_guard<std::mutex> lock(m);
  if (!axes_) {
    auto v = std::make_unique<std::vector<AxisSpec>>(define_axes());
    for (AxisSpec a : Registry::instance().tuning_axes(name())) {
      a.tuning = true;
      v->push_back(std::move(a));
    }
    axes_ = std::move(v);
  }
  return *axes_;
}

std::size_t Op::axis_index(const std::string& n) const {
  const auto& ax = axes();
  for (std::size_t i = 0; i < ax.size(); ++i)
    if (ax[i].name == n) return i;
  return static_cast<std::size_t>(-1);
}

std::vector<ColumnSpec> Op::columns() const {
  std::vector<ColumnSpec> c = effective_columns();
  for (const auto& a : axes())
    if (a.tuning) c.push_back({a.name + "_chosen", ColumnType::str, "", "what the implementation chose for " + a.name});
  for (const auto& m : metrics()) c.push_back({m.name, ColumnType::f64, m.unit, m.meaning});
  for (const auto& [n, unit] : extra_columns()) c.push_back({n, ColumnType::f64, unit, "measured by the case"});
  return c;
}

std::string Op::description_json() const {
  using nlohmann::json;
  json d;
  d["op"] = name();
  d["summary"] = summary();
  const auto ms = metrics();
  d["headline"] = ms.empty() ? "" : ms.front().name;
  json axes_j = json::array();
  for (const auto& a : axes())
    axes_j.push_back({{"name", a.name}, {"type", axis_type_name(a.type)}, {"help", a.help}, {"tuning", a.tuning}});
  d["axes"] = axes_j;
  const std::size_t n_eff = effective_columns().size();
  std::size_t n_tuning = 0;
  for (const auto& a : axes()) n_tuning += a.tuning ? 1 : 0;
  json cols = json::array();
  const auto all = columns();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const char* kind = i < n_eff                          ? "effective"
                       : i < n_eff + n_tuning             ? "chosen"
                       : i < n_eff + n_tuning + ms.size() ? "metric"
                                                          : "extra";
    cols.push_back({{"name", all[i].name},
                    {"type", column_type_name(all[i].type)},
                    {"unit", all[i].unit},
                    {"meaning", all[i].meaning},
                    {"kind", kind}});
  }
  d["columns"] = cols;
  json mj = json::array();
  for (const auto& m : ms) mj.push_back({{"name", m.name}, {"unit", m.unit}, {"meaning", m.meaning}});
  d["metrics"] = mj;
  const AnalysisHints h = analysis();
  d["plot"] = {
      {"title", h.title}, {"x", h.x}, {"log_x", h.log_x}, {"facets", h.facets}, {"ceiling_line", h.ceiling_line}};
  d["compare"] = {{"metric", h.compare_metric.empty() ? d["headline"].get<std::string>() : h.compare_metric},
                  {"higher_is_better", h.higher_is_better}};
  return d.dump();
}

const std::vector<const Op*>& all_ops() { return op_list(); }

const Op* find_op(const std::string& name) {
  for (const Op* op : all_ops())
    if (op->name() == name) return op;
  return nullptr;
}

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const Op* op : all_ops()) v.push_back(op->name());
  return v;
}

double metric_value(const MetricSpec& m, const Work& w, double seconds) {
  if (!m.value || !(seconds > 0)) return std::nan("");
  const double v = m.value(w, seconds);
  return v > 0 ? v : std::nan("");
}

std::string format_metric(const MetricSpec& m, double v) {
  if (!std::isfinite(v)) return "";
  const std::string label = m.label.empty() ? "" : m.label + " ";
  // Rates below one of their unit read better one prefix down (0.002 TFLOP/s = 2 GFLOP/s).
  if (m.unit == "TFLOP/s") return label + (v < 1 ? strprintf("%.3g GFLOP/s", v * 1e3) : strprintf("%.1f TFLOP/s", v));
  if (m.unit == "GB/s") return label + strprintf("%.2f GB/s", v);
  return label + (v >= 100 ? strprintf("%.1f %s", v, m.unit.c_str()) : strprintf("%.3g %s", v, m.unit.c_str()));
}

}  // namespace genbench
