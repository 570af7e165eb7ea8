// attention/reference on the cuda backend: fp32 arithmetic, written plainly (one block per
// query row, scores recomputed in two passes), for validating the fast implementations on
// the device. Supports every dtype with a device fill (fp32, fp16, bf16), GQA/MQA, causal
// (bottom-right aligned), varlen and graph mode.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "core/strings.h"
#include "kernels/attention/common/attention_case.h"
#include "kernels/attention/common/block_softmax.cuh"
#include "kernels/attention/reference/attention_reference.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

constexpr int kThreads = 128;

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
__device__ __forceinline__ T float_to(float x);
template <>
__device__ __forceinline__ float float_to<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half float_to<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 float_to<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

struct RefParams {
  const void *q, *k, *v;
  void* o;
  float* lse;
  const int *cu_q, *cu_k;                     // cumulative lengths (batch + 1)
  int heads, heads_kv, head_dim, head_dim_v;  // Q/K and V/O
  int seqlen_q;                               // padded length (LSE stride without varlen)
  long long lse_head_stride;                  // varlen: capacity rows
  int varlen, causal;
  float scale;
};

template <typename T>
__global__ void __launch_bounds__(kThreads) attention_reference_kernel(RefParams p) {
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int q0 = p.cu_q[b], len_q = p.cu_q[b + 1] - q0;
  const int k0 = p.cu_k[b], len_k = p.cu_k[b + 1] - k0;
  if (i >= len_q) return;
  const int D = p.head_dim, DV = p.head_dim_v, hk = h / (p.heads / p.heads_kv), tid = threadIdx.x;
  const T* q = static_cast<const T*>(p.q) + (static_cast<long long>(q0 + i) * p.heads + h) * D;
  const T* k = static_cast<const T*>(p.k) + static_cast<long long>(k0) * p.heads_kv * D + hk * D;
  const T* v = static_cast<const T*>(p.v) + static_cast<long long>(k0) * p.heads_kv * DV + hk * DV;
  const long long kv_stride = static_cast<long long>(p.heads_kv) * D,
                  v_stride = static_cast<long long>(p.heads_kv) * DV;
  const int end = p.causal ? min(len_k, max(0, i + len_k - len_q + 1)) : len_k;

  __shared__ float sq[256];
  __shared__ float sp[kThreads];
  __shared__ float red_m[kThreads / 32], red_l[kThreads / 32];
  for (int x = tid; x < D; x += kThreads) sq[x] = to_float(q[x]);
  __syncthreads();

  auto score = [&](int j) {
    const T* kj = k + j * kv_stride;
    float dot = 0.f;
    for (int x = 0; x < D; ++x) dot = fmaf(sq[x], to_float(kj[x]), dot);
    return dot * p.scale;
  };

  // Pass 1: row max and sum of exponentials (online within a thread, then merged).
  float m = -INFINITY, l = 0.f;
  for (int j = tid; j < end; j += kThreads) {
    const float s = score(j);
    const float mn = fmaxf(m, s);
    l = l * expf(m - mn) + expf(s - mn);
    m = mn;
  }
  block_max_sum<kThreads>(m, l, red_m, red_l);

  // Pass 2: O = sum_j softmax_j V_j, 128 keys at a time.
  float acc0 = 0.f, acc1 = 0.f;
  for (int c = 0; c < end; c += kThreads) {
    const int j = c + tid;
    sp[tid] = j < end ? expf(score(j) - m) : 0.f;
    __syncthreads();
    const int n = min(kThreads, end - c);
    for (int jj = 0; jj < n; ++jj) {
      const T* vj = v + static_cast<long long>(c + jj) * v_stride;
      if (tid < DV) acc0 = fmaf(sp[jj], to_float(vj[tid]), acc0);
      if (tid + kThreads < DV) acc1 = fmaf(sp[jj], to_float(vj[tid + kThreads]), acc1);
    }
    __syncthreads();
  }
  const float inv = l > 0.f ? 1.f / l : 0.f;
  T* o = static_cast<T*>(p.o) + (static_cast<long long>(q0 + i) * p.heads + h) * DV;
  if (tid < DV) o[tid] = float_to<T>(acc0 * inv);
  if (tid + kThreads < DV) o[tid + kThreads] = float_to<T>(acc1 * inv);
  if (tid == 0) {
    const long long li =
        p.varlen ? h * p.lse_head_stride + q0 + i : (static_cast<long long>(b) * p.heads + h) * p.seqlen_q + i;
    p.lse[li] = l > 0.f ? m + logf(l) : -INFINITY;
  }
}

class ReferenceCase final : public attention::DeviceAttentionCase {
 public:
  ReferenceCase(const AttentionShape& s, Context& ctx) : DeviceAttentionCase(s, ctx) {}

 protected:
  void launch(cudaStream_t st) override {
    attention_reference_forward(s_, q_.get(), k_.get(), v_.get(), o_.get(), lse_.as<float>(), cu_q_.as<int>(),
                                cu_k_.as<int>(), rows_q_, st);
  }
  std::string config_name() const override { return "fp32 row-per-block"; }
};

class AttentionReferenceCuda final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = AttentionShape::from(p);
    if (auto why = dtype_not_in(s.dtype, {DType::fp32, DType::fp16, DType::bf16}); !why.empty()) return why;
    if (s.seqlen_q > 2147483647 / 2 || s.heads > 65535 || s.batch > 65535) return "shape beyond the grid limits";
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<ReferenceCase>(AttentionShape::from(p), ctx);
  }
};

}  // namespace

void attention_reference_forward(const AttentionShape& s, const void* q, const void* k, const void* v, void* o,
                                 float* lse, const int* cu_q, const int* cu_k, long long lse_head_stride,
                                 cudaStream_t st) {
  RefParams p{};
  p.q = q;
  p.k = k;
  p.v = v;
  p.o = o;
  p.lse = lse;
  p.cu_q = cu_q;
  p.cu_k = cu_k;
  p.heads = static_cast<int>(s.heads);
  p.heads_kv = static_cast<int>(s.heads_kv);
  p.head_dim = static_cast<int>(s.head_dim);
  p.head_dim_v = static_cast<int>(s.dv());
  p.seqlen_q = static_cast<int>(s.seqlen_q);
  p.lse_head_stride = lse_head_stride;
  p.varlen = s.varlen;
  p.causal = s.causal;
  p.scale = s.scale;
  // The grid covers the padded length; rows beyond a sequence's length return at once, so
  // a captured graph serves any lengths up to seqlen_q.
  const dim3 grid(static_cast<unsigned>(s.seqlen_q), static_cast<unsigned>(s.heads), static_cast<unsigned>(s.batch));
  switch (s.dtype) {
    case DType::fp32: attention_reference_kernel<float><<<grid, kThreads, 0, st>>>(p); break;
    case DType::fp16: attention_reference_kernel<__half><<<grid, kThreads, 0, st>>>(p); break;
    default: attention_reference_kernel<__nv_bfloat16><<<grid, kThreads, 0, st>>>(p); break;
  }
  GENBENCH_CHECK_LAUNCH();
}

std::unique_ptr<Implementation> make_attention_reference_cuda() { return std::make_unique<AttentionReferenceCuda>(); }

}  // namespace genbench
