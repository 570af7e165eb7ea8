// pointwise/reference on the host backend: each kind in fp32 on float buffers holding values of
// the point's dtype, every result rounded to it, as a device kernel stores them.
#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "kernels/pointwise/common/pointwise_reference.h"
#include "ops/fill.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

constexpr double kHostElementLimit = 1 << 26;

class PointwiseHostCase final : public Case {
 public:
  PointwiseHostCase(const PointwiseShape& s, Context& ctx) : s_(s), seed_(ctx.seed) {
    const auto n = [](std::int64_t r, std::int64_t w) { return static_cast<std::size_t>(r * w); };
    const std::size_t in = n(s.rows, s.in_width()), out = n(s.rows, s.out_width());
    a_ = ctx.backend.allocate(sizeof(float) * (s.kind == PointwiseKind::embedding ? n(s.vocab, s.hidden) : in));
    if (s.kind == PointwiseKind::add_rmsnorm) b_ = ctx.backend.allocate(sizeof(float) * in);
    if (s.kind != PointwiseKind::rope) y_ = ctx.backend.allocate(sizeof(float) * out);
    if (s.kind == PointwiseKind::rmsnorm || s.kind == PointwiseKind::add_rmsnorm) {
      weight_.resize(static_cast<std::size_t>(s.hidden));
      fill_random(weight_, seed_ + 3, s.dtype);
    }
    if (s.kind == PointwiseKind::rope) pointwise::rope_table(s.head_dim, cos_, sin_);
    index_ = pointwise::row_index(s, seed_);
    fill_inputs();
  }

  void run() override {
    const std::int64_t h = s_.hidden;
    float* a = a_.as<float>();
    float* y = y_.as<float>();
    const auto rd = [&](float x) { return round_to(s_.dtype, x); };
    for (std::int64_t r = 0; r < s_.rows; ++r) switch (s_.kind) {
        case PointwiseKind::rmsnorm:
        case PointwiseKind::add_rmsnorm: {
          float* x = a + r * h;
          float* res = s_.kind == PointwiseKind::add_rmsnorm ? b_.as<float>() + r * h : nullptr;
          float ss = 0;
          for (std::int64_t i = 0; i < h; ++i) {
            const float v = res ? (res[i] = rd(x[i] + res[i])) : x[i];
            ss += v * v;
          }
          const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + PointwiseShape::kEps);
          for (std::int64_t i = 0; i < h; ++i) y[r * h + i] = rd((res ? res[i] : x[i]) * inv * weight_[i]);
          break;
        }
        case PointwiseKind::rope: {
          const std::int64_t d = s_.head_dim, half = d / 2, w = s_.rope_width();
          const float* c = cos_.data() + index_[static_cast<std::size_t>(r)] * half;
          const float* sn = sin_.data() + index_[static_cast<std::size_t>(r)] * half;
          for (std::int64_t head = 0; head < w / d; ++head) {
            float* x = a + r * w + head * d;
            for (std::int64_t i = 0; i < half; ++i) {
              const float x1 = x[i], x2 = x[half + i];
              x[i] = rd(x1 * c[i] - x2 * sn[i]);
              x[half + i] = rd(x2 * c[i] + x1 * sn[i]);
            }
          }
          break;
        }
        case PointwiseKind::silu_mul:
          for (std::int64_t i = 0; i < h; ++i) {
            const float g = a[r * 2 * h + i], u = a[r * 2 * h + h + i];
            y[r * h + i] = rd(g / (1.0f + std::exp(-g)) * u);
          }
          break;
        case PointwiseKind::embedding:
          std::copy_n(a + static_cast<std::int64_t>(index_[static_cast<std::size_t>(r)]) * h, h, y + r * h);
          break;
      }
  }

  Validation validate() override {
    fill_inputs();  // rope and add_rmsnorm update their inputs in place
    const auto read = [this](pointwise::Buffer which, std::int64_t at, std::int64_t n) {
      const float* p = (which == pointwise::Buffer::a ? a_ : which == pointwise::Buffer::b ? b_ : y_).as<float>() + at;
      return std::vector<float>(p, p + n);
    };
    return pointwise::validate_rows(s_, index_, cos_, sin_, weight_, read, [this] {
      if (y_.get()) std::fill_n(y_.as<float>(), y_.bytes() / sizeof(float), std::nanf(""));
      run();
    });
  }

 private:
  void fill_inputs() {
    std::vector<float> tmp(a_.bytes() / sizeof(float));
    fill_random(tmp, seed_ + 1, s_.dtype);
    std::copy(tmp.begin(), tmp.end(), a_.as<float>());
    if (b_.get()) {
      fill_random(tmp, seed_ + 2, s_.dtype);
      std::copy(tmp.begin(), tmp.end(), b_.as<float>());
    }
  }

  PointwiseShape s_;
  std::uint64_t seed_;
  DeviceBuffer a_, b_, y_;
  std::vector<float> weight_, cos_, sin_;
  std::vector<std::int32_t> index_;
};

class PointwiseReferenceHost final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = PointwiseShape::from(p);
    const double elements =
        static_cast<double>(s.rows) * static_cast<double>(std::max(s.in_width(), s.out_width())) +
        (s.kind == PointwiseKind::embedding ? static_cast<double>(s.vocab) * static_cast<double>(s.hidden) : 0.0);
    if (elements > kHostElementLimit)
      return strprintf("%.3g elements is beyond the host backend's limit of %.3g", elements, kHostElementLimit);
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<PointwiseHostCase>(PointwiseShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_pointwise_reference_host() { return std::make_unique<PointwiseReferenceHost>(); }

}  // namespace genbench
