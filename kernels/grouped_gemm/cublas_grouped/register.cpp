// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_grouped_gemm_cublas);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{"grouped_gemm",
                        "cublas_grouped",
                        BackendKind::cuda,
                        "cublasGemmGroupedBatchedEx (CUDA 12.5+): every non-empty group one problem of one call",
                        {},
                        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_grouped_gemm_cublas))

}  // namespace genbench
