// grouped_gemm/reference on the host backend: D_g = X_g W_g^T for every group, rows of the
// groups stacked (group g's rows follow group g-1's), W_g n x k, fp32 accumulation, inputs
// normal(0, 1) rounded to the point's type. Validation: sampled rows of every group size
// class against double sums, relative to the sum of |products| (tolerance 1e-5).
#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "ops/fill.h"
#include "ops/grouped_gemm/grouped_gemm.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

constexpr double kHostFlopLimit = 2e10;

class GroupedReferenceCase final : public Case {
 public:
  GroupedReferenceCase(const GroupedShape& s, Context& ctx) : s_(s), sizes_(s.sizes()) {
    rows_ = s.total_rows();
    x_.resize(static_cast<std::size_t>(rows_ * s.k));
    w_.resize(static_cast<std::size_t>(s.groups * s.n * s.k));
    d_.assign(static_cast<std::size_t>(rows_ * s.n), 0.0f);
    fill_random(x_, ctx.seed + 21, s.dtype);
    fill_random(w_, ctx.seed + 22, s.dtype, 0.05f);
    mem_ = ctx.backend.allocate((x_.size() + w_.size() + d_.size()) * sizeof(float));
  }

  void run() override {
    std::int64_t row0 = 0;
    for (std::int64_t g = 0; g < s_.groups; ++g) {
      const std::int64_t mg = sizes_[static_cast<std::size_t>(g)];
      const float* w = w_.data() + g * s_.n * s_.k;
      for (std::int64_t i = row0; i < row0 + mg; ++i) {
        const float* x = x_.data() + i * s_.k;
        float* d = d_.data() + i * s_.n;
        for (std::int64_t j = 0; j < s_.n; ++j) {
          const float* wr = w + j * s_.k;
          float acc = 0;
          for (std::int64_t kk = 0; kk < s_.k; ++kk) acc += x[kk] * wr[kk];
          d[j] = acc;
        }
      }
      row0 += mg;
    }
  }

  Validation validate() override {
    std::fill(d_.begin(), d_.end(), std::nanf(""));
    run();
    Validation v;
    v.tolerance = 1e-5;
    double worst = 0;
    std::int64_t checked = 0, row0 = 0;
    for (std::int64_t g = 0; g < s_.groups; ++g) {
      const std::int64_t mg = sizes_[static_cast<std::size_t>(g)];
      // first and last row of every non-empty group, a few columns each
      for (const std::int64_t i : {row0, row0 + mg - 1}) {
        if (mg == 0) break;
        for (const std::int64_t j : {std::int64_t{0}, (g * 7919) % s_.n, s_.n - 1}) {
          double ref = 0, mag = 0;
          for (std::int64_t kk = 0; kk < s_.k; ++kk) {
            const double p = static_cast<double>(x_[static_cast<std::size_t>(i * s_.k + kk)]) *
                             w_[static_cast<std::size_t>((g * s_.n + j) * s_.k + kk)];
            ref += p;
            mag += std::fabs(p);
          }
          const double got = d_[static_cast<std::size_t>(i * s_.n + j)];
          worst = std::max(worst, std::isnan(got) ? INFINITY : std::fabs(got - ref) / std::max(mag, 1e-30));
          ++checked;
        }
      }
      row0 += mg;
    }
    v.error = worst;
    v.ok = worst <= v.tolerance;
    v.detail = strprintf(
        "max error %.3g on %lld elements (first and last row of every group) against double sums "
        "(tolerance %.0g)",
        worst, static_cast<long long>(checked), v.tolerance);
    return v;
  }

 private:
  GroupedShape s_;
  std::vector<std::int64_t> sizes_;
  std::int64_t rows_ = 0;
  std::vector<float> x_, w_, d_;
  DeviceBuffer mem_;
};

class GroupedReferenceHost final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = GroupedShape::from(p);
    if (s.flops() > kHostFlopLimit)
      return strprintf("%.2g FLOP is beyond the host backend's limit of %.0g", s.flops(), kHostFlopLimit);
    const double w = static_cast<double>(s.groups) * static_cast<double>(s.n) * static_cast<double>(s.k);
    if (w > 5e8) return strprintf("%.2g weights are beyond the host backend's limit of 5e8", w);
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<GroupedReferenceCase>(GroupedShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_grouped_gemm_reference_host() { return std::make_unique<GroupedReferenceHost>(); }

}  // namespace genbench
