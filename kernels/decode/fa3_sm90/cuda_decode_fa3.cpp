// decode/fa3 on the cuda backend: the Implementation around decode_sm90.cu's kernel. Inputs
// are filled on the device with the project's seeded normal draw (fp8 K/V hold 64 x the draw,
// descale 1/64); the block table places the pages in a seeded random order. Validation
// (kernels/decode/common/decode_reference.h): outputs poisoned, one execution, sampled rows
// against double; paged layouts also against the contiguous layout of the same data (the
// pools rearranged on the host, same kernel plan: bit-exact); graph mode replays the one
// captured graph with two more sets of lengths (draws 1 and 2) and validates each.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <utility>

#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"
#include "core/error.h"
#include "core/strings.h"
#include "kernels/attention/common/attention_case.h"
#include "kernels/common/device_fill.h"
#include "kernels/decode/common/decode_reference.h"
#include "kernels/decode/common/decode_sample.h"
#include "kernels/decode/fa3_sm90/decode_sm90.h"
#include "ops/decode/decode.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

decode::fa3::Elem elem_of(DType t) {
  if (t == DType::bf16) return decode::fa3::Elem::bf16;
  if (t == DType::fp16) return decode::fa3::Elem::fp16;
  return decode::fa3::Elem::fp8_e4m3;
}

decode::fa3::Arguments arguments_of(const DecodeShape& s) {
  decode::fa3::Arguments a;
  const auto& d = s.dims;
  a.batch = static_cast<int>(d.batch);
  a.heads = static_cast<int>(d.heads);
  a.heads_kv = static_cast<int>(d.heads_kv);
  a.head_dim = static_cast<int>(d.head_dim);
  a.new_tokens = static_cast<int>(d.new_tokens);
  a.max_cache = static_cast<int>(d.cache);
  a.page_size = static_cast<int>(d.page_size);
  a.pages_per_seq = static_cast<int>(d.pages_per_seq());
  a.causal = d.causal;
  a.scale = s.scale;
  a.k_descale = a.v_descale = s.kv_descale();
  a.q_type = elem_of(s.dtype);
  a.kv_type = elem_of(s.kv_dtype);
  return a;
}

class DecodeFa3Case final : public Case {
 public:
  DecodeFa3Case(const DecodeShape& s, Context& ctx)
      : s_(s), be_(cuda_backend_of(ctx.backend)), ctx_backend_(ctx.backend), seed_(ctx.seed) {
    const auto& d = s.dims;
    n_q_ = static_cast<std::size_t>(d.batch * d.new_tokens * d.heads * d.head_dim);
    n_pool_ = static_cast<std::size_t>(d.pool_elements());
    q_ = ctx.backend.allocate(n_q_ * dtype_size(s.dtype));
    o_ = ctx.backend.allocate(n_q_ * dtype_size(s.dtype));
    lse_ = ctx.backend.allocate(n_q_ / static_cast<std::size_t>(d.head_dim) * sizeof(float));
    k_ = ctx.backend.allocate(n_pool_ * dtype_size(s.kv_dtype));
    v_ = ctx.backend.allocate(n_pool_ * dtype_size(s.kv_dtype));
    table_host_ = decode::block_table(d, seed_);
    table_ = ctx.backend.allocate(table_host_.size() * sizeof(int));
    lens_ = ctx.backend.allocate(static_cast<std::size_t>(d.batch) * sizeof(int));
    const float kv_fill = 1.0f / s.kv_descale();
    fill_normal_device(q_.get(), static_cast<std::int64_t>(n_q_), seed_ + 1, s.dtype, 1.0f, stream());
    fill_normal_device(k_.get(), static_cast<std::int64_t>(n_pool_), seed_ + 2, s.kv_dtype, kv_fill, stream());
    fill_normal_device(v_.get(), static_cast<std::int64_t>(n_pool_), seed_ + 3, s.kv_dtype, kv_fill, stream());
    GENBENCH_CHECK_CUDA(cudaMemcpyAsync(table_.get(), table_host_.data(), table_host_.size() * sizeof(int),
                                        cudaMemcpyHostToDevice, stream()));
    set_lengths(s.lengths());
    launcher_ = std::make_unique<decode::fa3::Launcher>(args(k_, v_, table_, s.dims.page_size),
                                                        be_.properties().multiProcessorCount);
    if (launcher_->workspace_size()) {
      ws_ = ctx.backend.allocate(launcher_->workspace_size());
      GENBENCH_CHECK_CUDA(cudaMemsetAsync(ws_.get(), 0, ws_.bytes(), stream()));  // the split counters start at 0
      launcher_->set_workspace(ws_.get());
    }
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
  }

  ~DecodeFa3Case() override {
    if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }

  void run() override { execute(); }

  std::string variant() const override { return launcher_->variant() + graph_note_; }

  Validation validate() override {
    poison();
    execute();
    Validation v = check();
    if (!v.ok) return v;
    if (s_.dims.page_size > 0) {
      Validation c = paged_vs_contiguous();
      v.detail += "; " + c.detail;
      if (!c.ok) {
        v.ok = false;
        v.error = c.error;
        return v;
      }
    }
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

  decode::fa3::Arguments args(const DeviceBuffer& k, const DeviceBuffer& v, const DeviceBuffer& table,
                              std::int64_t page_size) const {
    decode::fa3::Arguments a = arguments_of(s_);
    a.q = q_.get();
    a.k = k.get();
    a.v = v.get();
    a.o = o_.get();
    a.lse = lse_.as<float>();
    a.block_table = table.as<int>();
    a.cache_len = lens_.as<int>();
    a.page_size = static_cast<int>(page_size);
    if (page_size == 0) a.pages_per_seq = 1;
    return a;
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
      launcher_->run(stream());
      GENBENCH_CHECK_LAUNCH();
      return;
    }
    if (!graph_exec_) {
      GENBENCH_CHECK_CUDA(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
      launcher_->run(stream());
      GENBENCH_CHECK_CUDA(cudaStreamEndCapture(stream(), &graph_));
      GENBENCH_CHECK_CUDA(cudaGraphInstantiate(&graph_exec_, graph_, 0));
      ++captures_;
    }
    GENBENCH_CHECK_CUDA(cudaGraphLaunch(graph_exec_, stream()));
  }

  void poison() {
    GENBENCH_CHECK_CUDA(cudaMemsetAsync(o_.get(), 0xff, o_.bytes(), stream()));  // NaN in fp16 and bf16
    GENBENCH_CHECK_CUDA(cudaMemsetAsync(lse_.get(), 0xff, lse_.bytes(), stream()));
  }

  // Sampled rows of a few sequences (the first, middle and last, and two seeded others): their
  // keys are gathered from the pools into a contiguous scratch on the device (one copy per
  // page), so validation reads what it checks and no more, whatever the pool's size.
  Validation check() {
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
    const auto& d = s_.dims;
    const std::vector<std::int64_t> seqs = decode::sampled_sequences(d, seed_);
    decode::HostDecodeData x =
        decode::gather_sequences(s_, seqs, ctx_backend_, stream(), k_, v_, table_host_, lens_host_, s_.kv_descale());
    const auto q = attention::download_as_float(q_.get(), s_.dtype, n_q_);
    const auto o = attention::download_as_float(o_.get(), s_.dtype, n_q_);
    const auto lse = attention::download_as_float(lse_.get(), DType::fp32, lse_.bytes() / sizeof(float));
    // Our LSE is [b, new_tokens, heads], the reference's order.
    const std::size_t H = static_cast<std::size_t>(d.heads);
    return decode::check_sequences(
        s_, seqs, std::move(x), lens_host_, q, o, lse,
        [H](std::size_t r0, std::size_t t, std::size_t h) { return r0 + t * H + h; }, seed_);
  }

  // The same data in the contiguous layout (row b * cache + j, gathered on the device through
  // the block table), the same kernel plan: the outputs must agree bit for bit.
  Validation paged_vs_contiguous() {
    const auto& d = s_.dims;
    Validation v;
    const double flat_bytes = 2.0 * static_cast<double>(d.batch * d.cache * d.heads_kv * d.head_dim) *
                              static_cast<double>(dtype_size(s_.kv_dtype));
    if (flat_bytes > 16e9) {
      v.detail =
          strprintf("paged vs contiguous layout: skipped (a contiguous copy would need %.3g GB)", flat_bytes / 1e9);
      return v;
    }
    const std::size_t row = static_cast<std::size_t>(d.heads_kv * d.head_dim) * dtype_size(s_.kv_dtype);
    const std::size_t half = static_cast<std::size_t>(flat_bytes / 2);
    DeviceBuffer fk = ctx_backend_.allocate(half), fv = ctx_backend_.allocate(half);
    DeviceBuffer flat_table = ctx_backend_.allocate(sizeof(int) * static_cast<std::size_t>(d.batch));
    const int pps = static_cast<int>(d.pages_per_seq());
    decode::fa3::gather_contiguous(k_.get(), table_.as<int>(), static_cast<int>(d.page_size), pps,
                                   static_cast<int>(d.batch), static_cast<int>(d.cache), row, fk.get(), stream());
    decode::fa3::gather_contiguous(v_.get(), table_.as<int>(), static_cast<int>(d.page_size), pps,
                                   static_cast<int>(d.batch), static_cast<int>(d.cache), row, fv.get(), stream());
    GENBENCH_CHECK_LAUNCH();
    std::vector<int> ident(static_cast<std::size_t>(d.batch));
    for (std::size_t b = 0; b < ident.size(); ++b) ident[b] = static_cast<int>(b);
    GENBENCH_CHECK_CUDA(
        cudaMemcpyAsync(flat_table.get(), ident.data(), ident.size() * sizeof(int), cudaMemcpyHostToDevice, stream()));
    decode::fa3::Launcher contiguous(args(fk, fv, flat_table, 0), be_.properties().multiProcessorCount);
    contiguous.set_workspace(ws_.get());  // the same plan, so the same workspace size
    std::vector<std::uint8_t> paged_o(o_.bytes()), flat_o(o_.bytes());
    poison();
    launcher_->run(stream());
    GENBENCH_CHECK_LAUNCH();
    GENBENCH_CHECK_CUDA(cudaMemcpyAsync(paged_o.data(), o_.get(), o_.bytes(), cudaMemcpyDeviceToHost, stream()));
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
    poison();
    contiguous.run(stream());
    GENBENCH_CHECK_LAUNCH();
    GENBENCH_CHECK_CUDA(cudaMemcpyAsync(flat_o.data(), o_.get(), o_.bytes(), cudaMemcpyDeviceToHost, stream()));
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
    std::size_t diff = 0;
    const std::size_t el = dtype_size(s_.dtype);
    for (std::size_t i = 0; i < paged_o.size(); i += el)
      if (std::memcmp(&paged_o[i], &flat_o[i], el) != 0) ++diff;
    v.ok = diff == 0 && contiguous.num_splits() == launcher_->num_splits();
    v.error = static_cast<double>(diff);
    v.detail = strprintf("paged vs contiguous layout of the same data (%s / %s): %zu of %zu O elements differ",
                         launcher_->variant().c_str(), contiguous.variant().c_str(), diff, paged_o.size() / el);
    return v;
  }

  DecodeShape s_;
  CudaBackend& be_;
  Backend& ctx_backend_;
  std::uint64_t seed_;
  std::size_t n_q_ = 0, n_pool_ = 0;
  DeviceBuffer q_, o_, lse_, k_, v_, table_, lens_, ws_;
  std::vector<std::int32_t> table_host_;
  std::vector<std::int64_t> lens_host_;
  std::unique_ptr<decode::fa3::Launcher> launcher_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
  int captures_ = 0;
  std::string graph_note_;
};

class DecodeFa3 final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = DecodeShape::from(p);
    const auto& prop = cuda_backend_of(ctx.backend).properties();
    if (prop.major < 8) return "decode/fa3 needs sm_80 or newer (mma.sync, cp.async)";
    if (s.dims.cache >= (std::int64_t{1} << 31) || s.dims.batch * s.dims.cache >= (std::int64_t{1} << 40))
      return "decode/fa3: cache too long for its int32 key indices";
    return decode::fa3::can_implement(arguments_of(s));
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<DecodeFa3Case>(DecodeShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_decode_fa3() { return std::make_unique<DecodeFa3>(); }

}  // namespace genbench
