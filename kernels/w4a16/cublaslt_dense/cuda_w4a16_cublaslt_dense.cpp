// w4a16/cublaslt_dense on the cuda backend: what the model would run without quantisation, at
// the point's m, n, k and dtype: D = A W with W dense (stored n x k, nn.Linear's layout, so
// trans_b = t), cuBLASLt tuned as gemm/cublaslt does (lt_matmul.h), validated by its sampled
// check. cache=cold rotates copies of W (2 x L2 or more) as the W4A16 cases do, so both read
// their weights from memory. Its points stand beside the int4 ones in the same benchmark, and
// the analysis's comparison of implementations gives the speed-up.
#include <algorithm>
#include <cmath>
#include <memory>

#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"
#include "core/strings.h"
#include "kernels/common/device_fill.h"
#include "kernels/gemm/cublaslt/lt_matmul.h"
#include "ops/implementation.h"
#include "ops/w4a16/w4a16.h"

namespace genbench {

namespace {

std::size_t pad(std::size_t b) { return (std::max<std::size_t>(b, 1) + 255) / 256 * 256; }

class DenseCase final : public Case {
 public:
  DenseCase(const W4a16Shape& w, Context& ctx)
      : s_{w.m, w.n, w.k, 1, false, true, w.dtype, false, false}, stream_(cuda_backend_of(ctx.backend).stream()) {
    const std::size_t wb = static_cast<std::size_t>(w.n * w.k) * 2;
    pw_ = pad(wb);
    if (w.cold) {
      const double l2 = static_cast<double>(cuda_backend_of(ctx.backend).properties().l2CacheSize);
      copies_ = static_cast<std::size_t>(std::max(2.0, std::ceil(2.0 * l2 / static_cast<double>(pw_))));
    }
    a_ = ctx.backend.allocate(pad(static_cast<std::size_t>(w.m * w.k) * 2));
    b_ = ctx.backend.allocate(pw_ * copies_);
    d_ = ctx.backend.allocate(pad(static_cast<std::size_t>(w.m * w.n) * 2));
    fill_normal_device(a_.get(), w.m * w.k, ctx.seed + 11, w.dtype, 1.0f, stream_);
    fill_normal_device(b_.get(), w.n * w.k, ctx.seed + 12, w.dtype, 0.05f, stream_);
    for (std::size_t c = 1; c < copies_; ++c)
      GENBENCH_CHECK_CUDA(
          cudaMemcpyAsync(b_.as<unsigned char>() + c * pw_, b_.get(), wb, cudaMemcpyDeviceToDevice, stream_));
    ws_bytes_ = lt_workspace_bytes();
    if (ws_bytes_) ws_ = ctx.backend.allocate(ws_bytes_);
    gemm_ = std::make_unique<LtGemm>(s_, ws_bytes_ ? ws_.get() : nullptr, ws_bytes_);
    gemm_->tune(a_.get(), b_.get(), d_.get(), stream_);
    variant_ = gemm_->variant() + (copies_ > 1 ? strprintf(" c%zu", copies_) : "");
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
  }

  void run() override {
    gemm_->run(a_.get(), b_.as<unsigned char>() + next_ * pw_, d_.get(), stream_);
    next_ = (next_ + 1) % copies_;
  }

  Validation validate() override {
    GENBENCH_CHECK_CUDA(cudaMemsetAsync(d_.get(), 0xff, static_cast<std::size_t>(s_.m * s_.n) * 2, stream_));
    next_ = 0;
    run();
    next_ = 0;
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
    return lt_check_sampled(s_, a_.get(), b_.get(), d_.get(), 1.0);
  }

  std::string variant() const override { return variant_; }

 private:
  GemmShape s_;
  cudaStream_t stream_;
  std::size_t pw_ = 0, copies_ = 1, next_ = 0, ws_bytes_ = 0;
  DeviceBuffer a_, b_, d_, ws_;
  std::unique_ptr<LtGemm> gemm_;
  std::string variant_;
};

class W4a16CublasLtDense final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = W4a16Shape::from(p);
    LtProblem lt;
    lt.build(GemmShape{s.m, s.n, s.k, 1, false, true, s.dtype, false, false}, lt_workspace_bytes(), nullptr, nullptr);
    std::string why;
    if (lt.candidates(1, &why).empty())
      return strprintf("cuBLASLt has no %s algorithm for m=%lld n=%lld k=%lld%s", dtype_name(s.dtype),
                       static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
                       why.empty() ? "" : (" [" + why + "]").c_str());
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<DenseCase>(W4a16Shape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_w4a16_cublaslt_dense() { return std::make_unique<W4a16CublasLtDense>(); }

}  // namespace genbench
