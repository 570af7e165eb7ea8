#pragma once
// gemm: D = alpha * op(A) op(B) (+ beta C), batched; A is m x k, B is k x n after transposes.
#include <cstdint>

#include "ops/dtype.h"
#include "ops/op.h"

namespace genbench {

namespace gemm_axis {
enum : std::size_t {
  m,
  n,
  k,
  batch,
  trans_a,  // "n" or "t"
  trans_b,
  dtype,  // input precision; accumulation is fp32 (int32 for int8)
  cache,  // hot (back-to-back) | cold (L2 flushed between iterations)
  mode,   // eager | graph
  count
};
}

struct GemmShape {
  std::int64_t m, n, k, batch;
  bool trans_a, trans_b;
  DType dtype;
  bool cold, graph;

  static GemmShape from(const Point& p);
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
  }
};

const Op& gemm_op();

}  // namespace genbench
