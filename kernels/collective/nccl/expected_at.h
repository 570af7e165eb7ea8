#pragma once
// One element of collective_expected() (ops/collective_data.h) without building the whole
// vector: large buffers are checked on sampled blocks. Must agree with collective_expected()
// element for element (tests/kernels/collective/nccl_expected_test.cpp checks it).
#include <cstdint>

#include "ops/collective.h"

namespace genbench {

double collective_expected_at(const CollectiveShape& s, std::uint64_t seed, int rank, std::int64_t i);

}  // namespace genbench
