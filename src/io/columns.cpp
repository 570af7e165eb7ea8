#include "io/columns.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/strings.h"
#include "io/schema.h"

namespace genbench::columns {

namespace {

using Json = nlohmann::ordered_json;
using Kind = h5::Compound::Kind;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A column and how its value is obtained from the record a row describes.
template <class R>
struct Field {
  Column col;
  ColumnValue (*get)(const R&);
};

Column col(const char* name, ColumnType t, std::size_t len, const char* unit, const char* meaning) {
  return Column{name, t, t == ColumnType::str ? len : 0, unit, meaning, ""};
}

double timing(const PointRecord& r, double v) { return r.slowest.n ? v : kNaN; }  // no samples: NaN, never 0

// The fixed columns of points, in file order (the axes follow kAxesAfter).
const std::vector<Field<PointRecord>>& point_fields() {
  using R = PointRecord;
  using T = ColumnType;
  static const std::vector<Field<R>> f{
      {col("point", T::i64, 0, "",
           "index of the point in the benchmark's sweep; the row is round x sweep_size + point (the point itself "
           "with one round); -1 in a row never written"),
       [](const R& r) -> ColumnValue { return static_cast<std::int64_t>(r.point.index); }},
      {col("round", T::i64, 0, "", "which round of the benchmark's timing.rounds this row timed, from 0"),
       [](const R& r) -> ColumnValue { return static_cast<std::int64_t>(r.round); }},
      {col("order", T::i64, 0, "",
           "position of the point in its round's run order, from 0 (rounds shuffle it; with one round it is the "
           "point)"),
       [](const R& r) -> ColumnValue { return static_cast<std::int64_t>(r.order); }},
      {col("impl", T::str, kNameLen, "", "implementation"), [](const R& r) -> ColumnValue { return r.point.impl; }},
      {col("status", T::str, kStatusLen, "",
           "ok, failed (validation or error), skipped (too large, too small), unsupported (the implementation or card "
           "cannot run it); empty in a row whose point has not completed: readers skip such rows"),
       [](const R& r) -> ColumnValue { return r.status; }},
      {col("reason", T::str, kReasonLen, "", "why not ok, prefixed with the rank that decided it"),
       [](const R& r) -> ColumnValue { return r.reason; }},
      {col("variant", T::str, 64, "", "which kernel configuration or library algorithm ran"),
       [](const R& r) -> ColumnValue { return r.variant; }},
      {col("stop_reason", T::str, 16, "", "converged, max_iterations or max_time"),
       [](const R& r) -> ColumnValue { return r.stop_reason; }},
      {col("iterations", T::i64, 0, "",
           "timed iterations: samples[row, rank, :iterations] hold them; 0 when the point did not run"),
       [](const R& r) -> ColumnValue { return static_cast<std::int64_t>(r.slowest.n); }},
      {col("time_median_s", T::f64, 0, "s", "median of the per-iteration maximum over ranks"),
       [](const R& r) -> ColumnValue { return timing(r, r.slowest.median); }},
      {col("time_mean_s", T::f64, 0, "s", "mean of the per-iteration maximum over ranks"),
       [](const R& r) -> ColumnValue { return timing(r, r.slowest.mean); }},
      {col("time_min_s", T::f64, 0, "s", "minimum of the per-iteration maximum over ranks"),
       [](const R& r) -> ColumnValue { return timing(r, r.slowest.min); }},
      {col("time_max_s", T::f64, 0, "s", "maximum of the per-iteration maximum over ranks"),
       [](const R& r) -> ColumnValue { return timing(r, r.slowest.max); }},
      {col("time_p10_s", T::f64, 0, "s", "10th percentile of the per-iteration maximum over ranks"),
       [](const R& r) -> ColumnValue { return timing(r, r.slowest.p10); }},
      {col("time_p90_s", T::f64, 0, "s", "90th percentile of the per-iteration maximum over ranks"),
       [](const R& r) -> ColumnValue { return timing(r, r.slowest.p90); }},
      {col("time_p99_s", T::f64, 0, "s", "99th percentile of the per-iteration maximum over ranks"),
       [](const R& r) -> ColumnValue { return timing(r, r.slowest.p99); }},
      {col("time_stddev_s", T::f64, 0, "s", "standard deviation of the per-iteration maximum over ranks"),
       [](const R& r) -> ColumnValue { return timing(r, r.slowest.stddev); }},
      {col("work_flops", T::f64, 0, "FLOP", "operations of one iteration on one rank (Op::work)"),
       [](const R& r) -> ColumnValue { return r.work.flops; }},
      {col("work_bytes", T::f64, 0, "B", "collectives: nccl-tests' size; others: minimum bytes moved (Op::work)"),
       [](const R& r) -> ColumnValue { return r.work.bytes; }},
      {col("work_tokens", T::f64, 0, "tokens",
           "tokens produced by one iteration (decode: batch x new tokens; 0 for ops without tokens)"),
       [](const R& r) -> ColumnValue { return r.work.tokens; }},
      {col("peak_memory_bytes", T::i64, 0, "B", "largest per-rank peak of the point's counted allocations"),
       [](const R& r) -> ColumnValue {
         std::int64_t peak = 0;
         for (const auto& x : r.ranks) peak = std::max(peak, x.peak_memory_bytes);
         return peak;
       }},
      {col("validation_error", T::f64, 0, "",
           "the error measure (relative error, or wrong elements for collectives), highest over ranks"),
       [](const R& r) -> ColumnValue { return r.validation_error; }},
      {col("validation_tolerance", T::f64, 0, "", "the bound validation_error is held to"),
       [](const R& r) -> ColumnValue { return r.validation_tolerance; }},
      {col("sm_clock_mhz", T::f64, 0, "MHz",
           "lowest over ranks of each rank's mean SM clock over the NVML samples during the timed iterations; NaN "
           "without NVML"),
       [](const R& r) -> ColumnValue { return r.state.sm_clock_mhz; }},
      {col("mem_clock_mhz", T::f64, 0, "MHz", "as sm_clock_mhz, for the memory clock"),
       [](const R& r) -> ColumnValue { return r.state.mem_clock_mhz; }},
      {col("power_w", T::f64, 0, "W",
           "highest over ranks of the highest power sample during or right after the timed iterations"),
       [](const R& r) -> ColumnValue { return r.state.power_w; }},
      {col("temperature_c", T::f64, 0, "C", "as power_w, for the temperature"),
       [](const R& r) -> ColumnValue { return r.state.temperature_c; }},
      {col("throttle_reasons", T::i64, 0, "",
           "NVML clocks-event reason bits seen before, during or after the timed iterations, OR-ed over ranks"),
       [](const R& r) -> ColumnValue { return static_cast<std::int64_t>(r.state.throttle_reasons); }},
      {col("throttled", T::i64, 0, "",
           "1 when those bits include power cap, hardware slowdown, thermal slowdown or power brake (0x4, 0x8, 0x20, "
           "0x40, 0x80)"),
       [](const R& r) -> ColumnValue { return std::int64_t{r.state.throttled ? 1 : 0}; }},
      {col("retimed", T::i64, 0, "",
           "timings of the point dropped because a rank's card was held back while it ran (timing.retime_held); "
           "the kept one follows them, and throttled says whether it was held back too"),
       [](const R& r) -> ColumnValue { return static_cast<std::int64_t>(r.retimed); }},
      {col("ceiling_fraction", T::f64, 0, "",
           "the point's rate over the /ceilings value its op names (lowest over ranks); NaN without one"),
       [](const R& r) -> ColumnValue { return r.ceiling_fraction; }},
  };
  return f;
}

const std::vector<Field<RankRecord>>& rank_fields() {
  using R = RankRecord;
  using T = ColumnType;
  static const std::vector<Field<R>> f{
      {col("iterations", T::i64, 0, "", "samples of this rank"),
       [](const R& r) -> ColumnValue { return static_cast<std::int64_t>(r.summary.n); }},
      {col("mean_s", T::f64, 0, "s", "mean of this rank's samples"),
       [](const R& r) -> ColumnValue { return r.summary.n ? r.summary.mean : kNaN; }},
      {col("median_s", T::f64, 0, "s", "median of this rank's samples"),
       [](const R& r) -> ColumnValue { return r.summary.n ? r.summary.median : kNaN; }},
      {col("stddev_s", T::f64, 0, "s", "standard deviation of this rank's samples"),
       [](const R& r) -> ColumnValue { return r.summary.n ? r.summary.stddev : kNaN; }},
      {col("min_s", T::f64, 0, "s", "minimum of this rank's samples"),
       [](const R& r) -> ColumnValue { return r.summary.n ? r.summary.min : kNaN; }},
      {col("max_s", T::f64, 0, "s", "maximum of this rank's samples"),
       [](const R& r) -> ColumnValue { return r.summary.n ? r.summary.max : kNaN; }},
      {col("p10_s", T::f64, 0, "s", "10th percentile of this rank's samples"),
       [](const R& r) -> ColumnValue { return r.summary.n ? r.summary.p10 : kNaN; }},
      {col("p90_s", T::f64, 0, "s", "90th percentile of this rank's samples"),
       [](const R& r) -> ColumnValue { return r.summary.n ? r.summary.p90 : kNaN; }},
      {col("p99_s", T::f64, 0, "s", "99th percentile of this rank's samples"),
       [](const R& r) -> ColumnValue { return r.summary.n ? r.summary.p99 : kNaN; }},
      {col("peak_memory_bytes", T::i64, 0, "B", "peak of the rank's counted allocations during the point"),
       [](const R& r) -> ColumnValue { return r.peak_memory_bytes; }},
      {col("memory_delta_bytes", T::i64, 0, "B", "device free memory before the point minus after its set-up"),
       [](const R& r) -> ColumnValue { return r.memory_delta_bytes; }},
  };
  return f;
}

const std::vector<Field<Ceiling>>& ceiling_fields() {
  using R = Ceiling;
  using T = ColumnType;
  static const std::vector<Field<R>> f{
      {col("rank", T::i64, 0, "", "the rank whose device was measured"),
       [](const R& r) -> ColumnValue { return std::int64_t{r.rank}; }},
      {col("name", T::str, kNameLen, "", "copy_GBps, gemm_<dtype>_tflops"),
       [](const R& r) -> ColumnValue { return r.name; }},
      {col("value", T::f64, 0, "", "the rate reached, in the row's unit"),
       [](const R& r) -> ColumnValue { return r.value; }},
      {col("unit", T::str, 16, "", "GB/s or TFLOP/s"), [](const R& r) -> ColumnValue { return r.unit; }},
      {col("detail", T::str, 192, "", "how it was measured"), [](const R& r) -> ColumnValue { return r.detail; }},
  };
  return f;
}

template <class R>
std::vector<Column> decls(const std::vector<Field<R>>& f) {
  std::vector<Column> out;
  for (const auto& x : f) out.push_back(x.col);
  return out;
}

Kind kind_of(ColumnType t) { return t == ColumnType::i64 ? Kind::i64 : t == ColumnType::f64 ? Kind::f64 : Kind::str; }

// Stores a value in a column of its declared type (an int in a float column is converted; a
// value of another kind is written as the column's "does not apply": NaN, 0 or "").
void put(h5::Row& row, std::size_t i, ColumnType t, const ColumnValue& v) {
  switch (t) {
    case ColumnType::i64:
      if (auto x = std::get_if<std::int64_t>(&v)) row.set(i, *x);
      else if (auto d = std::get_if<double>(&v); d && std::isfinite(*d)) row.set(i, static_cast<std::int64_t>(*d));
      else row.set(i, std::int64_t{0});
      break;
    case ColumnType::f64:
      if (auto d = std::get_if<double>(&v)) row.set(i, *d);
      else if (auto x = std::get_if<std::int64_t>(&v)) row.set(i, static_cast<double>(*x));
      else row.set(i, kNaN);
      break;
    case ColumnType::str:
      if (auto s = std::get_if<std::string>(&v)) row.set(i, *s);
      else if (auto x = std::get_if<std::int64_t>(&v)) row.set(i, std::to_string(*x));
      else row.set(i, std::string());
      break;
  }
}

Json column_json(const Column& c) {
  Json j = Json::object();
  j["name"] = c.name;
  j["type"] = type_name(c.type);
  j["unit"] = c.unit;
  j["meaning"] = c.meaning;
  if (c.type == ColumnType::str) j["length"] = c.str_len;
  if (!c.kind.empty()) j["kind"] = c.kind;
  return j;
}

Json columns_array(const std::vector<Column>& cols) {
  Json a = Json::array();
  for (const auto& c : cols) a.push_back(column_json(c));
  return a;
}

constexpr const char* kPointsNote =
    "one row per point of the benchmark's sweep and round, row = round x sweep_size + point (sweep_size x rounds "
    "rows, group attribute 'rounds', allocated when the benchmark starts); a row whose status is empty has not "
    "completed and is skipped. Columns: the fixed "
    "columns up to and including 'impl', the benchmark's axes (group attribute 'axes'), the remaining fixed "
    "columns, then the op's columns (group attribute 'op_description'); group attribute 'columns' lists the "
    "full row.";
constexpr const char* kSamplesMeaning =
    "every rank's own per-iteration times; samples[row, rank, i] is valid for i < points.iterations[row] of a "
    "row whose status is not empty; other entries are unspecified (never written: they read as 0)";
constexpr const char* kRankStatsNote =
    "[(sweep_size·rounds) x world_size], row as in points; valid where the points row is";

std::string type_cell(const Column& c) {
  return c.type == ColumnType::str ? strprintf("str(%zu)", c.str_len) : type_name(c.type);
}

std::string md_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '|') o += "\\|";
    else o += ch;
  }
  return o;
}

std::string md_table(const std::vector<Column>& cols) {
  std::string o = "| column | type | unit | meaning |\n|---|---|---|---|\n";
  for (const auto& c : cols)
    o += "| `" + c.name + "` | " + type_cell(c) + " | " + md_escape(c.unit) + " | " + md_escape(c.meaning) + " |\n";
  return o;
}

}  // namespace

const char* type_name(ColumnType t) {
  switch (t) {
    case ColumnType::i64: return "i64";
    case ColumnType::f64: return "f64";
    case ColumnType::str: return "str";
  }
  return "?";
}

std::vector<Column> points_fixed() {
  auto c = decls(point_fields());
  for (auto& x : c) x.kind = "fixed";
  return c;
}

std::vector<Column> axis_columns(const Op& op) {
  std::vector<Column> out;
  for (const auto& a : op.axes()) {
    Column c;
    c.name = a.name;
    c.type = a.type == AxisType::real     ? ColumnType::f64
             : a.type == AxisType::choice ? ColumnType::str
                                          : ColumnType::i64;
    c.str_len = c.type == ColumnType::str ? kNameLen : 0;
    c.unit = a.unit;
    c.meaning = (a.tuning ? "tuning switch: " : "axis: ") + a.help + (a.type == AxisType::boolean ? " (0/1)" : "");
    c.kind = "axis";
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Column> op_columns(const Op& op) {
  std::vector<Column> out;
  for (const auto& s : op.columns())
    out.push_back(Column{s.name, s.type, s.type == ColumnType::str ? kOpStrLen : 0, s.unit, s.meaning, "op"});
  return out;
}

std::vector<Column> points(const Op& op) {
  std::vector<Column> out;
  for (const auto& c : points_fixed()) {
    out.push_back(c);
    if (c.name == kAxesAfter)
      for (auto& a : axis_columns(op)) out.push_back(std::move(a));
  }
  for (auto& c : op_columns(op)) out.push_back(std::move(c));
  return out;
}

std::vector<Column> rank_stats() { return decls(rank_fields()); }
std::vector<Column> ceilings() { return decls(ceiling_fields()); }

std::vector<Column> system() {
  std::vector<Column> out;
  for (const auto& f : device_info_fields())
    out.push_back(
        Column{f.name, f.as_str ? ColumnType::str : ColumnType::i64, f.as_str ? f.str_len : 0, f.unit, f.meaning, ""});
  return out;
}

h5::Compound layout(const std::vector<Column>& cols) {
  h5::Compound c;
  for (const auto& x : cols) {
    if (x.name == "status" && x.kind == "fixed") c.align(16);
    c.add(x.name, kind_of(x.type), x.str_len, x.unit);
  }
  c.align(16);
  return c;
}

h5::Row fill_row(const h5::Compound& c) {
  h5::Row row(c);
  for (std::size_t i = 0; i < c.columns().size(); ++i) {
    const auto& x = c.columns()[i];
    if (x.kind == Kind::f64) row.set(i, kNaN);
    else if (x.kind == Kind::i64) row.set(i, std::int64_t{x.name == "point" ? -1 : 0});
    else row.set(i, std::string());
  }
  return row;
}

void fill_points(const Op& op, const PointRecord& rec, h5::Row& row) {
  std::size_t i = 0;
  const auto axes = axis_columns(op);
  for (const auto& f : point_fields()) {
    put(row, i++, f.col.type, f.get(rec));
    if (f.col.name == kAxesAfter)
      for (std::size_t a = 0; a < axes.size(); ++a)
        put(row, i++, axes[a].type, a < rec.point.values.size() ? ColumnValue(rec.point.values[a]) : ColumnValue(kNaN));
  }
  const auto& ops = op.columns();
  if (rec.op_values.size() != ops.size())
    throw Error(strprintf("op %s: a points row holds %zu op values for its %zu op columns (Op::values)",
                          op.name().c_str(), rec.op_values.size(), ops.size()));
  for (std::size_t k = 0; k < ops.size(); ++k) put(row, i++, ops[k].type, rec.op_values[k]);
}

void fill_rank_stats(const RankRecord& r, h5::Row& row) {
  std::size_t i = 0;
  for (const auto& f : rank_fields()) put(row, i++, f.col.type, f.get(r));
}

void fill_system(const DeviceInfo& d, h5::Row& row) {
  std::size_t i = 0;
  for (const auto& f : device_info_fields()) {
    if (f.as_int) row.set(i++, std::int64_t{d.*f.as_int});
    else if (f.as_i64) row.set(i++, d.*f.as_i64);
    else row.set(i++, d.*f.as_str);
  }
}

void fill_ceiling(const Ceiling& c, h5::Row& row) {
  std::size_t i = 0;
  for (const auto& f : ceiling_fields()) put(row, i++, f.col.type, f.get(c));
}

std::string columns_json(const std::vector<Column>& cols) { return columns_array(cols).dump(); }

std::string schema_description_json() {
  Json d = Json::object();
  d["version"] = schema::kSchemaVersion;
  Json ds = Json::object();
  Json points = Json::object();
  points["fixed"] = columns_array(points_fixed());
  points["axes_after"] = kAxesAfter;
  points["note"] = kPointsNote;
  ds["points"] = points;
  ds["rank_stats"] = columns_array(rank_stats());
  ds["system"] = columns_array(system());
  ds["ceilings"] = columns_array(ceilings());
  Json samples = Json::object();
  samples["type"] = "f64";
  samples["unit"] = "s";
  samples["dims"] = Json::array({"point", "rank", "iteration"});
  samples["meaning"] = kSamplesMeaning;
  ds["samples"] = samples;
  d["datasets"] = ds;
  return d.dump();
}

std::string columns_text(const std::vector<Column>& cols) {
  std::size_t w = 6, ws = 0;
  for (const auto& c : cols) {
    w = std::max(w, c.name.size());
    ws = std::max(ws, c.source.size());
  }
  std::string o;
  for (const auto& c : cols) {
    o += strprintf("  %-*s %-9s %-8s ", int(w), c.name.c_str(), type_cell(c).c_str(),
                   c.unit.empty() ? "-" : c.unit.c_str());
    if (ws) o += strprintf("%-*s  ", int(ws), c.source.empty() ? "-" : c.source.c_str());
    o += c.meaning + "\n";
  }
  return o;
}

std::string schema_text() {
  std::string o =
      strprintf("genbench result file, schema version %d (docs/hdf5-schema.md)\n\n", schema::kSchemaVersion);
  o += "/benchmarks/<name>/points: " + std::string(kPointsNote) + "\n" + columns_text(points_fixed());
  o += strprintf("  (the benchmark's axes follow '%s'; the op's columns follow the last fixed column)\n\n", kAxesAfter);
  o += "/benchmarks/<name>/rank_stats: " + std::string(kRankStatsNote) + "\n" + columns_text(rank_stats()) + "\n";
  o += "/benchmarks/<name>/samples: f64 [(sweep_size·rounds) x world_size x timing.max_iterations], s: " +
       std::string(kSamplesMeaning) + "\n\n";
  o += "/system: one row per rank\n" + columns_text(system()) + "\n";
  o += "/ceilings: one row per rank and ceiling (cuda backend)\n" + columns_text(ceilings());
  for (const Op* op : all_ops()) {
    o += "\nop " + op->name() + ": axes (after 'impl')\n" + columns_text(axis_columns(*op));
    const auto oc = op_columns(*op);
    o += "op " + op->name() + ": op columns (after 'ceiling_fraction')\n" +
         (oc.empty() ? "  (none)\n" : columns_text(oc));
  }
  return o;
}

std::string schema_markdown() {
  std::string o;
  o += "#### `points`: fixed columns\n\n" + md_table(points_fixed()) + "\n";
  o += "#### `rank_stats`\n\n" + md_table(rank_stats()) + "\n";
  o += "#### `system`\n\n" + md_table(system()) + "\n";
  o += "#### `ceilings`\n\n" + md_table(ceilings()) + "\n";
  for (const Op* op : all_ops()) {
    o += "#### op `" + op->name() + "`: axes (after `impl`)\n\n" + md_table(axis_columns(*op)) + "\n";
    const auto oc = op_columns(*op);
    o += "#### op `" + op->name() + "`: op columns (after `ceiling_fraction`)\n\n" +
         (oc.empty() ? std::string("(none)\n") : md_table(oc)) + "\n";
  }
  return o;
}

}  // namespace genbench::columns
