#pragma once
// The attention forward written out plainly, in any accumulation type: the host reference
// (float) and the validation reference (double) of every implementation.
// Layouts (FlashAttention's): Q [batch, seqlen_q, heads, head_dim], O [batch, seqlen_q, heads,
// head_dim_v]; K [batch, seqlen_k, heads_kv, head_dim], V [batch, seqlen_k, heads_kv, head_dim_v];
// LSE [batch, heads, seqlen_q].
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/attention/attention.h"

namespace genbench {

// Last key index (exclusive) row i may attend to: bottom-right aligned causal mask.
inline std::int64_t attention_key_end(const AttentionShape& s, std::int64_t i) {
  if (!s.causal) return s.seqlen_k;
  return std::min<std::int64_t>(s.seqlen_k, std::max<std::int64_t>(0, i + s.seqlen_k - s.seqlen_q + 1));
}

// Computes O and LSE for one (batch, head, query row). Rows with no visible key give O = 0
// and LSE = -inf, as FlashAttention does.
template <typename Acc, typename In>
void attention_row(const AttentionShape& s, const In* q, const In* k, const In* v, std::int64_t b, std::int64_t h,
                   std::int64_t i, Acc* out, Acc* lse, std::vector<Acc>& scratch) {
  const std::int64_t d = s.head_dim, dv = s.dv(), hk = h / (s.heads / s.heads_kv);
  const std::int64_t end = attention_key_end(s, i);
  const In* qi = q + ((b * s.seqlen_q + i) * s.heads + h) * d;
  for (std::int64_t x = 0; x < dv; ++x) out[x] = 0;
  if (end == 0) {
    *lse = -std::numeric_limits<Acc>::infinity();
    return;
  }
  scratch.resize(static_cast<std::size_t>(end));
  Acc mx = -std::numeric_limits<Acc>::infinity();
  for (std::int64_t j = 0; j < end; ++j) {
    const In* kj = k + ((b * s.seqlen_k + j) * s.heads_kv + hk) * d;
    Acc dot = 0;
    for (std::int64_t x = 0; x < d; ++x) dot += static_cast<Acc>(qi[x]) * static_cast<Acc>(kj[x]);
    scratch[static_cast<std::size_t>(j)] = dot * static_cast<Acc>(s.scale);
    mx = std::max(mx, scratch[static_cast<std::size_t>(j)]);
  }
  Acc sum = 0;
  for (std::int64_t j = 0; j < end; ++j) {
    const Acc p = std::exp(scratch[static_cast<std::size_t>(j)] - mx);
    sum += p;
    const In* vj = v + ((b * s.seqlen_k + j) * s.heads_kv + hk) * dv;
    for (std::int64_t x = 0; x < dv; ++x) out[x] += p * static_cast<Acc>(vj[x]);
  }
  for (std::int64_t x = 0; x < dv; ++x) out[x] /= sum;
  *lse = mx + std::log(sum);
}

}  // namespace genbench
