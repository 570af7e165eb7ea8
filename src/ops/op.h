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

#include "ops/axes.h"
#include "ops/ceiling.h"
#include "ops/op_columns.h"
#include "sweep/point.h"

namespace genbench {

// One panel of an extra plot (ExtraPlotHint): the plot's column against x.
struct PanelHint {
  std::string x;             // column on the x axis: an axis, an op column or a fixed one (work_flops)
  std::string label;         // the x axis's label; "" = x
  bool log_x = true;         // log2 x axis, when x takes more than one value
  bool categorical = false;  // one evenly spaced tick per value of x instead
  std::vector<std::pair<std::string, std::string>> tick_labels;  // a value's tick text ("0" -> "default")
  std::vector<std::string> lines;  // columns whose values split the lines (where they vary)
  std::vector<std::string> free;   // axes of ExtraPlotHint::hold this panel lets vary
};

// A plot of one column beyond the op's headline plot, with its section of the report, named
// <op>_<name>: the ok points where y is finite, one panel per PanelHint.
struct ExtraPlotHint {
  std::string name;
  std::string title;     // the report's heading and the figure title's first line
  std::string subtitle;  // what y means: the figure title's second line
  std::string y;         // the column drawn
  std::string y_label;
  std::vector<double> reference_lines;  // horizontal lines at these values of y
  // Axes held at their defaults in each panel that does not free them (where some points are
  // there), so that a sweep of one axis is drawn at the others' defaults.
  std::vector<std::string> hold;
  std::vector<PanelHint> panels;
  std::vector<std::string> table;  // columns of the report's table of these points; none: no table
  std::string table_note;          // the paragraph above that table
};

// Which plot and comparison the analysis makes of this op's points (stored in the file).
struct AnalysisHints {
  std::string title;  // of the op's plot
  std::string x;      // column on the x axis (an axis or an effective column)
  bool log_x = true;
  std::vector<std::string> facets;  // columns whose values split the plot into panels
  std::string compare_metric;       // column compared across files; "" = the headline metric
  bool higher_is_better = true;
  CeilingId ceiling_line;                  // the ceiling drawn as a horizontal line (ops/ceiling.h), or none
  std::vector<ExtraPlotHint> extra_plots;  // plots and report sections beyond the headline plot
};

// A few points of an op that its host implementations run in seconds: axis values over the
// defaults, each a list to sweep, and the ranks the job needs. Every registered op's example
// runs through validate, run, the result file and the analysis (tests/e2e/test_every_op_host.py,
// which reads it from `genbench list --json`), so an op is covered by declaring it.
//   return HostExample().ints("m", {33}).flags("causal", {false, true}).choices("dtype", {"bf16"});
struct HostExample {
  std::vector<std::pair<std::string, std::vector<AxisValue>>> axes;
  int ranks = 1;

  // integer and size axes
  HostExample& ints(std::string axis, const std::vector<std::int64_t>& v) {
    return add(std::move(axis), {v.begin(), v.end()});
  }
  HostExample& reals(std::string axis, const std::vector<double>& v) {
    return add(std::move(axis), {v.begin(), v.end()});
  }
  HostExample& flags(std::string axis, const std::vector<bool>& v) {
    std::vector<AxisValue> x;
    for (bool b : v) x.emplace_back(std::int64_t{b ? 1 : 0});
    return add(std::move(axis), std::move(x));
  }
  HostExample& choices(std::string axis, const std::vector<std::string>& v) {
    return add(std::move(axis), {v.begin(), v.end()});
  }
  HostExample& with_ranks(int n) {
    ranks = n;
    return *this;
  }

 private:
  HostExample& add(std::string axis, std::vector<AxisValue> v) {
    axes.emplace_back(std::move(axis), std::move(v));
    return *this;
  }
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
  // The op's own columns (ops/op_columns.h), one declaration each: the shape that actually
  // runs where it differs from the axis values given (batch after tokens, heads after hidden,
  // the sum of drawn varlen lengths), the rates derived from the work (headline first) and what
  // the cases measure beside the timed run. Declared with OpColumns.
  virtual std::vector<OpColumn> define_columns() const { return {}; }
  // Short description of the point for progress lines and tables.
  virtual std::string describe(const Point& p) const;
  // The device ceiling that bounds this point's rate (ops/ceiling.h: ceilings::gemm(dtype),
  // ceilings::copy()), or ceilings::none() (ceiling_fraction stays NaN). The fraction is the
  // first metric of the ceiling's unit over the ceiling.
  virtual CeilingId ceiling(const Point& p) const;
  virtual AnalysisHints analysis() const { return {}; }
  // Small enough for the host backend (HostExample); the defaults when it names no axis.
  virtual HostExample host_example() const { return {}; }

  // The op's axes followed by the tuning axes of its registered implementations.
  const std::vector<AxisSpec>& axes() const;
  std::size_t axis_index(const std::string& name) const;  // npos when unknown
  // The op's part of the points table, in file order: effective shape, "<tuning axis>_chosen"
  // (one a tuning axis), metrics, extras; within a kind in declaration order. The one list the
  // writer, the schema, the description and the analysis read. Throws std::logic_error for a
  // name used twice or shadowing an axis, or a column without its function or meaning.
  const std::vector<OpColumn>& columns() const;
  // The metric columns, headline first.
  std::vector<OpColumn> metrics() const;
  // "" when `r`, reported by a case of an implementation whose own tuning axes are
  // `own_tuning`, is what the columns expect (ops/op_columns.h); otherwise what is wrong.
  std::string check_report(const CaseReport& r, const std::vector<AxisSpec>& own_tuning) const;
  // The op's part of a points row, in columns() order: effective columns from the point,
  // metrics from the work and `seconds` (0: not timed, NaN), chosen and extras from the report
  // ("" and NaN where it gives none).
  std::vector<ColumnValue> values(const Point& p, int world_size, const Work& w, double seconds,
                                  const CaseReport& r) const;
  // JSON stored with each benchmark of this op (group attribute "op_description"): op, summary,
  // axes (with unit), columns (with kind effective|chosen|metric|extra), metrics, headline,
  // plot, compare, extra_plots.
  std::string description_json() const;

 private:
  mutable std::unique_ptr<std::vector<AxisSpec>> axes_;
  mutable std::unique_ptr<std::vector<OpColumn>> columns_;
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

}  // namespace genbench
