// attention/unfused on the cuda backend: the textbook three steps, each through device
// memory. cuBLAS batched GEMM writes the scaled scores S = scale * Q K^T in fp32
// [batch, heads, seqlen_q, seqlen_k]; a softmax kernel applies the causal mask and writes
// P in the input precision plus the row logsumexp; a second batched GEMM computes O = P V.
// The O(seqlen_q * seqlen_k) score and probability matrices are the point of comparison
// for memory (the point's peak memory includes them).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "core/strings.h"
#include "kernels/attention/common/attention_case.h"
#include "kernels/attention/common/block_softmax.cuh"
#include "ops/implementation.h"

#define GENBENCH_UNFUSED_CHECK_CUBLAS(call)                                                                \
  do {                                                                                                     \
    const cublasStatus_t genbench_cublas_rc_ = (call);                                                     \
    if (genbench_cublas_rc_ != CUBLAS_STATUS_SUCCESS)                                                      \
      ::genbench::throw_call_error(#call, cublasGetStatusString(genbench_cublas_rc_), __FILE__, __LINE__); \
  } while (0)

namespace genbench {

namespace {

constexpr int kSoftmaxThreads = 256;
constexpr std::size_t kCublasWorkspace = std::size_t{32} << 20;

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

// One block per (query row, head, batch): S row (already scaled) -> P row, LSE.
template <typename T>
__global__ void __launch_bounds__(kSoftmaxThreads)
    softmax_rows(const float* s, T* p, float* lse, int heads, int seqlen_q, int seqlen_k, int causal) {
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z, tid = threadIdx.x;
  const long long row = (static_cast<long long>(b) * heads + h) * seqlen_q + i;
  const float* srow = s + row * seqlen_k;
  T* prow = p + row * seqlen_k;
  const int end = causal ? min(seqlen_k, max(0, i + seqlen_k - seqlen_q + 1)) : seqlen_k;
  __shared__ float red_m[kSoftmaxThreads / 32], red_l[kSoftmaxThreads / 32];

  float m = -INFINITY, l = 0.f;
  for (int j = tid; j < end; j += kSoftmaxThreads) {
    const float x = srow[j];
    const float mn = fmaxf(m, x);
    l = l * expf(m - mn) + expf(x - mn);
    m = mn;
  }
  block_max_sum<kSoftmaxThreads>(m, l, red_m, red_l);
  const float inv = l > 0.f ? 1.f / l : 0.f;
  for (int j = tid; j < seqlen_k; j += kSoftmaxThreads) prow[j] = float_to<T>(j < end ? expf(srow[j] - m) * inv : 0.f);
  if (tid == 0) lse[row] = l > 0.f ? m + logf(l) : -INFINITY;
}

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::fp16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

class UnfusedCase final : public attention::DeviceAttentionCase {
 public:
  UnfusedCase(const AttentionShape& s, Context& ctx) : DeviceAttentionCase(s, ctx) {
    const auto bh = static_cast<std::size_t>(s.batch * s.heads);
    const auto pairs = static_cast<std::size_t>(s.seqlen_q) * static_cast<std::size_t>(s.seqlen_k);
    scores_ = ctx.backend.allocate(bh * pairs * sizeof(float));
    probs_ = ctx.backend.allocate(bh * pairs * dtype_size(s.dtype));
    workspace_ = ctx.backend.allocate(kCublasWorkspace);
    // Per (batch, head) matrix pointers; GQA maps head h to key/value head h / group.
    const std::size_t el = dtype_size(s.dtype);
    std::vector<const void*> ptrs(4 * bh);
    std::vector<void*> outs(2 * bh);
    const auto D = static_cast<std::size_t>(s.head_dim), DV = static_cast<std::size_t>(s.dv()),
               H = static_cast<std::size_t>(s.heads), Hk = static_cast<std::size_t>(s.heads_kv), group = H / Hk;
    const auto* q = static_cast<const char*>(q_.get());
    const auto* k = static_cast<const char*>(k_.get());
    const auto* v = static_cast<const char*>(v_.get());
    for (std::size_t b = 0; b < static_cast<std::size_t>(s.batch); ++b)
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t i = b * H + h;
        ptrs[0 * bh + i] = q + ((b * static_cast<std::size_t>(s.seqlen_q) * H + h) * D) * el;
        ptrs[1 * bh + i] = k + ((b * static_cast<std::size_t>(s.seqlen_k) * Hk + h / group) * D) * el;
        ptrs[2 * bh + i] = v + ((b * static_cast<std::size_t>(s.seqlen_k) * Hk + h / group) * DV) * el;
        ptrs[3 * bh + i] = static_cast<const char*>(probs_.get()) + i * pairs * el;
        outs[0 * bh + i] = static_cast<char*>(scores_.get()) + i * pairs * sizeof(float);
        outs[1 * bh + i] =
            static_cast<char*>(o_.get()) + ((b * static_cast<std::size_t>(s.seqlen_q) * H + h) * DV) * el;
      }
    in_ptrs_ = ctx.backend.allocate(ptrs.size() * sizeof(void*));
    out_ptrs_ = ctx.backend.allocate(outs.size() * sizeof(void*));
    GENBENCH_CHECK_CUDA(cudaMemcpy(in_ptrs_.get(), ptrs.data(), ptrs.size() * sizeof(void*), cudaMemcpyHostToDevice));
    GENBENCH_CHECK_CUDA(cudaMemcpy(out_ptrs_.get(), outs.data(), outs.size() * sizeof(void*), cudaMemcpyHostToDevice));
    GENBENCH_UNFUSED_CHECK_CUBLAS(cublasCreate(&handle_));
    GENBENCH_UNFUSED_CHECK_CUBLAS(cublasSetStream(handle_, stream()));
    GENBENCH_UNFUSED_CHECK_CUBLAS(cublasSetWorkspace(handle_, workspace_.get(), kCublasWorkspace));
    if (s.dtype == DType::fp32) GENBENCH_UNFUSED_CHECK_CUBLAS(cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH));
  }
  ~UnfusedCase() override {
    if (handle_) cublasDestroy(handle_);
  }

 protected:
  void launch(cudaStream_t st) override {
    const auto bh = static_cast<int>(s_.batch * s_.heads);
    const int sq = static_cast<int>(s_.seqlen_q), sk = static_cast<int>(s_.seqlen_k), d = static_cast<int>(s_.head_dim);
    const int ldq = static_cast<int>(s_.heads * s_.head_dim), ldk = static_cast<int>(s_.heads_kv * s_.head_dim);
    const int dv = static_cast<int>(s_.dv()), ldv = static_cast<int>(s_.heads_kv * s_.dv()),
              ldo = static_cast<int>(s_.heads * s_.dv());
    const cudaDataType_t t = cuda_type(s_.dtype);
    const auto* const* in = static_cast<const void* const*>(in_ptrs_.get());
    void* const* out = static_cast<void* const*>(out_ptrs_.get());
    const float alpha = s_.scale, one = 1.f, zero = 0.f;
    // Row-major S (sq x sk) is column-major S^T = K Q^T: m = sk, n = sq, k = d.
    GENBENCH_UNFUSED_CHECK_CUBLAS(cublasGemmBatchedEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, sk, sq, d, &alpha, in + bh, t,
                                                      ldk, in, t, ldq, &zero, out, CUDA_R_32F, sk, bh,
                                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    const dim3 grid(static_cast<unsigned>(sq), static_cast<unsigned>(s_.heads), static_cast<unsigned>(s_.batch));
    switch (s_.dtype) {
      case DType::fp16:
        softmax_rows<<<grid, kSoftmaxThreads, 0, st>>>(scores_.as<float>(), probs_.as<__half>(), lse_.as<float>(),
                                                       static_cast<int>(s_.heads), sq, sk, s_.causal);
        break;
      case DType::bf16:
        softmax_rows<<<grid, kSoftmaxThreads, 0, st>>>(scores_.as<float>(), probs_.as<__nv_bfloat16>(),
                                                       lse_.as<float>(), static_cast<int>(s_.heads), sq, sk, s_.causal);
        break;
      default:
        softmax_rows<<<grid, kSoftmaxThreads, 0, st>>>(scores_.as<float>(), probs_.as<float>(), lse_.as<float>(),
                                                       static_cast<int>(s_.heads), sq, sk, s_.causal);
        break;
    }
    GENBENCH_CHECK_LAUNCH();
    // Row-major O (sq x dv, ld heads*dv) is column-major O^T = V^T-view x P^T: m = dv, n = sq, k = sk.
    GENBENCH_UNFUSED_CHECK_CUBLAS(cublasGemmBatchedEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, dv, sq, sk, &one, in + 2 * bh,
                                                      t, ldv, in + 3 * bh, t, sk, &zero, out + bh, t, ldo, bh,
                                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  std::string config_name() const override { return "cublasGemmBatchedEx fp32 S + softmax + cublasGemmBatchedEx"; }

 private:
  cublasHandle_t handle_ = nullptr;
  DeviceBuffer scores_, probs_, workspace_, in_ptrs_, out_ptrs_;
};

class AttentionUnfused final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = AttentionShape::from(p);
    if (auto why = dtype_not_in(s.dtype, {DType::fp32, DType::fp16, DType::bf16}); !why.empty()) return why;
    if (s.varlen) return "varlen is not supported (the batched GEMMs take one shape)";
    if (s.batch > 65535 || s.heads > 65535) return "batch and heads must be at most 65535 (grid limits)";
    if (s.heads * std::max(s.head_dim, s.dv()) > 2147483647 || s.seqlen_k > 2147483647)
      return "leading dimensions beyond int";
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<UnfusedCase>(AttentionShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_attention_unfused() { return std::make_unique<AttentionUnfused>(); }

}  // namespace genbench
