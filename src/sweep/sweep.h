#pragma once
#include <vector>

#include "config/config.h"
#include "sweep/point.h"

namespace genbench {

// The cartesian product of a benchmark's axes, first axis outermost and the implementation
// innermost (so implementations of one shape sit next to each other). Point::index is the
// position in this order.
std::vector<Point> expand(const BenchmarkConfig& b);
std::size_t sweep_size(const BenchmarkConfig& b);

}  // namespace genbench
