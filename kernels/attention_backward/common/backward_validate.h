#pragma once
// Validation shared by every implementation of attention_backward (host code, built always).
// dQ, dK and dV are copied back as float (exactly the dtype's values) with the inputs; every
// element must have been written (the outputs are poisoned with NaN first), and sampled rows
// are recomputed in double from the same inputs (Q, K, V, dO, the forward's O and LSE): dQ of
// sampled query rows (the first and last of a sequence, tile edges, seeded draws) of sampled
// heads, dK and dV of sampled key rows of sampled key heads, summed over their GQA group. The
// LSE input is itself checked on the sampled query rows against a double forward.
// The error of a tensor is its largest absolute error over the sampled elements divided by the
// largest reference magnitude there; it must stay within backward_tolerance(dtype).
#include <cstdint>
#include <vector>

#include "ops/attention/attention.h"
#include "ops/implementation.h"

namespace genbench::attention_backward {

// Layouts as backward_params.h: rows of sequence b start at start_q[b] / start_k[b]; LSE
// without varlen [batch, heads, seqlen_q], with varlen [heads, lse_rows] by packed row.
struct HostBackwardData {
  AttentionShape shape{};
  std::vector<std::int64_t> len_q, len_k, start_q, start_k;
  std::int64_t lse_rows = 0;
  std::vector<float> q, k, v, o, dout, lse, dq, dk, dv;

  std::int64_t lse_index(std::int64_t b, std::int64_t h, std::int64_t i) const;
};

// The bound on the normalised error: fp32 1e-4, fp16 5e-3, bf16 2.5e-2. The 16-bit kernels
// round P and dS to the dtype before their matmuls (as FlashAttention does); the measured
// errors are in docs/attention-backward.md.
double backward_tolerance(DType t);

// Starts of the sequences of a padded (b x seqlen) or packed (cumulative lengths) layout.
std::vector<std::int64_t> backward_starts(const std::vector<std::int64_t>& lengths, std::int64_t padded, bool varlen);

Validation validate_backward(const HostBackwardData& d, std::uint64_t seed);

}  // namespace genbench::attention_backward
