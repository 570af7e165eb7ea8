// gemm/reference on the host backend: D = op(A) op(B), row-major, fp32 accumulation (exact
// integer accumulation for int8), inputs rounded to the point's precision.
// A is stored m x k ("n") or k x m ("t"); B is stored k x n ("n") or n x k ("t").
#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "ops/fill.h"
#include "ops/gemm/gemm.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

constexpr double kHostFlopLimit = 2e10;

class GemmReferenceHostCase final : public Case {
 public:
  GemmReferenceHostCase(const GemmShape& s, Context& ctx) : s_(s) {
    const auto na = static_cast<std::size_t>(s.m * s.k), nb = static_cast<std::size_t>(s.k * s.n),
               nd = static_cast<std::size_t>(s.m * s.n), bt = static_cast<std::size_t>(s.batch);
    a_ = ctx.backend.allocate(na * bt * sizeof(float));
    b_ = ctx.backend.allocate(nb * bt * sizeof(float));
    d_ = ctx.backend.allocate(nd * bt * sizeof(float));
    std::vector<float> tmp(na * bt);
    // int8 inputs are small integers; the others normal(0,1) in their precision.
    const float scale = s.dtype == DType::int8 ? 8.0f : 1.0f;
    fill_random(tmp, ctx.seed + 11, s.dtype, scale);
    std::copy(tmp.begin(), tmp.end(), a_.as<float>());
    tmp.resize(nb * bt);
    fill_random(tmp, ctx.seed + 12, s.dtype, scale);
    std::copy(tmp.begin(), tmp.end(), b_.as<float>());
    nd_ = nd * bt;
  }

  float a(std::int64_t bt, std::int64_t i, std::int64_t kk) const {
    const float* p = a_.as<float>() + bt * s_.m * s_.k;
    return s_.trans_a ? p[kk * s_.m + i] : p[i * s_.k + kk];
  }
  float b(std::int64_t bt, std::int64_t kk, std::int64_t j) const {
    const float* p = b_.as<float>() + bt * s_.k * s_.n;
    return s_.trans_b ? p[j * s_.k + kk] : p[kk * s_.n + j];
  }

  void run() override {
    // i-k-j order keeps the inner loop contiguous in D (and in B when not transposed).
    float* d = d_.as<float>();
    for (std::int64_t bt = 0; bt < s_.batch; ++bt) {
      float* db = d + bt * s_.m * s_.n;
      std::fill(db, db + s_.m * s_.n, 0.0f);
      for (std::int64_t i = 0; i < s_.m; ++i)
        for (std::int64_t kk = 0; kk < s_.k; ++kk) {
          const float av = a(bt, i, kk);
          float* row = db + i * s_.n;
          for (std::int64_t j = 0; j < s_.n; ++j) row[j] += av * b(bt, kk, j);
        }
    }
  }

  Validation validate() override {
    std::fill(d_.as<float>(), d_.as<float>() + nd_, std::nanf(""));
    run();
    Validation v;
    v.tolerance = s_.dtype == DType::int8 ? 0.0 : 1e-5;
    double worst = 0;
    const std::int64_t total = s_.batch * s_.m * s_.n;
    const std::int64_t step = std::max<std::int64_t>(1, total / 256);
    std::vector<std::int64_t> picks;
    for (std::int64_t e = 0; e < total; e += step) picks.push_back(e);
    picks.push_back(total - 1);  // the last element catches tail errors
    for (const std::int64_t e : picks) {
      const std::int64_t bt = e / (s_.m * s_.n), i = (e / s_.n) % s_.m, j = e % s_.n;
      double ref = 0, mag = 0;
      for (std::int64_t kk = 0; kk < s_.k; ++kk) {
        const double x = static_cast<double>(a(bt, i, kk)) * static_cast<double>(b(bt, kk, j));
        ref += x;
        mag += std::fabs(x);
      }
      const double got = d_.as<float>()[e];
      // Error relative to the sum of |products|, the scale rounding errors grow with. Small
      // integer products (int8) are exact in fp32 while partial sums stay below 2^24.
      const bool exact = s_.dtype == DType::int8 && mag < 16777216.0;
      const double err = std::isnan(got) ? INFINITY
                         : exact         ? std::fabs(got - ref)
                                         : std::fabs(got - ref) / std::max(mag, 1.0);
      worst = std::max(worst, err);
    }
    v.error = worst;
    v.ok = worst <= v.tolerance;
    v.detail =
        strprintf("max error %.3g on sampled elements against a double reference (tolerance %.1g)", worst, v.tolerance);
    return v;
  }

 private:
  GemmShape s_;
  DeviceBuffer a_, b_, d_;
  std::size_t nd_ = 0;
};

class GemmReferenceHost final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = GemmShape::from(p);
    if (s.graph) return "graph mode needs the cuda backend";
    if (s.cold) return "cold-cache mode needs the cuda backend";
    if (s.flops() > kHostFlopLimit)
      return strprintf("%.2g FLOP is beyond the host backend's limit of %.0g", s.flops(), kHostFlopLimit);
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<GemmReferenceHostCase>(GemmShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_gemm_reference_host() { return std::make_unique<GemmReferenceHost>(); }

}  // namespace genbench
