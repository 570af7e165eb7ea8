#include "kernels/collective/nccl/device_fill.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "backend/cuda/check.h"

namespace genbench {

namespace {

// The same hash as collective_input() in src/ops/collective_data.cpp (checked against it by
// tests/kernels/collective/nccl_fill_test.cpp).
__global__ void fill_kernel(void* out, std::int64_t n, std::uint64_t seed, int rank, int type, bool tiny) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint64_t h = (seed * 2654435761ull) ^
                            (static_cast<std::uint64_t>(rank) * 40503ull + static_cast<std::uint64_t>(i) * 9973ull);
    const std::uint64_t x = (h ^ (h >> 13)) * 0x9e3779b97f4a7c15ull;
    const int v = tiny ? 1 + static_cast<int>((x >> 33) & 1) : 1 + static_cast<int>((x >> 33) % 8);
    const float f = static_cast<float>(v);
    switch (static_cast<DType>(type)) {
      case DType::int32: static_cast<std::int32_t*>(out)[i] = v; break;
      case DType::fp16: static_cast<__half*>(out)[i] = __float2half_rn(f); break;
      case DType::bf16: static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16_rn(f); break;
      case DType::fp8_e4m3: static_cast<__nv_fp8_e4m3*>(out)[i] = __nv_fp8_e4m3(f); break;
      case DType::fp8_e5m2: static_cast<__nv_fp8_e5m2*>(out)[i] = __nv_fp8_e5m2(f); break;
      case DType::int8: static_cast<std::int8_t*>(out)[i] = static_cast<std::int8_t>(v); break;
      default: static_cast<float*>(out)[i] = f; break;
    }
  }
}

}  // namespace

void fill_collective_device(void* out, const CollectiveShape& s, std::uint64_t seed, int rank, std::int64_t n,
                            cudaStream_t stream) {
  if (n <= 0) return;
  const bool tiny = s.redop == ReduceOp::prod || s.dtype == DType::fp8_e4m3 || s.dtype == DType::fp8_e5m2;
  const std::int64_t blocks = (n + 255) / 256;
  const unsigned grid = static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
  fill_kernel<<<grid, 256, 0, stream>>>(out, n, seed, rank, static_cast<int>(s.dtype), tiny);
  GENBENCH_CHECK_LAUNCH();
}

}  // namespace genbench
