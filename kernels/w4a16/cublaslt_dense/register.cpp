// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_w4a16_cublaslt_dense);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{
        "w4a16",
        "cublaslt_dense",
        BackendKind::cuda,
        "the peer: the same m x n x k GEMM with dense 16-bit weights (the point's dtype), cuBLASLt; its time over "
        "the int4 one is the speed-up",
        {},
        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_w4a16_cublaslt_dense))

}  // namespace genbench
