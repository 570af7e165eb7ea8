// attention_backward/reference on the host backend: fp32 arithmetic on inputs rounded to the
// point's precision (ops/attention_backward/attention_backward_math.h), the forward's O and LSE
// computed in fp32 when the case is prepared. Validated against double on sampled rows
// (kernels/attention_backward/common/backward_validate.h); the formula itself is checked against
// finite differences in tests/ops/attention_backward_test.cpp.
#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "kernels/attention_backward/common/backward_validate.h"
#include "ops/attention/attention_math.h"
#include "ops/attention_backward/attention_backward.h"
#include "ops/attention_backward/attention_backward_math.h"
#include "ops/fill.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

constexpr double kHostFlopLimit = 2e10;  // beyond this a CPU point takes minutes

class BackwardReferenceHostCase final : public Case {
 public:
  BackwardReferenceHostCase(const AttentionShape& s, Context& ctx) : s_(s), seed_(ctx.seed) {
    n_q_ = static_cast<std::size_t>(s.batch * s.seqlen_q * s.heads * s.head_dim);
    n_kv_ = static_cast<std::size_t>(s.batch * s.seqlen_k * s.heads_kv * s.head_dim);
    n_lse_ = static_cast<std::size_t>(s.batch * s.heads * s.seqlen_q);
    // Counted allocations, so the point reports its memory like a device point does.
    for (DeviceBuffer* b : {&q_, &o_, &do_, &dq_}) *b = ctx.backend.allocate(n_q_ * sizeof(float));
    for (DeviceBuffer* b : {&k_, &v_, &dk_, &dv_}) *b = ctx.backend.allocate(n_kv_ * sizeof(float));
    lse_ = ctx.backend.allocate(n_lse_ * sizeof(float));
    fill(q_, n_q_, ctx.seed + 1);
    fill(k_, n_kv_, ctx.seed + 2);
    fill(v_, n_kv_, ctx.seed + 3);
    fill(do_, n_q_, ctx.seed + 4);
    std::vector<float> scratch;
    for (std::int64_t b = 0; b < s.batch; ++b)
      for (std::int64_t i = 0; i < s.seqlen_q; ++i)
        for (std::int64_t h = 0; h < s.heads; ++h)
          attention_row<float>(s, q_.as<float>(), k_.as<float>(), v_.as<float>(), b, h, i,
                               o_.as<float>() + ((b * s.seqlen_q + i) * s.heads + h) * s.head_dim,
                               lse_.as<float>() + (b * s.heads + h) * s.seqlen_q + i, scratch);
  }

  void run() override {
    std::fill(dk_.as<float>(), dk_.as<float>() + n_kv_, 0.0f);
    std::fill(dv_.as<float>(), dv_.as<float>() + n_kv_, 0.0f);
    for (std::int64_t b = 0; b < s_.batch; ++b)
      for (std::int64_t h = 0; h < s_.heads; ++h)
        attention_backward_head<float, float>(s_, q_.as<float>(), k_.as<float>(), v_.as<float>(), o_.as<float>(),
                                              do_.as<float>(), lse_.as<float>(), b, h, dq_.as<float>(), dk_.as<float>(),
                                              dv_.as<float>());
  }

  Validation validate() override {
    for (DeviceBuffer* b : {&dq_, &dk_, &dv_}) std::fill(b->as<float>(), b->as<float>() + b->bytes() / 4, NAN);
    run();
    attention_backward::HostBackwardData d;
    d.shape = s_;
    d.shape.dtype = DType::fp32;  // fp32 arithmetic: held to the fp32 bound
    d.len_q = s_.lengths_q();
    d.len_k = s_.lengths_k();
    d.start_q = attention_backward::backward_starts(d.len_q, s_.seqlen_q, false);
    d.start_k = attention_backward::backward_starts(d.len_k, s_.seqlen_k, false);
    auto copy = [](const DeviceBuffer& b) { return std::vector<float>(b.as<float>(), b.as<float>() + b.bytes() / 4); };
    d.q = copy(q_);
    d.k = copy(k_);
    d.v = copy(v_);
    d.o = copy(o_);
    d.dout = copy(do_);
    d.lse = copy(lse_);
    d.dq = copy(dq_);
    d.dk = copy(dk_);
    d.dv = copy(dv_);
    return attention_backward::validate_backward(d, seed_);
  }

 private:
  void fill(DeviceBuffer& b, std::size_t n, std::uint64_t seed) const {
    std::vector<float> tmp(n);
    fill_random(tmp, seed, s_.dtype);
    std::copy(tmp.begin(), tmp.end(), b.as<float>());
  }

  AttentionShape s_;
  std::uint64_t seed_;
  std::size_t n_q_ = 0, n_kv_ = 0, n_lse_ = 0;
  DeviceBuffer q_, k_, v_, o_, do_, lse_, dq_, dk_, dv_;
};

class BackwardReferenceHost final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = AttentionShape::from(p);
    if (s.graph) return "graph mode needs the cuda backend";
    if (s.varlen) return "varlen (packed sequences) runs on the cuda backend";
    const double f = attention_backward_flops(s);
    if (f > kHostFlopLimit) return strprintf("%.2g FLOP is beyond the host backend's limit of %.0g", f, kHostFlopLimit);
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<BackwardReferenceHostCase>(AttentionShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_attention_backward_reference_host() {
  return std::make_unique<BackwardReferenceHost>();
}

}  // namespace genbench
