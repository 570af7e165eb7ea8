// pointwise/cuda's kernels (pointwise_kernels.h). Every kernel moves a row in VEC-element pieces:
// VEC = 8 (one 16-byte load or store) when the row's width is a multiple of 8, else 1. rmsnorm
// holds its row in registers between the sum of squares and the scaling (one block a row, up to
// PER pieces a thread); the others are flat: one piece a thread, rows along the grid's y.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "backend/cuda/check.h"
#include "core/strings.h"
#include "kernels/pointwise/cuda/pointwise_kernels.h"

namespace genbench::pointwise {

namespace {

constexpr int kPer = 4;  // rmsnorm: pieces of the row a thread holds

__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
__device__ __forceinline__ T from_f(float x);
template <>
__device__ __forceinline__ __half from_f<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

template <typename T, int VEC>
__device__ __forceinline__ void load(const T* p, float (&f)[VEC]) {
  if constexpr (VEC == 8) {
    const uint4 u = *reinterpret_cast<const uint4*>(p);
    const T* e = reinterpret_cast<const T*>(&u);
#pragma unroll
    for (int i = 0; i < 8; ++i) f[i] = to_f(e[i]);
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) f[i] = to_f(p[i]);
  }
}

template <typename T, int VEC>
__device__ __forceinline__ void store(T* p, const float (&f)[VEC]) {
  if constexpr (VEC == 8) {
    uint4 u;
    T* e = reinterpret_cast<T*>(&u);
#pragma unroll
    for (int i = 0; i < 8; ++i) e[i] = from_f<T>(f[i]);
    *reinterpret_cast<uint4*>(p) = u;
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) p[i] = from_f<T>(f[i]);
  }
}

template <int VEC>
__device__ __forceinline__ void load_f32(const float* p, float (&f)[VEC]) {
  if constexpr (VEC == 8) {
    const float4 a = *reinterpret_cast<const float4*>(p), b = *reinterpret_cast<const float4*>(p + 4);
    f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w, f[4] = b.x, f[5] = b.y, f[6] = b.z, f[7] = b.w;
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) f[i] = p[i];
  }
}

__device__ __forceinline__ float block_sum(float v) {
  __shared__ float part[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = (blockDim.x + 31) / 32;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < warps ? part[lane] : 0.0f;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <typename T, int VEC, bool ADD>
__global__ void rmsnorm_kernel(const T* __restrict__ x, T* __restrict__ res, const T* __restrict__ w, T* __restrict__ y,
                               int hidden, float eps) {
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * hidden;
  const int pieces = hidden / VEC;
  float v[kPer][VEC];
  float ss = 0;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int i = threadIdx.x + j * blockDim.x;
    if (i < pieces) {
      load(x + base + i * VEC, v[j]);
      if constexpr (ADD) {
        float r[VEC];
        load(res + base + i * VEC, r);
#pragma unroll
        for (int e = 0; e < VEC; ++e) v[j][e] = to_f(from_f<T>(v[j][e] + r[e]));
        store(res + base + i * VEC, v[j]);
      }
#pragma unroll
      for (int e = 0; e < VEC; ++e) ss += v[j][e] * v[j][e];
    }
  }
  const float inv = rsqrtf(block_sum(ss) / static_cast<float>(hidden) + eps);
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int i = threadIdx.x + j * blockDim.x;
    if (i < pieces) {
      float g[VEC];
      load(w + i * VEC, g);
#pragma unroll
      for (int e = 0; e < VEC; ++e) g[e] = v[j][e] * inv * g[e];
      store(y + base + i * VEC, g);
    }
  }
}

template <typename T, int VEC>
__global__ void rope_kernel(T* __restrict__ qk, const std::int32_t* __restrict__ pos, const float* __restrict__ cos,
                            const float* __restrict__ sin, std::int64_t rows, int heads, int half) {
  const int per_head = half / VEC;
  const std::int64_t total = rows * heads * per_head;
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = t / (heads * per_head);
    const int j = static_cast<int>(t % per_head) * VEC;
    T* h = qk + (t / per_head) * 2 * half;
    const std::int64_t at = static_cast<std::int64_t>(pos[r]) * half + j;
    float x1[VEC], x2[VEC], c[VEC], s[VEC];
    load(h + j, x1);
    load(h + half + j, x2);
    load_f32(cos + at, c);
    load_f32(sin + at, s);
    float o1[VEC], o2[VEC];
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      o1[e] = x1[e] * c[e] - x2[e] * s[e];
      o2[e] = x2[e] * c[e] + x1[e] * s[e];
    }
    store(h + j, o1);
    store(h + half + j, o2);
  }
}

template <typename T, int VEC>
__global__ void silu_mul_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t rows, int hidden) {
  const int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  if (i >= hidden) return;
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    float g[VEC], u[VEC];
    load(x + r * 2 * hidden + i, g);
    load(x + r * 2 * hidden + hidden + i, u);
#pragma unroll
    for (int e = 0; e < VEC; ++e) g[e] = g[e] / (1.0f + __expf(-g[e])) * u[e];
    store(y + r * hidden + i, g);
  }
}

template <typename T, int VEC>
__global__ void embedding_kernel(const std::int32_t* __restrict__ ids, const T* __restrict__ table, T* __restrict__ y,
                                 std::int64_t rows, int hidden) {
  const int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  if (i >= hidden) return;
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    if constexpr (VEC == 8) {
      *reinterpret_cast<uint4*>(y + r * hidden + i) =
          *reinterpret_cast<const uint4*>(table + static_cast<std::int64_t>(ids[r]) * hidden + i);
    } else {
      y[r * hidden + i] = table[static_cast<std::int64_t>(ids[r]) * hidden + i];
    }
  }
}

// Calls f with the element type of t and VEC = 8 when `width` is a multiple of 8, else 1.
template <typename F>
void dispatch(DType t, std::int64_t width, F&& f) {
  const bool wide = width % 8 == 0;
  if (t == DType::bf16) {
    if (wide) f(__nv_bfloat16{}, std::integral_constant<int, 8>{});
    else f(__nv_bfloat16{}, std::integral_constant<int, 1>{});
  } else {
    if (wide) f(__half{}, std::integral_constant<int, 8>{});
    else f(__half{}, std::integral_constant<int, 1>{});
  }
}

dim3 flat_grid(std::int64_t rows, std::int64_t pieces, int threads) {
  return dim3(static_cast<unsigned>((pieces + threads - 1) / threads),
              static_cast<unsigned>(std::min<std::int64_t>(rows, 65535)));
}

}  // namespace

std::string rmsnorm_unsupported(std::int64_t hidden) {
  const std::int64_t vec = hidden % 8 == 0 ? 8 : 1, most = 1024 * kPer * vec;
  if (hidden > most)
    return strprintf("rmsnorm holds a row in registers: at most %lld elements%s; got %lld",
                     static_cast<long long>(most), vec == 1 ? " when hidden is not a multiple of 8" : "",
                     static_cast<long long>(hidden));
  return "";
}

void rmsnorm(const void* x, void* residual, const void* w, void* y, std::int64_t rows, std::int64_t hidden, float eps,
             DType t, cudaStream_t stream) {
  dispatch(t, hidden, [&](auto tag, auto vec) {
    using T = decltype(tag);
    constexpr int V = decltype(vec)::value;
    const std::int64_t pieces = hidden / V;
    const int threads = static_cast<int>(std::min<std::int64_t>(1024, ((pieces + kPer - 1) / kPer + 31) / 32 * 32));
    const auto* xi = static_cast<const T*>(x);
    const auto* wi = static_cast<const T*>(w);
    auto* yi = static_cast<T*>(y);
    const int h = static_cast<int>(hidden);
    if (residual)
      rmsnorm_kernel<T, V, true>
          <<<static_cast<unsigned>(rows), threads, 0, stream>>>(xi, static_cast<T*>(residual), wi, yi, h, eps);
    else rmsnorm_kernel<T, V, false><<<static_cast<unsigned>(rows), threads, 0, stream>>>(xi, nullptr, wi, yi, h, eps);
  });
  GENBENCH_CHECK_CUDA(cudaGetLastError());
}

void rope(void* qk, const std::int32_t* pos, const float* cos, const float* sin, std::int64_t rows, std::int64_t width,
          std::int64_t head_dim, DType t, cudaStream_t stream) {
  const std::int64_t half = head_dim / 2;
  dispatch(t, half, [&](auto tag, auto vec) {
    using T = decltype(tag);
    constexpr int V = decltype(vec)::value;
    const std::int64_t total = rows * (width / head_dim) * (half / V);
    const int threads = 256;
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((total + threads - 1) / threads, 1 << 20));
    rope_kernel<T, V><<<blocks, threads, 0, stream>>>(static_cast<T*>(qk), pos, cos, sin, rows,
                                                      static_cast<int>(width / head_dim), static_cast<int>(half));
  });
  GENBENCH_CHECK_CUDA(cudaGetLastError());
}

void silu_mul(const void* x, void* y, std::int64_t rows, std::int64_t hidden, DType t, cudaStream_t stream) {
  dispatch(t, hidden, [&](auto tag, auto vec) {
    using T = decltype(tag);
    constexpr int V = decltype(vec)::value;
    silu_mul_kernel<T, V><<<flat_grid(rows, hidden / V, 256), 256, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), rows, static_cast<int>(hidden));
  });
  GENBENCH_CHECK_CUDA(cudaGetLastError());
}

void embedding(const std::int32_t* ids, const void* table, void* y, std::int64_t rows, std::int64_t hidden, DType t,
               cudaStream_t stream) {
  dispatch(t, hidden, [&](auto tag, auto vec) {
    using T = decltype(tag);
    constexpr int V = decltype(vec)::value;
    embedding_kernel<T, V><<<flat_grid(rows, hidden / V, 256), 256, 0, stream>>>(
        ids, static_cast<const T*>(table), static_cast<T*>(y), rows, static_cast<int>(hidden));
  });
  GENBENCH_CHECK_CUDA(cudaGetLastError());
}

}  // namespace genbench::pointwise
