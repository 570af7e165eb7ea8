#pragma once
// Device ceilings: what one rank's device reaches on simple kernels, measured at the start of a
// run and stored in /ceilings (docs/hdf5-schema.md). Points report their rate as a fraction of
// the ceiling their op names (Op::ceiling()).
#include <string>
#include <vector>

#include "backend/backend.h"

namespace genbench {

struct Ceiling {
  int rank = 0;
  std::string name;  // "copy_GBps", "gemm_bf16_tflops", ...
  double value = 0;
  std::string unit;    // "GB/s", "TFLOP/s"
  std::string detail;  // how it was measured
};

// Measures this rank's ceilings on its device (cuda: device-to-device copy bandwidth and the
// best cuBLASLt 8192^3 rate of every precision the device has). The host backend has none.
// Defined with the implementations (kernels/ceilings/). Throws on a device error.
std::vector<Ceiling> measure_ceilings(Backend& b);

}  // namespace genbench
