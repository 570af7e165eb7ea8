// decode/cudnn on the cuda backend: cuDNN's SDPA forward (the fused flash-attention engines),
// built through the backend graph API in C, reading the decode op's own buffers:
//
//   Q, O    [batch, new_tokens, heads, head_dim]      viewed as [b, h, sq, d] through strides
//   K, V    pools [pool_pages, page_rows, heads_kv, head_dim]
//   table   [batch, pages_per_seq] int32              cuDNN's page table [b, 1, pages, 1]
//   lengths [batch] int32                             cuDNN's sequence lengths [b, 1, 1, 1]
//   LSE     cuDNN's stats, [batch, heads, new_tokens] (validation reads it in that order)
//
// Paged layouts: a paged-cache-load operation per pool gathers K (as K^T, [b, h_kv, d, cache])
// and V ([b, h_kv, cache, d]) through the block table, as cuDNN's paged attention does. Its
// container is [pages, h_kv, page_rows, d]: the pools are described to it with their own
// strides (rows of all KV heads together, `pool strides`); where no engine takes those, the
// pools are rearranged once, before timing, into cuDNN's head-major page layout (`pool
// head-major`). page_size 0 is the plain SDPA graph on the contiguous cache ([b, h_kv, cache, d]
// through strides, as attention/cudnn reads K and V). Either way the graph is
//   S = Q K^T (fp32, GEMM M/N overridden by the sequence lengths, padding 0) -> S * scale
//   -> padding mask (row < new_tokens and col < length, else -inf)
//   -> [causal with new_tokens > 1: keep col <= row + length - new_tokens]
//   -> softmax (max, exp, sum; LSE = max + log(sum) as the stats output) -> P (Q's type)
//   -> O = P V (GEMM M/K overridden by the lengths).
// The lengths and the table are read from device memory, so one captured CUDA graph serves
// any lengths up to `cache` (graph mode replays it with two more sets of lengths).
//
// Refused (can_implement, with the reason): K/V in a type other than Q's (fp8 K/V with 16-bit
// Q has no cuDNN engine: its fp8 SDPA takes Q, K and V all in fp8), cuDNN older than 9.5, GPUs
// before sm_80, and any shape for which none of cuDNN's engine configurations builds a plan
// (cuDNN's own message is the reason).
//
// Validation as decode/fa3's: outputs poisoned (NaN), one execution, every element written,
// sampled rows of a few whole sequences (their keys gathered from the pools through the block
// table on the device) against double; graph mode replays the captured graph with two more
// sets of lengths and validates each.
#ifdef GENBENCH_HAVE_CUDNN

#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"
#include "core/error.h"
#include "core/strings.h"
#include "kernels/attention/common/attention_case.h"
#include "kernels/common/cudnn_graph.h"
#include "kernels/common/device_fill.h"
#include "kernels/decode/common/decode_reference.h"
#include "kernels/decode/common/decode_sample.h"
#include "ops/decode/decode.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

using cudnn::Desc;
using cudnn::io_type;

// How the graph reads K and V.
enum class PoolLayout {
  contiguous,  // page_size 0: [b, h_kv, cache, d] through strides, no paged-cache load
  native,      // paged: the pools as they are, [pages, page_rows, h_kv, d], described by strides
  head_major,  // paged: a copy in cuDNN's container layout [pages, h_kv, page_rows, d]
};

const char* layout_name(PoolLayout l) {
  switch (l) {
    case PoolLayout::contiguous: return "contiguous";
    case PoolLayout::native: return "pool strides";
    case PoolLayout::head_major: return "pool head-major";
  }
  return "?";
}

// Device pointers one execution binds.
struct Bindings {
  void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *stats = nullptr;
  void *seq_q = nullptr, *seq_kv = nullptr, *table = nullptr, *workspace = nullptr;
};

// Builds and owns the operation graph's execution plan and the by-value scalars.
class DecodeGraph : private cudnn::GraphBuilder {
 public:
  // Unique ids of the tensors bound at execution.
  enum : std::int64_t { kQ = 1, kK, kV, kO, kStats, kScale, kNegInf, kSeqQ, kSeqKv, kTableK, kTableV, kVirtual = 100 };

  DecodeGraph(cudnnHandle_t handle, const DecodeShape& s, PoolLayout layout) : GraphBuilder(kVirtual), layout_(layout) {
    const auto& dd = s.dims;
    const std::int64_t b = dd.batch, h = dd.heads, hk = dd.heads_kv, sq = dd.new_tokens, sk = dd.cache, d = dd.head_dim;
    const cudnnDataType_t io = io_type(s.dtype), f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32,
                          bl = CUDNN_DATA_BOOLEAN;
    const auto& q = tensor(kQ, io, {b, h, sq, d}, {sq * h * d, d, h * d, 1});
    const auto& o = tensor(kO, io, {b, h, sq, d}, {sq * h * d, d, h * d, 1});
    const auto& stats = tensor(kStats, f32, {b, h, sq, 1}, {h * sq, sq, 1, 1});
    const auto& seq_q = tensor(kSeqQ, i32, {b, 1, 1, 1}, {1, 1, 1, 1});
    const auto& seq_kv = tensor(kSeqKv, i32, {b, 1, 1, 1}, {1, 1, 1, 1});
    const auto& scale = tensor(kScale, f32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
    const auto& neg_inf = tensor(kNegInf, f32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);

    const Desc* kt = nullptr;
    const Desc* v = nullptr;
    if (layout == PoolLayout::contiguous) {
      // Row b * cache + j of the pool is key j of sequence b.
      kt = &tensor(kK, io, {b, hk, d, sk}, {sk * hk * d, d, 1, hk * d});
      v = &tensor(kV, io, {b, hk, sk, d}, {sk * hk * d, d, hk * d, 1});
    } else {
      const std::int64_t pages = dd.pool_pages(), rows = dd.page_rows(), pps = dd.pages_per_seq();
      const std::vector<std::int64_t> cdim = {pages, hk, rows, d};
      const std::vector<std::int64_t> cst = layout == PoolLayout::native
                                                ? std::vector<std::int64_t>{rows * hk * d, d, hk * d, 1}
                                                : std::vector<std::int64_t>{hk * rows * d, rows * d, d, 1};
      const auto& kc = tensor(kK, io, cdim, cst);
      const auto& vc = tensor(kV, io, cdim, cst);
      const auto& table_k = tensor(kTableK, i32, {b, 1, pps, 1}, {pps, pps, 1, 1});
      const auto& table_v = tensor(kTableV, i32, {b, 1, pps, 1}, {pps, pps, 1, 1});
      kt = &virt(io, {b, hk, d, sk}, {d * sk * hk, d * sk, 1, d});
      paged_load(kc, table_k, seq_kv, *kt);
      v = &virt(io, {b, hk, sk, d}, {d * sk * hk, d * sk, d, 1});
      paged_load(vc, table_v, seq_kv, *v);
    }

    const std::vector<std::int64_t> full = {b, h, sq, sk}, full_st = {h * sq * sk, sq * sk, sk, 1};
    const std::vector<std::int64_t> row = {b, h, sq, 1}, row_st = {h * sq, sq, 1, 1};
    const auto& s1 = virt(f32, full, full_st);
    matmul(q, *kt, s1, &seq_q, &seq_kv, nullptr, true);
    const auto& s2 = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_MUL, f32, s1, &scale, nullptr, s2);

    // Padding mask: rows past new_tokens (none here) and keys past the sequence's length.
    const auto& row_idx = virt(i32, full, full_st);
    pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, s2, nullptr, nullptr, row_idx, 2);
    const auto& col_idx = virt(i32, full, full_st);
    pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, s2, nullptr, nullptr, col_idx, 3);
    const auto& row_ok = virt(bl, full, full_st);
    pointwise(CUDNN_POINTWISE_CMP_LT, bl, row_idx, &seq_q, nullptr, row_ok);
    const auto& col_ok = virt(bl, full, full_st);
    pointwise(CUDNN_POINTWISE_CMP_LT, bl, col_idx, &seq_kv, nullptr, col_ok);
    const auto& valid = virt(bl, full, full_st);
    pointwise(CUDNN_POINTWISE_LOGICAL_AND, bl, row_ok, &col_ok, nullptr, valid);
    const auto& s3 = virt(f32, full, full_st);
    pointwise(CUDNN_POINTWISE_BINARY_SELECT, f32, s2, &neg_inf, &valid, s3);
    const Desc* masked = &s3;

    // Causal among the new tokens, bottom-right aligned per sequence (one new token sees every
    // key of its sequence: no mask).
    if (dd.causal && sq > 1) {
      const auto& r = virt(i32, full, full_st);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, s3, nullptr, nullptr, r, 2);
      const auto& c = virt(i32, full, full_st);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, s3, nullptr, nullptr, c, 3);
      const auto& r_plus = virt(i32, full, full_st);
      pointwise(CUDNN_POINTWISE_ADD, i32, r, &seq_kv, nullptr, r_plus);
      const auto& r_shift = virt(i32, full, full_st);
      pointwise(CUDNN_POINTWISE_SUB, i32, r_plus, &seq_q, nullptr, r_shift);
      const auto& keep = virt(bl, full, full_st);
      pointwise(CUDNN_POINTWISE_CMP_GE, bl, r_shift, &c, nullptr, keep);
      const auto& s4 = virt(f32, full, full_st);
      pointwise(CUDNN_POINTWISE_BINARY_SELECT, f32, s3, &neg_inf, &keep, s4);
      masked = &s4;
    }

    const auto& p = softmax(*masked, stats, io, full, full_st, row, row_st);
    matmul(p, *v, o, &seq_q, nullptr, &seq_kv, false);

    build_plan(handle);
    scale_value_ = s.scale;
    neg_inf_ = -std::numeric_limits<float>::infinity();
  }
  ~DecodeGraph() {
    if (plan_) cudnnBackendDestroyDescriptor(plan_);
  }
  DecodeGraph(const DecodeGraph&) = delete;
  DecodeGraph& operator=(const DecodeGraph&) = delete;

  std::int64_t workspace_bytes() const { return workspace_bytes_; }
  const std::string& engine() const { return engine_; }

  // Enqueues one execution on the handle's stream (no host synchronisation: capturable).
  void execute(cudnnHandle_t handle, const Bindings& x) {
    std::vector<std::int64_t> ids = {kQ, kK, kV, kO, kStats, kScale, kNegInf, kSeqQ, kSeqKv};
    std::vector<void*> ptrs = {x.q, x.k, x.v, x.o, x.stats, &scale_value_, &neg_inf_, x.seq_q, x.seq_kv};
    if (layout_ != PoolLayout::contiguous) {
      ids.insert(ids.end(), {kTableK, kTableV});
      ptrs.insert(ptrs.end(), {x.table, x.table});
    }
    Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set_array(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, ids)
        .set_array(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, ptrs)
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, x.workspace)
        .finalize();
    GENBENCH_CHECK_CUDNN(cudnnBackendExecute(handle, plan_, pack.get()));
  }

 private:
  // Operation graph, heuristics (mode A), and the first engine configuration that builds a plan.
  void build_plan(cudnnHandle_t handle) {
    const cudnn::PlanSearch found = find_plan(handle);
    if (found.configs == 0) throw Error("cuDNN's heuristics list no engine for this graph");
    const std::int64_t n = found.configs;
    if (!found.plan) {
      const std::string last_error = found.failed
                                         ? std::string(cudnnGetErrorString(found.last_status)) +
                                               (found.last_detail.empty() ? "" : std::string(": ") + found.last_detail)
                                         : std::string();
      throw Error("none of cuDNN's " + std::to_string(n) + " engine configurations built a plan: " + last_error);
    }
    plan_ = found.plan;
    const std::int64_t i = found.chosen;
    if (found.engine_known)
      engine_ = strprintf("cudnn eng%lld h%lld/%lld", static_cast<long long>(found.engine_index),
                          static_cast<long long>(i), static_cast<long long>(n));
    else engine_ = strprintf("cudnn h%lld/%lld", static_cast<long long>(i), static_cast<long long>(n));
    workspace_bytes_ = found.workspace_bytes;
  }

  // y = the pages of `container` that `table` lists for each sequence, up to its length.
  void paged_load(const Desc& container, const Desc& table, const Desc& lengths, const Desc& y) {
    const cudnnBackendDescriptor_t cd = container.get(), td = table.get(), ld = lengths.get(), yd = y.get();
    ops_.emplace_back(CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR);
    ops_.back()
        .set(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_CONTAINER_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, cd)
        .set(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, td)
        .set(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_SEQUENCE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, ld)
        .set(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, yd)
        .finalize();
  }

  PoolLayout layout_;
  cudnnBackendDescriptor_t plan_ = nullptr;
  std::int64_t workspace_bytes_ = 0;
  std::string engine_;
  float scale_value_ = 1.f, neg_inf_ = 0.f;
};

// A cuDNN handle, destroyed with its owner.
class Handle {
 public:
  Handle() { GENBENCH_CHECK_CUDNN(cudnnCreate(&h_)); }
  ~Handle() {
    if (h_) cudnnDestroy(h_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cudnnHandle_t get() const { return h_; }

 private:
  cudnnHandle_t h_ = nullptr;
};

// The layouts to try, in order: the pools as they are first.
std::vector<PoolLayout> candidate_layouts(const DecodeShape& s) {
  if (s.dims.page_size == 0) return {PoolLayout::contiguous};
  return {PoolLayout::native, PoolLayout::head_major};
}

// The first layout whose graph builds into a plan, or the reasons none did. Remembered per graph
// shape (lengths and mode change nothing in the graph), so prepare() does not search again.
struct LayoutChoice {
  bool ok = false;
  PoolLayout layout = PoolLayout::contiguous;
  std::string why;  // when !ok
};

std::string graph_key(const DecodeShape& s) {
  const auto& d = s.dims;
  return strprintf("%lld/%lld/%lld/%lld/%lld/%lld/%lld/%d/%s/%s/%.9g", static_cast<long long>(d.batch),
                   static_cast<long long>(d.heads), static_cast<long long>(d.heads_kv),
                   static_cast<long long>(d.head_dim), static_cast<long long>(d.new_tokens),
                   static_cast<long long>(d.cache), static_cast<long long>(d.page_size), d.causal ? 1 : 0,
                   dtype_name(s.dtype), dtype_name(s.kv_dtype), static_cast<double>(s.scale));
}

LayoutChoice choose_layout(const DecodeShape& s, int device) {
  static std::mutex mu;
  static std::map<std::string, LayoutChoice> memo;
  const std::string key = strprintf("%d:", device) + graph_key(s);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  LayoutChoice c;
  Handle handle;
  for (PoolLayout l : candidate_layouts(s)) {
    try {
      DecodeGraph g(handle.get(), s, l);
      c.ok = true;
      c.layout = l;
      c.why.clear();
      break;
    } catch (const std::exception& e) {
      c.why += std::string(c.why.empty() ? "" : "; ") + layout_name(l) + ": " + e.what();
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  memo[key] = c;
  return c;
}

class DecodeCudnnCase final : public Case {
 public:
  DecodeCudnnCase(const DecodeShape& s, Context& ctx, PoolLayout layout)
      : s_(s), be_(cuda_backend_of(ctx.backend)), ctx_backend_(ctx.backend), seed_(ctx.seed), layout_(layout) {
    const auto& d = s.dims;
    n_q_ = static_cast<std::size_t>(d.batch * d.new_tokens * d.heads * d.head_dim);
    n_pool_ = static_cast<std::size_t>(d.pool_elements());
    q_ = ctx.backend.allocate(n_q_ * dtype_size(s.dtype));
    o_ = ctx.backend.allocate(n_q_ * dtype_size(s.dtype));
    stats_ = ctx.backend.allocate(n_q_ / static_cast<std::size_t>(d.head_dim) * sizeof(float));
    k_ = ctx.backend.allocate(n_pool_ * dtype_size(s.kv_dtype));
    v_ = ctx.backend.allocate(n_pool_ * dtype_size(s.kv_dtype));
    table_host_ = decode::block_table(d, seed_);
    table_ = ctx.backend.allocate(table_host_.size() * sizeof(int));
    lens_ = ctx.backend.allocate(static_cast<std::size_t>(d.batch) * sizeof(int));
    seq_q_ = ctx.backend.allocate(static_cast<std::size_t>(d.batch) * sizeof(int));
    fill_normal_device(q_.get(), static_cast<std::int64_t>(n_q_), seed_ + 1, s.dtype, 1.0f, stream());
    fill_normal_device(k_.get(), static_cast<std::int64_t>(n_pool_), seed_ + 2, s.kv_dtype, 1.0f, stream());
    fill_normal_device(v_.get(), static_cast<std::int64_t>(n_pool_), seed_ + 3, s.kv_dtype, 1.0f, stream());
    GENBENCH_CHECK_CUDA(cudaMemcpyAsync(table_.get(), table_host_.data(), table_host_.size() * sizeof(int),
                                        cudaMemcpyHostToDevice, stream()));
    const std::vector<int> seq_q(static_cast<std::size_t>(d.batch), static_cast<int>(d.new_tokens));
    GENBENCH_CHECK_CUDA(
        cudaMemcpyAsync(seq_q_.get(), seq_q.data(), seq_q.size() * sizeof(int), cudaMemcpyHostToDevice, stream()));
    set_lengths(s.lengths());
    if (layout_ == PoolLayout::head_major) {
      // cuDNN's container layout, [pages, h_kv, page_rows, d]: one copy per KV head, made once.
      ck_ = ctx.backend.allocate(k_.bytes());
      cv_ = ctx.backend.allocate(v_.bytes());
      to_head_major(k_, ck_);
      to_head_major(v_, cv_);
    }
    GENBENCH_CHECK_CUDNN(cudnnCreate(&handle_));
    GENBENCH_CHECK_CUDNN(cudnnSetStream(handle_, stream()));
    sdpa_ = std::make_unique<DecodeGraph>(handle_, s, layout_);
    if (sdpa_->workspace_bytes() > 0) ws_ = ctx.backend.allocate(static_cast<std::size_t>(sdpa_->workspace_bytes()));
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
  }

  ~DecodeCudnnCase() override {
    if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
    if (cuda_graph_) cudaGraphDestroy(cuda_graph_);
    sdpa_.reset();
    if (handle_) cudnnDestroy(handle_);
  }

  void run() override { execute(); }

  std::string variant() const override {
    const char* layout = layout_ == PoolLayout::contiguous ? "contig"
                         : layout_ == PoolLayout::native   ? "pool-strides"
                                                           : "head-major";
    return plan_engine() + " " + layout + graph_note_;
  }

  Validation validate() override {
    poison();
    execute();
    Validation v = check();
    if (!v.ok) return v;
    v.detail += std::string("; ") + layout_name(layout_);
    if (s_.graph) {
      // The captured graph reads the lengths from device memory: replay it with new ones.
      return decode::replay_with_lengths(
          s_, std::move(v), [this](const std::vector<std::int64_t>& l) { set_lengths(l); },
          [this] {
            poison();
            execute();
            return check();
          },
          captures_, graph_note_);
    }
    return v;
  }

 private:
  cudaStream_t stream() const { return be_.stream(); }
  std::string plan_engine() const { return sdpa_ ? sdpa_->engine() : std::string("cudnn"); }

  void to_head_major(const DeviceBuffer& src, const DeviceBuffer& dst) {
    const auto& d = s_.dims;
    const std::size_t e = dtype_size(s_.kv_dtype), hd = static_cast<std::size_t>(d.head_dim) * e;
    const std::size_t hk = static_cast<std::size_t>(d.heads_kv), rows = static_cast<std::size_t>(d.page_rows());
    const std::size_t pages = static_cast<std::size_t>(d.pool_pages());
    for (std::size_t h = 0; h < hk; ++h) {
      // Source: page p, row r of head h at (p * rows + r) * hk * hd + h * hd. Destination: page
      // p, head h, row r at ((p * hk + h) * rows + r) * hd: a 3-D copy of (hd bytes, rows, pages)
      // whose destination slices are hk * rows rows apart.
      cudaMemcpy3DParms m = {};
      m.srcPtr = make_cudaPitchedPtr(src.as<char>() + h * hd, hk * hd, hd, rows);
      m.dstPtr = make_cudaPitchedPtr(dst.as<char>() + h * rows * hd, hd, hd, hk * rows);
      m.extent = make_cudaExtent(hd, rows, pages);
      m.kind = cudaMemcpyDeviceToDevice;
      GENBENCH_CHECK_CUDA(cudaMemcpy3DAsync(&m, stream()));
    }
  }

  Bindings bindings() const {
    Bindings x;
    x.q = q_.get();
    x.k = layout_ == PoolLayout::head_major ? ck_.get() : k_.get();
    x.v = layout_ == PoolLayout::head_major ? cv_.get() : v_.get();
    x.o = o_.get();
    x.stats = stats_.get();
    x.seq_q = seq_q_.get();
    x.seq_kv = lens_.get();
    x.table = table_.get();
    x.workspace = ws_.get();
    return x;
  }

  void set_lengths(const std::vector<std::int64_t>& l) {
    lens_host_ = l;
    std::vector<int> li(l.begin(), l.end());
    GENBENCH_CHECK_CUDA(
        cudaMemcpyAsync(lens_.get(), li.data(), li.size() * sizeof(int), cudaMemcpyHostToDevice, stream()));
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
  }

  void execute() {
    if (!s_.graph) {
      sdpa_->execute(handle_, bindings());
      return;
    }
    if (!graph_exec_) {
      GENBENCH_CHECK_CUDA(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
      try {
        sdpa_->execute(handle_, bindings());
      } catch (...) {
        cudaGraph_t broken = nullptr;
        cudaStreamEndCapture(stream(), &broken);
        if (broken) cudaGraphDestroy(broken);
        throw;
      }
      GENBENCH_CHECK_CUDA(cudaStreamEndCapture(stream(), &cuda_graph_));
      GENBENCH_CHECK_CUDA(cudaGraphInstantiate(&graph_exec_, cuda_graph_, 0));
      ++captures_;
    }
    GENBENCH_CHECK_CUDA(cudaGraphLaunch(graph_exec_, stream()));
  }

  void poison() {
    GENBENCH_CHECK_CUDA(cudaMemsetAsync(o_.get(), 0xff, o_.bytes(), stream()));  // NaN in fp16 and bf16
    GENBENCH_CHECK_CUDA(cudaMemsetAsync(stats_.get(), 0xff, stats_.bytes(), stream()));
  }

  // Sampled rows of a few sequences (the first, middle and last, and two seeded others): their
  // keys are gathered from the pools (our layout, through the block table) into a contiguous
  // scratch on the device, one copy per page, and checked against double on the host.
  Validation check() {
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
    const auto& d = s_.dims;
    const std::vector<std::int64_t> seqs = decode::sampled_sequences(d, seed_);
    decode::HostDecodeData x =
        decode::gather_sequences(s_, seqs, ctx_backend_, stream(), k_, v_, table_host_, lens_host_, 1.0f);
    const auto q = attention::download_as_float(q_.get(), s_.dtype, n_q_);
    const auto o = attention::download_as_float(o_.get(), s_.dtype, n_q_);
    const auto stats = attention::download_as_float(stats_.get(), DType::fp32, stats_.bytes() / sizeof(float));
    // cuDNN's stats are [b, heads, new_tokens]; the reference's LSE is [b, new_tokens, heads].
    const std::size_t T = static_cast<std::size_t>(d.new_tokens);
    return decode::check_sequences(
        s_, seqs, std::move(x), lens_host_, q, o, stats,
        [T](std::size_t r0, std::size_t t, std::size_t h) { return r0 + h * T + t; }, seed_);
  }

  DecodeShape s_;
  CudaBackend& be_;
  Backend& ctx_backend_;
  std::uint64_t seed_;
  PoolLayout layout_;
  std::size_t n_q_ = 0, n_pool_ = 0;
  DeviceBuffer q_, o_, stats_, k_, v_, ck_, cv_, table_, lens_, seq_q_, ws_;
  std::vector<std::int32_t> table_host_;
  std::vector<std::int64_t> lens_host_;
  cudnnHandle_t handle_ = nullptr;
  std::unique_ptr<DecodeGraph> sdpa_;
  cudaGraph_t cuda_graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
  int captures_ = 0;
  std::string graph_note_;
};

class DecodeCudnn final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = DecodeShape::from(p);
    const auto& d = s.dims;
    auto& be = cuda_backend_of(ctx.backend);
    if (be.properties().major < 8) return "cuDNN's fused attention needs sm_80 or newer";
    const auto version = static_cast<long long>(cudnnGetVersion());
    if (version < 90500)
      return strprintf("decode/cudnn needs cuDNN 9.5 or newer (paged-cache load, sequence-length tensors); found %lld",
                       version);
    if (s.kv_dtype != s.dtype) {
      if (s.kv_dtype == DType::fp8_e4m3)
        return "cuDNN's SDPA has no engine for fp8_e4m3 K/V with " + std::string(dtype_name(s.dtype)) +
               " Q (its fp8 SDPA takes Q, K and V all in fp8)";
      return "cuDNN's SDPA takes K/V in Q's type";
    }
    if (d.head_dim % 8 != 0 || d.head_dim > 256) return "cuDNN's SDPA needs head_dim a multiple of 8, at most 256";
    if (d.cache >= (std::int64_t{1} << 31)) return "cache too long for cuDNN's int32 sequence lengths";
    const LayoutChoice c = choose_layout(s, be.device());
    if (!c.ok) return strprintf("cuDNN %lld builds no plan for this graph (%s)", version, c.why.c_str());
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    const auto s = DecodeShape::from(p);
    const LayoutChoice c = choose_layout(s, cuda_backend_of(ctx.backend).device());
    if (!c.ok) throw Error("decode/cudnn: " + c.why);
    return std::make_unique<DecodeCudnnCase>(s, ctx, c.layout);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_decode_cudnn() { return std::make_unique<DecodeCudnn>(); }

}  // namespace genbench

#endif  // GENBENCH_HAVE_CUDNN
