// `genbench describe` (io/describe.h).
#include "io/describe.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/strings.h"
#include "io/columns.h"
#include "io/h5.h"
#include "io/schema.h"
#include "io/tables.h"
#include "ops/implementation.h"
#include "ops/op_doc.h"

namespace genbench {

namespace {

using Json = nlohmann::ordered_json;

std::string str(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

bool flag(const Json& j, const char* key) {
  if (!j.is_object()) return false;
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

const Json& member(const Json& j, const char* key) {
  static const Json null_json;
  if (!j.is_object()) return null_json;
  const auto it = j.find(key);
  return it == j.end() ? null_json : *it;
}

// Each column of a description gets "computed": how its value is obtained, from its kind.
void add_sources(Json& d) {
  if (!d.is_object() || !d.contains("columns") || !d["columns"].is_array()) return;
  for (auto& c : d["columns"])
    for (ColumnKind k : {ColumnKind::effective, ColumnKind::chosen, ColumnKind::metric, ColumnKind::extra})
      if (str(c, "kind") == column_kind_name(k)) c["computed"] = column_kind_source(k);
}

// ---- the ceiling an op's points are held against ----

Json ceiling_json(const CeilingId& c, const Op& op) {
  if (c.none()) return nullptr;
  std::string held;
  for (const auto& m : op.metrics())
    if (m.unit == c.unit) {
      held = m.name;
      break;
    }
  Json j = Json::object();
  j["name"] = c.name;
  j["unit"] = c.unit;
  j["held_against"] = held;
  return j;
}

// The values of an axis tried when looking for what changes the ceiling: every choice, both
// flags, the allowed integers, or the powers of two within the bounds (up to 1M).
std::vector<AxisValue> probe_values(const AxisSpec& a) {
  std::vector<AxisValue> v;
  switch (a.type) {
    case AxisType::choice:
      for (const auto& c : a.choices) v.emplace_back(c);
      break;
    case AxisType::boolean:
      v.emplace_back(std::int64_t{0});
      v.emplace_back(std::int64_t{1});
      break;
    case AxisType::integer:
    case AxisType::size:
      if (!a.allowed.empty()) {
        for (auto x : a.allowed) v.emplace_back(x);
      } else {
        for (std::int64_t x = 1; x <= std::min<std::int64_t>(a.max, std::int64_t{1} << 20); x *= 2)
          if (x >= a.min) v.emplace_back(x);
      }
      break;
    case AxisType::real: break;
  }
  return v;
}

// The ceiling at the axis defaults, and for each axis whose value changes it (the others at
// their defaults, legal points only) the ceiling at each value tried.
Json op_ceiling(const Op& op, int world_size) {
  const auto impls = Registry::instance().for_op(op.name());
  const Point base = point_of(op, impls.empty() ? std::string() : impls.front()->name(), {});
  CeilingId at_defaults;
  try {
    at_defaults = op.ceiling(base);
  } catch (const std::exception&) {
    at_defaults = ceilings::none();
  }
  Json out = Json::object();
  out["at_defaults"] = ceiling_json(at_defaults, op);
  Json by_axis = Json::array();
  const auto& axes = op.axes();
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const AxisSpec& a = axes[i];
    if (a.tuning) continue;
    Json values = Json::array();
    bool differs = false;
    for (const auto& v : probe_values(a)) {
      Point p = base;
      p.values[i] = v;
      CeilingId c;
      try {
        if (!op.check(p, world_size).empty()) continue;
        c = op.ceiling(p);
      } catch (const std::exception&) {
        continue;
      }
      differs = differs || c != at_defaults;
      Json e = Json::object();
      e["value"] = axis_value_text(a, v);
      e["name"] = c.name;
      e["unit"] = c.unit;
      values.push_back(std::move(e));
    }
    if (!differs) continue;
    Json e = Json::object();
    e["axis"] = a.name;
    e["values"] = std::move(values);
    by_axis.push_back(std::move(e));
  }
  out["by_axis"] = std::move(by_axis);
  return out;
}

// ---- one op's description as JSON ----

Json op_json(const Op& op) {
  const Json reg = Json::parse(op_registry_json(op));
  Json desc = Json::parse(op.description_json());
  add_sources(desc);
  Json axes = reg.at("axes");
  for (auto& a : axes) {
    if (!flag(a, "tuning")) continue;
    std::vector<std::string> owners;
    for (const auto& impl : reg.at("implementations"))
      for (const auto& t : impl.at("tuning"))
        if (t == a.at("name") && std::find(owners.begin(), owners.end(), str(impl, "name")) == owners.end())
          owners.push_back(str(impl, "name"));
    a["implementations"] = owners;
  }
  Json d = Json::object();
  d["op"] = op.name();
  d["summary"] = op.summary();
  d["axes"] = std::move(axes);
  d["implementations"] = reg.at("implementations");
  d["columns"] = desc.at("columns");
  d["headline"] = desc.at("headline");
  d["ceiling"] = op_ceiling(op, std::max(1, op.host_example().ranks));
  d["plot"] = desc.at("plot");
  d["compare"] = desc.at("compare");
  d["extra_plots"] = desc.at("extra_plots");
  d["host_example"] = reg.at("host_example");
  return d;
}

// ---- text ----

constexpr std::size_t kValuesWidth = 40;  // wider lists of an axis's values go under the table

// Rows of cells as aligned columns under a two-space indent; the last cell is not padded.
std::string aligned(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> w;
  for (const auto& r : rows)
    for (std::size_t i = 0; i + 1 < r.size(); ++i) {
      if (w.size() <= i) w.resize(i + 1, 0);
      w[i] = std::max(w[i], r[i].size());
    }
  std::string o;
  for (const auto& r : rows) {
    std::string line = " ";
    for (std::size_t i = 0; i < r.size(); ++i) {
      line += " " + r[i];
      if (i + 1 < r.size()) line += std::string(w[i] - r[i].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    o += line + "\n";
  }
  return o;
}

const Json* axis_named(const Json& d, const std::string& name) {
  const Json& axes = member(d, "axes");
  if (!axes.is_array()) return nullptr;
  for (const auto& a : axes)
    if (str(a, "name") == name) return &a;
  return nullptr;
}

// A value of an axis as a config writes it (sizes with binary suffixes where exact).
std::string value_text(const Json& axis, const Json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) {
    const auto x = v.get<std::int64_t>();
    return str(axis, "type") == "size" ? binary_size_text(x) : std::to_string(x);
  }
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  return v.dump();
}

std::string values_text(const Json& a) {
  std::vector<std::string> v;
  if (member(a, "choices").is_array()) {
    for (const auto& c : a["choices"]) v.push_back(value_text(a, c));
    return join(v, ", ");
  }
  if (str(a, "type") == "boolean") return "false, true";
  if (member(a, "allowed").is_array() && !a["allowed"].empty()) {
    for (const auto& x : a["allowed"]) v.push_back(value_text(a, x));
    return join(v, ", ");
  }
  if (member(a, "min").is_number_integer() && member(a, "max").is_number_integer()) {
    const std::string lo = value_text(a, a["min"]);
    if (a["max"].get<std::int64_t>() == INT64_MAX) return ">= " + lo;
    return lo + " to " + value_text(a, a["max"]);
  }
  return "-";
}

std::vector<columns::Column> columns_of(const Json& d) {
  std::vector<columns::Column> out;
  const Json& cols = member(d, "columns");
  if (!cols.is_array()) return out;
  for (const auto& c : cols) {
    columns::Column x;
    x.name = str(c, "name");
    const std::string t = str(c, "type");
    x.type = t == "i64" ? ColumnType::i64 : t == "str" ? ColumnType::str : ColumnType::f64;
    x.str_len = x.type == ColumnType::str ? columns::kOpStrLen : 0;
    x.unit = str(c, "unit");
    x.meaning = str(c, "meaning");
    x.kind = "op";
    x.source = str(c, "computed");
    out.push_back(std::move(x));
  }
  return out;
}

std::string ceiling_text(const Json& d) {
  const Json& c = member(d, "ceiling");
  if (!c.is_object()) return "";
  const Json& def = member(c, "at_defaults");
  const Json& by_axis = member(c, "by_axis");
  if (!def.is_object() && (!by_axis.is_array() || by_axis.empty()))
    return "ceiling: none (ceiling_fraction stays NaN)\n";
  std::string o = "ceiling: ";
  if (def.is_object()) {
    o += str(def, "name") + " (" + str(def, "unit") + ") at the axis defaults";
    const std::string held = str(def, "held_against");
    o += held.empty() ? "; no metric of its unit\n" : "; ceiling_fraction = " + held + " over it\n";
  } else {
    o += "none at the axis defaults\n";
  }
  for (const auto& e : by_axis) {
    const std::string axis = str(e, "axis");
    const Json* a = axis_named(d, axis);
    const std::string type = a ? str(*a, "type") : "";
    const bool numeric = type == "integer" || type == "size";
    std::vector<std::string> parts;
    const Json& values = member(e, "values");
    for (std::size_t i = 0; i < values.size();) {
      std::size_t j = i;
      // Consecutive numeric values with the same ceiling read as one range.
      while (numeric && j + 1 < values.size() && str(values[j + 1], "name") == str(values[i], "name")) ++j;
      const std::string name = str(values[i], "name");
      const std::string what = str(values[i], "value") + (j > i ? " to " + str(values[j], "value") : "");
      parts.push_back(what + " -> " + (name.empty() ? "none" : name));
      i = j + 1;
    }
    o += "  by " + axis +
         (numeric && !(a && member(*a, "allowed").is_array() && !(*a)["allowed"].empty()) ? " (powers of two tried)"
                                                                                          : "") +
         ": " + join(parts, "; ") + "\n";
  }
  return o;
}

std::string analysis_text(const Json& d) {
  const Json& plot = member(d, "plot");
  const Json& compare = member(d, "compare");
  const Json& extra = member(d, "extra_plots");
  std::string o;
  if (!str(plot, "title").empty() || !str(plot, "x").empty()) {
    o += "  plot \"" + str(plot, "title") + "\": x = " + (str(plot, "x").empty() ? "-" : str(plot, "x")) +
         (flag(plot, "log_x") ? " (log2)" : "");
    std::vector<std::string> facets;
    if (member(plot, "facets").is_array())
      for (const auto& f : plot["facets"]) facets.push_back(f.get<std::string>());
    if (!facets.empty()) o += ", panels by " + join(facets, ", ");
    if (!str(plot, "ceiling_line").empty()) o += ", ceiling line " + str(plot, "ceiling_line");
    o += "\n";
  }
  if (!str(compare, "metric").empty())
    o += "  compared across files: " + str(compare, "metric") +
         (flag(compare, "higher_is_better") ? ", higher is better\n" : ", lower is better\n");
  if (extra.is_array())
    for (const auto& p : extra)
      o += "  extra plot " + str(p, "name") + ": " + str(p, "y") + " (\"" + str(p, "title") + "\")\n";
  return o.empty() ? "analysis: no hints declared\n" : "analysis:\n" + o;
}

// One op's description as text, from the JSON of op_json() or an op_description stored in a
// file (which has no defaults, values, implementations, ceiling or host example: those parts
// are shown where present).
std::string op_text(const Json& d) {
  const std::string name = str(d, "op");
  std::string o = "op " + name + (str(d, "summary").empty() ? "" : ": " + str(d, "summary")) + "\n";

  const Json& axes = member(d, "axes");
  if (axes.is_array()) {
    o += "\naxes:\n";
    // A description stored in a file has no defaults or values: those columns are left out.
    const bool full = std::any_of(axes.begin(), axes.end(), [](const Json& a) { return a.contains("default"); });
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> long_values;
    if (full) rows.push_back({"name", "type", "unit", "default", "values", "meaning"});
    else rows.push_back({"name", "type", "unit", "meaning"});
    for (const auto& a : axes) {
      std::string type = str(a, "type");
      if (flag(a, "tuning")) {
        std::vector<std::string> owners;
        if (member(a, "implementations").is_array())
          for (const auto& x : a["implementations"]) owners.push_back(x.get<std::string>());
        type = owners.empty() ? "tuning" : "tuning (" + join(owners, ", ") + ")";
      }
      const std::string unit = str(a, "unit").empty() ? "-" : str(a, "unit");
      if (full) {
        // A long list of values goes under the table, so that it does not widen every row.
        std::string values = values_text(a);
        if (values.size() > kValuesWidth) {
          long_values.push_back("  " + str(a, "name") + ": " + values + "\n");
          values = "(below)";
        }
        rows.push_back({str(a, "name"), type, unit, value_text(a, member(a, "default")), values, str(a, "help")});
      } else {
        rows.push_back({str(a, "name"), type, unit, str(a, "help")});
      }
    }
    o += aligned(rows);
    for (const auto& l : long_values) o += l;
  }

  const Json& impls = member(d, "implementations");
  if (impls.is_array()) {
    o += "\ntuning axes, by implementation (default auto: the implementation's choice; <axis>_chosen records it):\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& i : impls) {
      std::vector<std::string> t;
      if (member(i, "tuning").is_array())
        for (const auto& x : i["tuning"]) t.push_back(x.get<std::string>());
      if (!t.empty()) rows.push_back({str(i, "name") + " (" + str(i, "backend") + ")", join(t, ", ")});
    }
    o += rows.empty() ? "  none\n" : aligned(rows);
    o += "\nimplementations:\n";
    rows.clear();
    for (const auto& i : impls)
      rows.push_back(
          {str(i, "name"), str(i, "backend"), flag(i, "built") ? "built" : "not built", str(i, "description")});
    o += aligned(rows);
  }

  const auto cols = columns_of(d);
  o += "\nresult columns (the points table's op columns, after the fixed ones of `genbench schema`):\n";
  o += cols.empty() ? "  none\n" : columns::columns_text(cols);
  if (!str(d, "headline").empty())
    o += "headline metric: " + str(d, "headline") + " (progress lines, the summary, comparisons)\n";

  o += ceiling_text(d);
  o += analysis_text(d);

  const Json& ex = member(d, "host_example");
  if (ex.is_object()) {
    std::vector<std::string> parts;
    for (const auto& [axis, values] : member(ex, "axes").items()) {
      const Json* a = axis_named(d, axis);
      std::vector<std::string> v;
      for (const auto& x : values) v.push_back(a ? value_text(*a, x) : x.dump());
      parts.push_back(axis + "=" + join(v, ","));
    }
    const Json& ranks = member(ex, "ranks");
    const long long n = ranks.is_number_integer() ? ranks.get<long long>() : 1;
    o += strprintf("host example: %s; %lld rank%s\n", parts.empty() ? "the defaults" : join(parts, " ").c_str(), n,
                   n == 1 ? "" : "s");
  }
  return o;
}

// ---- a result file ----

const std::vector<std::string>& known_statuses() {
  static const std::vector<std::string> s{schema::kOk, schema::kFailed, schema::kSkipped, schema::kUnsupported};
  return s;
}

constexpr const char* kNotRun = "not run";

// {status: count}: the known statuses first (those seen), then others, then rows not run.
Json status_counts(const std::map<std::string, std::size_t>& counts) {
  Json j = Json::object();
  for (const auto& s : known_statuses())
    if (const auto it = counts.find(s); it != counts.end()) j[s] = it->second;
  for (const auto& [s, n] : counts)
    if (!s.empty() && std::find(known_statuses().begin(), known_statuses().end(), s) == known_statuses().end())
      j[s] = n;
  if (const auto it = counts.find(""); it != counts.end()) j[kNotRun] = it->second;
  return j;
}

Json benchmark_json(hid_t file, const std::string& path, const std::string& name) {
  const std::string group = std::string(schema::kBenchmarks) + "/" + name;
  h5::Id g(H5Gopen2(file, group.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.valid()) throw UsageError(path + ": cannot open " + group);
  Json b = Json::object();
  b["name"] = name;
  b["op"] = h5::get_attr_string(g, "op");
  b["implementations"] = h5::get_attr_strings(g, "implementations");
  const std::int64_t sweep = h5::get_attr_int(g, "sweep_size");
  const std::int64_t rounds = h5::get_attr_int(g, "rounds");
  if (sweep >= 0) b["sweep_size"] = sweep;
  b["rounds"] = rounds > 0 ? rounds : 1;
  const Table t = read_table(file, group + "/" + schema::kPoints, path);
  const Table::Field* status = t.field("status");
  const Table::Field* impl = t.field("impl");
  if (!status || !impl) throw UsageError(path + ": " + group + "/points has no status or impl column");
  std::map<std::string, std::size_t> counts;
  std::map<std::string, std::map<std::string, std::size_t>> by_impl;
  std::vector<std::string> impl_order;
  std::size_t completed = 0;
  for (std::size_t r = 0; r < t.rows; ++r) {
    const std::string s = t.value(r, *status).get<std::string>();
    ++counts[s];
    if (s.empty()) continue;
    ++completed;
    const std::string i = t.value(r, *impl).get<std::string>();
    if (!by_impl.count(i)) impl_order.push_back(i);
    ++by_impl[i][s];
  }
  // Each axis's values over the completed rows, in the order first seen.
  std::vector<std::string> axis_names = h5::get_attr_strings(g, "axes");
  Json axes = Json::object();
  for (const auto& a : axis_names) {
    const Table::Field* x = t.field(a);
    if (!x) continue;
    Json values = Json::array();
    for (std::size_t r = 0; r < t.rows; ++r) {
      if (t.value(r, *status).get<std::string>().empty()) continue;
      Json v = t.value(r, *x);
      if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(std::move(v));
    }
    axes[a] = std::move(values);
  }
  b["rows"] = t.rows;
  b["completed"] = completed;
  b["axes"] = std::move(axes);
  b["status"] = status_counts(counts);
  Json bi = Json::object();
  for (const auto& i : impl_order) bi[i] = status_counts(by_impl[i]);
  b["by_implementation"] = bi;
  const std::string desc = h5::get_attr_string(g, schema::kAttrOpDescription);
  if (desc.empty()) {
    b["description"] = nullptr;
  } else {
    Json d;
    try {
      d = Json::parse(desc);
    } catch (const std::exception&) {
      throw UsageError(path + ": benchmark '" + name + "': op_description is not valid JSON");
    }
    if (!d.is_object()) throw UsageError(path + ": benchmark '" + name + "': op_description is not a JSON object");
    add_sources(d);
    b["description"] = std::move(d);
  }
  return b;
}

Json file_json(const std::string& path) {
  h5::Id f = open_result_file(path);
  Json d = Json::object();
  d["file"] = path;
  d["format"] = h5::get_attr_string(f, schema::kAttrFormat);
  d["schema_version"] = h5::get_attr_int(f, schema::kAttrSchemaVersion);
  for (const char* a : {"state", "tool_version", "git_revision", "backend"}) d[a] = h5::get_attr_string(f, a);
  d["world_size"] = h5::get_attr_int(f, schema::kAttrWorldSize);
  for (const char* a : {"config_path", "command_line", "selection", "start_utc", "end_utc"})
    d[a] = h5::get_attr_string(f, a);
  Json ranks = Json::array();
  if (H5Lexists(f, schema::kSystem, H5P_DEFAULT) > 0) {
    const Table sys = read_table(f, schema::kSystem, path);
    for (std::size_t r = 0; r < sys.rows; ++r) {
      Json row = Json::object();
      for (const char* k : {"rank", "host", "name"})
        if (const Table::Field* x = sys.field(k)) row[k] = sys.value(r, *x);
      ranks.push_back(std::move(row));
    }
  }
  d["ranks"] = std::move(ranks);
  Json benches = Json::array();
  for (const auto& name : benchmark_names(f)) benches.push_back(benchmark_json(f, path, name));
  d["benchmarks"] = std::move(benches);
  return d;
}

std::string counts_text(const Json& counts) {
  std::vector<std::string> parts;
  for (const auto& [s, n] : counts.items()) parts.push_back(s + " " + n.dump());
  return parts.empty() ? "none" : join(parts, ", ");
}

std::string file_text(const Json& d) {
  std::string o = strprintf("%s: genbench result file, schema version %lld, state %s\n", str(d, "file").c_str(),
                            static_cast<long long>(d.at("schema_version").get<std::int64_t>()),
                            str(d, "state").empty() ? "-" : str(d, "state").c_str());
  o += "  genbench " + str(d, "tool_version") +
       (str(d, "git_revision").empty() ? "" : " (" + str(d, "git_revision") + ")") + ", " + str(d, "backend") +
       " backend, world size " + d.at("world_size").dump() + "\n";
  std::map<std::string, std::size_t> devices;  // "name on host" -> ranks
  for (const auto& r : d.at("ranks")) ++devices[str(r, "name") + " on " + str(r, "host")];
  for (const auto& [dev, n] : devices) o += strprintf("  %zu rank(s): %s\n", n, dev.c_str());
  if (!str(d, "config_path").empty()) o += "  config " + str(d, "config_path") + "\n";
  if (!str(d, "selection").empty()) o += "  selection " + str(d, "selection") + "\n";
  o += "  started " + (str(d, "start_utc").empty() ? "-" : str(d, "start_utc")) + ", ended " +
       (str(d, "end_utc").empty() ? "-" : str(d, "end_utc")) + "\n";
  const Json& benches = d.at("benchmarks");
  if (benches.empty()) o += "\nno benchmarks\n";
  for (const auto& b : benches) {
    const std::int64_t rounds = b.at("rounds").get<std::int64_t>();
    o += "\nbenchmark " + str(b, "name") + " (op " + str(b, "op") + "): ";
    if (b.contains("sweep_size")) {
      const std::int64_t sweep = b["sweep_size"].get<std::int64_t>();
      o += strprintf("%lld point%s x %lld round%s = ", static_cast<long long>(sweep), sweep == 1 ? "" : "s",
                     static_cast<long long>(rounds), rounds == 1 ? "" : "s");
    }
    const std::size_t rows = b.at("rows").get<std::size_t>();
    o += strprintf("%zu row%s, ", rows, rows == 1 ? "" : "s") + b.at("completed").dump() + " completed\n";
    std::vector<std::string> impls;
    for (const auto& i : b.at("implementations")) impls.push_back(i.get<std::string>());
    if (!impls.empty()) o += "  implementations: " + join(impls, ", ") + "\n";
    std::vector<std::string> varied;
    for (const auto& [axis, values] : b.at("axes").items()) {
      if (values.size() < 2) continue;
      std::vector<std::string> v;
      for (std::size_t i = 0; i < values.size() && i < 12; ++i)
        v.push_back(values[i].is_string() ? values[i].get<std::string>() : values[i].dump());
      if (values.size() > 12) v.push_back(strprintf("... (%zu values)", values.size()));
      varied.push_back(axis + "=" + join(v, ","));
    }
    if (!varied.empty()) o += "  axes that vary: " + join(varied, " ") + "\n";
    o += "  status: " + counts_text(b.at("status")) + "\n";
    for (const auto& [impl, counts] : b.at("by_implementation").items())
      o += "    " + impl + ": " + counts_text(counts) + "\n";
  }
  // Each op's stored description once; benchmarks of one op whose descriptions differ each
  // show their own.
  std::vector<std::pair<Json, std::vector<std::string>>> seen;
  for (const auto& b : benches) {
    const Json& desc = b.at("description");
    if (desc.is_null()) {
      o += "\nbenchmark " + str(b, "name") + ": no op_description stored (schema version 1)\n";
      continue;
    }
    const auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == desc; });
    if (it == seen.end()) seen.emplace_back(desc, std::vector<std::string>{str(b, "name")});
    else it->second.push_back(str(b, "name"));
  }
  for (const auto& [desc, names] : seen)
    o += "\nas stored with " + join(names, ", ") + " (op_description):\n" + op_text(desc);
  return o;
}

}  // namespace

std::string describe_op_json(const Op& op) { return op_json(op).dump(1) + "\n"; }
std::string describe_op_text(const Op& op) { return op_text(op_json(op)); }
std::string describe_file_json(const std::string& path) { return file_json(path).dump(1) + "\n"; }
std::string describe_file_text(const std::string& path) { return file_text(file_json(path)); }

}  // namespace genbench
