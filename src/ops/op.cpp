#include "ops/op.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/error.h"
#include "core/strings.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

std::vector<const Op*>& op_list() {
  static std::vector<const Op*> ops;
  return ops;
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

const char* column_kind_name(ColumnKind k) {
  switch (k) {
    case ColumnKind::effective: return "effective";
    case ColumnKind::chosen: return "chosen";
    case ColumnKind::metric: return "metric";
    case ColumnKind::extra: return "extra";
  }
  return "?";
}

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

CeilingId Op::ceiling(const Point&) const { return ceilings::none(); }

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

const std::vector<OpColumn>& Op::columns() const {
  static std::mutex m;
  {
    const std::lock_guard<std::mutex> lock(m);
    if (columns_) return *columns_;
  }
  // Built outside the lock: an op may declare its columns from another op's.
  const auto& ax = axes();
  const std::vector<OpColumn> declared = define_columns();
  for (const auto& c : declared)
    if (c.kind == ColumnKind::chosen)
      throw std::logic_error("op " + name() + ": column '" + c.name +
                             "' is declared as chosen; those come from the implementations' tuning axes");
  auto v = std::make_unique<std::vector<OpColumn>>();
  const auto take = [&](ColumnKind k) {
    for (const auto& c : declared)
      if (c.kind == k) v->push_back(c);
  };
  take(ColumnKind::effective);
  for (const auto& a : ax) {
    if (!a.tuning) continue;
    OpColumn c;
    c.name = a.name + "_chosen";
    c.type = ColumnType::str;
    c.meaning = "what the implementation chose for " + a.name;
    c.kind = ColumnKind::chosen;
    c.axis = a.name;
    v->push_back(std::move(c));
  }
  take(ColumnKind::metric);
  take(ColumnKind::extra);
  for (std::size_t i = 0; i < v->size(); ++i) {
    const OpColumn& c = (*v)[i];
    const std::string what = "op " + name() + ": column '" + c.name + "'";
    if (c.name.empty()) throw std::logic_error("op " + name() + ": a column has no name");
    if (c.meaning.empty()) throw std::logic_error(what + " has no meaning");
    if (c.kind == ColumnKind::effective && !c.of_point) throw std::logic_error(what + " has no function of the point");
    if (c.kind == ColumnKind::metric && !c.rate) throw std::logic_error(what + " has no function of the work");
    for (std::size_t j = 0; j < i; ++j)
      if ((*v)[j].name == c.name) throw std::logic_error(what + " is declared twice");
    for (const auto& a : ax)
      if (a.name == c.name) throw std::logic_error(what + " has the name of an axis");
  }
  const std::lock_guard<std::mutex> lock(m);
  if (!columns_) columns_ = std::move(v);
  return *columns_;
}

std::vector<OpColumn> Op::metrics() const {
  std::vector<OpColumn> out;
  for (const auto& c : columns())
    if (c.kind == ColumnKind::metric) out.push_back(c);
  return out;
}

std::string Op::check_report(const CaseReport& r, const std::vector<AxisSpec>& own_tuning) const {
  const auto& cols = columns();
  for (std::size_t i = 0; i < r.extra.size(); ++i) {
    const std::string& n = r.extra[i].first;
    const bool declared = std::any_of(cols.begin(), cols.end(),
                                      [&](const OpColumn& c) { return c.kind == ColumnKind::extra && c.name == n; });
    if (!declared) {
      std::vector<std::string> extras;
      for (const auto& c : cols)
        if (c.kind == ColumnKind::extra) extras.push_back(c.name);
      return "the case reports '" + n + "', which is no extra column of op " + name() +
             " (its extra columns: " + (extras.empty() ? std::string("none") : join(extras, ", ")) + ")";
    }
    for (std::size_t j = 0; j < i; ++j)
      if (r.extra[j].first == n) return "the case reports extra column '" + n + "' twice";
  }
  for (const auto& c : cols) {
    if (c.kind != ColumnKind::extra) continue;
    if (std::none_of(r.extra.begin(), r.extra.end(), [&](const auto& e) { return e.first == c.name; }))
      return "the case reports no value for extra column '" + c.name + "' of op " + name() +
             " (every case reports every extra column, NaN where it does not apply)";
  }
  for (std::size_t i = 0; i < r.chosen.size(); ++i) {
    const std::string& n = r.chosen[i].first;
    if (std::none_of(own_tuning.begin(), own_tuning.end(), [&](const AxisSpec& a) { return a.name == n; }))
      return "the case reports a choice for '" + n + "', which is not a tuning axis of its implementation";
    for (std::size_t j = 0; j < i; ++j)
      if (r.chosen[j].first == n) return "the case reports its choice for '" + n + "' twice";
  }
  for (const auto& a : own_tuning)
    if (std::none_of(r.chosen.begin(), r.chosen.end(), [&](const auto& c) { return c.first == a.name; }))
      return "the case does not say what it chose for its tuning axis '" + a.name + "'";
  return "";
}

std::vector<ColumnValue> Op::values(const Point& p, int world_size, const Work& w, double seconds,
                                    const CaseReport& r) const {
  std::vector<ColumnValue> v;
  for (const auto& c : columns()) {
    switch (c.kind) {
      case ColumnKind::effective: v.push_back(c.of_point(p, world_size)); break;
      case ColumnKind::chosen: {
        std::string chosen;
        for (const auto& [n, x] : r.chosen)
          if (n == c.axis) chosen = x;
        v.emplace_back(std::move(chosen));
        break;
      }
      case ColumnKind::metric: v.emplace_back(metric_value(c, w, seconds)); break;
      case ColumnKind::extra: {
        double x = std::nan("");
        for (const auto& [n, value] : r.extra)
          if (n == c.name) x = value;
        v.emplace_back(x);
        break;
      }
    }
  }
  return v;
}

namespace {

// AnalysisHints::extra_plots as stored: each held axis with its default value.
nlohmann::json extra_plots_json(const Op& op, const std::vector<ExtraPlotHint>& plots) {
  using nlohmann::json;
  json out = json::array();
  for (const auto& p : plots) {
    json hold = json::object();
    for (const auto& a : p.hold) {
      const std::size_t i = op.axis_index(a);
      if (i >= op.axes().size())
        throw Error("op " + op.name() + ": extra plot " + p.name + " holds " + a + ", no axis");
      std::visit([&](const auto& v) { hold[a] = v; }, op.axes()[i].default_value);
    }
    json panels = json::array();
    for (const auto& q : p.panels) {
      json ticks = json::object();
      for (const auto& [value, text] : q.tick_labels) ticks[value] = text;
      panels.push_back({{"x", q.x},
                        {"label", q.label},
                        {"log_x", q.log_x},
                        {"categorical", q.categorical},
                        {"tick_labels", ticks},
                        {"lines", q.lines},
                        {"free", q.free}});
    }
    out.push_back({{"name", p.name},
                   {"title", p.title},
                   {"subtitle", p.subtitle},
                   {"y", p.y},
                   {"y_label", p.y_label},
                   {"reference_lines", p.reference_lines},
                   {"hold", hold},
                   {"panels", panels},
                   {"table", p.table},
                   {"table_note", p.table_note}});
  }
  return out;
}

}  // namespace

std::string Op::description_json() const {
  using nlohmann::json;
  json d;
  d["op"] = name();
  d["summary"] = summary();
  const auto ms = metrics();
  d["headline"] = ms.empty() ? "" : ms.front().name;
  json axes_j = json::array();
  for (const auto& a : axes())
    axes_j.push_back(
        {{"name", a.name}, {"type", axis_type_name(a.type)}, {"unit", a.unit}, {"help", a.help}, {"tuning", a.tuning}});
  d["axes"] = axes_j;
  json cols = json::array();
  for (const auto& c : columns())
    cols.push_back({{"name", c.name},
                    {"type", column_type_name(c.type)},
                    {"unit", c.unit},
                    {"meaning", c.meaning},
                    {"kind", column_kind_name(c.kind)}});
  d["columns"] = cols;
  json mj = json::array();
  for (const auto& m : ms) mj.push_back({{"name", m.name}, {"unit", m.unit}, {"meaning", m.meaning}});
  d["metrics"] = mj;
  const AnalysisHints h = analysis();
  d["plot"] = {
      {"title", h.title}, {"x", h.x}, {"log_x", h.log_x}, {"facets", h.facets}, {"ceiling_line", h.ceiling_line.name}};
  d["compare"] = {{"metric", h.compare_metric.empty() ? d["headline"].get<std::string>() : h.compare_metric},
                  {"higher_is_better", h.higher_is_better}};
  d["extra_plots"] = extra_plots_json(*this, h.extra_plots);
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

double metric_value(const OpColumn& m, const Work& w, double seconds) {
  if (!m.rate || !(seconds > 0)) return std::nan("");
  const double v = m.rate(w, seconds);
  return v > 0 ? v : std::nan("");
}

std::string format_metric(const OpColumn& m, double v) {
  if (!std::isfinite(v)) return "";
  const std::string label = m.label.empty() ? "" : m.label + " ";
  // Rates below one of their unit read better one prefix down (0.002 TFLOP/s = 2 GFLOP/s).
  if (m.unit == "TFLOP/s") return label + (v < 1 ? strprintf("%.3g GFLOP/s", v * 1e3) : strprintf("%.1f TFLOP/s", v));
  if (m.unit == "GB/s") return label + strprintf("%.2f GB/s", v);
  return label + (v >= 100 ? strprintf("%.1f %s", v, m.unit.c_str()) : strprintf("%.3g %s", v, m.unit.c_str()));
}

}  // namespace genbench
