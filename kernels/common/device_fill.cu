#include "kernels/common/device_fill.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "backend/cuda/check.h"

namespace genbench {

namespace {

__device__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ double unit(std::uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// ops/fill.cpp's random_normal, evaluated on the device.
__device__ float normal_at(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t a = splitmix64(seed ^ splitmix64(2 * i));
  const std::uint64_t b = splitmix64(seed ^ splitmix64(2 * i + 1));
  const double r = sqrt(-2.0 * log(unit(a)));
  return static_cast<float>(r * cos(6.283185307179586 * unit(b)));
}

// Round-to-nearest-even to tf32's 10 mantissa bits, kept in fp32 storage.
__device__ float round_tf32(float x) {
  unsigned u = __float_as_uint(x);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
  return __uint_as_float(u);
}

__global__ void fill_normal_kernel(void* out, std::int64_t n, std::uint64_t seed, int type, float scale) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = scale * normal_at(seed, static_cast<std::uint64_t>(i));
    switch (static_cast<DType>(type)) {
      case DType::fp32: static_cast<float*>(out)[i] = v; break;
      case DType::tf32: static_cast<float*>(out)[i] = round_tf32(v); break;
      case DType::fp16: static_cast<__half*>(out)[i] = __float2half_rn(v); break;
      case DType::bf16: static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16_rn(v); break;
      case DType::fp8_e4m3: static_cast<__nv_fp8_e4m3*>(out)[i] = __nv_fp8_e4m3(v); break;
      case DType::fp8_e5m2: static_cast<__nv_fp8_e5m2*>(out)[i] = __nv_fp8_e5m2(v); break;
      case DType::int8:
        static_cast<std::int8_t*>(out)[i] = static_cast<std::int8_t>(fmaxf(-128.0f, fminf(127.0f, rintf(v))));
        break;
      case DType::int32: static_cast<std::int32_t*>(out)[i] = static_cast<std::int32_t>(rintf(v)); break;
      case DType::int4:
      case DType::fp4_e2m1: break;  // no device path stores these (gemm/cublaslt refuses them)
    }
  }
}

}  // namespace

void fill_normal_device(void* out, std::int64_t n, std::uint64_t seed, DType t, float scale, cudaStream_t stream) {
  if (n <= 0) return;
  const std::int64_t blocks = (n + 255) / 256;
  const unsigned grid = static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
  fill_normal_kernel<<<grid, 256, 0, stream>>>(out, n, seed, static_cast<int>(t), scale);
  GENBENCH_CHECK_LAUNCH();
}

}  // namespace genbench
