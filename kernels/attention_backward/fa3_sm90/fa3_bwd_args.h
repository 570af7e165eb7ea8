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
  fill_shared_args(a, p, workspace_layout(p), workspace);
  return a;
}

}  // namespace genbench::attention_backward::fa3
