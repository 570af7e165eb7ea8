// The one place implementations are registered: add a line here when adding a folder under
// kernels/<op>/<impl>/.
#include "kernels/registry.h"

#include "ops/collective.h"
#include "ops/gemm.h"

namespace genbench {

void register_implementations(Registry& r) {
  // host backend
  r.add(make_attention_reference_host());
  r.add(make_gemm_reference_host());
  r.add(make_collective_mpi());
  // cuda backend
#ifdef GENBENCH_HAVE_CUDA
  r.add(make_gemm_cublaslt());
  r.add(make_collective_nccl());
#else
  r.add(make_unavailable(gemm_op(), "cublaslt", "cuBLASLt matmul"));
  r.add(make_unavailable(collective_op(), "nccl", "NCCL collectives"));
#endif
}

}  // namespace genbench
