// grouped_gemm/cublaslt_loop on the cuda backend: for every non-empty group one cuBLASLt
// matmul of its own shape (D_g = X_g W_g^T: gemm's row-major semantics with trans_b = t),
// planned at prepare with the heuristic's first algorithm (no timing per group: what a loop
// written by hand gets), all on one stream, one after the other.
#include <memory>
#include <vector>

#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"
#include "core/strings.h"
#include "kernels/gemm/cublaslt/lt_matmul.h"
#include "kernels/grouped_gemm/common/cuda_grouped_operands.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

class GroupedLtLoopCase final : public Case {
 public:
  GroupedLtLoopCase(const GroupedShape& s, Context& ctx)
      : stream_(cuda_backend_of(ctx.backend).stream()), ops_(s, ctx, stream_) {
    ws_bytes_ = lt_workspace_bytes();
    if (ws_bytes_) ws_ = ctx.backend.allocate(ws_bytes_);
    for (std::int64_t g = 0; g < s.groups; ++g) {
      const std::int64_t mg = ops_.sizes[static_cast<std::size_t>(g)];
      if (mg == 0) continue;
      const GemmShape shape{mg, s.n, s.k, 1, false, true, s.dtype, false, false};
      gemms_.push_back(std::make_unique<LtGemm>(shape, ws_bytes_ ? ws_.get() : nullptr, ws_bytes_));
      gemms_.back()->tune(ops_.x_of(g), ops_.w_of(g), ops_.d_of(g), stream_, 1);
      groups_.push_back(g);
    }
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
  }

  void run() override {
    for (std::size_t i = 0; i < gemms_.size(); ++i)
      gemms_[i]->run(ops_.x_of(groups_[i]), ops_.w_of(groups_[i]), ops_.d_of(groups_[i]), stream_);
  }

  Validation validate() override {
    ops_.poison(stream_);
    run();
    return ops_.check(stream_);
  }

  std::string variant() const override { return strprintf("%zu matmuls", gemms_.size()); }

 private:
  cudaStream_t stream_;
  GroupedOperands ops_;
  std::size_t ws_bytes_ = 0;
  DeviceBuffer ws_;
  std::vector<std::unique_ptr<LtGemm>> gemms_;
  std::vector<std::int64_t> groups_;
};

class GroupedLtLoop final : public Implementation {
 public:
  std::string can_implement(const Point&, const Context&) const override { return ""; }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<GroupedLtLoopCase>(GroupedShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_grouped_gemm_cublaslt_loop() { return std::make_unique<GroupedLtLoop>(); }

}  // namespace genbench
