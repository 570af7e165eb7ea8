// The one place implementations are registered: add a line here when adding a folder under
// kernels/<op>/<impl>/.
#include "kernels/registry.h"

#include "ops/attention.h"
#include "ops/collective.h"
#include "ops/gemm.h"
#include "ops/overlap.h"

namespace genbench {

void register_implementations(Registry& r) {
  // host backend
  r.add(make_attention_reference_host());
  r.add(make_gemm_reference_host());
  r.add(make_collective_mpi());
  r.add(make_overlap_host());
  // cuda backend
#ifdef GENBENCH_HAVE_CUDA
  r.add(make_attention_fa3());
  r.add(make_attention_reference_cuda());
  r.add(make_attention_unfused());
  r.add(make_attention_fa2());
#ifdef GENBENCH_HAVE_CUDNN
  r.add(make_attention_cudnn());
#else
  r.add(make_unavailable(attention_op(), "cudnn", "cuDNN 9 fused flash attention (needs cuDNN)"));
#endif
  r.add(make_gemm_cublaslt());
  r.add(make_collective_nccl());
  r.add(make_overlap_cuda());
#else
  r.add(make_unavailable(attention_op(), "fa3", "FlashAttention-3-style forward for Hopper (needs the CUDA backend)"));
  r.add(make_unavailable(attention_op(), "reference", "fp32 attention on the GPU (validation reference)"));
  r.add(make_unavailable(attention_op(), "unfused", "cuBLAS QK^T, softmax kernel, cuBLAS PV (materialised scores)"));
  r.add(make_unavailable(attention_op(), "fa2", "fused FlashAttention-2-style forward on mma.sync (sm80+)"));
  r.add(make_unavailable(attention_op(), "cudnn", "cuDNN 9 fused flash attention"));
  r.add(make_unavailable(gemm_op(), "cublaslt", "cuBLASLt matmul"));
  r.add(make_unavailable(collective_op(), "nccl", "NCCL collectives"));
  r.add(make_unavailable(overlap_op(), "cuda", "cuBLASLt GEMM and NCCL collective on two streams"));
#endif
}

}  // namespace genbench
