// attention_backward/cudnn on the cuda backend: cuDNN 9's fused flash-attention backward (SDPA
// backward), built through the backend (graph) API in C. The operation graph is the pattern
// that cuDNN's fused attention backward engines recognise (the one cudnn-frontend's composite
// SDPA backward node emits for cuDNN 9, written here without the frontend):
//
//   D   = rowsum(dO o O) x 1                                 -> softmax_sum (fp32 [b, h, sq, 1], ours)
//   S   = Q K^T (fp32) x scale  [padding: keep row < len_q and col < len_k, else -inf]  - LSE
//         [causal: keep col <= row (sq = sk), col <= row + sk - sq (sq < sk), else -inf]
//   P   = exp(S);                      dV = P^T dO            [GQA: [b, h, sk, d], summed to h_kv]
//   dP  = dO V^T;  dS = (dP - D) o P x scale;  dK = dS^T Q    [GQA: as dV]
//   dQ  = dS K     (fp32 accumulator of ours, then IDENTITY to dQ; deterministic: straight to dQ)
//
// The transposes P^T, dS^T and K (from the K^T view) are RESHAPE operations with swapped strides.
// Q, O, dO, dQ are [b, h, sq, d] views of the [b, sq, h, d] buffers, K and V are viewed as
// K^T / V^T [b, h_kv, d, sk], dK and dV as [b, h_kv, sk, d]; LSE is [b, h, sq, 1]. cuDNN's
// matmuls broadcast the h_kv heads over their query groups.
//
// The causal mask. Where seqlen_q = seqlen_k it is the plain lower triangle: GEN_INDEX row and
// column, CMP_GE(row, col), BINARY_SELECT, with no offset nodes (what cudnn-frontend lowers
// set_causal_mask to, and what PyTorch's and Transformer Engine's cuDNN backward ask for at equal
// lengths; PyTorch's runs causal in about half its unmasked time). The bottom-right form (row +
// sk - sq, two int32 nodes before the compare) is kept for seqlen_q < seqlen_k only: with it at
// equal lengths, cuDNN 9.14's Hopper backward engine took the unmasked time (2026-12-07
// results), although the forward graph with the same form skips the masked blocks.
//
// The padding mask. cuDNN <= 9.15's backward engines need one for seqlen_k not a multiple of
// 128 (without it they can fault in CUDA-graph replay, cudnn-frontend 1.16's notes say);
// as cudnn-frontend does for such a graph, every sequence gets its full length in int32
// [b, 1, 1, 1] tensors (ours, filled once), every matmul's M/N/K is overridden by them, the
// scores past them are masked before the LSE is subtracted (on cuDNN 9.0-9.9 once more after
// it), and a bottom-right causal offset reads them instead of by-value scalars.
//
// Why the primitive graph and not CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR (cuDNN 9.19):
// that operation has attributes for Q, K, V, O, dO, stats, scale, dQ, dK, dV and padding
// sequence lengths only, with no causal (diagonal band) mask and no way to ask for a
// deterministic algorithm; this op needs both, and one graph for every point is simpler.
//
// Deterministic points: cudnn-frontend's `is_deterministic_algorithm` drops the fp32 dQ
// accumulator from the graph (the engines then compute dQ without atomics, through a dP
// workspace), and on sm100-class cards (cuDNN >= 9.18) overrides the heuristics with one engine
// and knob set. Both are done here; on every other card the heuristic list is searched without
// the engines that carry cuDNN's NONDETERMINISTIC numerical note. The common validation checks
// that two runs give the same dQ bits.
#include <cudnn.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/check.h"
#include "core/error.h"
#include "core/strings.h"
#include "kernels/attention_backward/common/backward_case.h"
#include "kernels/common/cudnn_graph.h"
#include "ops/attention_backward/attention_backward.h"
#include "ops/implementation.h"

namespace genbench::attention_backward {

namespace {

using cudnn::Desc;
using cudnn::io_type;

constexpr std::size_t kAlign = 256;
std::size_t align_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// How the graph and its engine are chosen for a point.
struct BwdPlanChoice {
  bool deterministic = false;
  bool dq_accumulator = true;  // the fp32 dQ accumulator (atomics) in the graph
  cudnn::PlanOptions options;
  std::string override_note;  // set where the heuristics are overridden
};

// cudnn-frontend's choice (scaled_dot_product_flash_attention.h, CompositeSDPABackwardNode,
// override_heuristics_query): on compute capability 10.x with cuDNN >= 9.18 the deterministic
// backward is engine 5 (17 above sm103) with these knobs; the knob names changed in 9.23.
BwdPlanChoice choose_plan(bool deterministic, int sm, std::size_t runtime) {
  BwdPlanChoice c;
  c.deterministic = deterministic;
  if (!deterministic) return c;
  c.dq_accumulator = false;
  if (sm / 10 == 10) {
    c.options.engine = sm > 103 ? 17 : 5;
    if (runtime >= 92300)
      c.options.knobs = {{CUDNN_KNOB_TYPE_TILE_M, 3},     {CUDNN_KNOB_TYPE_TILE_N, 2},
                         {CUDNN_KNOB_TYPE_KERNEL_CFG, 2}, {CUDNN_KNOB_TYPE_STREAM_K, 0},
                         {CUDNN_KNOB_TYPE_TILE_CGA_M, 0}, {CUDNN_KNOB_TYPE_STAGES, 2}};
    else c.options.knobs = {{CUDNN_KNOB_TYPE_KERNEL_CFG, 31}, {CUDNN_KNOB_TYPE_STAGES, 2}};
    std::string k;
    for (const auto& [type, value] : c.options.knobs)
      k += (k.empty() ? "" : ",") + std::to_string(static_cast<int>(type)) + "=" + std::to_string(value);
    c.override_note = "engine " + std::to_string(c.options.engine) + " knobs " + k;
  } else {
    c.options.skip_nondeterministic = true;
  }
  return c;
}

// How the graph writes the masks of a point (see the top of the file).
struct MaskForm {
  bool causal = false;
  bool bottom_right = false;   // causal with seqlen_q < seqlen_k: keep col <= row + sk - sq
  bool padding = false;        // per-sequence lengths, the matmul overrides and the padding mask
  bool padding_again = false;  // the padding mask once more after the LSE (cuDNN 9.0-9.9)
};

MaskForm mask_form(const AttentionShape& s, std::size_t runtime) {
  MaskForm m;
  m.causal = s.causal;
  m.bottom_right = s.causal && s.seqlen_q != s.seqlen_k;
  m.padding = runtime <= 91500 && s.seqlen_k % 128 != 0;
  m.padding_again = m.padding && runtime >= 90000 && runtime < 91000;
  return m;
}

std::string describe(const AttentionShape& s, bool deterministic) {
  return strprintf("%s b%lld h%lld/%lld sq%lld sk%lld d%lld%s%s", dtype_name(s.dtype), static_cast<long long>(s.batch),
                   static_cast<long long>(s.heads), static_cast<long long>(s.heads_kv),
                   static_cast<long long>(s.seqlen_q), static_cast<long long>(s.seqlen_k),
                   static_cast<long long>(s.head_dim), s.causal ? " causal" : "",
                   deterministic ? " deterministic" : "");
}

// Builds and owns the operation graph, the plan and the by-value scalars.
class SdpaBackwardGraph : private cudnn::GraphBuilder {
 public:
  // Unique ids of the tensors bound at execution.
  enum : std::int64_t {
    kQ = 1,
    kK,
    kV,
    kO,
    kDO,
    kStats,
    kDQ,
    kDK,
    kDV,
    kScale,
    kOne,
    kNegInf,
    kSeqQ,
    kSeqK,
    kSoftmaxSum,
    kDQAccum,
    kLenQ,
    kLenK,
    kVirtual = 100
  };

  SdpaBackwardGraph(cudnnHandle_t handle, const AttentionShape& s, const BwdPlanChoice& choice, const MaskForm& form)
      : GraphBuilder(kVirtual), s_(s), choice_(choice), form_(form) {
    const std::string what = "cuDNN SDPA backward (" + describe(s, choice.deterministic) +
                             (form.padding ? ", with the padding mask" : "") + ")";
    try {
      build();
    } catch (const Error& e) {
      throw Error(what + ": building the operation graph failed: " + e.what());
    }
    cudnn::PlanSearch found;
    try {
      found = search_plan(handle, choice.options);
    } catch (const Error& e) {
      // The operation graph or the heuristics query itself refused the graph.
      throw Error(what + ": " + e.what());
    }
    if (!found.plan) {
      if (choice.options.engine >= 0)
        throw Error(what + ": the deterministic " + choice.override_note +
                    " (cudnn-frontend's choice for this card) did not build: " + found.tried_text());
      if (found.configs == 0)
        throw Error(what + ": cuDNN's heuristics (mode A) list no engine for this graph" +
                    (found.heuristics_detail.empty() ? std::string() : ": " + found.heuristics_detail.substr(0, 511)));
      if (found.skipped_nondeterministic == found.configs)
        throw Error(what + ": all " + std::to_string(found.configs) +
                    " engine configurations carry cuDNN's NONDETERMINISTIC note (" + found.tried_text() + ")");
      throw Error(what + ": none of " + std::to_string(found.configs) +
                  " engine configurations built a plan; tried: " + found.tried_text() +
                  "; last error: " + cudnnGetErrorString(found.last_status) + " " + found.last_detail.substr(0, 511));
    }
    plan_ = found.plan;
    const auto n = static_cast<long long>(found.configs), i = static_cast<long long>(found.chosen);
    if (choice.options.engine >= 0) engine_ = "cudnn " + choice.override_note;
    else if (found.engine_known)
      engine_ = strprintf("cudnn engine %lld (heur %lld/%lld)", static_cast<long long>(found.engine_index), i, n);
    else engine_ = strprintf("cudnn (heur %lld/%lld)", i, n);
    if (form.causal) engine_ += form.bottom_right ? " causal bottom-right" : " causal";
    if (form.padding) engine_ += " padding-mask";
    if (choice.deterministic) engine_ += " deterministic";
    plan_workspace_ = static_cast<std::size_t>(found.workspace_bytes);
    scale_value_ = s.scale;
    one_ = 1.0f;
    // cudnn-frontend masks with the lowest float before cuDNN 9.10, with -inf from 9.10.
    neg_inf_ =
        cudnnGetVersion() < 91000 ? std::numeric_limits<float>::lowest() : -std::numeric_limits<float>::infinity();
    seq_q_value_ = static_cast<std::int32_t>(s.seqlen_q);
    seq_k_value_ = static_cast<std::int32_t>(s.seqlen_k);
  }
  ~SdpaBackwardGraph() {
    if (plan_) cudnnBackendDestroyDescriptor(plan_);
  }
  SdpaBackwardGraph(const SdpaBackwardGraph&) = delete;
  SdpaBackwardGraph& operator=(const SdpaBackwardGraph&) = delete;

  // Memory besides the plan's workspace: D (fp32 [b, h, sq]) and the fp32 dQ accumulator.
  std::size_t softmax_sum_bytes() const {
    return static_cast<std::size_t>(s_.batch * s_.heads * s_.seqlen_q) * sizeof(float);
  }
  std::size_t dq_accum_bytes() const {
    return choice_.dq_accumulator
               ? static_cast<std::size_t>(s_.batch * s_.heads * s_.seqlen_q * s_.head_dim) * sizeof(float)
               : 0;
  }
  // The per-sequence lengths of the padding mask: int32 [b] for Q, then for K (0 without it).
  std::size_t seq_lens_bytes() const {
    return form_.padding ? 2 * static_cast<std::size_t>(s_.batch) * sizeof(std::int32_t) : 0;
  }
  std::size_t plan_workspace_bytes() const { return plan_workspace_; }
  const std::string& engine() const { return engine_; }

  struct Pointers {
    void *q, *k, *v, *o, *dout, *lse, *dq, *dk, *dv;
    void *plan_workspace, *softmax_sum, *dq_accum;
    void* seq_lens;  // seq_lens_bytes(): int32 [b] Q lengths, then [b] K lengths
  };

  void execute(cudnnHandle_t handle, const Pointers& p) {
    std::vector<std::int64_t> ids = {kQ, kK, kV, kO, kDO, kStats, kDQ, kDK, kDV, kScale, kOne, kSoftmaxSum};
    std::vector<void*> ptrs = {p.q,  p.k,  p.v,  p.o,           p.dout, p.lse,
                               p.dq, p.dk, p.dv, &scale_value_, &one_,  p.softmax_sum};
    if (form_.causal || form_.padding) {
      ids.push_back(kNegInf);
      ptrs.push_back(&neg_inf_);
    }
    if (form_.bottom_right && !form_.padding) {
      ids.insert(ids.end(), {kSeqQ, kSeqK});
      ptrs.insert(ptrs.end(), {&seq_q_value_, &seq_k_value_});
    }
    if (form_.padding) {
      ids.insert(ids.end(), {kLenQ, kLenK});
      ptrs.insert(ptrs.end(), {p.seq_lens, static_cast<std::int32_t*>(p.seq_lens) + s_.batch});
    }
    if (choice_.dq_accumulator) {
      ids.push_back(kDQAccum);
      ptrs.push_back(p.dq_accum);
    }
    Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set_array(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, ids)
        .set_array(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, ptrs)
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, p.plan_workspace)
        .finalize();
    GENBENCH_CHECK_CUDNN(cudnnBackendExecute(handle, plan_, pack.get()));
  }

 private:
  void build() {
    const std::int64_t b = s_.batch, h = s_.heads, hk = s_.heads_kv, sq = s_.seqlen_q, sk = s_.seqlen_k,
                       d = s_.head_dim;
    const cudnnDataType_t io = io_type(s_.dtype), f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32,
                          bl = CUDNN_DATA_BOOLEAN;
    // Inputs and outputs in memory.
    const std::vector<std::int64_t> qd = {b, h, sq, d}, qs = {sq * h * d, d, h * d, 1};
    const std::vector<std::int64_t> kvd = {b, hk, sk, d}, kvs = {sk * hk * d, d, hk * d, 1};
    const std::vector<std::int64_t> kvtd = {b, hk, d, sk}, kvts = {sk * hk * d, d, 1, hk * d};
    const auto& q = tensor(kQ, io, qd, qs);
    const auto& kt = tensor(kK, io, kvtd, kvts);
    const auto& vt = tensor(kV, io, kvtd, kvts);
    const auto& o = tensor(kO, io, qd, qs);
    const auto& dout = tensor(kDO, io, qd, qs);
    const std::vector<std::int64_t> row = {b, h, sq, 1}, row_st = {h * sq, sq, 1, 1};
    const auto& stats = tensor(kStats, f32, row, row_st);
    const auto& dq = tensor(kDQ, io, qd, qs);
    const auto& dk = tensor(kDK, io, kvd, kvs);
    const auto& dv = tensor(kDV, io, kvd, kvs);
    // Scalars passed by value.
    const auto& scale = tensor(kScale, f32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
    const auto& one = tensor(kOne, f32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
    const std::vector<std::int64_t> full = {b, h, sq, sk}, full_st = {h * sq * sk, sq * sk, sk, 1};
    const std::vector<std::int64_t> full_t = {b, h, sk, sq}, full_t_st = {h * sq * sk, sq * sk, 1, sk};

    // D = rowsum(dO o O), times 1 (the dropout scale's place), into memory of ours.
    const auto& do_o = virt(f32, qd, {h * sq * d, sq * d, h * d, 1});
    pointwise(CUDNN_POINTWISE_MUL, f32, dout, &o, nullptr, do_o);
    const auto& d_row = virt(f32, row, row_st);
    reduction(CUDNN_REDUCE_TENSOR_ADD, do_o, d_row);
    const auto& softmax_sum = tensor(kSoftmaxSum, f32, row, row_st);
    pointwise(CUDNN_POINTWISE_MUL, f32, d_row, &one, nullptr, softmax_sum);

    // Padding: every sequence's length (all equal to sq and sk here), per batch, in memory.
    const Desc* len_q = nullptr;
    const Desc* len_k = nullptr;
    if (form_.padding) {
      len_q = &tensor(kLenQ, i32, {b, 1, 1, 1}, {1, 1, 1, 1});
      len_k = &tensor(kLenK, i32, {b, 1, 1, 1}, {1, 1, 1, 1});
    }
    const Desc* neg_inf = nullptr;
    if (form_.causal || form_.padding) neg_inf = &tensor(kNegInf, f32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
    // Keeps x where row < len_q and col < len_k, else -inf (cudnn-frontend's padding mask).
    auto padding_mask = [&](const Desc& x) -> const Desc& {
      const auto& row_idx = virt(i32, full, full_st);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, i32, x, nullptr, nullptr, row_idx, 2);
      const auto& col_idx = virt(i32, full, full_st);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, i32, x, nullptr, nullptr, col_idx, 3);
      const auto& row_in = virt(bl, full, full_st);
      pointwise(CUDNN_POINTWISE_CMP_LT, bl, row_idx, len_q, nullptr, row_in);
      const auto& col_in = virt(bl, full, full_st);
      pointwise(CUDNN_POINTWISE_CMP_LT, bl, col_idx, len_k, nullptr, col_in);
      const auto& in = virt(bl, full, full_st);
      pointwise(CUDNN_POINTWISE_LOGICAL_AND, bl, row_in, &col_in, nullptr, in);
      const auto& y = virt(f32, full, full_st);
      pointwise(CUDNN_POINTWISE_BINARY_SELECT, f32, x, neg_inf, &in, y);
      return y;
    };

    // P = exp(scale Q K^T - LSE), masked.
    const auto& s1 = virt(f32, full, full_st);
    matmul(q, kt, s1, len_q, len_k);
    const auto& s2 = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_MUL, f32, s1, &scale, nullptr, s2);
    const Desc* scores = &s2;
    if (form_.padding) scores = &padding_mask(*scores);
    const auto& s3 = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_SUB, f32, *scores, &stats, nullptr, s3);
    const Desc* masked = &s3;
    if (form_.padding_again) masked = &padding_mask(*masked);
    if (form_.causal) {
      // cudnn-frontend's diagonal band (right bound 0): keep row' >= col, where row' is the row
      // (equal lengths) or row + sk - sq (bottom-right; the lengths by value, or the padding
      // mask's per-sequence lengths).
      const auto& row_idx = virt(i32, full, full_st);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, *masked, nullptr, nullptr, row_idx, 2);
      const auto& col_idx = virt(i32, full, full_st);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, *masked, nullptr, nullptr, col_idx, 3);
      const Desc* row_cmp = &row_idx;
      if (form_.bottom_right) {
        const Desc* add_k = len_k;
        const Desc* sub_q = len_q;
        if (!form_.padding) {
          sub_q = &tensor(kSeqQ, i32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
          add_k = &tensor(kSeqK, i32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
        }
        const auto& row_plus = virt(i32, full, full_st);
        pointwise(CUDNN_POINTWISE_ADD, i32, row_idx, add_k, nullptr, row_plus, 3);
        const auto& row_shift = virt(i32, full, full_st);
        pointwise(CUDNN_POINTWISE_SUB, i32, row_plus, sub_q, nullptr, row_shift, 3);
        row_cmp = &row_shift;
      }
      const auto& keep = virt(bl, full, full_st);
      pointwise(CUDNN_POINTWISE_CMP_GE, bl, *row_cmp, &col_idx, nullptr, keep);
      const auto& s4 = virt(f32, full, full_st);
      pointwise(CUDNN_POINTWISE_BINARY_SELECT, f32, *masked, neg_inf, &keep, s4);
      masked = &s4;
    }
    const auto& p = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_EXP, f32, *masked, nullptr, nullptr, p);

    // dV = P^T dO (summed over a GQA group).
    const auto& pt = virt(io, full_t, full_t_st);
    reshape(p, pt);
    const std::vector<std::int64_t> kv_full = {b, h, sk, d}, kv_full_st = {h * sk * d, sk * d, d, 1};
    if (h == hk) {
      matmul(pt, dout, dv, len_k, nullptr, len_q);
    } else {
      const auto& dv_heads = virt(io, kv_full, kv_full_st);
      matmul(pt, dout, dv_heads, len_k, nullptr, len_q);
      reduction(CUDNN_REDUCE_TENSOR_ADD, dv_heads, dv);
    }

    // dS = (dO V^T - D) o P x scale.
    const auto& dp = virt(f32, full, full_st);
    matmul(dout, vt, dp, len_q, len_k);
    const auto& ds1 = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_SUB, f32, dp, &softmax_sum, nullptr, ds1);
    const auto& ds2 = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_MUL, f32, ds1, &p, nullptr, ds2);
    const auto& ds = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_MUL, f32, ds2, &scale, nullptr, ds);

    // dK = dS^T Q (summed over a GQA group).
    const auto& dst = virt(io, full_t, full_t_st);
    reshape(ds, dst);
    if (h == hk) {
      matmul(dst, q, dk, len_k, nullptr, len_q);
    } else {
      const auto& dk_heads = virt(io, kv_full, kv_full_st);
      matmul(dst, q, dk_heads, len_k, nullptr, len_q);
      reduction(CUDNN_REDUCE_TENSOR_ADD, dk_heads, dk);
    }

    // dQ = dS K: through the fp32 accumulator, or (deterministic) straight to dQ.
    const auto& k = virt(io, kvd, kvs);
    reshape(kt, k);
    if (choice_.dq_accumulator) {
      const auto& acc = tensor(kDQAccum, f32, qd, {h * sq * d, sq * d, d, 1});
      matmul(ds, k, acc, len_q, nullptr, len_k);
      pointwise(CUDNN_POINTWISE_IDENTITY, f32, acc, nullptr, nullptr, dq);
    } else {
      matmul(ds, k, dq, len_q, nullptr, len_k);
    }
  }

  AttentionShape s_;
  BwdPlanChoice choice_;
  MaskForm form_;
  cudnnBackendDescriptor_t plan_ = nullptr;
  std::size_t plan_workspace_ = 0;
  std::string engine_;
  float scale_value_ = 1.f, one_ = 1.f, neg_inf_ = 0.f;
  std::int32_t seq_q_value_ = 0, seq_k_value_ = 0;
};

class CudnnBackwardCase final : public DeviceBackwardCase {
 public:
  CudnnBackwardCase(const AttentionShape& s, Context& ctx, bool deterministic) : DeviceBackwardCase(s, ctx) {
    set_deterministic(deterministic);
    const auto& prop = cuda().properties();
    const BwdPlanChoice choice = choose_plan(deterministic, prop.major * 10 + prop.minor, cudnnGetVersion());
    const MaskForm form = mask_form(s, cudnnGetVersion());
    GENBENCH_CHECK_CUDNN(cudnnCreate(&handle_));
    try {
      GENBENCH_CHECK_CUDNN(cudnnSetStream(handle_, stream()));
      handle_stream_ = stream();
      graph_ = std::make_unique<SdpaBackwardGraph>(handle_, s, choice, form);
      // One scratch buffer: the plan's workspace, D, the padding mask's lengths, the dQ
      // accumulator.
      const std::size_t plan_ws = align_up(graph_->plan_workspace_bytes());
      const std::size_t sum = align_up(graph_->softmax_sum_bytes());
      const std::size_t lens = align_up(graph_->seq_lens_bytes());
      const std::size_t acc = graph_->dq_accum_bytes();
      auto* base = static_cast<char*>(workspace(plan_ws + sum + lens + acc));
      plan_ws_ = graph_->plan_workspace_bytes() ? base : nullptr;
      softmax_sum_ = base + plan_ws;
      seq_lens_ = lens ? base + plan_ws + sum : nullptr;
      dq_accum_ = acc ? base + plan_ws + sum + lens : nullptr;
      dq_accum_bytes_ = acc;
      if (seq_lens_) {
        // Every sequence at its full length; written once, read by every execution.
        std::vector<std::int32_t> host(static_cast<std::size_t>(2 * s.batch));
        for (std::int64_t i = 0; i < s.batch; ++i) {
          host[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(s.seqlen_q);
          host[static_cast<std::size_t>(s.batch + i)] = static_cast<std::int32_t>(s.seqlen_k);
        }
        GENBENCH_CHECK_CUDA(
            cudaMemcpyAsync(seq_lens_, host.data(), graph_->seq_lens_bytes(), cudaMemcpyHostToDevice, stream()));
        GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
      }
      // cudnn-frontend zeroes the accumulator itself before cuDNN 9.6; later cuDNN does.
      zero_accum_ = acc && cudnnGetVersion() < 90600;
    } catch (...) {
      graph_.reset();
      cudnnDestroy(handle_);
      handle_ = nullptr;
      throw;
    }
  }
  ~CudnnBackwardCase() override {
    graph_.reset();
    if (handle_) cudnnDestroy(handle_);
  }
  CudnnBackwardCase(const CudnnBackwardCase&) = delete;
  CudnnBackwardCase& operator=(const CudnnBackwardCase&) = delete;

 protected:
  void launch(cudaStream_t st) override {
    if (st != handle_stream_) {
      GENBENCH_CHECK_CUDNN(cudnnSetStream(handle_, st));
      handle_stream_ = st;
    }
    if (zero_accum_) GENBENCH_CHECK_CUDA(cudaMemsetAsync(dq_accum_, 0, dq_accum_bytes_, st));
    SdpaBackwardGraph::Pointers p{};
    p.q = q_.get();
    p.k = k_.get();
    p.v = v_.get();
    p.o = o_.get();
    p.dout = do_.get();
    p.lse = lse_.get();
    p.dq = dq_.get();
    p.dk = dk_.get();
    p.dv = dv_.get();
    p.plan_workspace = plan_ws_;
    p.softmax_sum = softmax_sum_;
    p.dq_accum = dq_accum_;
    p.seq_lens = seq_lens_;
    graph_->execute(handle_, p);
  }
  std::string config_name() const override { return graph_->engine(); }

 private:
  cudnnHandle_t handle_ = nullptr;
  cudaStream_t handle_stream_ = nullptr;
  std::unique_ptr<SdpaBackwardGraph> graph_;
  void *plan_ws_ = nullptr, *softmax_sum_ = nullptr, *dq_accum_ = nullptr, *seq_lens_ = nullptr;
  std::size_t dq_accum_bytes_ = 0;
  bool zero_accum_ = false;
};

class AttentionBackwardCudnn final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = AttentionShape::from(p);
    const bool deterministic = p.boolean(attention_backward_axis::deterministic);
    if (auto why = dtype_not_in(s.dtype, {DType::fp16, DType::bf16}); !why.empty()) return why;
    if (s.varlen)
      return "varlen is not supported here (cuDNN's backward needs ragged offsets, per-sequence lengths and a "
             "padding mask)";
    if (s.heads_kv <= 0 || s.heads % s.heads_kv != 0) return "heads must be a multiple of heads_kv";
    if (s.causal && s.seqlen_q > s.seqlen_k) return "cuDNN's bottom-right causal mask needs seqlen_q <= seqlen_k";
    if (s.seqlen_q == 1 && s.seqlen_k == 1) return "cuDNN's SDPA backward does not support seqlen_q = seqlen_k = 1";
    const auto& prop = cuda_backend_of(ctx.backend).properties();
    const int sm = prop.major * 10 + prop.minor;
    if (prop.major < 8) return "cuDNN fused attention backward needs sm80 or later";
    const std::size_t v = cudnnGetVersion();
    if (v < 90000) return "needs cuDNN 9";
    if (v == 91000 || v == 91001)
      return "cuDNN 9.10.0/9.10.1 have known bugs in the fp16/bf16 SDPA backward (cudnn-frontend refuses them)";
    const std::int64_t max_d = prop.major == 9 ? 256 : 128;
    if (s.head_dim % 8 != 0 || s.head_dim > max_d)
      return strprintf("cuDNN's SDPA backward on sm%d needs head_dim a multiple of 8 up to %lld", sm,
                       static_cast<long long>(max_d));
    // seqlen_k not a multiple of 128 on cuDNN <= 9.15 is built with the padding mask (mask_form).
    if (v < 90600 && mask_form(s, v).bottom_right && (s.seqlen_q % 64 != 0 || s.seqlen_k % 64 != 0))
      return "cuDNN < 9.6: the bottom-right causal backward (seqlen_q < seqlen_k) needs seqlen_q and seqlen_k "
             "multiples of 64";
    if (deterministic && prop.major == 10 && v < 91800)
      return "cuDNN's deterministic SDPA backward on compute capability 10.x needs cuDNN 9.18 or later";
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<CudnnBackwardCase>(AttentionShape::from(p), ctx,
                                               p.boolean(attention_backward_axis::deterministic));
  }
};

}  // namespace

}  // namespace genbench::attention_backward

namespace genbench {

std::unique_ptr<Implementation> make_attention_backward_cudnn() {
  return std::make_unique<attention_backward::AttentionBackwardCudnn>();
}

}  // namespace genbench
