// w4a16/mma_sm80 on the cuda backend: the kernel of w4a16_mma.cu (path fused), or the
// dequantise path (dequantize_transposed into a dense n x k W^T of the activation type, then a
// cuBLASLt GEMM with trans_b = t, tuned like gemm/cublaslt), chosen by the tuning axis
// w4a16_path (auto: fused up to m = 128 on mma.sync, 256 on wgmma, where the device measurements
// of docs/int4-gemm.md put the crossings), and the tuning axis w4a16_mma: the wide kernel's
// products on mma.sync (sync; up to 16 tokens the streaming kernel) or wgmma (sm_90 GPUs, builds
// with sm_90a code; up to 16 tokens the wide kernel's 16-row tiles; auto: wgmma where it runs,
// from 9 tokens).
// Operands and validation: cuda_w4a16_operands.h.
#include <memory>
#include <vector>

#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"
#include "core/strings.h"
#include "kernels/gemm/cublaslt/lt_matmul.h"
#include "kernels/w4a16/common/cuda_w4a16_operands.h"
#include "kernels/w4a16/common/w4a16_layout.h"
#include "kernels/w4a16/mma_sm80/w4a16_mma.h"
#include "ops/implementation.h"
#include "ops/w4a16/w4a16.h"

namespace genbench {

namespace {

// auto on w4a16_path: the fused kernel up to this many tokens (its mma.sync form; its wgmma form)
constexpr std::int64_t kFusedUpToM = 128, kFusedUpToMWgmma = 256;

// auto on w4a16_mma up to 16 tokens: the wide kernel's wgmma form at 16 rows from this many
// tokens, the streaming kernel (mma.sync) below. H200, standalone, the six layer shapes: at 12
// and 16 tokens the wgmma form 1.02-1.21x faster on 27 of 28 points, at 8 the streaming kernel
// 1.02-1.18x on all (docs/lab/w4a16.md v7)
constexpr std::int64_t kWgmmaFromM = 9;

bool use_wgmma(const std::string& mma, int device, std::int64_t m) {
  if (mma == "wgmma") return true;
  return mma == "auto" && m >= kWgmmaFromM && w4a16::MmaGemm::wgmma_support(device).empty();
}

bool use_fused(const W4a16Shape& s, const std::string& path, bool wgmma) {
  return path == "fused" || (path == "auto" && s.m <= (wgmma ? kFusedUpToMWgmma : kFusedUpToM));
}

w4a16::Arguments arguments(const W4a16Operands& o, std::size_t c, bool wgmma) {
  w4a16::Arguments a;
  a.wgmma = wgmma;
  a.m = o.s.m;
  a.n = o.s.n;
  a.k = o.s.k;
  a.group = o.s.group_k();
  a.bf16 = o.s.dtype == DType::bf16;
  a.zero_points = o.s.zero_points;
  a.a = o.a.get();
  a.w = o.w_copy(c);
  a.scales = o.s_copy(c);
  a.zeros = o.z_copy(c);
  a.d = o.d.get();
  return a;
}

class W4a16MmaCase final : public Case {
 public:
  W4a16MmaCase(const W4a16Shape& s, bool fused, bool wgmma, Context& ctx)
      : be_(cuda_backend_of(ctx.backend)),
        stream_(be_.stream()),
        fused_(fused),
        wgmma_(fused && wgmma),
        ops_(s, ctx, stream_, static_cast<std::size_t>(be_.properties().l2CacheSize)) {
    const int device = be_.device();
    if (fused_) {
      for (std::size_t c = 0; c < ops_.copies; ++c)
        plans_.push_back(std::make_unique<w4a16::MmaGemm>(arguments(ops_, c, wgmma_), device));
      if (plans_[0]->workspace_size()) ws_ = ctx.backend.allocate(plans_[0]->workspace_size());
      for (auto& p : plans_) p->initialize(ws_.get(), stream_);  // shared: each launch leaves it zeroed
      variant_ = plans_[0]->describe();
    } else {
      wt_ = ctx.backend.allocate(static_cast<std::size_t>(s.n * s.k) * 2);
      lt_ws_bytes_ = lt_workspace_bytes();
      if (lt_ws_bytes_) lt_ws_ = ctx.backend.allocate(lt_ws_bytes_);
      const GemmShape g{s.m, s.n, s.k, 1, false, true, s.dtype, false, false};
      lt_ = std::make_unique<LtGemm>(g, lt_ws_bytes_ ? lt_ws_.get() : nullptr, lt_ws_bytes_);
      w4a16::dequantize_transposed(arguments(ops_, 0, false), wt_.get(), stream_);
      lt_->tune(ops_.a.get(), wt_.get(), ops_.d.get(), stream_);
      variant_ = "dequantise + cuBLASLt " + lt_->variant();
    }
    if (ops_.copies > 1) variant_ += strprintf(" c%zu", ops_.copies);
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
  }

  void run() override {
    if (fused_) {
      plans_[next_]->run(stream_);
    } else {
      w4a16::dequantize_transposed(arguments(ops_, next_, false), wt_.get(), stream_);
      lt_->run(ops_.a.get(), wt_.get(), ops_.d.get(), stream_);
    }
    next_ = (next_ + 1) % ops_.copies;
  }

  Validation validate() override {
    GENBENCH_CHECK_CUDA(
        cudaMemsetAsync(ops_.d.get(), 0xff, static_cast<std::size_t>(ops_.s.m * ops_.s.n) * 2, stream_));
    next_ = 0;
    run();  // copy 0, the copy check() reads back
    next_ = 0;
    return ops_.check(stream_);
  }

  std::string variant() const override { return variant_; }
  std::vector<std::pair<std::string, std::string>> chosen() const override {
    // w4a16_mma: what the products ran on (the streaming kernel of up to 16 tokens is mma.sync's
    // alone; none on the dequantise path, whose GEMM is cuBLASLt's)
    const bool wide = fused_ && !plans_[0]->streaming();
    return {{"w4a16_path", fused_ ? "fused" : "dequant"},
            {"w4a16_mma", !fused_          ? "none"
                          : wide && wgmma_ ? "wgmma"
                                           : "sync"}};
  }

 private:
  CudaBackend& be_;
  cudaStream_t stream_;
  bool fused_, wgmma_;
  W4a16Operands ops_;
  std::vector<std::unique_ptr<w4a16::MmaGemm>> plans_;
  DeviceBuffer ws_, wt_, lt_ws_;
  std::size_t lt_ws_bytes_ = 0;
  std::unique_ptr<LtGemm> lt_;
  std::size_t next_ = 0;
  std::string variant_;
};

class W4a16Mma final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = W4a16Shape::from(p);
    const auto& prop = cuda_backend_of(ctx.backend).properties();
    if (prop.major < 8)
      return strprintf("mma.sync m16n8k16 with fp16/bf16 needs compute capability 8.0 or newer (this GPU is %d.%d)",
                       prop.major, prop.minor);
    // The shape the kernel's layout and indexing take; the dequantise path uses the same layout.
    alignas(16) static unsigned char dummy[16] = {};
    w4a16::Arguments a;
    a.m = s.m;
    a.n = s.n;
    a.k = s.k;
    a.group = s.group_k();
    a.zero_points = s.zero_points;
    a.a = a.w = a.scales = a.d = dummy;
    a.zeros = reinterpret_cast<const std::uint32_t*>(dummy);
    const std::string why = w4a16::MmaGemm::can_implement(a);
    if (!why.empty()) return "mma_sm80: " + why;
    if (tuning_value(p, w4a16_op(), "w4a16_mma") == "wgmma")
      if (const std::string e = w4a16::MmaGemm::wgmma_support(cuda_backend_of(ctx.backend).device()); !e.empty())
        return "mma_sm80 w4a16_mma=wgmma: " + e;
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    const auto s = W4a16Shape::from(p);
    const bool wgmma = use_wgmma(tuning_value(p, w4a16_op(), "w4a16_mma"), cuda_backend_of(ctx.backend).device(), s.m);
    return std::make_unique<W4a16MmaCase>(s, use_fused(s, tuning_value(p, w4a16_op(), "w4a16_path"), wgmma), wgmma,
                                          ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_w4a16_mma_sm80() { return std::make_unique<W4a16Mma>(); }

}  // namespace genbench
