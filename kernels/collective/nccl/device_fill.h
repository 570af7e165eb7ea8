#pragma once
// Collective inputs written on the device: element i of `rank`'s send buffer equals
// ops/collective_data.h's collective_input(shape, seed, rank, i), stored as the shape's type.
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/collective/collective.h"

namespace genbench {

void fill_collective_device(void* out, const CollectiveShape& s, std::uint64_t seed, int rank, std::int64_t n,
                            cudaStream_t stream);

}  // namespace genbench
