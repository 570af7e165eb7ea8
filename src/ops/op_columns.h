#pragma once
// An op's columns of the points table (after the fixed columns, docs/hdf5-schema.md): each is
// one declaration carrying its name, type, unit, meaning and how its value is obtained. The
// writer (the runner's row, Op::values), `genbench schema` and docs/hdf5-schema.md's tables
// (io/columns.cpp), `genbench describe` (io/describe.cpp), the stored op_description
// (Op::description_json) and through it the Python analysis all read that one list
// (Op::columns()). An op declares its own with the builder:
//
//   OpColumns c;
//   c.effective("effective_batch", "sequences", "sequences that ran",
//               [](const Point& p, int) { return AttentionShape::from(p).batch; });
//   c.metric("tflops", "TFLOP/s", "FLOPs per second, median time",
//            [](const Work& w, double t) { return w.flops / t / 1e12; });
//   c.extra("t_compute_s", "s", "the GEMM alone, median");
//   return c.done();
//
// An effective column's type is its function's return type (std::int64_t, double or
// std::string; anything else does not compile).
//
// Kinds, in file order:
//   effective  the shape that actually runs, a function of the point and the world size
//   chosen     "<tuning axis>_chosen": what the implementation chose (Case::chosen()); made by
//              the op from its implementations' tuning axes, declared nowhere else
//   metric     a rate, a function of the point's Work and its median time; the first is the
//              headline (progress line, summary, the analysis's default comparison)
//   extra      measured by the case beside the timed run (Case::extra_metrics()), rank 0's
//
// What a case must report (Op::check_report), so that no value is ever silently missing:
//   - every case of the op reports every extra column, each name once; NaN is its explicit
//     "does not apply to this point";
//   - a case of an implementation with tuning axes (ImplementationInfo::tuning) reports what it
//     chose for each of them and for no other axis; the chosen columns of other
//     implementations' axes are "" (does not apply);
//   - a name no column declares, a name given twice or a value left out fails the point
//     (status failed, the reason naming the column).
// A point that did not run has no report: its chosen columns are "" and its extras NaN.
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "sweep/point.h"

namespace genbench {

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

enum class ColumnKind { effective, chosen, metric, extra };
const char* column_kind_name(ColumnKind k);  // "effective", "chosen", "metric", "extra"
// How a column of kind k gets its value, one phrase (`genbench describe`): from the point, from
// the work and the median time, or reported by the case.
const char* column_kind_source(ColumnKind k);

struct OpColumn {
  std::string name;
  ColumnType type = ColumnType::f64;
  std::string unit;     // "" when dimensionless; a metric's unit is the one ceilings are in
  std::string meaning;  // one line, printed by `genbench schema` and stored in the file
  ColumnKind kind = ColumnKind::extra;
  std::function<ColumnValue(const Point&, int world_size)> of_point;  // effective
  double (*rate)(const Work& w, double seconds) = nullptr;            // metric: <= 0 or NaN: does not apply
  std::string label;  // metric: printed before the value in progress lines ("busbw"), or ""
  std::string axis;   // chosen: the tuning axis
};

// What a case reported after its timed iterations.
struct CaseReport {
  std::vector<std::pair<std::string, std::string>> chosen;  // Case::chosen()
  std::vector<std::pair<std::string, double>> extra;        // Case::extra_metrics()
};

class OpColumns {
 public:
  template <class F>
  OpColumns& effective(std::string name, std::string unit, std::string meaning, F value) {
    using R = std::invoke_result_t<const F&, const Point&, int>;
    static_assert(std::is_same_v<R, std::int64_t> || std::is_same_v<R, double> || std::is_same_v<R, std::string>,
                  "an effective column's function returns std::int64_t, double or std::string");
    OpColumn c;
    c.name = std::move(name);
    c.type = std::is_same_v<R, std::int64_t> ? ColumnType::i64
             : std::is_same_v<R, double>     ? ColumnType::f64
                                             : ColumnType::str;
    c.unit = std::move(unit);
    c.meaning = std::move(meaning);
    c.kind = ColumnKind::effective;
    c.of_point = [value](const Point& p, int world_size) -> ColumnValue { return value(p, world_size); };
    cols_.push_back(std::move(c));
    return *this;
  }
  OpColumns& metric(std::string name, std::string unit, std::string meaning, double (*rate)(const Work&, double),
                    std::string label = "");
  OpColumns& extra(std::string name, std::string unit, std::string meaning);
  // Another op's columns of one kind, as they are (an op that reuses another's shape).
  OpColumns& same_as(const std::vector<OpColumn>& columns, ColumnKind kind);
  std::vector<OpColumn> done() const { return cols_; }

 private:
  std::vector<OpColumn> cols_;
};

// A metric's value for a point, with the convention that a rate that does not apply is NaN.
double metric_value(const OpColumn& m, const Work& w, double seconds);
// "724.1 TFLOP/s", "3.41 TB/s"... for progress lines; "" when NaN.
std::string format_metric(const OpColumn& m, double value);

}  // namespace genbench
