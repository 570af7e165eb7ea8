// grouped_gemm/cublas_grouped on the cuda backend: one cublasGemmGroupedBatchedEx call per
// iteration, each non-empty group its own group of one problem (sizes differ per group), in
// cuBLAS's column-major terms D_g^T (n x M_g) = W_g (op T, k x n stored) . X_g^T, fp32
// accumulation. The pointer arrays live on the device, the size arrays on the host (cuBLAS's
// contract). Groups with no rows are left out (they cost nothing and cuBLAS need not see m=0).
#include <cublas_v2.h>

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

class GroupedCublasCase final : public Case {
 public:
  GroupedCublasCase(const GroupedShape& s, Context& ctx)
      : stream_(cuda_backend_of(ctx.backend).stream()), ops_(s, ctx, stream_) {
    GENBENCH_CHECK_CUBLAS(cublasCreate(&handle_));
    GENBENCH_CHECK_CUBLAS(cublasSetStream(handle_, stream_));
    ws_bytes_ = lt_workspace_bytes();
    if (ws_bytes_) {
      ws_ = ctx.backend.allocate(ws_bytes_);
      GENBENCH_CHECK_CUBLAS(cublasSetWorkspace(handle_, ws_.get(), ws_bytes_));
    }
    std::vector<const void*> pa, pb;
    std::vector<void*> pc;
    for (std::int64_t g = 0; g < s.groups; ++g) {
      const std::int64_t mg = ops_.sizes[static_cast<std::size_t>(g)];
      if (mg == 0) continue;
      pa.push_back(ops_.w_of(g));
      pb.push_back(ops_.x_of(g));
      pc.push_back(ops_.d_of(g));
      m_.push_back(static_cast<int>(s.n));
      n_.push_back(static_cast<int>(mg));
      k_.push_back(static_cast<int>(s.k));
    }
    const std::size_t count = pa.size();
    ta_.assign(count, CUBLAS_OP_T);
    tb_.assign(count, CUBLAS_OP_N);
    lda_.assign(count, static_cast<int>(s.k));
    ldb_.assign(count, static_cast<int>(s.k));
    ldc_.assign(count, static_cast<int>(s.n));
    alpha_.assign(count, 1.0f);
    beta_.assign(count, 0.0f);
    group_size_.assign(count, 1);
    ptrs_ = ctx.backend.allocate(3 * count * sizeof(void*) + 16);
    auto** dp = ptrs_.as<void*>();
    GENBENCH_CHECK_CUDA(cudaMemcpyAsync(dp, pa.data(), count * sizeof(void*), cudaMemcpyHostToDevice, stream_));
    GENBENCH_CHECK_CUDA(cudaMemcpyAsync(dp + count, pb.data(), count * sizeof(void*), cudaMemcpyHostToDevice, stream_));
    GENBENCH_CHECK_CUDA(
        cudaMemcpyAsync(dp + 2 * count, pc.data(), count * sizeof(void*), cudaMemcpyHostToDevice, stream_));
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
    count_ = static_cast<int>(count);
    type_ = s.dtype == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  }
  ~GroupedCublasCase() override {
    if (handle_) cublasDestroy(handle_);
  }

  void run() override {
    auto** dp = ptrs_.as<void*>();
    const auto n = static_cast<std::size_t>(count_);
    GENBENCH_CHECK_CUBLAS(cublasGemmGroupedBatchedEx(
        handle_, ta_.data(), tb_.data(), m_.data(), n_.data(), k_.data(), alpha_.data(),
        const_cast<const void* const*>(dp), type_, lda_.data(), const_cast<const void* const*>(dp + n), type_,
        ldb_.data(), beta_.data(), dp + 2 * n, type_, ldc_.data(), count_, group_size_.data(), CUBLAS_COMPUTE_32F));
  }

  Validation validate() override {
    ops_.poison(stream_);
    run();
    return ops_.check(stream_);
  }

  std::string variant() const override { return strprintf("%d problems", count_); }

 private:
  cudaStream_t stream_;
  GroupedOperands ops_;
  cublasHandle_t handle_ = nullptr;
  std::size_t ws_bytes_ = 0;
  DeviceBuffer ws_, ptrs_;
  std::vector<cublasOperation_t> ta_, tb_;
  std::vector<int> m_, n_, k_, lda_, ldb_, ldc_, group_size_;
  std::vector<float> alpha_, beta_;
  int count_ = 0;
  cudaDataType_t type_ = CUDA_R_16BF;
};

class GroupedCublas final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = GroupedShape::from(p);
    if (s.n > INT32_MAX || s.k > INT32_MAX) return "cuBLAS's grouped GEMM takes 32-bit sizes";
    int version = 0;
    cublasGetProperty(MAJOR_VERSION, &version);
    int minor = 0;
    cublasGetProperty(MINOR_VERSION, &minor);
    if (version * 100 + minor < 1205)
      return strprintf("cublasGemmGroupedBatchedEx needs cuBLAS 12.5 or newer (this is %d.%d)", version, minor);
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<GroupedCublasCase>(GroupedShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_grouped_gemm_cublas() { return std::make_unique<GroupedCublas>(); }

}  // namespace genbench
