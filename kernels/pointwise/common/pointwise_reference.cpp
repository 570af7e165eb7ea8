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
  const bool embedding = s.kind == PointwiseKind::embedding || s.kind == PointwiseKind::embedding_backward;
  if (!is_rope(s.kind) && !embedding) return v;
  v.resize(static_cast<std::size_t>(s.rows));
  for (std::int64_t r = 0; r < s.rows; ++r)
    v[static_cast<std::size_t>(r)] = embedding ? token_id(seed, r, s.vocab) : position(seed, r);
  return v;
}

namespace {

// The sum of v[0, n) in fp32, halves summed apart (a tree, as a block's reduction is): its error
// grows with log(n), not n, which keeps rms close enough for the backward's cancelling terms.
float pairwise_sum(const float* v, std::int64_t n) {
  if (n <= 8) {
    float s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += v[i];
    return s;
  }
  return pairwise_sum(v, n / 2) + pairwise_sum(v + n / 2, n - n / 2);
}

}  // namespace

void rmsnorm_backward_row(std::int64_t hidden, const float* x, const float* w, const float* dy, const float* dr,
                          float* dx, float* dw) {
  std::vector<float> sq(static_cast<std::size_t>(hidden)), wdx(sq.size());
  for (std::int64_t i = 0; i < hidden; ++i) {
    sq[static_cast<std::size_t>(i)] = x[i] * x[i];
    wdx[static_cast<std::size_t>(i)] = w[i] * dy[i] * x[i];
  }
  const float ss = pairwise_sum(sq.data(), hidden), d = pairwise_sum(wdx.data(), hidden);
  const float h = static_cast<float>(hidden);
  const float inv = 1.0f / std::sqrt(ss / h + PointwiseShape::kEps);
  const float c = d * inv * inv * inv / h;
  for (std::int64_t i = 0; i < hidden; ++i) {
    dx[i] = w[i] * dy[i] * inv - x[i] * c + (dr ? dr[i] : 0.0f);
    dw[i] += dy[i] * x[i] * inv;
  }
}

void rope_backward_row(std::int64_t width, std::int64_t head_dim, const float* cos, const float* sin, float* qk) {
  const std::int64_t half = head_dim / 2;
  for (std::int64_t head = 0; head < width / head_dim; ++head) {
    float* x = qk + head * head_dim;
    for (std::int64_t i = 0; i < half; ++i) {
      const float x1 = x[i], x2 = x[half + i];
      x[i] = x1 * cos[i] + x2 * sin[i];
      x[half + i] = x2 * cos[i] - x1 * sin[i];
    }
  }
}

void silu_mul_backward_row(std::int64_t hidden, const float* x, const float* dy, float* dx) {
  for (std::int64_t i = 0; i < hidden; ++i) {
    const float g = x[i], u = x[hidden + i];
    const float sig = 1.0f / (1.0f + std::exp(-g));
    dx[i] = dy[i] * u * sig * (1.0f + g * (1.0f - sig));
    dx[hidden + i] = dy[i] * g * sig;
  }
}

void embedding_backward_row(std::int64_t hidden, const float* dy, float* table_row) {
  for (std::int64_t i = 0; i < hidden; ++i) table_row[i] += dy[i];
}

namespace {

// Half a unit in the last place of the dtype at worst (its rounding); twice that for the backward
// kinds, whose outputs are differences of terms near 1 (w*dy/rms - x*c + dr, dy*u*sig*(...)): a
// small result carries the fp32 rounding of its terms on top of its own.
double tolerance_of(const PointwiseShape& s) {
  return std::ldexp(1.0, (s.dtype == DType::bf16 ? -8 : -11) + (is_backward(s.kind) ? 1 : 0));
}

// The worst of two validations, the second's detail appended.
void merge(Validation& v, const Validation& w) {
  v.ok = v.ok && w.ok;
  v.error = std::max(v.error, w.error);
  v.detail += "; " + w.detail;
}

// embedding_backward: up to 16 table rows that no id names, spread over the vocabulary, must
// still be 0 after the call.
Validation check_untouched(const PointwiseShape& s, const std::vector<std::int32_t>& index, const ReadElements& read) {
  std::vector<bool> used(static_cast<std::size_t>(s.vocab), false);
  for (std::int32_t id : index) used[static_cast<std::size_t>(id)] = true;
  Validation v;
  v.tolerance = tolerance_of(s);
  int checked = 0, written = 0;
  for (std::int64_t i = 0, last = -1; i < 16; ++i) {
    std::int64_t id = std::max(i * s.vocab / 16, last + 1);
    while (id < s.vocab && used[static_cast<std::size_t>(id)]) ++id;
    if (id >= s.vocab) break;
    last = id;
    ++checked;
    for (float e : read(Buffer::a, id * s.hidden, s.hidden))
      if (e != 0.0f) {
        ++written;
        break;
      }
  }
  v.ok = written == 0;
  v.detail = strprintf("%d table rows no id names read back, %d of them written (must be 0)", checked, written);
  return v;
}

}  // namespace

Validation check_weight_grad(const PointwiseShape& s, const ReadElements& read) {
  const std::int64_t h = s.hidden;
  std::vector<double> ref(static_cast<std::size_t>(h), 0.0);
  const std::int64_t piece = std::max<std::int64_t>(1, (std::int64_t{1} << 20) / h);  // rows read at a time
  for (std::int64_t r0 = 0; r0 < s.rows; r0 += piece) {
    const std::int64_t n = std::min(piece, s.rows - r0);
    const auto x = read(Buffer::a, r0 * h, n * h), dy = read(Buffer::b, r0 * h, n * h);
    for (std::int64_t r = 0; r < n; ++r) {
      const float* xr = x.data() + r * h;
      const float* dr = dy.data() + r * h;
      double ss = 0;
      for (std::int64_t i = 0; i < h; ++i) ss += static_cast<double>(xr[i]) * xr[i];
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(h) + PointwiseShape::kEps);
      for (std::int64_t i = 0; i < h; ++i) ref[static_cast<std::size_t>(i)] += static_cast<double>(dr[i]) * xr[i] * inv;
    }
  }
  const auto got = read(Buffer::dw, 0, h);
  double mean = 0;
  for (double e : ref) mean += std::fabs(e);
  mean /= static_cast<double>(std::max<std::int64_t>(h, 1));
  Validation v;
  v.tolerance = tolerance_of(s);
  std::int64_t worst_at = -1, nan_at = -1;
  for (std::int64_t i = 0; i < h && static_cast<std::size_t>(i) < got.size(); ++i) {
    const double g = got[static_cast<std::size_t>(i)], r = ref[static_cast<std::size_t>(i)];
    const double err = std::isnan(g) ? INFINITY : std::fabs(g - r) / (std::fabs(r) + 1e-3 * mean);
    if (std::isnan(g) && nan_at < 0) nan_at = i;
    if (err > v.error) {
      v.error = err;
      worst_at = i;
    }
  }
  v.ok = got.size() == ref.size() && v.error <= v.tolerance;
  v.detail = strprintf("dw over all %lld rows against double math, max error %.3g at column %lld",
                       static_cast<long long>(s.rows), v.error, static_cast<long long>(worst_at));
  if (nan_at >= 0) v.detail += strprintf(" (column %lld holds NaN: not written)", static_cast<long long>(nan_at));
  return v;
}

Validation validate_rows(const PointwiseShape& s, const std::vector<std::int32_t>& index, const std::vector<float>& cos,
                         const std::vector<float>& sin, const std::vector<float>& weight, const ReadElements& read,
                         const std::function<void()>& poison_and_run) {
  const auto rows = sample_rows(s.rows);
  const std::int64_t h = s.hidden, iw = s.in_width(), ow = s.out_width();
  const PointwiseKind k = s.kind;
  const auto at = [&index](std::int64_t r) { return static_cast<std::int64_t>(index[static_cast<std::size_t>(r)]); };
  std::vector<Sample> samples;
  if (k == PointwiseKind::embedding_backward) {
    // one sample a distinct id of the sampled rows: the dy rows of every row with that id
    std::vector<std::int64_t> ids;
    for (std::int64_t r : rows) {
      if (std::find(ids.begin(), ids.end(), at(r)) != ids.end()) continue;
      ids.push_back(at(r));
      Sample& x = samples.emplace_back();
      x.row = r;
      for (std::int64_t q = 0; q < s.rows; ++q)
        if (at(q) == at(r)) {
          const auto dy = read(Buffer::b, q * h, h);
          x.in_a.insert(x.in_a.end(), dy.begin(), dy.end());
        }
    }
  } else {
    samples.resize(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      Sample& x = samples[i];
      const std::int64_t r = x.row = rows[i];
      x.in_a = read(Buffer::a, (k == PointwiseKind::embedding ? at(r) : r) * iw, iw);
      if (k == PointwiseKind::add_rmsnorm || is_norm_backward(k) || k == PointwiseKind::silu_mul_backward)
        x.in_b = read(Buffer::b, r * h, h);
      if (k == PointwiseKind::add_rmsnorm_backward) x.in_c = read(Buffer::c, r * h, h);
      if (is_rope(k)) {
        const std::int64_t half = s.head_dim / 2, p = at(r);
        x.in_b.assign(cos.begin() + p * half, cos.begin() + (p + 1) * half);
        x.in_b.insert(x.in_b.end(), sin.begin() + p * half, sin.begin() + (p + 1) * half);
      }
    }
  }
  poison_and_run();
  for (Sample& x : samples) {
    if (k == PointwiseKind::embedding_backward) x.out_a = read(Buffer::a, at(x.row) * h, h);
    else x.out_a = read(is_rope(k) ? Buffer::a : Buffer::y, x.row * ow, ow);
    if (k == PointwiseKind::add_rmsnorm) x.out_b = read(Buffer::b, x.row * h, h);
  }
  Validation v = check_samples(s, weight, samples);
  if (is_norm_backward(k)) merge(v, check_weight_grad(s, read));
  if (k == PointwiseKind::embedding_backward) merge(v, check_untouched(s, index, read));
  return v;
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
    case PointwiseKind::rmsnorm_backward:
    case PointwiseKind::add_rmsnorm_backward: {
      double ss = 0, d = 0;
      for (std::size_t i = 0; i < h; ++i) {
        const double e = x.in_a[i];
        ss += e * e;
        d += static_cast<double>(w[i]) * x.in_b[i] * e;
      }
      const double rms = std::sqrt(ss / static_cast<double>(h) + PointwiseShape::kEps);
      const double c = d / (static_cast<double>(h) * rms * rms * rms);
      for (std::size_t i = 0; i < h; ++i)
        a.push_back(static_cast<double>(w[i]) * x.in_b[i] / rms - x.in_a[i] * c + (x.in_c.empty() ? 0.0 : x.in_c[i]));
      break;
    }
    case PointwiseKind::rope_backward: {  // the transpose of rope's rotation: by -angle
      const std::size_t d = static_cast<std::size_t>(s.head_dim), half = d / 2;
      a.resize(x.in_a.size());
      for (std::size_t head = 0; head * d < x.in_a.size(); ++head)
        for (std::size_t i = 0; i < half; ++i) {
          const double x1 = x.in_a[head * d + i], x2 = x.in_a[head * d + half + i];
          const double c = x.in_b[i], sn = x.in_b[half + i];
          a[head * d + i] = x1 * c + x2 * sn;
          a[head * d + half + i] = x2 * c - x1 * sn;
        }
      break;
    }
    case PointwiseKind::silu_mul_backward:
      a.resize(2 * h);
      for (std::size_t i = 0; i < h; ++i) {
        const double g = x.in_a[i], u = x.in_a[h + i], dy = x.in_b[i];
        const double sig = 1.0 / (1.0 + std::exp(-g));
        a[i] = dy * u * sig * (1.0 + g * (1.0 - sig));
        a[h + i] = dy * g * sig;
      }
      break;
    case PointwiseKind::embedding_backward:  // the sum of the dy rows of the id
      a.assign(h, 0.0);
      for (std::size_t i = 0; i < x.in_a.size(); ++i) a[i % h] += x.in_a[i];
      break;
  }
}

}  // namespace

Validation check_samples(const PointwiseShape& s, const std::vector<float>& weight,
                         const std::vector<Sample>& samples) {
  Validation v;
  const bool exact = s.kind == PointwiseKind::embedding;
  v.tolerance = exact ? 0.0 : tolerance_of(s);
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
  v.detail = strprintf("%s: %zu %s against double math, max error %.3g (tolerance %.3g) at row %lld",
                       pointwise_kind_name(s.kind), samples.size(),
                       s.kind == PointwiseKind::embedding_backward ? "table rows (ids of sampled rows)" : "rows", worst,
                       v.tolerance, static_cast<long long>(worst_row));
  if (s.kind == PointwiseKind::add_rmsnorm)
    v.detail += strprintf("; residual written back off by %.3g (must be 0)", worst_residual);
  if (nan_row >= 0) v.detail += strprintf("; row %lld holds NaN (not written)", static_cast<long long>(nan_row));
  return v;
}

}  // namespace genbench::pointwise
