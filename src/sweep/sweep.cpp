#include "sweep/sweep.h"

#include <random>
#include <utility>

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

std::vector<Point> round_order(const BenchmarkConfig& b, std::size_t round, std::uint64_t seed) {
  std::vector<Point> points = expand(b);
  if (b.timing.rounds <= 1 || points.empty()) return points;
  const std::size_t impls = b.implementations.size();
  const std::size_t shapes = points.size() / impls;
  std::vector<std::size_t> shape(shapes);
  for (std::size_t i = 0; i < shapes; ++i) shape[i] = i;
  // Fisher-Yates with draws from mt19937_64, whose sequence the standard fixes (std::shuffle's
  // use of it is left to the library, so two standard libraries would disagree).
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : b.name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull ^ h ^ (round + 1) * 0xBF58476D1CE4E5B9ull);
  for (std::size_t i = shapes; i > 1; --i) std::swap(shape[i - 1], shape[rng() % i]);
  std::vector<Point> order;
  order.reserve(points.size());
  for (const std::size_t s : shape)
    for (std::size_t k = 0; k < impls; ++k) order.push_back(points[s * impls + (k + round) % impls]);
  return order;
}

}  // namespace genbench
