#pragma once
// An op is what is measured (attention, gemm, collective): its axes, which combinations are
// legal, and the work one execution does (FLOPs, bytes, bus-bandwidth factor).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sweep/point.h"

namespace genbench {

enum class AxisType { integer, size, real, boolean, choice };

struct AxisSpec {
  std::string name;
  AxisType type;
  AxisValue default_value;            // used when the config omits the axis
  std::vector<std::string> choices;   // allowed values of a choice axis
  std::int64_t min = 1;               // inclusive bounds of integer/size axes
  std::int64_t max = INT64_MAX;
  std::vector<std::int64_t> allowed;  // when non-empty, the only legal integer values
  std::string help;
  bool auto_all = false;  // a choice axis where 'auto' means every choice
};

// Work done by one execution of a point on one rank, used for the derived metrics.
struct Work {
  double flops = 0;           // floating-point (or integer) operations
  double bytes = 0;           // the collective's "size" in nccl-tests' sense, or bytes moved
  double busbw_factor = 0;    // busbw = algbw * factor (collectives only)
};

class Op {
 public:
  virtual ~Op() = default;
  virtual std::string name() const = 0;
  virtual const std::vector<AxisSpec>& axes() const = 0;
  // "" when the point is legal for this world size, otherwise why not. Checked at validation
  // time, before any device work.
  virtual std::string check(const Point& p, int world_size) const = 0;
  // "" when the point can run, otherwise why it is skipped (recorded, the sweep goes on).
  virtual std::string skip_reason(const Point& p, int world_size) const;
  virtual Work work(const Point& p, int world_size) const = 0;
  // Short description of the point for progress lines and tables.
  virtual std::string describe(const Point& p) const;
  // Extra float64 columns of this op's points table, as (name, unit): the values come from
  // Case::extra_metrics() (rank 0's), NaN where a case does not report one. Fixed per op so the
  // table's layout is known before the first point.
  virtual std::vector<std::pair<std::string, std::string>> extra_columns() const { return {}; }
  // The device ceiling that bounds this point's rate, by the name it has in /ceilings
  // ("gemm_bf16_tflops", "copy_GBps"), or "" when none applies (ceiling_fraction stays NaN).
  virtual std::string ceiling(const Point& p) const;

  std::size_t axis_index(const std::string& name) const;  // npos when unknown
};

// All ops, in a fixed order.
const std::vector<const Op*>& all_ops();
const Op* find_op(const std::string& name);
std::vector<std::string> op_names();

}  // namespace genbench
