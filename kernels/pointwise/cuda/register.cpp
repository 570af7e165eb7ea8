// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_pointwise_cuda);

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{"pointwise",
                                                     "cuda",
                                                     BackendKind::cuda,
                                                     "our kernels: 16-byte loads, fp32 math, rmsnorm's row in "
                                                     "registers",
                                                     {},
                                                     GENBENCH_CUDA_MISSING}),
                                 GENBENCH_CUDA_FACTORY(make_pointwise_cuda))

}  // namespace genbench
