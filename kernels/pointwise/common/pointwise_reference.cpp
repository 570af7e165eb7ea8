#include "kernels/pointwise/common/pointwise_reference.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace genbench::pointwise {

namespace {
std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

std::int32_t token_id(std::uint64_t seed, std::int64_t r, std::int64_t vocab) {
  return static_cast<std::int32_t>(mix(seed * 0x100000001b3ull + static_cast<std::uint64_t>(r)) %
                                   static_cast<std::uint64_t>(vocab));
}

std::int32_t position(std::uint64_t seed, std::int64_t r) {
  const std::int64_t offset = static_cast<std::int64_t>(mix(seed ^ 0x726f7065ull) % PointwiseShape::kPositions);
  return static_cast<std::int32_t>((r + offset) % PointwiseShape::kPositions);
}

void rope_table(std::int64_t head_dim, std::vector<float>& cos, std::vector<float>& sin) {
  const std::int64_t half = head_dim / 2;
  cos.resize(static_cast<std::size_t>(PointwiseShape::kPositions * half));
  sin.resize(cos.size());
  for (std::int64_t p = 0; p < PointwiseShape::kPositions; ++p)
    for (std::int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(p) * std::pow(PointwiseShape::kTheta, -2.0 * static_cast<double>(i) /
                                                                                         static_cast<double>(head_dim));
      cos[static_cast<std::size_t>(p * half + i)] = static_cast<float>(std::cos(angle));
      sin[static_cast<std::size_t>(p * half + i)] = static_cast<float>(std::sin(angle));
    }
}

std::vector<std::int32_t> row_index(const PointwiseShape& s, std::uint64_t seed) {
  std::vector<std::int32_t> v;
  if (s.kind != PointwiseKind::rope && s.kind != PointwiseKind::embedding) return v;
  v.resize(static_cast<std::size_t>(s.rows));
  for (std::int64_t r = 0; r < s.rows; ++r)
    v[static_cast<std::size_t>(r)] = s.kind == PointwiseKind::rope ? position(seed, r) : token_id(seed, r, s.vocab);
  return v;
}

Validation validate_rows(const PointwiseShape& s, const std::vector<std::int32_t>& index, const std::vector<float>& cos,
                         const std::vector<float>& sin, const std::vector<float>& weight, const ReadElements& read,
                         const std::function<void()>& poison_and_run) {
  const auto rows = sample_rows(s.rows);
  std::vector<Sample> samples(rows.size());
  const std::int64_t h = s.hidden, iw = s.in_width(), ow = s.out_width();
  const bool residual = s.kind == PointwiseKind::add_rmsnorm;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Sample& x = samples[i];
    const std::int64_t r = x.row = rows[i];
    const std::int64_t src = s.kind == PointwiseKind::embedding ? index[static_cast<std::size_t>(r)] : r;
    x.in_a = read(Buffer::a, src * iw, iw);
    if (residual) x.in_b = read(Buffer::b, r * h, h);
    if (s.kind == PointwiseKind::rope) {
      const std::int64_t half = s.head_dim / 2, p = index[static_cast<std::size_t>(r)];
      x.in_b.assign(cos.begin() + p * half, cos.begin() + (p + 1) * half);
      x.in_b.insert(x.in_b.end(), sin.begin() + p * half, sin.begin() + (p + 1) * half);
    }
  }
  poison_and_run();
  for (Sample& x : samples) {
    x.out_a = read(s.kind == PointwiseKind::rope ? Buffer::a : Buffer::y, x.row * ow, ow);
    if (residual) x.out_b = read(Buffer::b, x.row * h, h);
  }
  return check_samples(s, weight, samples);
}

std::vector<std::int64_t> sample_rows(std::int64_t rows) {
  std::vector<std::int64_t> v;
  if (rows <= 64) {
    for (std::int64_t r = 0; r < rows; ++r) v.push_back(r);
    return v;
  }
  for (std::int64_t i = 0; i < 47; ++i) v.push_back(i * (rows - 1) / 47);
  v.push_back(rows - 1);
  return v;
}

namespace {

// Reference of one sample's outputs, in double.
void reference(const PointwiseShape& s, const std::vector<float>& w, const Sample& x, std::vector<double>& a,
               std::vector<double>& b) {
  const std::size_t h = static_cast<std::size_t>(s.hidden);
  a.clear();
  b.clear();
  switch (s.kind) {
    case PointwiseKind::rmsnorm:
    case PointwiseKind::add_rmsnorm: {
      std::vector<double> v(h);
      for (std::size_t i = 0; i < h; ++i) {
        v[i] = x.in_a[i];
        if (s.kind == PointwiseKind::add_rmsnorm) {
          v[i] = round_to(s.dtype, static_cast<float>(static_cast<double>(x.in_a[i]) + x.in_b[i]));
          b.push_back(v[i]);
        }
      }
      double ss = 0;
      for (double e : v) ss += e * e;
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(h) + PointwiseShape::kEps);
      for (std::size_t i = 0; i < h; ++i) a.push_back(v[i] * inv * w[i]);
      break;
    }
    case PointwiseKind::rope: {
      const std::size_t d = static_cast<std::size_t>(s.head_dim), half = d / 2;
      a.resize(x.in_a.size());
      for (std::size_t head = 0; head * d < x.in_a.size(); ++head)
        for (std::size_t i = 0; i < half; ++i) {
          const double x1 = x.in_a[head * d + i], x2 = x.in_a[head * d + half + i];
          const double c = x.in_b[i], sn = x.in_b[half + i];
          a[head * d + i] = x1 * c - x2 * sn;
          a[head * d + half + i] = x2 * c + x1 * sn;
        }
      break;
    }
    case PointwiseKind::silu_mul:
      for (std::size_t i = 0; i < h; ++i) {
        const double g = x.in_a[i], u = x.in_a[h + i];
        a.push_back(g / (1.0 + std::exp(-g)) * u);
      }
      break;
    case PointwiseKind::embedding: a.assign(x.in_a.begin(), x.in_a.end()); break;
  }
}

}  // namespace

Validation check_samples(const PointwiseShape& s, const std::vector<float>& weight,
                         const std::vector<Sample>& samples) {
  Validation v;
  const bool exact = s.kind == PointwiseKind::embedding;
  v.tolerance = exact ? 0.0 : (s.dtype == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11));
  double worst = 0, worst_residual = 0;
  std::int64_t worst_row = -1, nan_row = -1;
  std::vector<double> ra, rb;
  for (const Sample& x : samples) {
    reference(s, weight, x, ra, rb);
    double mean = 0;
    for (double e : ra) mean += std::fabs(e);
    mean /= static_cast<double>(std::max<std::size_t>(ra.size(), 1));
    if (x.out_a.size() != ra.size() || x.out_b.size() != rb.size()) {
      v.ok = false;
      v.detail = strprintf("row %lld: %zu outputs read back, %zu expected", static_cast<long long>(x.row),
                           x.out_a.size(), ra.size());
      return v;
    }
    for (std::size_t i = 0; i < ra.size(); ++i) {
      const double got = x.out_a[i];
      const double err = std::isnan(got) ? INFINITY : std::fabs(got - ra[i]) / (std::fabs(ra[i]) + 1e-3 * mean);
      if (std::isnan(got) && nan_row < 0) nan_row = x.row;
      if (err > worst) {
        worst = err;
        worst_row = x.row;
      }
    }
    for (std::size_t i = 0; i < rb.size(); ++i) {
      const double got = x.out_b[i];
      worst_residual = std::max(worst_residual, std::isnan(got) ? INFINITY : std::fabs(got - rb[i]));
    }
  }
  v.error = worst;
  v.ok = worst <= v.tolerance && worst_residual == 0;
  v.detail =
      strprintf("%s: %zu rows against double math, max error %.3g (tolerance %.3g) at row %lld",
                pointwise_kind_name(s.kind), samples.size(), worst, v.tolerance, static_cast<long long>(worst_row));
  if (s.kind == PointwiseKind::add_rmsnorm)
    v.detail += strprintf("; residual written back off by %.3g (must be 0)", worst_residual);
  if (nan_row >= 0) v.detail += strprintf("; row %lld holds NaN (not written)", static_cast<long long>(nan_row));
  return v;
}

}  // namespace genbench::pointwise
