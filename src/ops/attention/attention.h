#pragma once
// attention: forward of softmax(Q K^T * scale) V, optionally causal (bottom-right aligned).
#include <cstdint>
#include <vector>

#include "ops/dtype.h"
#include "ops/op.h"

namespace genbench {

// Axis indices of the attention op, in schema order (checked by the compiler, not by name).
namespace attention_axis {
enum : std::size_t {
  batch,     // sequences per batch; with `tokens` > 0, batch = tokens / seqlen_q instead
  tokens,    // total query tokens (FlashAttention benchmark convention); 0 = use batch
  heads,     // query heads; with `hidden` > 0, heads = hidden / head_dim instead
  hidden,    // model width; 0 = use heads
  heads_kv,  // key/value heads (GQA/MQA); 0 = same as heads
  seqlen_q,
  seqlen_k,  // 0 = same as seqlen_q
  head_dim,
  causal,
  dtype,
  scale,       // softmax scale; 0 = 1/sqrt(head_dim)
  mode,        // eager | graph
  varlen,      // packed variable-length batch: lengths drawn in [seqlen/2, seqlen] per sequence
  head_dim_v,  // V's and O's head dimension; 0 = head_dim (MLA prefill: Q/K 192, V 128)
  count
};
}

struct AttentionShape {
  std::int64_t batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim;
  bool causal;
  DType dtype;
  float scale;
  bool graph;
  bool varlen;                  // packed sequences (cu_seqlens); batch holds up to batch * seqlen_q tokens
  std::int64_t head_dim_v = 0;  // V's and O's head dimension; 0 = head_dim (read it through dv())

  std::int64_t dv() const { return head_dim_v > 0 ? head_dim_v : head_dim; }

  static AttentionShape from(const Point& p);
  // Per-sequence lengths: seqlen_q / seqlen_k for every sequence, or with varlen a seeded
  // draw in [ceil(seqlen/2), seqlen] (keys take the query's length when seqlen_k == seqlen_q).
  // `draw` selects another set of lengths of the same bounds (graph replays use draw 1, 2...).
  std::vector<std::int64_t> lengths_q(std::uint64_t draw = 0) const;
  std::vector<std::int64_t> lengths_k(std::uint64_t draw = 0) const;
  // Unmasked (query, key) pairs per head: sq*sk, or for causal (bottom-right aligned) the
  // exact count; FLOPs use sq*sk/2 for causal with sq == sk, as FlashAttention reports.
  // With varlen, the sum over the drawn sequence lengths (draw 0). Per pair: 2 * head_dim for
  // Q K^T and 2 * head_dim_v for P V.
  double flops() const;
};

const Op& attention_op();

}  // namespace genbench
