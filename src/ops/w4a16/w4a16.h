#pragma once
// w4a16: the weight-only quantised GEMM of GPTQ/AWQ-style int4 models, D = A · W with A an
// m x k fp16/bf16 activation matrix and W k x n 4-bit codes, one 16-bit scale (and, for uint4,
// one zero point) per group of `group` consecutive k of a column (group 0: one per column);
// w = (q - z) * s, fp32 accumulation, D in A's type. Hopper and Ampere have no int4 x fp16
// tensor-core instruction, so every implementation dequantises to 16 bits somewhere (in
// registers next to the mma, or into a dense copy for a 16-bit GEMM).
//
// A separate op rather than a dtype of gemm: its axes (weights, group), its byte count (half a
// byte per weight plus scales and zeros), its layouts (kernels/w4a16/common/w4a16_layout.h)
// and its implementations share nothing with gemm's, and its analysis compares it with the
// dense 16-bit GEMM of the same shape, run as its implementation `cublaslt_dense`.
// The name follows the serving stacks' usage (vLLM, TensorRT-LLM): weights 4-bit, activations
// 16-bit.
#include <cstdint>

#include "ops/dtype.h"
#include "ops/op.h"

namespace genbench {

namespace w4a16_axis {
enum : std::size_t {
  m,        // tokens: rows of A and D
  n,        // output features: columns of W and D (even: two codes share a byte)
  k,        // input features, a multiple of the group
  weights,  // int4 (symmetric, z = 8) | uint4 (per-group zero points)
  group,    // 32 | 64 | 128 | 0 (one group per column)
  dtype,    // activations, scales and D: fp16 | bf16
  cache,    // hot | cold (weights not in L2)
  count
};
}

struct W4a16Shape {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t group = 0;  // as given: 0 = per column
  bool zero_points = false;
  DType dtype = DType::fp16;
  bool cold = false;

  static W4a16Shape from(const Point& p);
  std::int64_t group_k() const { return group == 0 ? k : group; }  // k of one group
  std::int64_t groups() const { return k / group_k(); }            // scale rows
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
  // Bytes one call moves: A (2 per element) + W (half a byte per weight) + scales (2 each) +
  // zeros (half a byte each, uint4) + D (2 per element).
  double bytes() const;
};

// "" when the shape can be described at all, else the reason (before any device work).
std::string w4a16_check(const W4a16Shape& s);

const Op& w4a16_op();

}  // namespace genbench
