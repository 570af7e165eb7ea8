// fa2 backward: the checks, the workspace layout and the dispatch to the per-(dtype, head dim)
// launchers of fa2_bwd_d*_*.cu.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <string>

#include "kernels/attention_backward/common/backward_fused.h"
#include "kernels/attention_backward/fa2_sm80/fa2_backward.h"
#include "kernels/attention_backward/fa2_sm80/fa2_bwd_launch.h"
#include "kernels/attention_backward/fa2_sm80/fa2_bwd_tiles.h"

namespace genbench::attention_backward::fa2 {

namespace {

// The workspace (common/backward_fused.h): rows padded to whole query blocks; the fp32 dQ
// accumulator in atomic mode.
RowWorkspace layout(const BackwardParams& p) { return row_workspace(p, kQueryBlock, !p.deterministic); }

// Opt-in shared memory per block of the compute capabilities we know (bytes).
std::size_t smem_limit(int major, int minor) {
  if (major == 8) return (minor == 0 || minor == 7) ? 163 * 1024 : 99 * 1024;
  if (major == 9 || major == 10) return 227 * 1024;
  return 99 * 1024;  // sm_12x and unknown: the small configuration's limit
}

std::string str(long long x) { return std::to_string(x); }

}  // namespace

std::string unsupported(const BackwardParams& p, int sm_major, int sm_minor) {
  if (p.dtype != DType::fp16 && p.dtype != DType::bf16)
    return std::string("dtype ") + dtype_name(p.dtype) + " is not supported (fp16, bf16)";
  const BwdTile* tile = bwd_tile(p.head_dim);
  if (!tile) return "head_dim " + str(p.head_dim) + " is not supported (64, 128, 256)";
  if (sm_major < 8) return "needs sm80 or later (this device is sm" + str(sm_major * 10 + sm_minor) + ")";
  const std::size_t need =
      main_smem_bytes(*tile) > dq_smem_bytes(*tile) ? main_smem_bytes(*tile) : dq_smem_bytes(*tile);
  const std::size_t limit = smem_limit(sm_major, sm_minor);
  if (need > limit)
    return "head_dim " + str(p.head_dim) + " needs " + str(static_cast<long long>(need)) +
           " bytes of shared memory per block, sm" + str(sm_major * 10 + sm_minor) + " allows " +
           str(static_cast<long long>(limit));
  return shape_unsupported(p);
}

std::size_t workspace_bytes(const BackwardParams& p) { return layout(p).bytes(); }

void launch(const BackwardParams& p, void* workspace, cudaStream_t stream) {
  Args a{};
  a.q = p.q;
  a.k = p.k;
  a.v = p.v;
  fill_shared_args(a, p, layout(p), workspace);
  const bool bf16 = p.dtype == DType::bf16;
  switch (p.head_dim) {
    case 64: bf16 ? Backward<__nv_bfloat16, 64>::run(a, stream) : Backward<__half, 64>::run(a, stream); break;
    case 128: bf16 ? Backward<__nv_bfloat16, 128>::run(a, stream) : Backward<__half, 128>::run(a, stream); break;
    case 256: bf16 ? Backward<__nv_bfloat16, 256>::run(a, stream) : Backward<__half, 256>::run(a, stream); break;
    default: break;  // unsupported() refuses it
  }
}

std::string config_name(const BackwardParams& p) {
  const BwdTile* t = bwd_tile(p.head_dim);
  if (!t) return "fa2 bwd (unsupported head_dim " + str(p.head_dim) + ")";
  std::string s = "fa2 bwd d" + str(t->d) + " Bc" + str(t->bc) + " Br" + str(t->br) + " w" + str(t->warps);
  if (t->wd > 1) s += " dsplit" + str(t->wd);
  s += p.deterministic
           ? " + dQ kernel Bm" + str(t->dq_bm) + " Bn" + str(t->dq_bn) + " w" + str(t->dq_warps) + " (deterministic)"
           : " atomic-dQ";
  return s;
}

}  // namespace genbench::attention_backward::fa2
