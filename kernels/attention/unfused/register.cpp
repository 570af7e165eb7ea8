// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_attention_unfused);

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{
                                     "attention",
                                     "unfused",
                                     BackendKind::cuda,
                                     "cuBLAS batched QK^T into an fp32 score matrix, softmax kernel, cuBLAS batched PV",
                                     {},
                                     GENBENCH_CUDA_MISSING}),
                                 GENBENCH_CUDA_FACTORY(make_attention_unfused))

}  // namespace genbench
