#pragma once
// Seeded collective inputs whose results are exact in every element type, so verification
// can count wrong elements with no tolerance: small integers (1..8), and for prod only 1 or 2.
#include <cstdint>
#include <vector>

#include "ops/collective/collective.h"

namespace genbench {

// Input element i of `rank` (i indexes the rank's send buffer).
float collective_input(const CollectiveShape& s, std::uint64_t seed, int rank, std::int64_t i);

// The result every rank should hold in its receive buffer (recv_count elements; for reduce
// only the root's buffer is checked, for broadcast every rank's).
std::vector<double> collective_expected(const CollectiveShape& s, std::uint64_t seed, int rank);
// Element i of that result alone, for checking large buffers on sampled blocks.
double collective_expected_at(const CollectiveShape& s, std::uint64_t seed, int rank, std::int64_t i);

// Wrong elements of `got` against the expectation (avg is compared with a relative 1e-2
// tolerance for fp8/fp16/bf16 and 1e-6 for fp32; everything else exactly).
std::int64_t count_wrong(const CollectiveShape& s, const std::vector<double>& expected, const std::vector<double>& got);

}  // namespace genbench
