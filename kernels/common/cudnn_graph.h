#pragma once
// Building cuDNN operation graphs through the backend API in C: errors, one owned backend
// descriptor, and a builder of tensors and operations (matmul, pointwise, reduction, reshape)
// that searches cuDNN's heuristic list (mode A) for the first engine configuration that builds
// an execution plan (find_plan; search_plan adds a record of every configuration tried, the
// choice of deterministic engines only, or one named engine with knobs). Host code; builds
// with cuDNN only.
#include <cudnn.h>

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "ops/dtype.h"

namespace genbench::cudnn {

// cuDNN's name for a status, then its last error message where it has one.
inline std::string message(cudnnStatus_t st) {
  char msg[1024] = {0};
  cudnnGetLastErrorString(msg, sizeof(msg));
  return std::string(cudnnGetErrorString(st)) + (msg[0] ? std::string(": ") + msg : "");
}

inline void check(cudnnStatus_t st, const char* call, const char* file, int line) {
  if (st == CUDNN_STATUS_SUCCESS) return;
  throw_call_error(call, message(st), file, line);
}

}  // namespace genbench::cudnn

#define GENBENCH_CHECK_CUDNN(call) ::genbench::cudnn::check((call), #call, __FILE__, __LINE__)

namespace genbench::cudnn {

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

inline cudnnDataType_t io_type(DType t) { return t == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF; }

// What the search of the heuristic list found.
struct PlanSearch {
  cudnnBackendDescriptor_t plan = nullptr;  // the execution plan (the caller's to destroy), or null
  std::int64_t configs = 0;                 // engine configurations the heuristics listed
  std::int64_t chosen = -1;                 // the one that built the plan
  bool engine_known = false;                // whether its engine's global index was read
  std::int64_t engine_index = -1;           // that index
  std::int64_t workspace_bytes = 0;         // the plan's workspace
  // The last configuration that failed to build: its status and cuDNN's last error message.
  bool failed = false;
  cudnnStatus_t last_status = CUDNN_STATUS_SUCCESS;
  std::string last_detail;
  // Filled by search_plan only: one line per configuration considered ("#i engine E: status"),
  // the configurations skipped as nondeterministic, and cuDNN's last error when the heuristics
  // listed none.
  std::vector<std::string> tried;
  std::int64_t skipped_nondeterministic = 0;
  std::string heuristics_detail;

  // "#0 engine 8: CUDNN_STATUS_NOT_SUPPORTED (...); #1 ..." over the first `max_lines` of `tried`.
  std::string tried_text(std::size_t max_lines = 8) const {
    std::string t;
    for (std::size_t i = 0; i < tried.size() && i < max_lines; ++i) t += (i ? "; " : "") + tried[i];
    if (tried.size() > max_lines) t += "; ... " + std::to_string(tried.size() - max_lines) + " more";
    return t;
  }
};

// What search_plan may choose: the heuristics' list (mode A), optionally without the engines
// that carry CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC, or exactly one engine (global index) with
// the given knob choices, as cudnn-frontend does where it overrides the heuristics.
struct PlanOptions {
  bool skip_nondeterministic = false;
  std::int64_t engine = -1;  // >= 0: this engine only, no heuristics
  std::vector<std::pair<cudnnBackendKnobType_t, std::int64_t>> knobs;
};

// Tensors and operations of one graph, kept in place while the graph is built.
class GraphBuilder {
 protected:
  explicit GraphBuilder(std::int64_t first_virtual_uid) : next_virtual_(first_virtual_uid) {}

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
  // C = A B in fp32; the GEMM's M, N or K limited per batch by the given int32 [b, 1, 1, 1]
  // tensors where given; pad_zero: the rows and columns past those limits read as 0.
  void matmul(const Desc& a, const Desc& b, const Desc& c, const Desc* m_override = nullptr,
              const Desc* n_override = nullptr, const Desc* k_override = nullptr, bool pad_zero = false) {
    keep_.emplace_back(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    keep_.back().set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, f32);
    if (pad_zero) {
      const double zero = 0.0;
      keep_.back().set(CUDNN_ATTR_MATMUL_PADDING_VALUE, CUDNN_TYPE_DOUBLE, zero);
    }
    keep_.back().finalize();
    const cudnnBackendDescriptor_t ad = a.get(), bd = b.get(), cd = c.get(), md = keep_.back().get();
    ops_.emplace_back(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    Desc& op = ops_.back();
    op.set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, ad)
        .set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, bd)
        .set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, cd)
        .set(CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, md);
    const std::pair<cudnnBackendAttributeName_t, const Desc*> overrides[] = {
        {CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, m_override},
        {CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, n_override},
        {CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, k_override}};
    for (const auto& [attr, t] : overrides)
      if (t) {
        const cudnnBackendDescriptor_t td = t->get();
        op.set(attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, td);
      }
    op.finalize();
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

  // Softmax along the last axis of the scores `s` (full: [b, h, sq, sk], row: [b, h, sq, 1],
  // with their strides), in fp32: M = rowmax, E = exp(s - M), L = rowsum(E), `stats` = M +
  // log(L); returns P = E / L, in `p_type`.
  const Desc& softmax(const Desc& s, const Desc& stats, cudnnDataType_t p_type, const std::vector<std::int64_t>& full,
                      const std::vector<std::int64_t>& full_st, const std::vector<std::int64_t>& row,
                      const std::vector<std::int64_t>& row_st) {
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    const auto& mx = virt(f32, row, row_st);
    reduction(CUDNN_REDUCE_TENSOR_MAX, s, mx);
    const auto& sub = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_SUB, f32, s, &mx, nullptr, sub);
    const auto& ex = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_EXP, f32, sub, nullptr, nullptr, ex);
    const auto& sum = virt(f32, row, row_st);
    reduction(CUDNN_REDUCE_TENSOR_ADD, ex, sum);
    const auto& lg = virt(f32, row, row_st);
    pointwise(CUDNN_POINTWISE_LOG, f32, sum, nullptr, nullptr, lg);
    pointwise(CUDNN_POINTWISE_ADD, f32, mx, &lg, nullptr, stats);
    const auto& p = virt(p_type, full, full_st);
    pointwise(CUDNN_POINTWISE_DIV, f32, ex, &sum, nullptr, p);
    return p;
  }

  // The operation graph of every operation added, heuristics (mode A), and the first engine
  // configuration that builds a plan. Returns with configs 0 when the heuristics list none,
  // with plan null when none of them built one.
  PlanSearch find_plan(cudnnHandle_t handle) {
    PlanSearch r;
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
    if (n == 0) return r;
    std::vector<Desc> cfgs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (std::int64_t i = 0; i < n; ++i) {
      cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      raw.push_back(cfgs.back().get());
    }
    GENBENCH_CHECK_CUDNN(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &n, raw.data()));
    r.configs = n;
    for (std::int64_t i = 0; i < n && !r.plan; ++i) {
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
        char msg[1024] = {0};
        cudnnGetLastErrorString(msg, sizeof(msg));
        r.failed = true;
        r.last_status = st;
        r.last_detail = msg;
        cudnnBackendDestroyDescriptor(p_desc);
        continue;
      }
      r.plan = p_desc;
      r.chosen = i;
      // The engine's global index names the variant.
      Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      cudnnBackendDescriptor_t e = engine.get();
      std::int64_t cnt = 0, index = -1;
      if (cudnnBackendGetAttribute(raw[static_cast<std::size_t>(i)], CUDNN_ATTR_ENGINECFG_ENGINE,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cnt, &e) == CUDNN_STATUS_SUCCESS &&
          cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &cnt, &index) ==
              CUDNN_STATUS_SUCCESS) {
        r.engine_known = true;
        r.engine_index = index;
      }
    }
    if (r.plan) {
      GENBENCH_CHECK_CUDNN(cudnnBackendGetAttribute(r.plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                                    1, &n, &r.workspace_bytes));
    }
    return r;
  }

  // Y = X viewed with Y's dimensions and strides (a transpose where the strides swap).
  void reshape(const Desc& x, const Desc& y) {
    const cudnnBackendDescriptor_t xd = x.get(), yd = y.get();
    ops_.emplace_back(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    ops_.back()
        .set(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, xd)
        .set(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, yd)
        .finalize();
  }

  // As find_plan, with the choices of `opt` and a record of every configuration considered
  // (PlanSearch::tried). A configuration that fails is recorded and the next one tried; with
  // opt.engine set, configs is 1 and plan null when that engine or its knobs do not build.
  PlanSearch search_plan(cudnnHandle_t handle, const PlanOptions& opt) {
    PlanSearch r;
    std::vector<cudnnBackendDescriptor_t> ops;
    for (const auto& op : ops_) ops.push_back(op.get());
    Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    graph.set_array(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops)
        .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle)
        .finalize();
    const cudnnBackendDescriptor_t g = graph.get();
    auto last_error = []() {
      char msg[1024] = {0};
      cudnnGetLastErrorString(msg, sizeof(msg));
      return std::string(msg);
    };
    auto fail = [&](const std::string& what, cudnnStatus_t st) {
      r.failed = true;
      r.last_status = st;
      r.last_detail = last_error();
      r.tried.push_back(what + ": " + cudnnGetErrorString(st) +
                        (r.last_detail.empty() ? "" : " (" + r.last_detail.substr(0, 200) + ")"));
    };
    std::deque<Desc> keep;  // engine, knob choices and engine configurations, alive until the plan is built
    std::vector<cudnnBackendDescriptor_t> raw;
    if (opt.engine >= 0) {
      r.configs = 1;
      const std::string what = "engine " + std::to_string(opt.engine);
      keep.emplace_back(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      const cudnnBackendDescriptor_t e = keep.back().get();
      cudnnStatus_t st =
          cudnnBackendSetAttribute(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
      if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendSetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &opt.engine);
      if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(e);
      if (st != CUDNN_STATUS_SUCCESS) {
        fail(what, st);
        return r;
      }
      std::vector<cudnnBackendDescriptor_t> choices;
      for (const auto& [type, value] : opt.knobs) {
        keep.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
        const cudnnBackendDescriptor_t k = keep.back().get();
        st = cudnnBackendSetAttribute(k, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type);
        if (st == CUDNN_STATUS_SUCCESS)
          st = cudnnBackendSetAttribute(k, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value);
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(k);
        if (st != CUDNN_STATUS_SUCCESS) {
          fail(what + " knob " + std::to_string(static_cast<int>(type)) + "=" + std::to_string(value), st);
          return r;
        }
        choices.push_back(k);
      }
      keep.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      const cudnnBackendDescriptor_t c = keep.back().get();
      st = cudnnBackendSetAttribute(c, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e);
      if (st == CUDNN_STATUS_SUCCESS && !choices.empty())
        st = cudnnBackendSetAttribute(c, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                      static_cast<std::int64_t>(choices.size()), choices.data());
      if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(c);
      if (st != CUDNN_STATUS_SUCCESS) {
        fail(what + " config", st);
        return r;
      }
      raw.push_back(c);
    } else {
      Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
      const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
      heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, g)
          .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode)
          .finalize();
      std::int64_t n = 0;
      GENBENCH_CHECK_CUDNN(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, nullptr));
      if (n == 0) {
        r.heuristics_detail = last_error();
        return r;
      }
      for (std::int64_t i = 0; i < n; ++i) {
        keep.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        raw.push_back(keep.back().get());
      }
      GENBENCH_CHECK_CUDNN(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &n, raw.data()));
      raw.resize(static_cast<std::size_t>(n));
      r.configs = n;
    }
    for (std::size_t i = 0; i < raw.size() && !r.plan; ++i) {
      // The configuration's engine: its global index and numerical notes.
      bool known = false, nondeterministic = false;
      std::int64_t index = -1;
      {
        Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
        cudnnBackendDescriptor_t e = engine.get();
        std::int64_t cnt = 0;
        if (cudnnBackendGetAttribute(raw[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cnt, &e) ==
            CUDNN_STATUS_SUCCESS) {
          known = cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &cnt, &index) ==
                  CUDNN_STATUS_SUCCESS;
          cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
          std::int64_t n_notes = 0;
          if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                       CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n_notes, notes) == CUDNN_STATUS_SUCCESS)
            for (std::int64_t j = 0; j < n_notes && j < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; ++j)
              if (notes[j] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC) nondeterministic = true;
        }
      }
      const std::string what =
          "#" + std::to_string(i) + " engine " + (known ? std::to_string(index) : std::string("?"));
      if (opt.skip_nondeterministic && nondeterministic) {
        ++r.skipped_nondeterministic;
        r.tried.push_back(what + ": skipped (nondeterministic note)");
        continue;
      }
      cudnnBackendDescriptor_t p_desc = nullptr;
      cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &p_desc);
      if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendSetAttribute(p_desc, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendSetAttribute(p_desc, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                      &raw[i]);
      if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(p_desc);
      if (st != CUDNN_STATUS_SUCCESS) {
        fail(what, st);
        if (p_desc) cudnnBackendDestroyDescriptor(p_desc);
        continue;
      }
      r.plan = p_desc;
      r.chosen = static_cast<std::int64_t>(i);
      r.engine_known = known;
      r.engine_index = index;
      r.tried.push_back(what + ": built");
    }
    if (r.plan) {
      std::int64_t cnt = 0;
      GENBENCH_CHECK_CUDNN(cudnnBackendGetAttribute(r.plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                                    1, &cnt, &r.workspace_bytes));
    }
    return r;
  }

  // Descriptors are referenced while the graph is built: std::deque keeps them in place.
  std::deque<Desc> tensors_, keep_, ops_;
  std::int64_t next_virtual_;
};

}  // namespace genbench::cudnn
