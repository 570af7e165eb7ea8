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
#include <deque>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/strings.h"
#include "kernels/attention/common/attention_case.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

void check_cudnn(cudnnStatus_t st, const char* call, const char* file, int line) {
  if (st == CUDNN_STATUS_SUCCESS) return;
  char msg[1024] = {0};
  cudnnGetLastErrorString(msg, sizeof(msg));
  throw_call_error(call, std::string(cudnnGetErrorString(st)) + (msg[0] ? std::string(": ") + msg : ""), file, line);
}
#define GENBENCH_CHECK_CUDNN(call) check_cudnn((call), #call, __FILE__, __LINE__)

// One backend descriptor, destroyed with its owner.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t t) { GENBENCH_CHECK_CUDNN(cudnnBackendCreateDescriptor(t, &d_)); }
  Desc(Desc&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  Desc& operator=(Desc&&) = delete;
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  template <typename V>
  Desc& set(cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, const V& v) {
    GENBENCH_CHECK_CUDNN(cudnnBackendSetAttribute(d_, a, t, 1, &v));
    return *this;
  }
  template <typename V>
  Desc& set_array(cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, const std::vector<V>& v) {
    GENBENCH_CHECK_CUDNN(cudnnBackendSetAttribute(d_, a, t, static_cast<std::int64_t>(v.size()), v.data()));
    return *this;
  }
  Desc& finalize() {
    GENBENCH_CHECK_CUDNN(cudnnBackendFinalize(d_));
    return *this;
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

cudnnDataType_t io_type(DType t) { return t == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF; }

// Builds and owns the operation graph, the plan and the by-value scalars.
class SdpaGraph {
 public:
  // Unique ids of the tensors bound at execution.
  enum : std::int64_t { kQ = 1, kK, kV, kO, kStats, kScale, kNegInf, kSeqQ, kSeqK, kVirtual = 100 };

  SdpaGraph(cudnnHandle_t handle, const AttentionShape& s) : s_(s) {
    const std::int64_t b = s.batch, h = s.heads, hk = s.heads_kv, sq = s.seqlen_q, sk = s.seqlen_k, d = s.head_dim;
    const cudnnDataType_t io = io_type(s.dtype), f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32,
                          bl = CUDNN_DATA_BOOLEAN;
    // Inputs and outputs in memory.
    const auto& q = tensor(kQ, io, {b, h, sq, d}, {sq * h * d, d, h * d, 1});
    const auto& kt = tensor(kK, io, {b, hk, d, sk}, {sk * hk * d, d, 1, hk * d});
    const auto& v = tensor(kV, io, {b, hk, sk, d}, {sk * hk * d, d, hk * d, 1});
    const auto& o = tensor(kO, io, {b, h, sq, d}, {sq * h * d, d, h * d, 1});
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
    const auto& mx = virt(f32, row, row_st);
    reduction(CUDNN_REDUCE_TENSOR_MAX, *masked, mx);
    const auto& sub = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_SUB, f32, *masked, &mx, nullptr, sub);
    const auto& ex = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_EXP, f32, sub, nullptr, nullptr, ex);
    const auto& sum = virt(f32, row, row_st);
    reduction(CUDNN_REDUCE_TENSOR_ADD, ex, sum);
    const auto& lg = virt(f32, row, row_st);
    pointwise(CUDNN_POINTWISE_LOG, f32, sum, nullptr, nullptr, lg);
    pointwise(CUDNN_POINTWISE_ADD, f32, mx, &lg, nullptr, stats);
    const auto& p = virt(io, full, full_st);
    pointwise(CUDNN_POINTWISE_DIV, f32, ex, &sum, nullptr, p);
    matmul(p, v, o);

    // Operation graph, heuristics, plan.
    std::vector<cudnnBackendDescriptor_t> ops;
    for (const auto& op : ops_) ops.push_back(op.get());
    Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    graph.set_array(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops)
        .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle)
        .finalize();
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    const cudnnBackendDescriptor_t g = graph.get();
    heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, g)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode)
        .finalize();
    std::int64_t n = 0;
    GENBENCH_CHECK_CUDNN(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, nullptr));
    if (n == 0) throw Error("cuDNN: no engine supports this attention graph");
    std::vector<Desc> cfgs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (std::int64_t i = 0; i < n; ++i) {
      cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      raw.push_back(cfgs.back().get());
    }
    GENBENCH_CHECK_CUDNN(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &n, raw.data()));
    std::string last_error;
    for (std::int64_t i = 0; i < n && !plan_; ++i) {
      cudnnBackendDescriptor_t p_desc = nullptr;
      if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &p_desc) != CUDNN_STATUS_SUCCESS)
        continue;
      cudnnStatus_t st =
          cudnnBackendSetAttribute(p_desc, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendSetAttribute(p_desc, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                      &raw[static_cast<std::size_t>(i)]);
      if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(p_desc);
      if (st != CUDNN_STATUS_SUCCESS) {
        char msg[512] = {0};
        cudnnGetLastErrorString(msg, sizeof(msg));
        last_error = std::string(cudnnGetErrorString(st)) + " " + msg;
        cudnnBackendDestroyDescriptor(p_desc);
        continue;
      }
      plan_ = p_desc;
      // The engine's global index names the variant.
      Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      cudnnBackendDescriptor_t e = engine.get();
      std::int64_t cnt = 0, index = -1;
      if (cudnnBackendGetAttribute(raw[static_cast<std::size_t>(i)], CUDNN_ATTR_ENGINECFG_ENGINE,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cnt, &e) == CUDNN_STATUS_SUCCESS &&
          cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &cnt, &index) ==
              CUDNN_STATUS_SUCCESS)
        engine_ = strprintf("cudnn engine %lld (heur %lld/%lld)", static_cast<long long>(index),
                            static_cast<long long>(i), static_cast<long long>(n));
      else engine_ = strprintf("cudnn (heur %lld/%lld)", static_cast<long long>(i), static_cast<long long>(n));
    }
    if (!plan_)
      throw Error("cuDNN: none of " + std::to_string(n) + " engine configurations built a plan: " + last_error);
    GENBENCH_CHECK_CUDNN(cudnnBackendGetAttribute(plan_, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                                  &n, &workspace_bytes_));
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
  const Desc& tensor(std::int64_t uid, cudnnDataType_t t, const std::vector<std::int64_t>& dims,
                     const std::vector<std::int64_t>& strides, bool is_virtual = false, bool by_value = false) {
    tensors_.emplace_back(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    Desc& d = tensors_.back();
    const std::int64_t align = 16;
    d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, t)
        .set_array(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims)
        .set_array(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides)
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, align);
    if (is_virtual) d.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, true);
    if (by_value) d.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, true);
    d.finalize();
    return d;
  }
  const Desc& virt(cudnnDataType_t t, const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& strides) {
    return tensor(next_virtual_++, t, dims, strides, true);
  }
  void matmul(const Desc& a, const Desc& b, const Desc& c) {
    keep_.emplace_back(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    keep_.back().set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, f32).finalize();
    const cudnnBackendDescriptor_t ad = a.get(), bd = b.get(), cd = c.get(), md = keep_.back().get();
    ops_.emplace_back(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    ops_.back()
        .set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, ad)
        .set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, bd)
        .set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, cd)
        .set(CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, md)
        .finalize();
  }
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t prec, const Desc& x, const Desc* b, const Desc* t,
                 const Desc& y, std::int64_t axis = -1) {
    keep_.emplace_back(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    keep_.back()
        .set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
        .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, prec);
    if (axis >= 0) keep_.back().set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, axis);
    keep_.back().finalize();
    const cudnnBackendDescriptor_t pw = keep_.back().get(), xd = x.get(), yd = y.get();
    ops_.emplace_back(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    Desc& op = ops_.back();
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, pw)
        .set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, xd);
    if (b) {
      const cudnnBackendDescriptor_t bd = b->get();
      op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, bd);
    }
    if (t) {
      const cudnnBackendDescriptor_t td = t->get();
      op.set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, td);
    }
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, yd).finalize();
  }
  void reduction(cudnnReduceTensorOp_t mode, const Desc& x, const Desc& y) {
    keep_.emplace_back(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    keep_.back()
        .set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, mode)
        .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, f32)
        .finalize();
    const cudnnBackendDescriptor_t rd = keep_.back().get(), xd = x.get(), yd = y.get();
    ops_.emplace_back(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    ops_.back()
        .set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, rd)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, xd)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, yd)
        .finalize();
  }

  AttentionShape s_;
  // Descriptors are referenced while the graph is built: std::deque keeps them in place.
  std::deque<Desc> tensors_, keep_, ops_;
  std::int64_t next_virtual_ = kVirtual;
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
