#pragma once
// pointwise: the memory-bound parts of a transformer layer that are not GEMMs or attention, one
// op with a `kind` axis (they share axes, a byte count, a metric and a ceiling; their math
// differs in a few lines). Row-major, one row per token; fp32 math, results in the point's dtype.
//   rmsnorm      y = x / sqrt(mean(x^2) + eps) * w                     x, y [rows, hidden]; w [hidden]
//   add_rmsnorm  s = x + r (rounded to dtype); r <- s; y = rmsnorm(s)   the residual add fused in
//   rope         rotary embedding of Q [rows, heads, head_dim] and K [rows, heads_kv, head_dim] in
//                place, rotate-half pairs (i, i + head_dim/2) as Llama's reference code does, angles
//                pos * theta^(-2i/head_dim) from an fp32 cos/sin table [positions, head_dim/2] each
//   silu_mul     y = silu(g) * u, with g and u the two halves of x [rows, 2 x hidden]; y [rows, hidden]
//   embedding    y[r] = table[id[r]]                                  table [vocab, hidden]; id int32
// eps = 1e-5 and theta = 500000 (Llama 3). Bytes moved are what one call must read and write at
// least (PointwiseShape::bytes), the GB/s against the copy ceiling.
#include <cstdint>
#include <string>

#include "ops/dtype.h"
#include "ops/op.h"

namespace genbench {

namespace pointwise_axis {
enum : std::size_t {
  kind,      // rmsnorm | add_rmsnorm | rope | silu_mul | embedding
  rows,      // tokens (batch x sequence)
  hidden,    // row width: hidden size (norms, embedding), intermediate size (silu_mul)
  heads,     // rope: query heads
  heads_kv,  // rope: key heads
  head_dim,  // rope: head dimension (even)
  vocab,     // embedding: rows of the table
  dtype,     // fp16 | bf16
  count
};
}

enum class PointwiseKind { rmsnorm, add_rmsnorm, rope, silu_mul, embedding };
const char* pointwise_kind_name(PointwiseKind k);

struct PointwiseShape {
  PointwiseKind kind = PointwiseKind::rmsnorm;
  std::int64_t rows = 0, hidden = 0, heads = 0, heads_kv = 0, head_dim = 0, vocab = 0;
  DType dtype = DType::bf16;

  static constexpr float kEps = 1e-5f;
  static constexpr double kTheta = 500000.0;
  // Positions of the rope table; row r rotates at position (r + offset) % kPositions.
  static constexpr std::int64_t kPositions = 4096;

  static PointwiseShape from(const Point& p);
  std::int64_t rope_width() const { return (heads + heads_kv) * head_dim; }  // Q and K values of a row
  // Width of a row of the main input and of the output (rope: Q and K together).
  std::int64_t in_width() const;
  std::int64_t out_width() const;
  double bytes() const;
};

const Op& pointwise_op();

}  // namespace genbench
