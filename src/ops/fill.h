#pragma once
// Seeded random inputs shared by every implementation, so host and device see the same data
// for the same seed. Never zeros: normal(0, 1) rounded to the target precision.
#include <cstdint>
#include <vector>

#include "ops/dtype.h"

namespace genbench {

// Counter-based generator: value i of stream `seed` does not depend on how the buffer is split.
float random_normal(std::uint64_t seed, std::uint64_t i);
void fill_random(std::vector<float>& v, std::uint64_t seed, DType round_to_type, float scale = 1.0f);

}  // namespace genbench
