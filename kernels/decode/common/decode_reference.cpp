#include "kernels/decode/common/decode_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <set>
#include <tuple>

namespace genbench::decode {

namespace {

double epsilon_of(DType t) {
  switch (t) {
    case DType::fp16: return std::ldexp(1.0, -10);
    case DType::bf16: return std::ldexp(1.0, -7);
    case DType::fp8_e4m3: return std::ldexp(1.0, -3);
    default: return std::ldexp(1.0, -23);
  }
}

std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0, double e = 0) {
  char buf[400];
  std::snprintf(buf, sizeof buf, f, a, b, c, d, e);
  return buf;
}

// Row (b, i, h)'s pointers: query, and K/V rows of key j through the block table.
struct Row {
  const HostDecodeData& x;
  std::int64_t b, i, h, hk, D, end;
  const float* q() const { return x.q.data() + ((b * x.dims.new_tokens + i) * x.dims.heads + h) * D; }
  std::int64_t at(std::int64_t j) const { return (pool_row(x.dims, x.table, b, j) * x.dims.heads_kv + hk) * D; }
  const float* k(std::int64_t j) const { return x.k.data() + at(j); }
  const float* v(std::int64_t j) const { return x.v.data() + at(j); }
};

Row row_of(const HostDecodeData& x, std::int64_t b, std::int64_t i, std::int64_t h) {
  const DecodeDims& d = x.dims;
  return Row{x, b, i, h, h / d.group(), d.head_dim, key_end(d, x.lengths[static_cast<std::size_t>(b)], i)};
}

// scale x max over the visible keys of sum |q_x k_x|: the size of the terms a score sums.
double score_magnitude(const Row& r) {
  double mag = 0;
  for (std::int64_t j = 0; j < r.end; ++j) {
    const float *q = r.q(), *k = r.k(j);
    double a = 0;
    for (std::int64_t x = 0; x < r.D; ++x) a += std::fabs(static_cast<double>(q[x]) * k[x]);
    mag = std::max(mag, a);
  }
  return mag * r.x.scale;
}

}  // namespace

std::int64_t pool_row(const DecodeDims& d, const std::vector<std::int32_t>& table, std::int64_t b, std::int64_t j) {
  const std::int64_t P = d.page_rows();
  const std::int32_t page = table[static_cast<std::size_t>(b * d.pages_per_seq() + j / P)];
  return static_cast<std::int64_t>(page) * P + j % P;
}

DType p_dtype(DType kv) { return kv == DType::bf16 ? DType::bf16 : DType::fp16; }

void reference_row(const HostDecodeData& x, std::int64_t b, std::int64_t i, std::int64_t h, double* out, double* lse) {
  const Row r = row_of(x, b, i, h);
  for (std::int64_t c = 0; c < r.D; ++c) out[c] = 0;
  if (r.end == 0) {
    *lse = -std::numeric_limits<double>::infinity();
    return;
  }
  std::vector<double> s(static_cast<std::size_t>(r.end));
  double mx = -std::numeric_limits<double>::infinity();
  for (std::int64_t j = 0; j < r.end; ++j) {
    const float *q = r.q(), *k = r.k(j);
    double dot = 0;
    for (std::int64_t c = 0; c < r.D; ++c) dot += static_cast<double>(q[c]) * k[c];
    s[static_cast<std::size_t>(j)] = dot * x.scale;
    mx = std::max(mx, s[static_cast<std::size_t>(j)]);
  }
  double sum = 0;
  for (std::int64_t j = 0; j < r.end; ++j) {
    const double p = std::exp(s[static_cast<std::size_t>(j)] - mx);
    sum += p;
    const float* v = r.v(j);
    for (std::int64_t c = 0; c < r.D; ++c) out[c] += p * v[c];
  }
  for (std::int64_t c = 0; c < r.D; ++c) out[c] /= sum;
  *lse = mx + std::log(sum);
}

void low_precision_row(const HostDecodeData& x, std::int64_t b, std::int64_t i, std::int64_t h, float* out,
                       float* lse) {
  const Row r = row_of(x, b, i, h);
  for (std::int64_t c = 0; c < r.D; ++c) out[c] = 0;
  if (r.end == 0) {
    *lse = -std::numeric_limits<float>::infinity();
    return;
  }
  std::vector<float> s(static_cast<std::size_t>(r.end));
  float mx = -std::numeric_limits<float>::infinity();
  for (std::int64_t j = 0; j < r.end; ++j) {
    const float *q = r.q(), *k = r.k(j);
    float dot = 0;
    for (std::int64_t c = 0; c < r.D; ++c) dot += q[c] * k[c];
    s[static_cast<std::size_t>(j)] = dot * x.scale;
    mx = std::max(mx, s[static_cast<std::size_t>(j)]);
  }
  const DType pt = p_dtype(x.kv_dtype);
  float sum = 0;
  std::vector<float> acc(static_cast<std::size_t>(r.D), 0.0f);
  for (std::int64_t j = 0; j < r.end; ++j) {
    const float p = std::exp(s[static_cast<std::size_t>(j)] - mx);
    sum += p;
    const float pr = round_to(pt, p);
    const float* v = r.v(j);
    for (std::int64_t c = 0; c < r.D; ++c) acc[static_cast<std::size_t>(c)] += pr * v[c];
  }
  for (std::int64_t c = 0; c < r.D; ++c) out[c] = round_to(x.q_dtype, acc[static_cast<std::size_t>(c)] / sum);
  *lse = mx + std::log(sum);
}

void compute_all(HostDecodeData& x) {
  const DecodeDims& d = x.dims;
  x.o.assign(static_cast<std::size_t>(d.batch * d.new_tokens * d.heads * d.head_dim), 0.0f);
  x.lse.assign(static_cast<std::size_t>(d.batch * d.new_tokens * d.heads), 0.0f);
  for (std::int64_t b = 0; b < d.batch; ++b)
    for (std::int64_t i = 0; i < d.new_tokens; ++i)
      for (std::int64_t h = 0; h < d.heads; ++h) {
        const std::int64_t row = (b * d.new_tokens + i) * d.heads + h;
        low_precision_row(x, b, i, h, x.o.data() + row * d.head_dim, x.lse.data() + row);
      }
}

DecodeCheck validate_decode(const HostDecodeData& x, std::uint64_t seed, double budget) {
  const DecodeDims& d = x.dims;
  const std::int64_t D = d.head_dim, rows_total = d.batch * d.new_tokens * d.heads;
  DecodeCheck v;
  for (std::int64_t e = 0; e < rows_total * D; ++e)
    if (std::isnan(x.o[static_cast<std::size_t>(e)])) {
      v.ok = false;
      v.error = INFINITY;
      v.detail = fmt("O element %.0f (row %.0f) is NaN: unwritten or invalid", static_cast<double>(e),
                     static_cast<double>(e / D));
      return v;
    }
  for (std::int64_t e = 0; e < rows_total; ++e)
    if (std::isnan(x.lse[static_cast<std::size_t>(e)])) {
      v.ok = false;
      v.error = INFINITY;
      v.detail = fmt("LSE of row %.0f is NaN: unwritten or invalid", static_cast<double>(e));
      return v;
    }

  // Rows to check: (b, i, h) triples.
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> rows;
  const std::int64_t G = d.group();
  std::vector<std::int64_t> batches = {0, d.batch / 2, d.batch - 1};
  std::vector<std::int64_t> heads = {0, G - 1, d.heads - 1, d.heads - G};
  std::vector<std::int64_t> tokens = {0, d.new_tokens - 1};
  for (auto b : batches)
    for (auto i : tokens)
      for (auto h : heads) rows.insert({b, i, h});
  std::int64_t longest = 1;
  for (auto L : x.lengths) longest = std::max(longest, L);
  const double per_row = 3.0 * static_cast<double>(longest) * static_cast<double>(D);
  const auto max_rows = std::max<std::int64_t>(24, static_cast<std::int64_t>(budget / per_row));
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 17);
  for (int tries = 0; static_cast<std::int64_t>(rows.size()) < max_rows && tries < 4 * max_rows; ++tries)
    rows.insert({static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(d.batch)),
                 static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(d.new_tokens)),
                 static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(d.heads))});

  std::vector<double> ref(static_cast<std::size_t>(D));
  std::vector<float> lp(static_cast<std::size_t>(D));
  double err = 0, err_lp = 0, ref_max = 0, lse_err = 0, lse_err_lp = 0, mag = 0;
  std::string where;
  for (const auto& [b, i, h] : rows) {
    double ref_lse = 0;
    float lp_lse = 0;
    reference_row(x, b, i, h, ref.data(), &ref_lse);
    low_precision_row(x, b, i, h, lp.data(), &lp_lse);
    mag = std::max(mag, score_magnitude(row_of(x, b, i, h)));
    const std::int64_t row = (b * d.new_tokens + i) * d.heads + h;
    const float* o = x.o.data() + row * D;
    for (std::int64_t c = 0; c < D; ++c) {
      const double r = ref[static_cast<std::size_t>(c)];
      const double e = std::fabs(static_cast<double>(o[c]) - r);
      if (!(e <= err)) {
        err = std::isnan(e) ? INFINITY : e;
        where = fmt("batch %.0f token %.0f head %.0f col %.0f: %.6g", static_cast<double>(b), static_cast<double>(i),
                    static_cast<double>(h), static_cast<double>(c), o[c]) +
                fmt(" vs %.6g", r);
      }
      err_lp = std::max(err_lp, std::fabs(static_cast<double>(lp[static_cast<std::size_t>(c)]) - r));
      ref_max = std::max(ref_max, std::fabs(r));
    }
    const double e = std::fabs(static_cast<double>(x.lse[static_cast<std::size_t>(row)]) - ref_lse);
    lse_err = std::max(lse_err, std::isnan(e) ? INFINITY : e);
    lse_err_lp = std::max(lse_err_lp, std::fabs(static_cast<double>(lp_lse) - ref_lse));
  }
  const double atol = 0.5 * epsilon_of(x.q_dtype) * std::max(ref_max, 1e-3) + 1e-5;
  v.error = err;
  v.tolerance = 2.0 * err_lp + atol;
  // Tensor cores sum the scores in their own order and rounding (fp32 accumulation): a 2^-20
  // share of the largest score's term magnitude on top of the model's LSE error.
  const double lse_tol = 2.0 * lse_err_lp + 1e-4 + std::ldexp(mag, -20);
  v.ok = err <= v.tolerance && lse_err <= lse_tol;
  v.detail = fmt("%.0f sampled rows vs double: max |O err| %.3g (input-precision computation: %.3g, bound %.3g); ",
                 static_cast<double>(rows.size()), err, err_lp, v.tolerance) +
             fmt("max |LSE err| %.3g (bound %.3g)", lse_err, lse_tol);
  if (!v.ok && !where.empty()) v.detail += "; worst at " + where;
  return v;
}

std::vector<float> to_contiguous(const DecodeDims& d, const std::vector<std::int32_t>& table,
                                 const std::vector<float>& pool) {
  DecodeDims c = d;
  c.page_size = 0;
  const std::int64_t row_el = d.heads_kv * d.head_dim;
  std::vector<float> out(static_cast<std::size_t>(c.pool_elements()), 0.0f);
  for (std::int64_t b = 0; b < d.batch; ++b)
    for (std::int64_t j = 0; j < d.cache; ++j) {
      const std::int64_t src = pool_row(d, table, b, j) * row_el, dst = (b * d.cache + j) * row_el;
      std::copy(pool.begin() + src, pool.begin() + src + row_el, out.begin() + dst);
    }
  return out;
}

}  // namespace genbench::decode
