// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_gemm_cublaslt);

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{"gemm", "cublaslt", BackendKind::cuda,
      "cuBLASLt matmul (fp32/tf32/fp16/bf16/fp8/int8), fastest of the heuristic's top candidates",
      {}, GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_gemm_cublaslt))

}  // namespace genbench
