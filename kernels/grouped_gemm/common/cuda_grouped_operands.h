#pragma once
// Device operands of one grouped_gemm point for the CUDA implementations: X (all groups' rows
// stacked, group g's after group g-1's), W (groups x n x k, nn.Linear's layout), D (rows x n),
// the row offset of every group, and the sampled validation (first and last row of up to 64
// non-empty groups, three columns each, against double sums of the copied-back rows).
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "ops/grouped_gemm/grouped_gemm.h"
#include "ops/implementation.h"

namespace genbench {

struct GroupedOperands {
  GroupedShape s;
  std::vector<std::int64_t> sizes, offsets;
  std::int64_t rows = 0;
  DeviceBuffer x, w, d;

  GroupedOperands(const GroupedShape& shape, Context& ctx, cudaStream_t stream);
  std::size_t esize() const { return 2; }
  const unsigned char* x_of(std::int64_t g) const { return x.as<unsigned char>() + offsets[g] * s.k * 2; }
  const unsigned char* w_of(std::int64_t g) const { return w.as<unsigned char>() + g * s.n * s.k * 2; }
  unsigned char* d_of(std::int64_t g) const { return d.as<unsigned char>() + offsets[g] * s.n * 2; }
  void poison(cudaStream_t stream) const;
  // Tolerance of the output type (fp16 2e-3, bf16 1e-2), error relative to sum |x w|.
  Validation check(cudaStream_t stream) const;
};

}  // namespace genbench
