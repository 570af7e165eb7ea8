// pointwise/reference on the host backend: each kind in fp32 on float buffers holding values of
// the point's dtype, every result rounded to it, as a device kernel stores them (dw and
// embedding_backward's gradient table stay fp32). The backward kinds' row math is shared with the
// tests (kernels/pointwise/common); dw is summed in fp32 over pieces of kDwRows rows, then the
// pieces' sums added, as a kernel's blocks and its second pass do.
#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "kernels/pointwise/common/pointwise_reference.h"
#include "ops/fill.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

constexpr double kHostElementLimit = 1 << 26;
constexpr std::int64_t kDwRows = 64;

class PointwiseHostCase final : public Case {
 public:
  PointwiseHostCase(const PointwiseShape& s, Context& ctx) : s_(s), seed_(ctx.seed) {
    const auto n = [](std::int64_t r, std::int64_t w) { return static_cast<std::size_t>(r * w); };
    const PointwiseKind k = s.kind;
    const bool table = k == PointwiseKind::embedding || k == PointwiseKind::embedding_backward;
    a_ = ctx.backend.allocate(sizeof(float) * (table ? n(s.vocab, s.hidden) : n(s.rows, s.in_width())));
    if (k == PointwiseKind::add_rmsnorm || is_norm_backward(k) || k == PointwiseKind::silu_mul_backward ||
        k == PointwiseKind::embedding_backward)
      b_ = ctx.backend.allocate(sizeof(float) * n(s.rows, s.hidden));
    if (k == PointwiseKind::add_rmsnorm_backward) c_ = ctx.backend.allocate(sizeof(float) * n(s.rows, s.hidden));
    if (!is_rope(k) && k != PointwiseKind::embedding_backward)
      y_ = ctx.backend.allocate(sizeof(float) * n(s.rows, s.out_width()));
    if (is_norm_backward(k)) dw_ = ctx.backend.allocate(sizeof(float) * static_cast<std::size_t>(s.hidden));
    if (k == PointwiseKind::rmsnorm || k == PointwiseKind::add_rmsnorm || is_norm_backward(k)) {
      weight_.resize(static_cast<std::size_t>(s.hidden));
      fill_random(weight_, seed_ + 3, s.dtype);
    }
    if (is_rope(k)) pointwise::rope_table(s.head_dim, cos_, sin_);
    index_ = pointwise::row_index(s, seed_);
    fill_inputs();
  }

  void run() override {
    if (is_norm_backward(s_.kind)) return norm_backward();
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
        case PointwiseKind::rope_backward: {
          const std::int64_t half = s_.head_dim / 2, w = s_.rope_width();
          const std::int64_t p = index_[static_cast<std::size_t>(r)];
          float* x = a + r * w;
          pointwise::rope_backward_row(w, s_.head_dim, cos_.data() + p * half, sin_.data() + p * half, x);
          for (std::int64_t i = 0; i < w; ++i) x[i] = rd(x[i]);
          break;
        }
        case PointwiseKind::silu_mul_backward:
          pointwise::silu_mul_backward_row(h, a + r * 2 * h, b_.as<float>() + r * h, y + r * 2 * h);
          for (std::int64_t i = 0; i < 2 * h; ++i) y[r * 2 * h + i] = rd(y[r * 2 * h + i]);
          break;
        case PointwiseKind::embedding_backward:  // fp32 table, no rounding: adds in row order
          pointwise::embedding_backward_row(h, b_.as<float>() + r * h,
                                            a + static_cast<std::int64_t>(index_[static_cast<std::size_t>(r)]) * h);
          break;
        case PointwiseKind::rmsnorm_backward:
        case PointwiseKind::add_rmsnorm_backward: break;  // norm_backward()
      }
  }

  Validation validate() override {
    fill_inputs();  // rope kinds and add_rmsnorm update their inputs in place; the gradient table zeroed
    const auto read = [this](pointwise::Buffer which, std::int64_t at, std::int64_t n) {
      using pointwise::Buffer;
      const DeviceBuffer& buf = which == Buffer::a   ? a_
                                : which == Buffer::b ? b_
                                : which == Buffer::c ? c_
                                : which == Buffer::y ? y_
                                                     : dw_;
      const float* p = buf.as<float>() + at;
      return std::vector<float>(p, p + n);
    };
    return pointwise::validate_rows(s_, index_, cos_, sin_, weight_, read, [this] {
      for (DeviceBuffer* out : {&y_, &dw_})
        if (out->get()) std::fill_n(out->as<float>(), out->bytes() / sizeof(float), std::nanf(""));
      run();  // embedding_backward adds into the table fill_inputs zeroed
    });
  }

 private:
  // rmsnorm_backward and add_rmsnorm_backward: dx a row at a time, dw summed in fp32 over pieces
  // of kDwRows rows, the pieces' sums then added in order.
  void norm_backward() {
    const std::int64_t h = s_.hidden;
    const float* dr = c_.get() ? c_.as<float>() : nullptr;
    float* dw = dw_.as<float>();
    std::fill_n(dw, h, 0.0f);
    std::vector<float> piece(static_cast<std::size_t>(h)), dx(static_cast<std::size_t>(h));
    for (std::int64_t r0 = 0; r0 < s_.rows; r0 += kDwRows) {
      std::fill(piece.begin(), piece.end(), 0.0f);
      for (std::int64_t r = r0; r < std::min(s_.rows, r0 + kDwRows); ++r) {
        pointwise::rmsnorm_backward_row(h, a_.as<float>() + r * h, weight_.data(), b_.as<float>() + r * h,
                                        dr ? dr + r * h : nullptr, dx.data(), piece.data());
        for (std::int64_t i = 0; i < h; ++i)
          y_.as<float>()[r * h + i] = round_to(s_.dtype, dx[static_cast<std::size_t>(i)]);
      }
      for (std::int64_t i = 0; i < h; ++i) dw[i] += piece[static_cast<std::size_t>(i)];
    }
  }

  void fill_inputs() {
    const auto fill = [this](DeviceBuffer& buf, std::uint64_t seed) {
      std::vector<float> tmp(buf.bytes() / sizeof(float));
      fill_random(tmp, seed, s_.dtype);
      std::copy(tmp.begin(), tmp.end(), buf.as<float>());
    };
    if (s_.kind == PointwiseKind::embedding_backward) std::fill_n(a_.as<float>(), a_.bytes() / sizeof(float), 0.0f);
    else fill(a_, seed_ + 1);
    if (b_.get()) fill(b_, seed_ + 2);
    if (c_.get()) fill(c_, seed_ + 4);
  }

  PointwiseShape s_;
  std::uint64_t seed_;
  DeviceBuffer a_, b_, c_, y_, dw_;
  std::vector<float> weight_, cos_, sin_;
  std::vector<std::int32_t> index_;
};

class PointwiseReferenceHost final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = PointwiseShape::from(p);
    const double elements = static_cast<double>(s.rows) * static_cast<double>(std::max(s.in_width(), s.out_width())) +
                            (s.kind == PointwiseKind::embedding || s.kind == PointwiseKind::embedding_backward
                                 ? static_cast<double>(s.vocab) * static_cast<double>(s.hidden)
                                 : 0.0);
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
