// attention/reference on the host backend: fp32 arithmetic on inputs rounded to the point's
// precision. Validated against the same formula in double on sampled rows.
#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "ops/attention/attention.h"
#include "ops/attention/attention_math.h"
#include "ops/fill.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

constexpr double kHostFlopLimit = 2e10;  // beyond this a CPU point takes minutes

class AttentionReferenceHostCase final : public Case {
 public:
  AttentionReferenceHostCase(const AttentionShape& s, Context& ctx) : s_(s) {
    const auto n_q = static_cast<std::size_t>(s.batch * s.seqlen_q * s.heads * s.head_dim);
    const auto n_kv = static_cast<std::size_t>(s.batch * s.seqlen_k * s.heads_kv * s.head_dim);
    const auto n_v = static_cast<std::size_t>(s.batch * s.seqlen_k * s.heads_kv * s.dv());
    const auto n_o = static_cast<std::size_t>(s.batch * s.seqlen_q * s.heads * s.dv());
    const auto n_lse = static_cast<std::size_t>(s.batch * s.heads * s.seqlen_q);
    // Counted allocations, so the point reports its memory like a device point does.
    q_buf_ = ctx.backend.allocate(n_q * sizeof(float));
    k_buf_ = ctx.backend.allocate(n_kv * sizeof(float));
    v_buf_ = ctx.backend.allocate(n_v * sizeof(float));
    o_buf_ = ctx.backend.allocate(n_o * sizeof(float));
    lse_buf_ = ctx.backend.allocate(n_lse * sizeof(float));
    std::vector<float> tmp(n_q);
    fill_random(tmp, ctx.seed + 1, s.dtype);
    std::copy(tmp.begin(), tmp.end(), q_buf_.as<float>());
    tmp.resize(n_kv);
    fill_random(tmp, ctx.seed + 2, s.dtype);
    std::copy(tmp.begin(), tmp.end(), k_buf_.as<float>());
    tmp.resize(n_v);
    fill_random(tmp, ctx.seed + 3, s.dtype);
    std::copy(tmp.begin(), tmp.end(), v_buf_.as<float>());
    n_o_ = n_o;
    n_lse_ = n_lse;
  }

  void run() override {
    std::vector<float> scratch;
    const float* q = q_buf_.as<float>();
    const float* k = k_buf_.as<float>();
    const float* v = v_buf_.as<float>();
    float* o = o_buf_.as<float>();
    float* lse = lse_buf_.as<float>();
    for (std::int64_t b = 0; b < s_.batch; ++b)
      for (std::int64_t i = 0; i < s_.seqlen_q; ++i)
        for (std::int64_t h = 0; h < s_.heads; ++h)
          attention_row<float>(s_, q, k, v, b, h, i, o + ((b * s_.seqlen_q + i) * s_.heads + h) * s_.dv(),
                               lse + (b * s_.heads + h) * s_.seqlen_q + i, scratch);
  }

  Validation validate() override {
    // Poison the outputs so an unwritten element cannot pass.
    std::fill(o_buf_.as<float>(), o_buf_.as<float>() + n_o_, std::nanf(""));
    std::fill(lse_buf_.as<float>(), lse_buf_.as<float>() + n_lse_, std::nanf(""));
    run();
    Validation v;
    v.tolerance = 1e-5;
    for (std::size_t i = 0; i < n_o_; ++i)
      if (std::isnan(o_buf_.as<float>()[i])) {
        v.ok = false;
        v.error = INFINITY;
        v.detail = strprintf("output element %zu was not written (NaN)", i);
        return v;
      }
    // Compare sampled rows (always the first and last query rows) with a double computation.
    std::vector<double> ref(static_cast<std::size_t>(s_.dv())), scratch;
    double worst = 0, scale = 0;
    const std::int64_t rows = s_.batch * s_.heads * s_.seqlen_q;
    const std::int64_t step = std::max<std::int64_t>(1, rows / 64);
    for (std::int64_t r = 0; r < rows; r += step) {
      for (std::int64_t pick : {r, rows - 1}) {
        const std::int64_t i = pick % s_.seqlen_q, h = (pick / s_.seqlen_q) % s_.heads,
                           b = pick / (s_.seqlen_q * s_.heads);
        double ref_lse = 0;
        attention_row<double>(s_, q_buf_.as<float>(), k_buf_.as<float>(), v_buf_.as<float>(), b, h, i, ref.data(),
                              &ref_lse, scratch);
        const float* o = o_buf_.as<float>() + ((b * s_.seqlen_q + i) * s_.heads + h) * s_.dv();
        for (std::int64_t x = 0; x < s_.dv(); ++x) {
          worst = std::max(worst, std::fabs(o[x] - ref[static_cast<std::size_t>(x)]));
          scale = std::max(scale, std::fabs(ref[static_cast<std::size_t>(x)]));
        }
        const float lse = lse_buf_.as<float>()[(b * s_.heads + h) * s_.seqlen_q + i];
        if (std::isfinite(ref_lse))
          worst = std::max(worst, std::fabs(lse - ref_lse) / std::max(1.0, std::fabs(ref_lse)));
        else if (!(std::isinf(lse) && lse < 0)) worst = INFINITY;
      }
    }
    v.error = worst / std::max(scale, 1e-30);
    v.ok = v.error <= v.tolerance;
    v.detail = strprintf("max relative error %.3g against a double-precision reference (tolerance %.1g)", v.error,
                         v.tolerance);
    return v;
  }

 private:
  AttentionShape s_;
  DeviceBuffer q_buf_, k_buf_, v_buf_, o_buf_, lse_buf_;
  std::size_t n_o_ = 0, n_lse_ = 0;
};

class AttentionReferenceHost final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = AttentionShape::from(p);
    if (s.graph) return "graph mode needs the cuda backend";
    if (s.varlen) return "varlen (packed sequences) runs on the cuda backend";
    if (s.flops() > kHostFlopLimit)
      return strprintf("%.2g FLOP is beyond the host backend's limit of %.0g", s.flops(), kHostFlopLimit);
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<AttentionReferenceHostCase>(AttentionShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_attention_reference_host() { return std::make_unique<AttentionReferenceHost>(); }

}  // namespace genbench
