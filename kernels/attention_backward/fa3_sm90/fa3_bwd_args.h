#pragma once
// The fa3 backward's kernel arguments from BackwardParams and the workspace: what launch()
// (fa3_backward.cu) passes to the pre, main and post kernels, and what the CPU emulation of the
// kernel (tests/kernels/attention_backward/fa3_backward_emulation.cpp) runs them with. Host code,
// inline: the emulation compiles the kernel header (Args) as host C++ and links none of the
// module's CUDA objects.
#include "kernels/attention_backward/common/backward_fused.h"
#include "kernels/attention_backward/common/backward_params.h"
#include "kernels/attention_backward/fa3_sm90/fa3_bwd_kernel.cuh"

namespace genbench::attention_backward::fa3 {

// The workspace (common/backward_fused.h): query rows padded to whole query blocks, the fp32 dQ
// accumulator. workspace_bytes(p) is its size.
inline RowWorkspace workspace_layout(const BackwardParams& p) { return row_workspace(p, kBlockM, true); }

// The kernels' arguments for p, `workspace` holding workspace_layout(p).bytes() bytes.
inline Args make_args(const BackwardParams& p, void* workspace) {
  Args a{};
  a.o = p.o;
  a.dout = p.dout;
  a.lse = p.lse;
  a.dq = p.dq;
  a.dk = p.dk;
  a.dv = p.dv;
  a.cu_q = p.cu_q;
  a.cu_k = p.cu_k;
  const RowWorkspace w = workspace_layout(p);
  a.lse2 = w.lse2(workspace);
  a.dsum = w.dsum(workspace);
  a.dq_acc = w.dq_acc(workspace);
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
  return a;
}

}  // namespace genbench::attention_backward::fa3
