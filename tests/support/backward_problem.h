#pragma once
// The host side of the attention backward kernel tests (the GPU tests and the CPU emulation of
// the Hopper kernel): a shape, its random inputs rounded to the dtype, O and LSE from a double
// forward, the double backward, and the error measure. Host code; needs the CUDA headers for
// the 16-bit conversions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ops/dtype.h"

namespace genbench::backward_test {

inline std::uint16_t to_bits(DType dt, float x) {
  std::uint16_t u = 0;
  if (dt == DType::bf16) {
    const __nv_bfloat16 b = __float2bfloat16_rn(x);
    std::memcpy(&u, &b, 2);
  } else {
    const __half h = __float2half_rn(x);
    std::memcpy(&u, &h, 2);
  }
  return u;
}
inline float from_bits(DType dt, std::uint16_t u) {
  if (dt == DType::bf16) {
    __nv_bfloat16 b;
    std::memcpy(&b, &u, 2);
    return __bfloat162float(b);
  }
  __half h;
  std::memcpy(&h, &u, 2);
  return __half2float(h);
}

// max |error| <= tolerance x max |reference|, per tensor. The worst of these cases, run through a
// CPU emulation of the kernels' warp-level instructions (fp32 products), was 5.4e-3 for bf16
// and 6.8e-4 for fp16 (2026-12-07): about 4x and 6x margin.
inline double tolerance(DType dt) { return dt == DType::bf16 ? 2e-2 : 4e-3; }

struct Shape {
  int d = 64, heads = 4, heads_kv = 4;
  bool causal = false, deterministic = false, varlen = false;
  std::vector<int> len_q, len_k;  // per sequence (without varlen: all equal)
  DType dtype = DType::bf16;
};

inline std::string describe(const Shape& s) {
  std::string r = std::string(s.dtype == DType::bf16 ? "bf16" : "fp16") + " d" + std::to_string(s.d) + " h" +
                  std::to_string(s.heads) + "/" + std::to_string(s.heads_kv) + (s.causal ? " causal" : "") +
                  (s.deterministic ? " det" : "") + (s.varlen ? " varlen" : "") + " lq";
  for (int l : s.len_q) r += " " + std::to_string(l);
  r += " lk";
  for (int l : s.len_k) r += " " + std::to_string(l);
  return r;
}

// Host inputs and the double reference of one shape.
struct Problem {
  Shape s;
  int batch = 0, seqlen_q = 0, seqlen_k = 0;
  long long rows_q = 0, rows_k = 0;
  std::vector<int> cu_q, cu_k;
  std::vector<float> q, k, v, o, dout, lse;  // inputs, already rounded to the dtype (lse fp32)
  std::vector<double> dq, dk, dv;            // reference
};

inline Problem make_problem(const Shape& s, std::uint32_t seed) {
  Problem p;
  p.s = s;
  p.batch = static_cast<int>(s.len_q.size());
  p.seqlen_q = *std::max_element(s.len_q.begin(), s.len_q.end());
  p.seqlen_k = *std::max_element(s.len_k.begin(), s.len_k.end());
  p.cu_q.assign(static_cast<std::size_t>(p.batch) + 1, 0);
  p.cu_k.assign(static_cast<std::size_t>(p.batch) + 1, 0);
  for (int b = 0; b < p.batch; ++b) {
    p.cu_q[b + 1] = p.cu_q[b] + (s.varlen ? s.len_q[b] : p.seqlen_q);
    p.cu_k[b + 1] = p.cu_k[b] + (s.varlen ? s.len_k[b] : p.seqlen_k);
  }
  p.rows_q = static_cast<long long>(p.batch) * p.seqlen_q;
  p.rows_k = static_cast<long long>(p.batch) * p.seqlen_k;
  const int H = s.heads, HK = s.heads_kv, D = s.d, G = H / HK;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  auto fill = [&](std::vector<float>& x, long long n) {
    x.resize(static_cast<std::size_t>(n));
    for (auto& e : x) e = from_bits(s.dtype, to_bits(s.dtype, nd(rng)));
  };
  fill(p.q, p.rows_q * H * D);
  fill(p.k, p.rows_k * HK * D);
  fill(p.v, p.rows_k * HK * D);
  fill(p.dout, p.rows_q * H * D);
  p.o.assign(p.q.size(), 0.f);
  p.lse.assign(static_cast<std::size_t>(p.rows_q * H), -INFINITY);
  p.dq.assign(p.q.size(), 0.0);
  p.dk.assign(p.k.size(), 0.0);
  p.dv.assign(p.v.size(), 0.0);
  auto qi = [&](long long row, int h) { return (row * H + h) * D; };
  auto ki = [&](long long row, int hk) { return (row * HK + hk) * D; };
  for (int b = 0; b < p.batch; ++b) {
    const int lq = p.cu_q[b + 1] - p.cu_q[b], lk = p.cu_k[b + 1] - p.cu_k[b], diag = lk - lq;
    for (int h = 0; h < H; ++h) {
      const int hk = h / G;
      std::vector<double> P(static_cast<std::size_t>(lq) * static_cast<std::size_t>(lk), 0.0);
      for (int i = 0; i < lq; ++i) {
        const long long rq = p.cu_q[b] + i;
        std::vector<double> srow(static_cast<std::size_t>(lk), -INFINITY);
        double mx = -INFINITY;
        for (int j = 0; j < lk; ++j) {
          if (s.causal && j > i + diag) continue;
          double dot = 0;
          for (int x = 0; x < D; ++x) dot += static_cast<double>(p.q[qi(rq, h) + x]) * p.k[ki(p.cu_k[b] + j, hk) + x];
          srow[j] = dot * scale;
          mx = std::max(mx, srow[j]);
        }
        if (mx == -INFINITY) continue;  // sees no key: O = 0, LSE = -inf, P = 0
        double sum = 0;
        for (int j = 0; j < lk; ++j) sum += srow[j] == -INFINITY ? 0.0 : std::exp(srow[j] - mx);
        const double L = mx + std::log(sum);
        for (int j = 0; j < lk; ++j)
          P[static_cast<std::size_t>(i) * lk + j] = srow[j] == -INFINITY ? 0.0 : std::exp(srow[j] - L);
        for (int x = 0; x < D; ++x) {
          double acc = 0;
          for (int j = 0; j < lk; ++j) acc += P[static_cast<std::size_t>(i) * lk + j] * p.v[ki(p.cu_k[b] + j, hk) + x];
          p.o[qi(rq, h) + x] = from_bits(s.dtype, to_bits(s.dtype, static_cast<float>(acc)));
        }
        const long long li = s.varlen ? h * p.rows_q + rq : (static_cast<long long>(b) * H + h) * p.seqlen_q + i;
        p.lse[static_cast<std::size_t>(li)] = static_cast<float>(L);
      }
      for (int i = 0; i < lq; ++i) {
        const long long rq = p.cu_q[b] + i;
        double Di = 0;
        for (int x = 0; x < D; ++x) Di += static_cast<double>(p.dout[qi(rq, h) + x]) * p.o[qi(rq, h) + x];
        for (int j = 0; j < lk; ++j) {
          const double pij = P[static_cast<std::size_t>(i) * lk + j];
          if (pij == 0.0) continue;
          const long long kv = ki(p.cu_k[b] + j, hk);
          double dp = 0;
          for (int x = 0; x < D; ++x) dp += static_cast<double>(p.dout[qi(rq, h) + x]) * p.v[kv + x];
          const double ds = pij * (dp - Di);
          for (int x = 0; x < D; ++x) {
            p.dv[kv + x] += pij * p.dout[qi(rq, h) + x];
            p.dk[kv + x] += scale * ds * p.q[qi(rq, h) + x];
            p.dq[qi(rq, h) + x] += scale * ds * p.k[kv + x];
          }
        }
      }
    }
  }
  return p;
}

// max |got - ref| / max |ref| (NaN and unwritten elements give +inf).
inline double relative_error(DType dt, const std::vector<std::uint16_t>& got, const std::vector<double>& ref) {
  if (got.size() != ref.size()) return INFINITY;
  double mref = 0, merr = 0;
  for (double r : ref) mref = std::max(mref, std::fabs(r));
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double e = std::fabs(static_cast<double>(from_bits(dt, got[i])) - ref[i]);
    if (!(e <= merr)) merr = std::isnan(e) ? INFINITY : e;
  }
  return mref > 0 ? merr / mref : merr;
}

}  // namespace genbench::backward_test
