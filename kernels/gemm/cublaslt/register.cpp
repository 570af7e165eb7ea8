// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_gemm_cublaslt);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{"gemm",
                        "cublaslt",
                        BackendKind::cuda,
                        "cuBLASLt matmul (fp32/tf32/fp16/bf16/fp8/int8), fastest of the heuristic's top candidates",
                        {tuning_axis("cublaslt_workspace_mb", {"0", "1", "4", "16", "32", "64", "256", "1024", "4096"},
                                     "cublaslt: workspace in MiB for the algorithm search and the matmul (auto: 32)")},
                        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_gemm_cublaslt))

}  // namespace genbench
