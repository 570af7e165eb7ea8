// pointwise/cuda's kernels (pointwise_kernels.h). Every kernel moves a row in VEC-element pieces:
// VEC = 8 (one 16-byte load or store) when the row's width is a multiple of 8, else 1. rmsnorm
// holds its row in registers between the sum of squares and the scaling (one block a row, up to
// PER pieces a thread); the others are flat: one piece a thread, rows along the grid's y.
// rmsnorm_backward holds x and dy of a row in registers between its two row sums and dx, each
// block working through rows (a grid as large as the card holds at once) and summing its rows'
// share of dw in fp32 registers; a second small kernel adds the blocks' partial rows in a fixed
// order (deterministic, no atomics). embedding_backward adds with fp32 atomics (16-byte vector
// atomics on sm_90 and later), so repeated ids sum in any order.
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

template <int VEC>
__device__ __forceinline__ void store_f32(float* p, const float (&f)[VEC]) {
  if constexpr (VEC == 8) {
    *reinterpret_cast<float4*>(p) = make_float4(f[0], f[1], f[2], f[3]);
    *reinterpret_cast<float4*>(p + 4) = make_float4(f[4], f[5], f[6], f[7]);
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) p[i] = f[i];
  }
}

// Block-wide sums of a and b, every thread gets both; ends with a barrier, so a loop may call it
// again at once.
__device__ __forceinline__ float2 block_sum2(float a, float b) {
  __shared__ float2 part[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_xor_sync(0xffffffffu, a, o);
    b += __shfl_xor_sync(0xffffffffu, b, o);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = (blockDim.x + 31) / 32;
  if (lane == 0) part[warp] = make_float2(a, b);
  __syncthreads();
  float2 v = lane < warps ? part[lane] : make_float2(0.0f, 0.0f);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    v.x += __shfl_xor_sync(0xffffffffu, v.x, o);
    v.y += __shfl_xor_sync(0xffffffffu, v.y, o);
  }
  __syncthreads();
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

template <typename T, int VEC, bool INV>
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
      const float sn = INV ? -s[e] : s[e];  // the backward rotates by -angle
      o1[e] = x1[e] * c[e] - x2[e] * sn;
      o2[e] = x2[e] * c[e] + x1[e] * sn;
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

// rmsnorm_backward and add_rmsnorm_backward (ADD: dx += dr): blocks take rows r = blockIdx.x,
// + gridDim.x, ...; a thread owns the same PER pieces of every row, so its share of dw stays in
// registers until the block writes it to its row of `partial` [gridDim.x, hidden]. Up to 2
// pieces a thread, x and dy stay in registers between the row sums and dx; with 4 (rows over
// 16384 elements) they would not fit beside dw's share, so dx reads them again (from L1/L2).
template <typename T, int VEC, int PER, bool ADD>
__global__ void __launch_bounds__(1024)
    rmsnorm_backward_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy,
                            const T* __restrict__ dr, T* __restrict__ dx, float* __restrict__ partial,
                            std::int64_t rows, int hidden, float eps) {
  constexpr bool kHold = PER <= 2;
  constexpr int kHeld = kHold ? PER : 1;
  const int pieces = hidden / VEC;
  float acc[PER][VEC];
#pragma unroll
  for (int j = 0; j < PER; ++j)
#pragma unroll
    for (int e = 0; e < VEC; ++e) acc[j][e] = 0.0f;
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const std::int64_t base = r * hidden;
    float xv[kHeld][VEC], gv[kHeld][VEC];
    float ss = 0, d = 0;
#pragma unroll
    for (int j = 0; j < PER; ++j) {
      const int i = threadIdx.x + j * blockDim.x, k = kHold ? j : 0;
      if (i < pieces) {
        float wv[VEC];
        load(x + base + i * VEC, xv[k]);
        load(dy + base + i * VEC, gv[k]);
        load(w + i * VEC, wv);
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          ss += xv[k][e] * xv[k][e];
          d += wv[e] * gv[k][e] * xv[k][e];
        }
      }
    }
    const float2 t = block_sum2(ss, d);
    // sqrt and division rounded as IEEE (rsqrtf's 2 ulps would show where w*dy/rms and dr cancel)
    const float inv = 1.0f / sqrtf(t.x / static_cast<float>(hidden) + eps);
    const float c = t.y * inv * inv * inv / static_cast<float>(hidden);
#pragma unroll
    for (int j = 0; j < PER; ++j) {
      const int i = threadIdx.x + j * blockDim.x, k = kHold ? j : 0;
      if (i < pieces) {
        if constexpr (!kHold) {
          load(x + base + i * VEC, xv[k]);
          load(dy + base + i * VEC, gv[k]);
        }
        float wv[VEC], o[VEC];
        load(w + i * VEC, wv);
        if constexpr (ADD) {
          load(dr + base + i * VEC, o);
        } else {
#pragma unroll
          for (int e = 0; e < VEC; ++e) o[e] = 0.0f;
        }
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          o[e] += wv[e] * gv[k][e] * inv - xv[k][e] * c;
          acc[j][e] += gv[k][e] * xv[k][e] * inv;
        }
        store(dx + base + i * VEC, o);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    const int i = threadIdx.x + j * blockDim.x;
    if (i < pieces) store_f32(partial + static_cast<std::int64_t>(blockIdx.x) * hidden + i * VEC, acc[j]);
  }
}

// out[col] = the sum over p < parts of partial[p, col], in a fixed order: 32 columns a block,
// 8 threads a column taking every 8th part, then one of them adding the 8 sums.
__global__ void column_sum_kernel(const float* __restrict__ partial, float* __restrict__ out, int parts, int width) {
  __shared__ float sum[8][33];
  const int col = blockIdx.x * 32 + threadIdx.x;
  float v = 0;
  if (col < width)
    for (int p = threadIdx.y; p < parts; p += 8) v += partial[static_cast<std::int64_t>(p) * width + col];
  sum[threadIdx.y][threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.y == 0 && col < width) {
    float t = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) t += sum[k][threadIdx.x];
    out[col] = t;
  }
}

template <typename T, int VEC>
__global__ void silu_mul_backward_kernel(const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx,
                                         std::int64_t rows, int hidden) {
  const int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  if (i >= hidden) return;
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    float g[VEC], u[VEC], d[VEC];
    load(x + r * 2 * hidden + i, g);
    load(x + r * 2 * hidden + hidden + i, u);
    load(dy + r * hidden + i, d);
    float dg[VEC], du[VEC];
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const float sig = 1.0f / (1.0f + __expf(-g[e]));
      du[e] = d[e] * g[e] * sig;
      dg[e] = d[e] * u[e] * sig * (1.0f + g[e] * (1.0f - sig));
    }
    store(dx + r * 2 * hidden + i, dg);
    store(dx + r * 2 * hidden + hidden + i, du);
  }
}

template <typename T, int VEC>
__global__ void embedding_backward_kernel(const std::int32_t* __restrict__ ids, const T* __restrict__ dy,
                                          float* __restrict__ table, std::int64_t rows, int hidden) {
  const int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  if (i >= hidden) return;
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    float d[VEC];
    load(dy + r * hidden + i, d);
    float* t = table + static_cast<std::int64_t>(ids[r]) * hidden + i;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (VEC == 8) {
      atomicAdd(reinterpret_cast<float4*>(t), make_float4(d[0], d[1], d[2], d[3]));
      atomicAdd(reinterpret_cast<float4*>(t + 4), make_float4(d[4], d[5], d[6], d[7]));
    } else
#endif
    {
#pragma unroll
      for (int e = 0; e < VEC; ++e) atomicAdd(t + e, d[e]);
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

// Calls f(kernel, threads, T{}) with the rmsnorm_backward kernel for this dtype, width and ADD:
// PER the fewest pieces a thread (1, 2 or 4) that cover the row with at most 1024 threads.
template <typename F>
void norm_backward_dispatch(DType t, std::int64_t hidden, bool add, F&& f) {
  dispatch(t, hidden, [&](auto tag, auto vec) {
    using T = decltype(tag);
    constexpr int V = decltype(vec)::value;
    const std::int64_t pieces = hidden / V;
    const int per = pieces <= 1024 ? 1 : pieces <= 2048 ? 2 : 4;
    const int threads = static_cast<int>(std::min<std::int64_t>(1024, ((pieces + per - 1) / per + 31) / 32 * 32));
    const auto pick = [&](auto p) {
      constexpr int P = decltype(p)::value;
      if (add) f(rmsnorm_backward_kernel<T, V, P, true>, threads, tag);
      else f(rmsnorm_backward_kernel<T, V, P, false>, threads, tag);
    };
    if (per == 1) pick(std::integral_constant<int, 1>{});
    else if (per == 2) pick(std::integral_constant<int, 2>{});
    else pick(std::integral_constant<int, 4>{});
  });
}

}  // namespace

std::string rmsnorm_unsupported(std::int64_t hidden, const char* kind) {
  const std::int64_t vec = hidden % 8 == 0 ? 8 : 1, most = 1024 * kPer * vec;
  if (hidden > most)
    return strprintf("%s holds a row in registers: at most %lld elements%s; got %lld", kind,
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
          std::int64_t head_dim, DType t, cudaStream_t stream, bool inverse) {
  const std::int64_t half = head_dim / 2;
  dispatch(t, half, [&](auto tag, auto vec) {
    using T = decltype(tag);
    constexpr int V = decltype(vec)::value;
    const std::int64_t total = rows * (width / head_dim) * (half / V);
    const int threads = 256;
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((total + threads - 1) / threads, 1 << 20));
    const int heads = static_cast<int>(width / head_dim), h = static_cast<int>(half);
    if (inverse)
      rope_kernel<T, V, true><<<blocks, threads, 0, stream>>>(static_cast<T*>(qk), pos, cos, sin, rows, heads, h);
    else rope_kernel<T, V, false><<<blocks, threads, 0, stream>>>(static_cast<T*>(qk), pos, cos, sin, rows, heads, h);
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

int rmsnorm_backward_blocks(std::int64_t rows, std::int64_t hidden, bool add, DType t) {
  int device = 0, sms = 1, per_sm = 1;
  GENBENCH_CHECK_CUDA(cudaGetDevice(&device));
  GENBENCH_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  norm_backward_dispatch(t, hidden, add, [&](auto kernel, int threads, auto) {
    GENBENCH_CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  });
  return static_cast<int>(std::min<std::int64_t>(rows, static_cast<std::int64_t>(sms) * std::max(per_sm, 1)));
}

void rmsnorm_backward(const void* x, const void* w, const void* dy, const void* dr, void* dx, float* dw, float* partial,
                      int blocks, std::int64_t rows, std::int64_t hidden, float eps, DType t, cudaStream_t stream) {
  const int h = static_cast<int>(hidden);
  norm_backward_dispatch(t, hidden, dr != nullptr, [&](auto kernel, int threads, auto tag) {
    using T = decltype(tag);
    kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(w),
                                                                  static_cast<const T*>(dy), static_cast<const T*>(dr),
                                                                  static_cast<T*>(dx), partial, rows, h, eps);
  });
  GENBENCH_CHECK_CUDA(cudaGetLastError());
  column_sum_kernel<<<static_cast<unsigned>((hidden + 31) / 32), dim3(32, 8), 0, stream>>>(partial, dw, blocks, h);
  GENBENCH_CHECK_CUDA(cudaGetLastError());
}

void silu_mul_backward(const void* x, const void* dy, void* dx, std::int64_t rows, std::int64_t hidden, DType t,
                       cudaStream_t stream) {
  dispatch(t, hidden, [&](auto tag, auto vec) {
    using T = decltype(tag);
    constexpr int V = decltype(vec)::value;
    silu_mul_backward_kernel<T, V><<<flat_grid(rows, hidden / V, 256), 256, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(dy), static_cast<T*>(dx), rows, static_cast<int>(hidden));
  });
  GENBENCH_CHECK_CUDA(cudaGetLastError());
}

void embedding_backward(const std::int32_t* ids, const void* dy, float* table, std::int64_t rows, std::int64_t hidden,
                        DType t, cudaStream_t stream) {
  dispatch(t, hidden, [&](auto tag, auto vec) {
    using T = decltype(tag);
    constexpr int V = decltype(vec)::value;
    embedding_backward_kernel<T, V><<<flat_grid(rows, hidden / V, 256), 256, 0, stream>>>(
        ids, static_cast<const T*>(dy), table, rows, static_cast<int>(hidden));
  });
  GENBENCH_CHECK_CUDA(cudaGetLastError());
}

}  // namespace genbench::pointwise
