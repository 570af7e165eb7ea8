// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_grouped_gemm_cublaslt_loop);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{
        "grouped_gemm",
        "cublaslt_loop",
        BackendKind::cuda,
        "the baseline written by hand: one cuBLASLt matmul per non-empty group, each planned with the heuristic's "
        "first algorithm",
        {},
        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_grouped_gemm_cublaslt_loop))

}  // namespace genbench
