#pragma once
// Validation shared by the device implementations of attention (host code, built always).
// The inputs and outputs are copied back to the host as float (exactly the dtype's values);
// sampled rows (always the first and last rows of a sequence, its causal edges and tile
// boundaries) are recomputed in double, and FlashAttention's convention applies: the
// implementation's largest error must stay within 2x the error of the same computation done
// in the input precision (fp32 scores, P rounded to the dtype before PV, output rounded),
// plus a small absolute term. NaN never passes, and every element must have been written.
#include <cstdint>
#include <string>
#include <vector>

#include "ops/attention/attention.h"
#include "ops/implementation.h"

namespace genbench::attention {

// Layouts: Q [rows, heads, head_dim], O [rows, heads, head_dim_v], K [rows, heads_kv, head_dim],
// V [rows, heads_kv, head_dim_v] (AttentionShape::dv()), where a sequence b
// occupies rows [start_q[b], start_q[b] + len_q[b]) (packed for varlen, b * seqlen otherwise).
// LSE: [batch, heads, seqlen_q] without varlen; [heads, capacity_q] with varlen, where
// capacity_q = batch * seqlen_q (the buffer's rows), indexed by the packed row.
struct HostAttentionData {
  AttentionShape shape{};
  std::vector<std::int64_t> len_q, len_k, start_q, start_k;
  std::vector<float> q, k, v, o, lse;

  std::int64_t lse_index(std::int64_t b, std::int64_t h, std::int64_t i) const;
  std::int64_t total_q() const;
};

// fp8 inputs (fp8_e4m3): the device implementations write O in bf16, and the stored e4m3
// values carry a per-tensor descale (true value = stored x descale). The case fills Q, K and V
// with 64 x the normal draw (the largest of ~1e9 draws, about 6 sigma, stays below e4m3's 448;
// anything beyond 7 sigma saturates), so the descale is exactly 1/64. Other dtypes: output in
// the input dtype, descale 1.
DType output_dtype(DType input);
float input_descale(DType input);
// fp8 kernels compute P = 2^4 exp(s - base) before rounding it to e4m3 (more of the small
// probabilities keep their mantissa), where base is at most the row max and at most 4.5 (log2
// units) below it (lazy rescaling; 4.8 in fa3's max-free blocks); the input-precision model
// below rounds 2^4 exp(s - max), the coarsest of those cases.
constexpr float kFp8POffset = 16.0f;

// Starts (cumulative lengths without the final total) of a batch of sequences.
std::vector<std::int64_t> starts_of(const std::vector<std::int64_t>& lengths);

// Rows checked for sequence b: first, last, causal edges, tile boundaries and a seeded draw,
// plus `extra` seeded random rows.
std::vector<std::int64_t> sample_rows(const HostAttentionData& d, std::int64_t b, std::uint64_t seed, int extra);

// Checks d.o / d.lse; `seed` picks the random sample rows.
Validation validate_attention(const HostAttentionData& d, std::uint64_t seed);

// The same computation in the input precision for one row: fp32 scores and softmax, P rounded
// to the dtype, fp32 PV, output rounded to output_dtype(). For fp8: scores from the
// dequantized inputs, P x kFp8POffset rounded to e4m3, output rounded to bf16. Exposed for the
// tests.
void low_precision_row(const HostAttentionData& d, std::int64_t b, std::int64_t h, std::int64_t i, float* out,
                       float* lse);

}  // namespace genbench::attention
