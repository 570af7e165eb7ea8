#pragma once
// The attention backward written out plainly for one (sequence, query head), in any
// accumulation type: the host reference (float) and the finite-difference tests (double).
// Layouts as the forward's (ops/attention/attention_math.h), padded: Q, O, dO, dQ
// [batch, seqlen_q, heads, head_dim]; K, V, dK, dV [batch, seqlen_k, heads_kv, head_dim]. LSE is
// the forward's [batch, heads, seqlen_q].
//   P_ij = exp(scale q_i.k_j - LSE_i)   (0 where the mask hides j, or the row sees no key)
//   D_i = dO_i . O_i,  dP_ij = dO_i . v_j,  dS_ij = P_ij (dP_ij - D_i)
//   dQ_i = scale sum_j dS_ij k_j,  dK_j += scale sum_i dS_ij q_i,  dV_j += sum_i P_ij dO_i
#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/attention/attention_math.h"

namespace genbench {

// Writes dQ of head h of sequence b and adds its contribution to dK and dV of the head's key
// head (the caller zeroes dK and dV; a GQA group's heads add into the same rows).
template <typename Acc, typename In>
void attention_backward_head(const AttentionShape& s, const In* q, const In* k, const In* v, const In* o,
                             const In* dout, const Acc* lse, std::int64_t b, std::int64_t h, Acc* dq, Acc* dk,
                             Acc* dv) {
  const std::int64_t d = s.head_dim, hk = h / (s.heads / s.heads_kv);
  std::vector<Acc> ds(static_cast<std::size_t>(s.seqlen_k));
  for (std::int64_t i = 0; i < s.seqlen_q; ++i) {
    const std::int64_t qrow = ((b * s.seqlen_q + i) * s.heads + h) * d;
    Acc* dqi = dq + qrow;
    for (std::int64_t x = 0; x < d; ++x) dqi[x] = 0;
    const std::int64_t end = attention_key_end(s, i);
    const Acc l = lse[(b * s.heads + h) * s.seqlen_q + i];
    if (end == 0 || !std::isfinite(static_cast<double>(l))) continue;
    Acc di = 0;
    for (std::int64_t x = 0; x < d; ++x) di += static_cast<Acc>(dout[qrow + x]) * static_cast<Acc>(o[qrow + x]);
    for (std::int64_t j = 0; j < end; ++j) {
      const std::int64_t krow = ((b * s.seqlen_k + j) * s.heads_kv + hk) * d;
      Acc dot = 0, dp = 0;
      for (std::int64_t x = 0; x < d; ++x) {
        dot += static_cast<Acc>(q[qrow + x]) * static_cast<Acc>(k[krow + x]);
        dp += static_cast<Acc>(dout[qrow + x]) * static_cast<Acc>(v[krow + x]);
      }
      const Acc p = std::exp(dot * static_cast<Acc>(s.scale) - l);
      ds[static_cast<std::size_t>(j)] = p * (dp - di);
      for (std::int64_t x = 0; x < d; ++x) dv[krow + x] += p * static_cast<Acc>(dout[qrow + x]);
    }
    const Acc sc = static_cast<Acc>(s.scale);
    for (std::int64_t j = 0; j < end; ++j) {
      const std::int64_t krow = ((b * s.seqlen_k + j) * s.heads_kv + hk) * d;
      const Acc g = ds[static_cast<std::size_t>(j)] * sc;
      for (std::int64_t x = 0; x < d; ++x) {
        dqi[x] += g * static_cast<Acc>(k[krow + x]);
        dk[krow + x] += g * static_cast<Acc>(q[qrow + x]);
      }
    }
  }
}

}  // namespace genbench
