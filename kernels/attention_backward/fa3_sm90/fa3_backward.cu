// fa3 backward: the checks, the workspace layout, the TMA maps and the dispatch to the
// per-head-dim launchers of fa3_bwd_d*.cu.
#include "kernels/attention_backward/fa3_sm90/fa3_backward.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/attention_backward/common/backward_fused.h"
#include "kernels/attention_backward/fa3_sm90/fa3_bwd_args.h"
#include "kernels/attention_backward/fa3_sm90/fa3_bwd_kernel.cuh"
#include "kernels/attention_backward/fa3_sm90/fa3_bwd_launch.h"
#include "kernels/common/sm90_support.h"
#include "kernels/common/tma_map.h"

namespace genbench::attention_backward::fa3 {

namespace {

std::string str(long long x) { return std::to_string(x); }

const void* main_kernel(int d, bool bf16) {
  if (d == 64) return bf16 ? Backward<__nv_bfloat16, 64>::main_kernel() : Backward<__half, 64>::main_kernel();
  return bf16 ? Backward<__nv_bfloat16, 128>::main_kernel() : Backward<__half, 128>::main_kernel();
}

// A [batch, seq, heads, d] 16-bit tensor as a 4-D map (d innermost), box 64 x 1 x rows x 1
// (kernels/common/tma_map.h); varlen tensors as one packed sequence.
CUtensorMap map16(const BackwardParams& p, const void* base, int heads, int seq, int box_rows) {
  const bool packed = p.varlen;
  return make_map16("fa3 backward", base, p.dtype == DType::bf16, packed ? 1 : p.batch,
                    packed ? static_cast<long long>(p.batch) * seq : seq, heads, p.head_dim, box_rows);
}

}  // namespace

std::string unsupported(const BackwardParams& p, int sm_major, int sm_minor) {
  if (p.dtype != DType::fp16 && p.dtype != DType::bf16)
    return std::string("dtype ") + dtype_name(p.dtype) + " is not supported (fp16, bf16)";
  if (p.head_dim != 64 && p.head_dim != 128)
    return "head_dim " + str(p.head_dim) + " is not supported by the fa3 backward (64, 128; fa2 has 256)";
  if (p.deterministic)
    return "deterministic dQ is not supported (the fa3 backward adds dQ with atomics; fa2 has a deterministic mode)";
  if (sm_major != 9 || sm_minor != 0)
    return "needs sm_90a (H100/H200; this device is sm" + str(sm_major * 10 + sm_minor) + ")";
  if (auto why = sm90a_support("fa3 backward", main_kernel(p.head_dim, p.dtype == DType::bf16)); !why.empty())
    return why;
  return shape_unsupported(p);
}

std::size_t workspace_bytes(const BackwardParams& p) { return workspace_layout(p).bytes(); }

void launch(const BackwardParams& p, void* workspace, cudaStream_t stream) {
  const Args a = make_args(p, workspace);
  Maps m{};
  if (p.seqlen_q > 0) {  // a map cannot have an empty dimension; without query rows none is read
    m.q = map16(p, p.q, p.heads, p.seqlen_q, kBlockM);
    m.dout = map16(p, p.dout, p.heads, p.seqlen_q, kBlockM);
    const auto d = static_cast<std::uint64_t>(p.head_dim), heads = static_cast<std::uint64_t>(p.heads);
    m.dq = make_tma_map("fa3 backward", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, a.dq_acc,
                        {d, heads, static_cast<std::uint64_t>(p.rows_q)}, {d * 4, heads * d * 4}, {32, 1, kBlockM});
  }
  if (p.seqlen_k > 0) {
    m.k = map16(p, p.k, p.heads_kv, p.seqlen_k, kBlockN);
    m.v = map16(p, p.v, p.heads_kv, p.seqlen_k, kBlockN);
  }
  const bool bf16 = p.dtype == DType::bf16;
  if (p.head_dim == 64) bf16 ? Backward<__nv_bfloat16, 64>::run(a, m, stream) : Backward<__half, 64>::run(a, m, stream);
  else if (p.head_dim == 128)
    bf16 ? Backward<__nv_bfloat16, 128>::run(a, m, stream) : Backward<__half, 128>::run(a, m, stream);
}

std::string config_name(const BackwardParams& p) {
  return "fa3 bwd d" + str(p.head_dim) + " Bn" + str(kBlockN) + " Bm" + str(kBlockM) + " ws3 " +
         (p.head_dim >= 128 ? "split-dQ" : "own-dQ");
}

}  // namespace genbench::attention_backward::fa3
