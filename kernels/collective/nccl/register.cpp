// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_collective_nccl);

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{"collective",
                                                     "nccl",
                                                     BackendKind::cuda,
                                                     "NCCL collectives on device memory, one communicator per run",
                                                     {},
                                                     GENBENCH_CUDA_MISSING}),
                                 GENBENCH_CUDA_FACTORY(make_collective_nccl))

}  // namespace genbench
