#pragma once
// The named device ceilings: what an op's rate is held against (Op::ceiling()), what a plot draws
// as a line (AnalysisHints::ceiling_line) and what the registered measurements store in
// /ceilings (backend/ceilings.h). Each name and its unit are written here once; ops and
// measurements use these constants, never the bare names.
#include <string>

#include "ops/dtype.h"

namespace genbench {

// One ceiling: the row name in /ceilings and the unit of its value. An empty name means none.
struct CeilingId {
  std::string name;  // "copy_GBps", "gemm_bf16_tflops"
  std::string unit;  // "GB/s", "TFLOP/s"; a metric of the same unit is the one held against it
  bool none() const { return name.empty(); }
  bool operator==(const CeilingId& o) const { return name == o.name && unit == o.unit; }
  bool operator!=(const CeilingId& o) const { return !(*this == o); }
};

namespace ceilings {

// No ceiling applies (ceiling_fraction stays NaN, no line is drawn).
inline CeilingId none() { return {}; }
// Device-to-device copy bandwidth, read + write bytes: what a memory-bound kernel can reach.
inline CeilingId copy() { return {"copy_GBps", "GB/s"}; }
// The best dense GEMM rate of one precision: what a matmul-bound kernel can reach.
inline CeilingId gemm(DType t) { return {std::string("gemm_") + dtype_name(t) + "_tflops", "TFLOP/s"}; }

}  // namespace ceilings

}  // namespace genbench
