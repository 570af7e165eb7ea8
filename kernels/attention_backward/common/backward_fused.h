#pragma once
// What the fused backwards (fa2_sm80, fa3_sm90) share on the host: the checks of the shapes their
// launches take, and the workspace the row kernels (backward_rows.cuh) fill and the main kernels
// read. Host code; no CUDA needed.
#include <cstddef>
#include <string>

#include "kernels/attention_backward/common/backward_params.h"

namespace genbench::attention_backward {

// "" when p's shape fits the fused kernels' launches, else why not: heads a multiple of heads_kv,
// batch and heads within the grids' y and z limits, no negative length, and fewer than 2^31
// (row, head) pairs on either side. The callers check dtype, head dim and device first.
inline std::string shape_unsupported(const BackwardParams& p) {
  const auto str = [](long long x) { return std::to_string(x); };
  if (p.heads <= 0 || p.heads_kv <= 0 || p.heads % p.heads_kv != 0)
    return "heads (" + str(p.heads) + ") must be a multiple of heads_kv (" + str(p.heads_kv) + ")";
  if (p.batch <= 0 || p.batch > 65535 || p.heads > 65535) return "batch and heads must be in 1..65535 (grid limits)";
  if (p.seqlen_q < 0 || p.seqlen_k < 0) return "negative sequence length";
  if (p.rows_q * p.heads >= (1LL << 31) || p.rows_k * p.heads_kv >= (1LL << 31))
    return "more than 2^31 (row, head) pairs";
  return "";
}

// The workspace's layout: LSE x log2(e) and D, each fp32 [batch][heads][padded_rows] (the
// kernels' lse2 and dsum), then, when dQ is accumulated, the fp32 dQ accumulator
// [rows_q][heads][head_dim] (dq_acc); each part starts 256-byte aligned.
struct RowWorkspace {
  int padded_rows;        // seqlen_q rounded up to whole query blocks (the kernels' lpad)
  std::size_t row_bytes;  // one of the two per-row arrays
  std::size_t acc_bytes;  // the dQ accumulator (0 without one)
  bool accumulates;       // whether there is a dQ accumulator

  std::size_t bytes() const { return 2 * row_bytes + acc_bytes; }
  float* lse2(void* ws) const { return reinterpret_cast<float*>(ws); }
  float* dsum(void* ws) const { return reinterpret_cast<float*>(static_cast<unsigned char*>(ws) + row_bytes); }
  float* dq_acc(void* ws) const {
    return accumulates ? reinterpret_cast<float*>(static_cast<unsigned char*>(ws) + 2 * row_bytes) : nullptr;
  }
};

// The layout for p with query rows padded to whole blocks of `block` rows, with the fp32 dQ
// accumulator when `accumulates`.
inline RowWorkspace row_workspace(const BackwardParams& p, int block, bool accumulates) {
  constexpr std::size_t kAlign = 256;
  const auto align_up = [](std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; };
  RowWorkspace w{};
  w.padded_rows = (p.seqlen_q + block - 1) / block * block;
  w.row_bytes = align_up(static_cast<std::size_t>(p.batch) * static_cast<std::size_t>(p.heads) *
                         static_cast<std::size_t>(w.padded_rows) * sizeof(float));
  w.acc_bytes = accumulates ? align_up(static_cast<std::size_t>(p.rows_q) * static_cast<std::size_t>(p.heads) *
                                       static_cast<std::size_t>(p.head_dim) * sizeof(float))
                            : 0;
  w.accumulates = accumulates;
  return w;
}

// The fields both fused backwards' kernel arguments share, from p and the workspace `ws` laid
// out as w (Args: fa2's or fa3's, which name them alike).
template <typename Args>
void fill_shared_args(Args& a, const BackwardParams& p, const RowWorkspace& w, void* ws) {
  a.o = p.o;
  a.dout = p.dout;
  a.lse = p.lse;
  a.dq = p.dq;
  a.dk = p.dk;
  a.dv = p.dv;
  a.cu_q = p.cu_q;
  a.cu_k = p.cu_k;
  a.lse2 = w.lse2(ws);
  a.dsum = w.dsum(ws);
  a.dq_acc = w.dq_acc(ws);
  a.batch = p.batch;
  a.heads = p.heads;
  a.heads_kv = p.heads_kv;
  a.group = p.heads / p.heads_kv;
  a.seqlen_q = p.seqlen_q;
  a.seqlen_k = p.seqlen_k;
  a.lpad = w.padded_rows;
  a.rows_q = p.rows_q;
  a.rows_k = p.rows_k;
  a.lse_head_stride = p.lse_head_stride;
  a.varlen = p.varlen;
  a.causal = p.causal;
  a.scale = p.scale;
  a.scale_log2 = static_cast<float>(static_cast<double>(p.scale) * 1.4426950408889634);
}

}  // namespace genbench::attention_backward
