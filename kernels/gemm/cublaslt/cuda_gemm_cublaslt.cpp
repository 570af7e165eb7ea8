// gemm/cublaslt on the cuda backend: one cuBLASLt matmul per iteration.
//
// Row-major semantics as gemm/reference documents (D = op(A) op(B), A stored m x k or k x m,
// B stored k x n or n x k). cuBLASLt is column-major, so it computes the transpose instead:
// D^T (n x m, column-major) = op(B)^T op(A)^T, with the B buffer as cuBLASLt's "A" operand
// and the A buffer as its "B" operand. Row-major trans_a=n, trans_b=t is column-major "TN",
// the only layout cuBLASLt offers for fp8 and int8.
//
// Precisions: fp32 (fp32 math), tf32 (fp32 storage, CUBLAS_COMPUTE_32F_FAST_TF32), fp16 and
// bf16 (fp32 accumulation, output in the input type), fp8 e4m3/e5m2 (per-tensor scale factors
// for A and B, fp32 accumulation, bf16 output), int8 (int32 accumulation and output).
//
// Algorithm: the heuristic's best kCandidates candidates are each timed briefly with events
// and the fastest is kept; Case::variant() records it (heuristic rank, algorithm id, tile,
// stages, split-k, swizzle) so a result can be reproduced.
//
// Workspace: GENBENCH_CUBLASLT_WORKSPACE_MB (default 32 MiB), allocated per point and counted
// in its peak memory.
//
// cache=cold: the runner times run() alone, so there is no untimed slot to flush L2 between
// iterations. Instead the case holds enough copies of A, B and D that together they exceed
// twice the L2 size, and successive iterations rotate through them: each iteration reads
// operands that the previous ones evicted.
//
// mode=graph: K iterations (10..100, enough for a replay of >= 50 us) are captured into a
// CUDA Graph in prepare(); run() replays it and iterations_per_run() returns K.
#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "backend/cuda/check.h"
#include "backend/cuda/convert.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/graph.h"
#include "core/strings.h"
#include "kernels/common/device_fill.h"
#include "kernels/gemm/cublaslt/lt_matmul.h"
#include "ops/gemm/gemm.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

constexpr int kCandidates = 8;
constexpr double kGraphTargetSeconds = 50e-6;
constexpr float kScaleA = 0.75f, kScaleB = 1.25f;  // fp8 per-tensor scale factors
constexpr std::size_t kAlign = 256;

std::size_t padded(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

class CublasLtCase final : public Case {
 public:
  CublasLtCase(const GemmShape& s, std::size_t ws_bytes, Context& ctx)
      : s_(s), be_(cuda_backend_of(ctx.backend)), stream_(be_.stream()) {
    const std::size_t in = dtype_size(s.dtype), out = dtype_size(lt_output_type(s.dtype));
    const auto bt = static_cast<std::size_t>(s.batch);
    na_ = static_cast<std::size_t>(s.m * s.k) * bt;
    nb_ = static_cast<std::size_t>(s.k * s.n) * bt;
    nd_ = static_cast<std::size_t>(s.m * s.n) * bt;
    pa_ = padded(na_ * in);
    pb_ = padded(nb_ * in);
    pd_ = padded(nd_ * out);
    if (s.cold) {
      const double l2 = static_cast<double>(be_.properties().l2CacheSize);
      const double set = static_cast<double>(pa_ + pb_ + pd_);
      copies_ = static_cast<std::size_t>(std::max(2.0, std::ceil(2.0 * l2 / set)));
    }
    a_ = ctx.backend.allocate(pa_ * copies_);
    b_ = ctx.backend.allocate(pb_ * copies_);
    d_ = ctx.backend.allocate(pd_ * copies_);
    ws_bytes_ = ws_bytes;
    if (ws_bytes_) ws_ = ctx.backend.allocate(ws_bytes_);

    const float a_scale = s.dtype == DType::int8 ? 8.0f : 1.0f;
    fill_normal_device(a_.get(), static_cast<std::int64_t>(na_), ctx.seed + 11, s.dtype, a_scale, stream_);
    fill_normal_device(b_.get(), static_cast<std::int64_t>(nb_), ctx.seed + 12, s.dtype, a_scale, stream_);
    for (std::size_t c = 1; c < copies_; ++c) {
      GENBENCH_CHECK_CUDA(
          cudaMemcpyAsync(a_.as<unsigned char>() + c * pa_, a_.get(), na_ * in, cudaMemcpyDeviceToDevice, stream_));
      GENBENCH_CHECK_CUDA(
          cudaMemcpyAsync(b_.as<unsigned char>() + c * pb_, b_.get(), nb_ * in, cudaMemcpyDeviceToDevice, stream_));
    }
    const float* sa = nullptr;
    const float* sb = nullptr;
    if (lt_is_fp8(s.dtype)) {
      // Each scale on its own 256-byte boundary, as separate allocations would be.
      scales_ = ctx.backend.allocate(2 * kAlign);
      GENBENCH_CHECK_CUDA(cudaMemcpyAsync(scales_.get(), &kScaleB, sizeof(float), cudaMemcpyHostToDevice, stream_));
      GENBENCH_CHECK_CUDA(cudaMemcpyAsync(scales_.as<unsigned char>() + kAlign, &kScaleA, sizeof(float),
                                          cudaMemcpyHostToDevice, stream_));
      sb = scales_.as<float>();
      sa = reinterpret_cast<const float*>(scales_.as<unsigned char>() + kAlign);
    }
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
    gemm_ = std::make_unique<LtGemm>(s, ws_bytes_ ? ws_.get() : nullptr, ws_bytes_, sa, sb);
    gemm_->tune(a_.get(), b_.get(), d_.get(), stream_, kCandidates);
    variant_ = gemm_->variant();
    if (s.graph) {
      const int k = graph_iterations(gemm_->seconds(), kGraphTargetSeconds, 10, 100);
      graph_.capture(stream_, k, [&](int i) { matmul(static_cast<std::size_t>(i) % copies_); });
      variant_ += strprintf(" g%d", k);
    }
    if (copies_ > 1) variant_ += strprintf(" c%zu", copies_);
  }

  void matmul(std::size_t c) {
    gemm_->run(a_.as<unsigned char>() + c * pa_, b_.as<unsigned char>() + c * pb_, d_.as<unsigned char>() + c * pd_,
               stream_);
  }

  void run() override {
    if (!graph_.empty()) {
      graph_.launch(stream_);
      return;
    }
    matmul(next_);
    next_ = (next_ + 1) % copies_;
  }

  int iterations_per_run() const override { return graph_.empty() ? 1 : graph_.iterations(); }
  std::string variant() const override { return variant_; }
  std::vector<std::pair<std::string, std::string>> chosen() const override {
    return {{"cublaslt_workspace_mb", std::to_string(ws_bytes_ >> 20)}};
  }

  Validation validate() override {
    const DType od = lt_output_type(s_.dtype);
    // Poison copy 0 of D (NaN for floating outputs, a value no int8 product sum reaches for
    // int32), then run the timed path once: iteration 0 writes copy 0.
    GENBENCH_CHECK_CUDA(cudaMemsetAsync(d_.get(), od == DType::int32 ? 0x80 : 0xff, nd_ * dtype_size(od), stream_));
    next_ = 0;
    run();
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
    next_ = 0;
    const double scale = lt_is_fp8(s_.dtype) ? static_cast<double>(kScaleA) * static_cast<double>(kScaleB) : 1.0;
    return lt_check_sampled(s_, a_.get(), b_.get(), d_.get(), scale);
  }

 private:
  GemmShape s_;
  CudaBackend& be_;
  cudaStream_t stream_;
  std::size_t na_ = 0, nb_ = 0, nd_ = 0;  // elements of one copy
  std::size_t pa_ = 0, pb_ = 0, pd_ = 0;  // bytes of one copy, padded
  std::size_t copies_ = 1, next_ = 0;
  std::size_t ws_bytes_ = 0;
  DeviceBuffer a_, b_, d_, ws_, scales_;
  std::unique_ptr<LtGemm> gemm_;
  std::string variant_;
  CapturedGraph graph_;
};

class GemmCublasLt final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = GemmShape::from(p);
    const auto& prop = cuda_backend_of(ctx.backend).properties();
    const int cc = prop.major * 10 + prop.minor;
    // Dense 4-bit types: refused with what the card has, never a number from another type.
    if (s.dtype == DType::int4)
      return cc >= 80 && cc < 90
                 ? strprintf(
                       "dense int4: this GPU (%d.%d) has int4 (s4) tensor cores, but no genbench path for them is "
                       "built (none could be validated on a card this project reaches)",
                       prop.major, prop.minor)
                 : strprintf(
                       "dense int4 needs int4 (s4) tensor cores, which compute capability 8.0-8.9 (A100-class) "
                       "has and this GPU (%d.%d) lacks; weight-only int4 is the w4a16 op",
                       prop.major, prop.minor);
    if (s.dtype == DType::fp4_e2m1)
      return cc >= 100 ? strprintf(
                             "fp4_e2m1: this GPU (%d.%d) has fp4 tensor cores, but no genbench path with block "
                             "scales is built (none could be validated on a card this project reaches)",
                             prop.major, prop.minor)
                       : strprintf(
                             "fp4_e2m1 with block scales needs compute capability 10.0 or newer (Blackwell); "
                             "this GPU is %d.%d",
                             prop.major, prop.minor);
    if (lt_is_fp8(s.dtype) && cc < 89)
      return strprintf("fp8 matmul needs compute capability 8.9 or newer (this GPU is %d.%d)", prop.major, prop.minor);
    if (s.m * s.n > INT32_MAX && s.batch > 1) return "batched matrices beyond 2^31 elements";
    if (s.batch > INT32_MAX) return "batch beyond 2^31";
    // Ask the heuristic for one algorithm: cuBLASLt's own word on type, layout and alignment.
    LtProblem lt;
    static const float dummy = 1.0f;  // fp8 needs scale pointers set; the heuristic never reads them
    const float* sp = lt_is_fp8(s.dtype) ? &dummy : nullptr;
    lt.build(s, lt_workspace_bytes(tuning_value(p, gemm_op(), "cublaslt_workspace_mb")), sp, sp);
    std::string why;
    if (lt.candidates(1, &why).empty()) {
      std::string r = strprintf("cuBLASLt has no %s algorithm for trans_a=%c trans_b=%c m=%lld n=%lld k=%lld",
                                dtype_name(s.dtype), s.trans_a ? 't' : 'n', s.trans_b ? 't' : 'n',
                                static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k));
      if ((lt_is_fp8(s.dtype) || s.dtype == DType::int8) && (s.trans_a || !s.trans_b))
        r += " (fp8 and int8 need trans_a=n trans_b=t, column-major TN)";
      if (!why.empty()) r += " [" + why + "]";
      return r;
    }
    return "";
  }

  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<CublasLtCase>(GemmShape::from(p),
                                          lt_workspace_bytes(tuning_value(p, gemm_op(), "cublaslt_workspace_mb")), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_gemm_cublaslt() { return std::make_unique<GemmCublasLt>(); }

}  // namespace genbench
