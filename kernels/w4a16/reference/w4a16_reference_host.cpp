// w4a16/reference on the host backend: kernels/w4a16/common's reference_gemm (weights
// dequantised to fp32 exactly, then fp32 accumulation in k order) on seeded inputs: A
// normal(0, 1) rounded to the activation type, codes uniform 0..15, scales in [0.005, 0.015)
// rounded to the activation type, zero points uniform 0..15 (uint4). Validation compares sampled
// elements with a double-precision sum relative to the sum of |products| (tolerance 1e-5).
#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "kernels/w4a16/common/w4a16_layout.h"
#include "ops/fill.h"
#include "ops/implementation.h"
#include "ops/w4a16/w4a16.h"

namespace genbench {

namespace {

constexpr double kHostFlopLimit = 2e10;

class W4a16ReferenceCase final : public Case {
 public:
  W4a16ReferenceCase(const W4a16Shape& s, Context& ctx) : s_(s) {
    const auto m = static_cast<std::size_t>(s.m), n = static_cast<std::size_t>(s.n), k = static_cast<std::size_t>(s.k);
    const auto rows = static_cast<std::size_t>(s.groups());
    a_.resize(m * k);
    fill_random(a_, ctx.seed + 11, s.dtype);
    codes_.resize(k * n);
    for (std::size_t i = 0; i < codes_.size(); ++i) codes_[i] = w4a16::random_code(ctx.seed + 12, i);
    scales_.resize(rows * n);
    for (std::size_t i = 0; i < scales_.size(); ++i)
      scales_[i] = round_to(s.dtype, w4a16::random_scale(ctx.seed + 13, i));
    if (s.zero_points) {
      zeros_.resize(rows * n);
      for (std::size_t i = 0; i < zeros_.size(); ++i) zeros_[i] = w4a16::random_code(ctx.seed + 14, i);
    }
    // Count the operands against the backend's memory like the device cases do.
    mem_ = ctx.backend.allocate((a_.size() + scales_.size() + m * n) * sizeof(float) + codes_.size() + zeros_.size());
  }

  void run() override { d_ = w4a16::reference_gemm(a_, codes_, scales_, zeros_, s_.m, s_.n, s_.k, s_.group_k()); }

  Validation validate() override {
    d_.clear();
    run();
    Validation v;
    v.tolerance = 1e-5;
    const std::int64_t total = s_.m * s_.n, g = s_.group_k();
    const std::int64_t step = std::max<std::int64_t>(1, total / 256);
    double worst = 0;
    std::int64_t checked = 0;
    for (std::int64_t e = 0; e < total; e += step) {
      for (const std::int64_t x : {e, total - 1}) {
        const std::int64_t i = x / s_.n, j = x % s_.n;
        double ref = 0, mag = 0;
        for (std::int64_t kk = 0; kk < s_.k; ++kk) {
          const auto gi = static_cast<std::size_t>((kk / g) * s_.n + j);
          const std::uint8_t z = zeros_.empty() ? std::uint8_t{w4a16::kSymmetricZero} : zeros_[gi];
          const double p = static_cast<double>(a_[static_cast<std::size_t>(i * s_.k + kk)]) *
                           w4a16::dequantize(codes_[static_cast<std::size_t>(kk * s_.n + j)], z, scales_[gi]);
          ref += p;
          mag += std::fabs(p);
        }
        const double got = d_.size() == static_cast<std::size_t>(total) ? d_[static_cast<std::size_t>(x)] : NAN;
        worst = std::max(worst, std::isnan(got) ? INFINITY : std::fabs(got - ref) / std::max(mag, 1e-30));
        ++checked;
      }
    }
    v.error = worst;
    v.ok = worst <= v.tolerance;
    v.detail = strprintf(
        "max error %.3g on %lld sampled elements against a double sum of the dequantised weights, "
        "relative to sum |a w| (tolerance %.0g)",
        worst, static_cast<long long>(checked), v.tolerance);
    return v;
  }

 private:
  W4a16Shape s_;
  std::vector<float> a_, scales_, d_;
  std::vector<std::uint8_t> codes_, zeros_;
  DeviceBuffer mem_;
};

class W4a16ReferenceHost final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = W4a16Shape::from(p);
    if (s.cold) return "cold-cache mode needs the cuda backend";
    if (s.flops() > kHostFlopLimit)
      return strprintf("%.2g FLOP is beyond the host backend's limit of %.0g", s.flops(), kHostFlopLimit);
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<W4a16ReferenceCase>(W4a16Shape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_w4a16_reference_host() { return std::make_unique<W4a16ReferenceHost>(); }

}  // namespace genbench
