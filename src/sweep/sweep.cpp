#include "sweep/sweep.h"

namespace genbench {

std::size_t sweep_size(const BenchmarkConfig& b) {
  std::size_t n = b.implementations.size();
  for (const auto& v : b.axis_values) n *= v.size();
  return n;
}

std::vector<Point> expand(const BenchmarkConfig& b) {
  std::vector<Point> points;
  const std::size_t total = sweep_size(b);
  points.reserve(total);
  const std::size_t axes = b.axis_values.size();
  std::vector<std::size_t> pos(axes, 0);
  for (std::size_t i = 0; i < total; ++i) {
    // Decode i as an odometer: implementation is the fastest digit, then the last axis.
    std::size_t rest = i;
    const std::size_t impl = rest % b.implementations.size();
    rest /= b.implementations.size();
    for (std::size_t a = axes; a-- > 0;) {
      pos[a] = rest % b.axis_values[a].size();
      rest /= b.axis_values[a].size();
    }
    Point p;
    p.index = i;
    p.impl = b.implementations[impl];
    p.values.reserve(axes);
    for (std::size_t a = 0; a < axes; ++a) p.values.push_back(b.axis_values[a][pos[a]]);
    points.push_back(std::move(p));
  }
  return points;
}

}  // namespace genbench
