#pragma once
// grouped_gemm: a mixture-of-experts layer's GEMMs, one per group (expert) g, D_g = X_g W_g^T:
// X_g is M_g x k (the rows routed to expert g), W_g n x k (nn.Linear's layout), D_g M_g x n,
// all groups sharing n and k. The per-group M_g is fixed (`rows` > 0) or drawn as a top-k
// router assigns `tokens` tokens (group_sizes.h: each token picks top_k distinct groups,
// group e with weight (e + 1)^-skew, from `route_seed`), so the sizes sum to tokens x top_k.
// The work is counted over all groups; the weights of groups that got no rows are not read.
// A separate op rather than a batch of gemm: per-group sizes differ, the shape that runs is
// drawn (effective columns: rows, non-empty groups, the largest group), and its implementations
// (cuBLAS's grouped batched GEMM, a loop of cuBLASLt calls) are not gemm's.
#include <cstdint>
#include <vector>

#include "ops/dtype.h"
#include "ops/op.h"

namespace genbench {

namespace grouped_gemm_axis {
enum : std::size_t {
  groups,      // experts, at least 1
  tokens,      // tokens routed (rows = tokens x top_k), when rows = 0
  top_k,       // groups per token, 1..groups
  skew,        // router skew, 0 (uniform) .. 4
  rows,        // > 0: every group gets this many rows (no routing)
  route_seed,  // seed of the routing draw
  n,           // output features per group
  k,           // input features
  dtype,       // bf16 | fp16
  count
};
}

struct GroupedShape {
  std::int64_t groups = 0, tokens = 0, top_k = 0, rows = 0, route_seed = 0, n = 0, k = 0;
  double skew = 0;
  DType dtype = DType::bf16;

  static GroupedShape from(const Point& p);
  // M_g of every group (cached per shape: drawing 8192 tokens over 256 groups takes ~20 ms).
  const std::vector<std::int64_t>& sizes() const;
  std::int64_t total_rows() const;
  std::int64_t nonempty() const;
  double flops() const;
  double bytes() const;  // X + the non-empty groups' W + D, 2 bytes an element
};

std::string grouped_check(const GroupedShape& s);

const Op& grouped_gemm_op();

}  // namespace genbench
