#pragma once
// An op is what is measured (attention, gemm, collective, ...): one folder src/ops/<op>/ that
// declares its axes, which combinations are legal, the work one execution does, the metrics
// derived from that work, its effective shape, its progress text and how the analysis plots and
// compares it. Everything op-specific that the runner, the result file and the analysis need is
// declared here as data; none of them branch on an op's name.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sweep/point.h"

namespace genbench {

enum class AxisType { integer, size, real, boolean, choice };

struct AxisSpec {
  std::string name;
  AxisType type;
  AxisValue default_value;           // used when the config omits the axis
  std::vector<std::string> choices;  // allowed values of a choice axis
  std::int64_t min = 1;              // inclusive bounds of integer/size axes
  std::int64_t max = INT64_MAX;
  std::vector<std::int64_t> allowed;  // when non-empty, the only legal integer values
  std::string help;
  bool auto_all = false;  // a choice axis where 'auto' means every choice
  // A tuning switch of one implementation (ImplementationInfo::tuning): a choice axis whose
  // default "auto" is the implementation's own choice; the points table records the given value
  // and, in "<name>_chosen", what the implementation chose.
  bool tuning = false;
};

// Work done by one execution of a point on one rank, from which the metrics are derived.
struct Work {
  double flops = 0;         // floating-point (or integer) operations
  double bytes = 0;         // the collective's "size" in nccl-tests' sense, or bytes moved
  double busbw_factor = 0;  // busbw = algbw * factor (collectives only)
  double tokens = 0;        // tokens produced (decode: batch x new tokens)
};

// Typed cells of the points table beyond the fixed columns (docs/hdf5-schema.md).
enum class ColumnType { i64, f64, str };
using ColumnValue = std::variant<std::int64_t, double, std::string>;

struct ColumnSpec {
  std::string name;
  ColumnType type = ColumnType::f64;
  std::string unit;     // "" when dimensionless
  std::string meaning;  // one line, printed by `genbench schema` and stored in the file
};

// A rate derived from a point's work and its median time (seconds, the slowest rank's). The
// first metric an op declares is its headline: the progress line, the summary and the
// analysis's default comparison use it.
struct MetricSpec {
  std::string name;  // column name ("tflops", "busbw_GBps", "GBps", "tokens_per_s")
  std::string unit;  // "TFLOP/s", "GB/s", "tokens/s"; a ceiling of the same unit bounds it
  std::string meaning;
  double (*value)(const Work& w, double seconds) = nullptr;  // <= 0 or NaN: does not apply
  std::string label;  // printed before the value in progress lines ("busbw"), or ""
};

// Which plot and comparison the analysis makes of this op's points (stored in the file).
struct AnalysisHints {
  std::string title;  // of the op's plot
  std::string x;      // column on the x axis (an axis or an effective column)
  bool log_x = true;
  std::vector<std::string> facets;  // columns whose values split the plot into panels
  std::string compare_metric;       // column compared across files; "" = the headline metric
  bool higher_is_better = true;
  std::string ceiling_line;  // a /ceilings name drawn as a horizontal line, or ""
};

class Op {
 public:
  virtual ~Op() = default;
  virtual std::string name() const = 0;
  // One line for `genbench list` and the file.
  virtual std::string summary() const { return ""; }
  // The op's own axes, in schema order (an op's axis index enum follows this order).
  virtual std::vector<AxisSpec> define_axes() const = 0;
  // "" when the point is legal for this world size, otherwise why not. Checked at validation
  // time, before any device work.
  virtual std::string check(const Point& p, int world_size) const = 0;
  // "" when the point can run, otherwise why it is skipped (recorded, the sweep goes on).
  virtual std::string skip_reason(const Point& p, int world_size) const;
  virtual Work work(const Point& p, int world_size) const = 0;
  // Derived rates, headline first.
  virtual std::vector<MetricSpec> metrics() const { return {}; }
  // The shape that actually runs, where it differs from the axis values given (batch after
  // tokens, heads after hidden, the sum of drawn varlen lengths): columns and their values.
  virtual std::vector<ColumnSpec> effective_columns() const { return {}; }
  virtual std::vector<ColumnValue> effective(const Point& p, int world_size) const;
  // Extra float64 columns measured by the cases (Case::extra_metrics()), as (name, unit);
  // rank 0's values are stored, NaN where a case does not report one.
  virtual std::vector<std::pair<std::string, std::string>> extra_columns() const { return {}; }
  // Short description of the point for progress lines and tables.
  virtual std::string describe(const Point& p) const;
  // The device ceiling that bounds this point's rate, by the name it has in /ceilings
  // ("gemm_bf16_tflops", "copy_GBps"), or "" when none applies (ceiling_fraction stays NaN).
  // The fraction is the first metric of the ceiling's unit over the ceiling.
  virtual std::string ceiling(const Point& p) const;
  virtual AnalysisHints analysis() const { return {}; }

  // The op's axes followed by the tuning axes of its registered implementations.
  const std::vector<AxisSpec>& axes() const;
  std::size_t axis_index(const std::string& name) const;  // npos when unknown
  // The op's part of the points table, in order: effective shape, "<tuning axis>_chosen",
  // metrics, extra columns. PointRecord::op_values follows this order.
  std::vector<ColumnSpec> columns() const;
  // JSON stored with each benchmark of this op (group attribute "op_description"): op, summary,
  // axes, columns (with kind effective|chosen|metric|extra), metrics, headline, plot, compare.
  std::string description_json() const;

 private:
  mutable std::unique_ptr<std::vector<AxisSpec>> axes_;
};

// Ops register themselves from their own folder: GENBENCH_REGISTER_OP(attention_op) in
// src/ops/attention/attention.cpp, where attention_op() returns the op's single instance.
struct OpRegistrar {
  explicit OpRegistrar(const Op& (*get)());
};
#define GENBENCH_REGISTER_OP(getter)                                     \
  namespace {                                                            \
  const ::genbench::OpRegistrar genbench_op_registrar_##getter(&getter); \
  }

// All registered ops, in name order.
const std::vector<const Op*>& all_ops();
const Op* find_op(const std::string& name);
std::vector<std::string> op_names();

// A point of `op` for implementation `impl`: every axis at its default, then the named ones set
// (an op composed of other ops' points builds them so). Throws Error naming an unknown axis or a
// value of the wrong kind.
Point point_of(const Op& op, const std::string& impl, const std::vector<std::pair<std::string, AxisValue>>& values);

// A metric's value for a point, with the convention that a rate that does not apply is NaN.
double metric_value(const MetricSpec& m, const Work& w, double seconds);
// "724.1 TFLOP/s", "3.41 TB/s"... for progress lines; "" when NaN.
std::string format_metric(const MetricSpec& m, double value);

}  // namespace genbench
