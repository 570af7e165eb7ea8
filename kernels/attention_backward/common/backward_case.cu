#include "kernels/attention_backward/common/backward_case.h"

#include <algorithm>

#include "core/error.h"
#include "core/strings.h"
#include "kernels/attention/common/attention_case.h"
#include "kernels/attention/reference/attention_reference.h"
#include "kernels/attention_backward/common/backward_validate.h"
#include "kernels/common/device_fill.h"
#include "ops/attention_backward/attention_backward.h"

namespace genbench::attention_backward {

namespace {

std::vector<int> cumulative(const std::vector<std::int64_t>& lens) {
  std::vector<int> cu(lens.size() + 1, 0);
  for (std::size_t b = 0; b < lens.size(); ++b) cu[b + 1] = cu[b] + static_cast<int>(lens[b]);
  return cu;
}

}  // namespace

DeviceBackwardCase::DeviceBackwardCase(const AttentionShape& s, Context& ctx)
    : s_(s), be_(cuda_backend_of(ctx.backend)), seed_(ctx.seed) {
  rows_q_ = s.batch * s.seqlen_q;
  rows_k_ = s.batch * s.seqlen_k;
  len_q_ = s.lengths_q();
  len_k_ = s.lengths_k();
  const std::size_t el = dtype_size(s.dtype);
  const auto n_q = static_cast<std::size_t>(rows_q_ * s.heads * s.head_dim);
  const auto n_kv = static_cast<std::size_t>(rows_k_ * s.heads_kv * s.head_dim);
  q_ = be_.allocate(n_q * el);
  k_ = be_.allocate(n_kv * el);
  v_ = be_.allocate(n_kv * el);
  o_ = be_.allocate(n_q * el);
  do_ = be_.allocate(n_q * el);
  dq_ = be_.allocate(n_q * el);
  dk_ = be_.allocate(n_kv * el);
  dv_ = be_.allocate(n_kv * el);
  lse_ = be_.allocate(static_cast<std::size_t>(rows_q_ * s.heads) * sizeof(float));
  cu_q_ = be_.allocate(static_cast<std::size_t>(s.batch + 1) * sizeof(int));
  cu_k_ = be_.allocate(static_cast<std::size_t>(s.batch + 1) * sizeof(int));
  fill_normal_device(q_.get(), static_cast<std::int64_t>(n_q), seed_ + 1, s.dtype, 1.0f, stream());
  fill_normal_device(k_.get(), static_cast<std::int64_t>(n_kv), seed_ + 2, s.dtype, 1.0f, stream());
  fill_normal_device(v_.get(), static_cast<std::int64_t>(n_kv), seed_ + 3, s.dtype, 1.0f, stream());
  fill_normal_device(do_.get(), static_cast<std::int64_t>(n_q), seed_ + 4, s.dtype, 1.0f, stream());
  // Packed rows past the last sequence (varlen) are never read; zero them so no NaN can leak.
  GENBENCH_CHECK_CUDA(cudaMemsetAsync(o_.get(), 0, o_.bytes(), stream()));
  const auto cq = cumulative(len_q_), ck = cumulative(len_k_);
  GENBENCH_CHECK_CUDA(
      cudaMemcpyAsync(cu_q_.get(), cq.data(), cq.size() * sizeof(int), cudaMemcpyHostToDevice, stream()));
  GENBENCH_CHECK_CUDA(
      cudaMemcpyAsync(cu_k_.get(), ck.data(), ck.size() * sizeof(int), cudaMemcpyHostToDevice, stream()));
  // The forward's O and LSE, from the device reference (fp32 arithmetic, O rounded to dtype).
  attention_reference_forward(s_, q_.get(), k_.get(), v_.get(), o_.get(), lse_.as<float>(), cu_q_.as<int>(),
                              cu_k_.as<int>(), rows_q_, stream());
  GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
}

DeviceBackwardCase::~DeviceBackwardCase() = default;

BackwardParams backward_params_of(const AttentionShape& s, bool deterministic) {
  BackwardParams p{};
  p.batch = static_cast<int>(s.batch);
  p.heads = static_cast<int>(s.heads);
  p.heads_kv = static_cast<int>(s.heads_kv);
  p.head_dim = static_cast<int>(s.head_dim);
  p.seqlen_q = static_cast<int>(s.seqlen_q);
  p.seqlen_k = static_cast<int>(s.seqlen_k);
  p.rows_q = s.batch * s.seqlen_q;
  p.rows_k = s.batch * s.seqlen_k;
  p.lse_head_stride = s.varlen ? p.rows_q : s.seqlen_q;
  p.varlen = s.varlen;
  p.causal = s.causal;
  p.deterministic = deterministic;
  p.dtype = s.dtype;
  p.scale = s.scale;
  return p;
}

BackwardParams DeviceBackwardCase::params() const {
  BackwardParams p = backward_params_of(s_, deterministic_);
  p.q = q_.get();
  p.k = k_.get();
  p.v = v_.get();
  p.o = o_.get();
  p.dout = do_.get();
  p.lse = lse_.as<float>();
  p.dq = dq_.get();
  p.dk = dk_.get();
  p.dv = dv_.get();
  p.cu_q = cu_q_.as<int>();
  p.cu_k = cu_k_.as<int>();
  return p;
}

void* DeviceBackwardCase::workspace(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  if (bytes > ws_bytes_) {
    ws_ = DeviceBuffer();
    ws_ = be_.allocate(bytes);
    ws_bytes_ = bytes;
  }
  return ws_.get();
}

void DeviceBackwardCase::execute() {
  if (s_.graph) {
    if (graph_.empty()) graph_.capture(stream(), 1, [&](int) { launch(stream()); });
    graph_.launch(stream());
  } else {
    launch(stream());
  }
}

void DeviceBackwardCase::run() { execute(); }

void DeviceBackwardCase::poison_outputs() {
  // All-ones bits are NaN in fp16 and bf16.
  GENBENCH_CHECK_CUDA(cudaMemsetAsync(dq_.get(), 0xff, dq_.bytes(), stream()));
  GENBENCH_CHECK_CUDA(cudaMemsetAsync(dk_.get(), 0xff, dk_.bytes(), stream()));
  GENBENCH_CHECK_CUDA(cudaMemsetAsync(dv_.get(), 0xff, dv_.bytes(), stream()));
}

Validation DeviceBackwardCase::validate() {
  poison_outputs();
  execute();
  GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
  HostBackwardData d;
  d.shape = s_;
  d.len_q = len_q_;
  d.len_k = len_k_;
  d.start_q = backward_starts(len_q_, s_.seqlen_q, s_.varlen);
  d.start_k = backward_starts(len_k_, s_.seqlen_k, s_.varlen);
  d.lse_rows = rows_q_;
  const auto n_q = static_cast<std::size_t>(rows_q_ * s_.heads * s_.head_dim);
  const auto n_kv = static_cast<std::size_t>(rows_k_ * s_.heads_kv * s_.head_dim);
  using attention::download_as_float;
  d.q = download_as_float(q_.get(), s_.dtype, n_q);
  d.k = download_as_float(k_.get(), s_.dtype, n_kv);
  d.v = download_as_float(v_.get(), s_.dtype, n_kv);
  d.o = download_as_float(o_.get(), s_.dtype, n_q);
  d.dout = download_as_float(do_.get(), s_.dtype, n_q);
  d.lse = download_as_float(lse_.get(), DType::fp32, static_cast<std::size_t>(rows_q_ * s_.heads));
  d.dq = download_as_float(dq_.get(), s_.dtype, n_q);
  d.dk = download_as_float(dk_.get(), s_.dtype, n_kv);
  d.dv = download_as_float(dv_.get(), s_.dtype, n_kv);
  Validation v = validate_backward(d, seed_);
  if (!v.ok || !deterministic_) return v;
  // Deterministic: a second execution gives the same bits.
  std::vector<std::uint16_t> first(n_q), again(n_q);
  GENBENCH_CHECK_CUDA(cudaMemcpy(first.data(), dq_.get(), n_q * 2, cudaMemcpyDeviceToHost));
  poison_outputs();
  execute();
  // The backend's stream does not order with cudaMemcpy's default stream: wait for it first.
  GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
  GENBENCH_CHECK_CUDA(cudaMemcpy(again.data(), dq_.get(), n_q * 2, cudaMemcpyDeviceToHost));
  const auto diff = std::mismatch(first.begin(), first.end(), again.begin());
  if (diff.first != first.end()) {
    v.ok = false;
    v.detail = strprintf("deterministic, yet dQ element %lld differs between two runs; ",
                         static_cast<long long>(diff.first - first.begin())) +
               v.detail;
    return v;
  }
  v.detail += "; dQ bitwise equal over two runs";
  return v;
}

std::string DeviceBackwardCase::variant() const {
  std::string v = config_name();
  if (s_.graph) v += v.empty() ? "graph" : " graph";
  return v;
}

namespace {

class FusedBackwardCase final : public DeviceBackwardCase {
 public:
  FusedBackwardCase(const FusedBackward& k, const AttentionShape& s, Context& ctx, bool deterministic)
      : DeviceBackwardCase(s, ctx), k_(k) {
    set_deterministic(deterministic);
    ws_ptr_ = workspace(k_.workspace_bytes(params()));
  }

 protected:
  void launch(cudaStream_t st) override { k_.launch(params(), ws_ptr_, st); }
  std::string config_name() const override { return k_.config_name(params()); }

 private:
  FusedBackward k_;
  void* ws_ptr_ = nullptr;
};

class FusedBackwardImpl final : public Implementation {
 public:
  explicit FusedBackwardImpl(const FusedBackward& k) : k_(k) {}
  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = AttentionShape::from(p);
    if (auto why = dtype_not_in(s.dtype, {DType::fp16, DType::bf16}); !why.empty()) return why;
    if (s.batch * s.seqlen_q > 2147483647 / s.heads || s.batch * s.seqlen_k > 2147483647 / s.heads_kv)
      return "more rows than 32-bit indices hold";
    const auto& prop = cuda_backend_of(ctx.backend).properties();
    return k_.unsupported(backward_params_of(s, p.boolean(attention_backward_axis::deterministic)), prop.major,
                          prop.minor);
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<FusedBackwardCase>(k_, AttentionShape::from(p), ctx,
                                               p.boolean(attention_backward_axis::deterministic));
  }

 private:
  FusedBackward k_;
};

}  // namespace

std::unique_ptr<Implementation> make_fused_backward(const FusedBackward& kernel) {
  return std::make_unique<FusedBackwardImpl>(kernel);
}

}  // namespace genbench::attention_backward
