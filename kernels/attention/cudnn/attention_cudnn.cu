// attention/cudnn on the cuda backend: cuDNN 9's fused flash attention (SDPA forward),
// built through the backend (graph) API in C. The operation graph is the pattern cuDNN's
// fused attention engines recognise:
//   S = Q K^T (fp32)  ->  S * scale  ->  [causal: keep col <= row + sk - sq, else -inf]
//   -> M = rowmax  ->  E = exp(S - M)  ->  L = rowsum(E)  ->  LSE = M + log(L) (output)
//   -> P = E / L (input precision)  ->  O = P V
// Q/O are [b, h, sq, d] views of the [b, sq, h, d] buffers (strides carry the layout), K is
// viewed transposed as [b, h_kv, d, sk]; LSE is [b, h, sq, 1]. The engine is the first of
// cuDNN's heuristic list (mode A) that builds into an execution plan.
#include <cudnn.h>

#include <cstring>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/strings.h"
#include "kernels/attention/common/attention_case.h"
#include "kernels/common/cudnn_graph.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

using cudnn::Desc;
using cudnn::io_type;

// Builds and owns the operation graph, the plan and the by-value scalars.
class SdpaGraph : private cudnn::GraphBuilder {
 public:
  // Unique ids of the tensors bound at execution.
  enum : std::int64_t { kQ = 1, kK, kV, kO, kStats, kScale, kNegInf, kSeqQ, kSeqK, kVirtual = 100 };

  SdpaGraph(cudnnHandle_t handle, const AttentionShape& s) : GraphBuilder(kVirtual), s_(s) {
    const std::int64_t b = s.batch, h = s.heads, hk = s.heads_kv, sq = s.seqlen_q, sk = s.seqlen_k, d = s.head_dim,
                       dv = s.dv();
    const cudnnDataType_t io = io_type(s.dtype), f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32,
                          bl = CUDNN_DATA_BOOLEAN;
    // Inputs and outputs in memory.
    const auto& q = tensor(kQ, io, {b, h, sq, d}, {sq * h * d, d, h * d, 1});
    const auto& kt = tensor(kK, io, {b, hk, d, sk}, {sk * hk * d, d, 1, hk * d});
    const auto& v = tensor(kV, io, {b, hk, sk, dv}, {sk * hk * dv, dv, hk * dv, 1});
    const auto& o = tensor(kO, io, {b, h, sq, dv}, {sq * h * dv, dv, h * dv, 1});
    const auto& stats = tensor(kStats, f32, {b, h, sq, 1}, {h * sq, sq, 1, 1});
    // Scalars passed by value.
    const auto& scale = tensor(kScale, f32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
    const std::vector<std::int64_t> full = {b, h, sq, sk}, full_st = {h * sq * sk, sq * sk, sk, 1};
    const std::vector<std::int64_t> row = {b, h, sq, 1}, row_st = {h * sq, sq, 1, 1};

    const auto& s1 = virt(f32, full, full_st);
    matmul(q, kt, s1);
    const auto& s2 = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_MUL, f32, s1, &scale, nullptr, s2);
    const Desc* masked = &s2;
    if (s.causal) {
      const auto& neg_inf = tensor(kNegInf, f32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
      const auto& seq_q = tensor(kSeqQ, i32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
      const auto& seq_k = tensor(kSeqK, i32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
      const auto& row_idx = virt(i32, full, full_st);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, s2, nullptr, nullptr, row_idx, 2);
      const auto& col_idx = virt(i32, full, full_st);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, s2, nullptr, nullptr, col_idx, 3);
      const auto& row_plus = virt(i32, full, full_st);
      pointwise(CUDNN_POINTWISE_ADD, i32, row_idx, &seq_k, nullptr, row_plus, 3);
      const auto& row_shift = virt(i32, full, full_st);
      pointwise(CUDNN_POINTWISE_SUB, i32, row_plus, &seq_q, nullptr, row_shift, 3);
      const auto& keep = virt(bl, full, full_st);
      pointwise(CUDNN_POINTWISE_CMP_GE, bl, row_shift, &col_idx, nullptr, keep);
      const auto& s3 = virt(f32, full, full_st);
      pointwise(CUDNN_POINTWISE_BINARY_SELECT, f32, s2, &neg_inf, &keep, s3);
      masked = &s3;
    }
    const auto& p = softmax(*masked, stats, io, full, full_st, row, row_st);
    matmul(p, v, o);

    // Operation graph, heuristics, plan.
    const cudnn::PlanSearch found = find_plan(handle);
    if (found.configs == 0) throw Unsupported("cuDNN: no engine supports this attention graph");
    const std::int64_t n = found.configs;
    if (!found.plan) {
      const std::string last_error =
          found.failed ? std::string(cudnnGetErrorString(found.last_status)) + " " + found.last_detail.substr(0, 511)
                       : std::string();
      throw Error("cuDNN: none of " + std::to_string(n) + " engine configurations built a plan: " + last_error);
    }
    plan_ = found.plan;
    const std::int64_t i = found.chosen;
    if (found.engine_known)
      engine_ = strprintf("cudnn engine %lld (heur %lld/%lld)", static_cast<long long>(found.engine_index),
                          static_cast<long long>(i), static_cast<long long>(n));
    else engine_ = strprintf("cudnn (heur %lld/%lld)", static_cast<long long>(i), static_cast<long long>(n));
    workspace_bytes_ = found.workspace_bytes;
    scale_value_ = s.scale;
    neg_inf_ = -std::numeric_limits<float>::infinity();
    seq_q_value_ = static_cast<std::int32_t>(sq);
    seq_k_value_ = static_cast<std::int32_t>(sk);
  }
  ~SdpaGraph() {
    if (plan_) cudnnBackendDestroyDescriptor(plan_);
  }
  SdpaGraph(const SdpaGraph&) = delete;
  SdpaGraph& operator=(const SdpaGraph&) = delete;

  std::int64_t workspace_bytes() const { return workspace_bytes_; }
  const std::string& engine() const { return engine_; }

  void execute(cudnnHandle_t handle, void* q, void* k, void* v, void* o, void* lse, void* workspace) {
    std::vector<std::int64_t> ids = {kQ, kK, kV, kO, kStats, kScale};
    std::vector<void*> ptrs = {q, k, v, o, lse, &scale_value_};
    if (s_.causal) {
      ids.insert(ids.end(), {kNegInf, kSeqQ, kSeqK});
      ptrs.insert(ptrs.end(), {&neg_inf_, &seq_q_value_, &seq_k_value_});
    }
    Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set_array(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, ids)
        .set_array(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, ptrs)
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, workspace)
        .finalize();
    GENBENCH_CHECK_CUDNN(cudnnBackendExecute(handle, plan_, pack.get()));
  }

 private:
  AttentionShape s_;
  cudnnBackendDescriptor_t plan_ = nullptr;
  std::int64_t workspace_bytes_ = 0;
  std::string engine_;
  float scale_value_ = 1.f, neg_inf_ = 0.f;
  std::int32_t seq_q_value_ = 0, seq_k_value_ = 0;
};

class CudnnCase final : public attention::DeviceAttentionCase {
 public:
  CudnnCase(const AttentionShape& s, Context& ctx) : DeviceAttentionCase(s, ctx) {
    GENBENCH_CHECK_CUDNN(cudnnCreate(&handle_));
    try {
      GENBENCH_CHECK_CUDNN(cudnnSetStream(handle_, stream()));
      graph_ = std::make_unique<SdpaGraph>(handle_, s);
      if (graph_->workspace_bytes() > 0)
        workspace_ = ctx.backend.allocate(static_cast<std::size_t>(graph_->workspace_bytes()));
    } catch (...) {
      graph_.reset();
      cudnnDestroy(handle_);
      throw;
    }
  }
  ~CudnnCase() override {
    graph_.reset();
    if (handle_) cudnnDestroy(handle_);
  }

 protected:
  void launch(cudaStream_t) override {
    graph_->execute(handle_, q_.get(), k_.get(), v_.get(), o_.get(), lse_.get(), workspace_.get());
  }
  std::string config_name() const override { return graph_->engine(); }

 private:
  cudnnHandle_t handle_ = nullptr;
  std::unique_ptr<SdpaGraph> graph_;
  DeviceBuffer workspace_;
};

class AttentionCudnn final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = AttentionShape::from(p);
    if (auto why = dtype_not_in(s.dtype, {DType::fp16, DType::bf16}); !why.empty()) return why;
    if (s.varlen) return "varlen is not supported here (needs ragged offsets and a padding mask)";
    if (s.causal && s.seqlen_q > s.seqlen_k) return "cuDNN's bottom-right causal mask needs seqlen_q <= seqlen_k";
    const auto& prop = cuda_backend_of(ctx.backend).properties();
    if (prop.major < 8) return "cuDNN fused attention needs sm80 or later";
    if (cudnnGetVersion() < 90000) return "needs cuDNN 9";
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<CudnnCase>(AttentionShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_attention_cudnn() { return std::make_unique<AttentionCudnn>(); }

}  // namespace genbench
