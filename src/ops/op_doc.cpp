#include "ops/op_doc.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "backend/ceilings.h"
#include "core/error.h"
#include "core/strings.h"
#include "ops/implementation.h"

namespace genbench {

const char* const kConfigDocNewOps = "<!-- genbench list --markdown: the sections of new ops go above this line -->\n";

std::string config_doc_begin(const std::string& op) { return "<!-- genbench list --markdown " + op + ": begin -->\n"; }
std::string config_doc_end(const std::string& op) { return "<!-- genbench list --markdown " + op + ": end -->\n"; }

namespace {

// A table cell: one line, no column separators.
std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string code(const std::string& s) { return "`" + s + "`"; }

std::string size_text(std::int64_t v) { return binary_size_text(v); }

std::string values_text(const AxisSpec& a) {
  std::vector<std::string> v;
  switch (a.type) {
    case AxisType::choice:
      for (const auto& c : a.choices) v.push_back(code(c));
      if (a.auto_all) v.push_back(code("auto") + " (every one)");
      return join(v, ", ");
    case AxisType::boolean: return "false, true";
    case AxisType::real: return "";
    case AxisType::integer:
    case AxisType::size:
      if (!a.allowed.empty()) {
        for (auto x : a.allowed) v.push_back(a.type == AxisType::size ? size_text(x) : std::to_string(x));
        return join(v, ", ");
      }
      {
        const auto t = [&](std::int64_t x) { return a.type == AxisType::size ? size_text(x) : std::to_string(x); };
        if (a.max == INT64_MAX) return "≥ " + t(a.min);
        return t(a.min) + " to " + t(a.max);
      }
  }
  return "";
}

// The implementation whose tuning switch `axis` is.
std::string tuning_owner(const Op& op, const std::string& axis) {
  std::vector<std::string> owners;
  for (const auto* impl : Registry::instance().for_op(op.name()))
    for (const auto& t : impl->info().tuning)
      if (t.name == axis && std::find(owners.begin(), owners.end(), impl->name()) == owners.end())
        owners.push_back(impl->name());
  return join(owners, ", ");
}

nlohmann::json value_json(const AxisSpec& a, const AxisValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    if (a.type == AxisType::boolean) return *i != 0;
    return *i;
  }
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::get<std::string>(v);
}

}  // namespace

std::string binary_size_text(std::int64_t v) {
  static const char* suffix[] = {"K", "M", "G", "T"};
  if (v <= 0 || v % 1024 != 0) return std::to_string(v);
  int i = -1;
  while (v % 1024 == 0 && i < 3) {
    v /= 1024;
    ++i;
  }
  return std::to_string(v) + suffix[i];
}

std::string axis_value_text(const AxisSpec& a, const AxisValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    if (a.type == AxisType::boolean) return *i ? "true" : "false";
    if (a.type == AxisType::size) return size_text(*i);
  }
  return to_string(v);
}

std::string op_config_markdown(const Op& op) {
  std::string o = "### " + op.name() + "\n\n";
  if (!op.summary().empty()) o += cell(op.summary()) + ".\n\n";
  o += "| axis | type | default | values | unit | meaning |\n|---|---|---|---|---|---|\n";
  for (const auto& a : op.axes()) {
    const std::string type = a.tuning ? "tuning (" + tuning_owner(op, a.name) + ")" : axis_type_name(a.type);
    o += "| " + code(a.name) + " | " + type + " | " + cell(axis_value_text(a, a.default_value)) + " | " +
         cell(values_text(a)) + " | " + cell(a.unit) + " | " + cell(a.help) + " |\n";
  }
  o += "\n| implementation | backend | what it is |\n|---|---|---|\n";
  for (const auto* impl : Registry::instance().for_op(op.name()))
    o += "| " + code(impl->name()) + " | " + backend_name(impl->backend()) + " | " + cell(impl->description()) + " |\n";
  return o;
}

std::string config_markdown() {
  std::string o;
  for (const Op* op : all_ops()) {
    if (!o.empty()) o += "\n";
    o += config_doc_begin(op->name()) + op_config_markdown(*op) + config_doc_end(op->name());
  }
  return o;
}

namespace {

// One op's entry of registry_json().
nlohmann::json op_entry(const Op& op) {
  using nlohmann::json;
  json axes = json::array();
  for (const auto& a : op.axes()) {
    json j{{"name", a.name},
           {"type", axis_type_name(a.type)},
           {"default", value_json(a, a.default_value)},
           {"unit", a.unit},
           {"help", a.help},
           {"tuning", a.tuning}};
    if (a.type == AxisType::choice) j["choices"] = a.choices;
    if (a.type == AxisType::integer || a.type == AxisType::size) {
      j["min"] = a.min;
      j["max"] = a.max;
      if (!a.allowed.empty()) j["allowed"] = a.allowed;
    }
    axes.push_back(j);
  }
  json impls = json::array();
  for (const auto* impl : Registry::instance().for_op(op.name())) {
    std::vector<std::string> tuning;
    for (const auto& t : impl->info().tuning) tuning.push_back(t.name);
    impls.push_back({{"name", impl->name()},
                     {"backend", backend_name(impl->backend())},
                     {"description", impl->description()},
                     {"built", impl->info().missing.empty()},
                     {"tuning", tuning}});
  }
  const HostExample ex = op.host_example();
  json ex_axes = json::object();
  for (const auto& [name, values] : ex.axes) {
    const std::size_t i = op.axis_index(name);
    if (i >= op.axes().size()) throw Error("op " + op.name() + ": its host example names no axis " + name);
    json v = json::array();
    for (const auto& x : values) v.push_back(value_json(op.axes()[i], x));
    ex_axes[name] = v;
  }
  return {{"name", op.name()},
          {"summary", op.summary()},
          {"axes", axes},
          {"implementations", impls},
          {"host_example", {{"axes", ex_axes}, {"ranks", ex.ranks}}}};
}

}  // namespace

std::string op_registry_json(const Op& op) { return op_entry(op).dump(); }

std::string registry_json() {
  using nlohmann::json;
  json ops = json::array();
  for (const Op* op : all_ops()) ops.push_back(op_entry(*op));
  json ceilings = json::array();
  for (const auto* s : CeilingRegistry::instance().all())
    ceilings.push_back({{"name", s->info.name},
                        {"backend", backend_name(s->info.backend)},
                        {"description", s->info.description},
                        {"built", s->measure != nullptr}});
  return json{{"ops", ops}, {"ceiling_sources", ceilings}}.dump(1) + "\n";
}

}  // namespace genbench
