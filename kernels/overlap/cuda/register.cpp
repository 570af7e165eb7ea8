// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_overlap_cuda);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{"overlap",
                        "cuda",
                        BackendKind::cuda,
                        "cuBLASLt GEMM and NCCL collective on two prioritised streams, optionally pipelined in chunks",
                        {},
                        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_overlap_cuda))

}  // namespace genbench
