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
// and their backward passes, for a training step (dy: the gradient of the forward's output):
//   rmsnorm_backward      x, w, dy [rows, hidden] -> dx [rows, hidden], dw [hidden] (fp32):
//                         rms = sqrt(mean(x^2) + eps) recomputed from x (no saved statistics),
//                         dx = w*dy/rms - x * sum(w*dy*x) / (hidden * rms^3), dw = sum over rows of dy*x/rms
//   add_rmsnorm_backward  the backward of s = x + r; y = rmsnorm(s) with s the residual stream the
//                         layer carries on: given the saved sum s, w, dy and dr_in (the gradient of s
//                         from the residual path beyond), ds = rmsnorm_backward(s, dy).dx + dr_in;
//                         dx = dr = ds, so one output tensor dx [rows, hidden], and dw as above (of s)
//   rope_backward         dQ and dK rotated in place by -angle (the rotation's transpose), rope's layout
//   silu_mul_backward     x = [g | u] [rows, 2 x hidden], dy [rows, hidden] -> dx = [dg | du]:
//                         dg = dy*u*sig(g)*(1 + g*(1 - sig(g))), du = dy*silu(g)
//   embedding_backward    dtable[id[r]] += dy[r], an fp32 table [vocab, hidden] zeroed before the
//                         validation's call; ids repeat, so the sum is order-free (fp32 atomics on the GPU)
// eps = 1e-5 and theta = 500000 (Llama 3). Bytes moved are what one call must read and write at
// least (PointwiseShape::bytes), the GB/s against the copy ceiling.
#include <cstdint>
#include <string>

#include "ops/dtype.h"
#include "ops/op.h"

namespace genbench {

namespace pointwise_axis {
enum : std::size_t {
  kind,      // rmsnorm | add_rmsnorm | rope | silu_mul | embedding, and each one's _backward
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

enum class PointwiseKind {
  rmsnorm,
  add_rmsnorm,
  rope,
  silu_mul,
  embedding,
  rmsnorm_backward,
  add_rmsnorm_backward,
  rope_backward,
  silu_mul_backward,
  embedding_backward
};
const char* pointwise_kind_name(PointwiseKind k);
bool is_backward(PointwiseKind k);       // the five _backward kinds
bool is_rope(PointwiseKind k);           // rope, rope_backward
bool is_norm_backward(PointwiseKind k);  // rmsnorm_backward, add_rmsnorm_backward (the ones with dw)

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
  // Width of a row of the main input and of the output (rope: Q and K together; silu_mul_backward:
  // g|u in and dg|du out; embedding_backward: dy in, a row of the gradient table out).
  std::int64_t in_width() const;
  std::int64_t out_width() const;
  // embedding_backward: the distinct ids expected among `rows` uniform draws over the vocabulary,
  // vocab x (1 - (1 - 1/vocab)^rows): the table rows one call writes.
  double touched_rows() const;
  double bytes() const;
};

const Op& pointwise_op();

}  // namespace genbench
