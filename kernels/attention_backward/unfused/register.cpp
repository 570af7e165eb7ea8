// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_attention_backward_unfused);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{"attention_backward",
                        "unfused",
                        BackendKind::cuda,
                        "cuBLAS batched GEMMs (fp32 accumulation) with S/P and dS materialised per chunk of heads, "
                        "softmax-gradient kernels; deterministic",
                        {},
                        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_attention_backward_unfused))

}  // namespace genbench
