#pragma once
#include <cstdint>
#include <vector>

#include "config/config.h"
#include "sweep/point.h"

namespace genbench {

// The cartesian product of a benchmark's axes, first axis outermost and the implementation
// innermost (so implementations of one shape sit next to each other). Point::index is the
// position in this order.
std::vector<Point> expand(const BenchmarkConfig& b);
std::size_t sweep_size(const BenchmarkConfig& b);

// The order round `round` runs the points in. With timing.rounds 1: the sweep's order. With more
// rounds, each round shuffles the shapes (a shape's implementations stay next to each other, so
// the ratio of two of them is taken seconds apart) and rotates the implementations within a
// shape by the round, so none always runs first after a change of shape. Seeded by `seed`, the
// benchmark's name and the round alone: every rank, and a --resume, computes the same order.
std::vector<Point> round_order(const BenchmarkConfig& b, std::size_t round, std::uint64_t seed);

}  // namespace genbench
