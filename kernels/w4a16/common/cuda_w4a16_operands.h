#pragma once
// Device operands of one W4A16 point for the CUDA implementations (cuda_w4a16_operands.cpp):
// A, the tiled codes, the permuted scales, the packed zeros and D, with `copies` copies of the
// weights for cache=cold (each iteration reads a copy the previous ones evicted from L2), and
// the sampled validation of D against a double sum of the copied-back operands.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "backend/backend.h"
#include "ops/implementation.h"
#include "ops/w4a16/w4a16.h"

namespace genbench {

struct W4a16Operands {
  W4a16Shape s;
  std::size_t copies = 1;
  std::size_t w_bytes = 0, s_bytes = 0, z_bytes = 0;  // one copy, unpadded
  std::size_t w_pitch = 0, s_pitch = 0, z_pitch = 0;  // one copy, 256-byte padded
  DeviceBuffer a, w, scales, zeros, d;

  W4a16Operands(const W4a16Shape& shape, Context& ctx, cudaStream_t stream, std::size_t l2_bytes);
  const void* w_copy(std::size_t c) const { return w.as<unsigned char>() + c * w_pitch; }
  const void* s_copy(std::size_t c) const { return scales.as<unsigned char>() + c * s_pitch; }
  const std::uint32_t* z_copy(std::size_t c) const {
    return s.zero_points ? reinterpret_cast<const std::uint32_t*>(zeros.as<unsigned char>() + c * z_pitch) : nullptr;
  }
  // D (poisoned before the run by the caller) against ~256 sampled elements: error relative to
  // sum |a w|, tolerance fp16 2e-3, bf16 1e-2 (the other 16-bit GEMMs' tolerances).
  Validation check(cudaStream_t stream) const;
};

}  // namespace genbench
