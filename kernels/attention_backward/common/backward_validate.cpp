#include "kernels/attention_backward/common/backward_validate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/strings.h"

namespace genbench::attention_backward {

namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Indices in [0, n): the first and last, the middle, tile edges (63, 64, 127, 128) and `draws`
// seeded picks.
std::vector<std::int64_t> sample(std::int64_t n, std::uint64_t seed, int draws) {
  std::set<std::int64_t> s = {0, n - 1, n / 2};
  for (std::int64_t e : {63, 64, 127, 128})
    if (e < n) s.insert(e);
  for (int r = 0; r < draws; ++r)
    s.insert(static_cast<std::int64_t>(mix(seed + static_cast<std::uint64_t>(r)) % static_cast<std::uint64_t>(n)));
  return {s.begin(), s.end()};
}

// Last key (exclusive) that row i of a sequence of these lengths sees (bottom-right causal).
std::int64_t key_end(bool causal, std::int64_t lq, std::int64_t lk, std::int64_t i) {
  if (!causal) return lk;
  return std::min<std::int64_t>(lk, std::max<std::int64_t>(0, i + lk - lq + 1));
}

struct Err {
  double worst = 0, scale = 0;
  void add(double got, double ref) {
    worst = std::max(worst, std::isnan(got) ? std::numeric_limits<double>::infinity() : std::fabs(got - ref));
    scale = std::max(scale, std::fabs(ref));
  }
  double value() const { return worst / std::max(scale, 1e-30); }
};

}  // namespace

std::int64_t HostBackwardData::lse_index(std::int64_t b, std::int64_t h, std::int64_t i) const {
  if (shape.varlen) return h * lse_rows + start_q[static_cast<std::size_t>(b)] + i;
  return (b * shape.heads + h) * shape.seqlen_q + i;
}

double backward_tolerance(DType t) {
  switch (t) {
    case DType::fp32: return 1e-4;
    case DType::fp16: return 5e-3;
    default: return 2.5e-2;
  }
}

std::vector<std::int64_t> backward_starts(const std::vector<std::int64_t>& lengths, std::int64_t padded, bool varlen) {
  std::vector<std::int64_t> s(lengths.size(), 0);
  for (std::size_t b = 0; b < lengths.size(); ++b)
    s[b] = varlen ? (b ? s[b - 1] + lengths[b - 1] : 0) : static_cast<std::int64_t>(b) * padded;
  return s;
}

Validation validate_backward(const HostBackwardData& d, std::uint64_t seed) {
  const AttentionShape& s = d.shape;
  Validation v;
  v.tolerance = backward_tolerance(s.dtype);
  const std::int64_t D = s.head_dim, H = s.heads, HK = s.heads_kv, group = s.heads / s.heads_kv;
  // Every element written: only the rows of the sequences (padding rows of a packed layout
  // are not outputs).
  struct Out {
    const char* name;
    const std::vector<float>* x;
    std::int64_t heads;
    const std::vector<std::int64_t>* len;
    const std::vector<std::int64_t>* start;
  };
  const Out outs[] = {{"dQ", &d.dq, H, &d.len_q, &d.start_q},
                      {"dK", &d.dk, HK, &d.len_k, &d.start_k},
                      {"dV", &d.dv, HK, &d.len_k, &d.start_k}};
  for (const Out& t : outs)
    for (std::size_t b = 0; b < t.len->size(); ++b) {
      const std::int64_t first = (*t.start)[b] * t.heads * D, n = (*t.len)[b] * t.heads * D;
      for (std::int64_t e = first; e < first + n; ++e)
        if (std::isnan((*t.x)[static_cast<std::size_t>(e)])) {
          v.ok = false;
          v.error = std::numeric_limits<double>::infinity();
          v.detail = strprintf("%s element %lld (sequence %zu) was not written (NaN) or is NaN", t.name,
                               static_cast<long long>(e), b);
          return v;
        }
    }

  const std::int64_t nb = static_cast<std::int64_t>(d.len_q.size());
  std::set<std::int64_t> seqs = {0, nb - 1, static_cast<std::int64_t>(mix(seed) % static_cast<std::uint64_t>(nb))};
  std::set<std::int64_t> kv_heads = {0, HK - 1,
                                     static_cast<std::int64_t>(mix(seed + 5) % static_cast<std::uint64_t>(HK))};
  Err e_dq, e_dk, e_dv;
  double lse_err = 0;
  auto at = [&](const std::vector<float>& x, std::int64_t row, std::int64_t heads, std::int64_t h) {
    return &x[static_cast<std::size_t>((row * heads + h) * D)];
  };
  auto dot = [&](const float* a, const float* b) {
    double r = 0;
    for (std::int64_t x = 0; x < D; ++x) r += static_cast<double>(a[x]) * static_cast<double>(b[x]);
    return r;
  };
  std::vector<double> acc(static_cast<std::size_t>(D)), acc2(static_cast<std::size_t>(D));
  for (std::int64_t b : seqs) {
    const std::int64_t lq = d.len_q[static_cast<std::size_t>(b)], lk = d.len_k[static_cast<std::size_t>(b)];
    const std::int64_t q0 = d.start_q[static_cast<std::size_t>(b)], k0 = d.start_k[static_cast<std::size_t>(b)];
    for (std::int64_t hk : kv_heads) {
      const std::int64_t h = hk * group + static_cast<std::int64_t>(mix(seed + 11 + static_cast<std::uint64_t>(hk)) %
                                                                    static_cast<std::uint64_t>(group));
      // dQ of sampled query rows of head h; the LSE input checked on the same rows.
      for (std::int64_t i : sample(lq, seed + 17 + static_cast<std::uint64_t>(b * 131 + h), 5)) {
        const float* qi = at(d.q, q0 + i, H, h);
        const float* doi = at(d.dout, q0 + i, H, h);
        const double lse = d.lse[static_cast<std::size_t>(d.lse_index(b, h, i))];
        const std::int64_t end = key_end(s.causal, lq, lk, i);
        std::fill(acc.begin(), acc.end(), 0.0);
        if (end > 0) {
          double mx = -std::numeric_limits<double>::infinity(), sum = 0;
          for (std::int64_t j = 0; j < end; ++j) mx = std::max(mx, s.scale * dot(qi, at(d.k, k0 + j, HK, hk)));
          for (std::int64_t j = 0; j < end; ++j) sum += std::exp(s.scale * dot(qi, at(d.k, k0 + j, HK, hk)) - mx);
          const double exact = mx + std::log(sum);
          lse_err = std::max(lse_err, std::isfinite(lse) ? std::fabs(lse - exact) / std::max(1.0, std::fabs(exact))
                                                         : std::numeric_limits<double>::infinity());
          const double di = dot(doi, at(d.o, q0 + i, H, h));
          for (std::int64_t j = 0; j < end; ++j) {
            const float* kj = at(d.k, k0 + j, HK, hk);
            const double p = std::exp(s.scale * dot(qi, kj) - lse);
            const double ds = p * (dot(doi, at(d.v, k0 + j, HK, hk)) - di) * s.scale;
            for (std::int64_t x = 0; x < D; ++x) acc[static_cast<std::size_t>(x)] += ds * kj[x];
          }
        }
        const float* got = at(d.dq, q0 + i, H, h);
        for (std::int64_t x = 0; x < D; ++x) e_dq.add(got[x], acc[static_cast<std::size_t>(x)]);
      }
      // dK and dV of sampled key rows of key head hk, over every query head of its group.
      std::vector<std::vector<double>> di(static_cast<std::size_t>(group),
                                          std::vector<double>(static_cast<std::size_t>(lq)));
      for (std::int64_t g = 0; g < group; ++g)
        for (std::int64_t i = 0; i < lq; ++i)
          di[static_cast<std::size_t>(g)][static_cast<std::size_t>(i)] =
              dot(at(d.dout, q0 + i, H, hk * group + g), at(d.o, q0 + i, H, hk * group + g));
      for (std::int64_t j : sample(lk, seed + 23 + static_cast<std::uint64_t>(b * 131 + hk), 4)) {
        const float* kj = at(d.k, k0 + j, HK, hk);
        const float* vj = at(d.v, k0 + j, HK, hk);
        std::fill(acc.begin(), acc.end(), 0.0);
        std::fill(acc2.begin(), acc2.end(), 0.0);
        for (std::int64_t g = 0; g < group; ++g) {
          const std::int64_t hq = hk * group + g;
          for (std::int64_t i = 0; i < lq; ++i) {
            if (j >= key_end(s.causal, lq, lk, i)) continue;
            const double lse = d.lse[static_cast<std::size_t>(d.lse_index(b, hq, i))];
            if (!std::isfinite(lse)) continue;
            const float* qi = at(d.q, q0 + i, H, hq);
            const float* doi = at(d.dout, q0 + i, H, hq);
            const double p = std::exp(s.scale * dot(qi, kj) - lse);
            const double ds =
                p * (dot(doi, vj) - di[static_cast<std::size_t>(g)][static_cast<std::size_t>(i)]) * s.scale;
            for (std::int64_t x = 0; x < D; ++x) {
              acc[static_cast<std::size_t>(x)] += ds * qi[x];
              acc2[static_cast<std::size_t>(x)] += p * doi[x];
            }
          }
        }
        const float* gk = at(d.dk, k0 + j, HK, hk);
        const float* gv = at(d.dv, k0 + j, HK, hk);
        for (std::int64_t x = 0; x < D; ++x) {
          e_dk.add(gk[x], acc[static_cast<std::size_t>(x)]);
          e_dv.add(gv[x], acc2[static_cast<std::size_t>(x)]);
        }
      }
    }
  }
  const double lse_tol = 1e-4;
  v.error = std::max({e_dq.value(), e_dk.value(), e_dv.value()});
  v.ok = v.error <= v.tolerance && lse_err <= lse_tol;
  v.detail = strprintf(
      "max error / max |ref| on sampled rows against double: dQ %.3g, dK %.3g, dV %.3g (tolerance %.3g); the "
      "forward's LSE input %.2g (tolerance %.0e)",
      e_dq.value(), e_dk.value(), e_dv.value(), v.tolerance, lse_err, lse_tol);
  if (lse_err > lse_tol) v.detail = "the forward's LSE input is wrong: " + v.detail;
  return v;
}

}  // namespace genbench::attention_backward
