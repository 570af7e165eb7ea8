// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_attention_backward_fa2);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{
        "attention_backward",
        "fa2",
        BackendKind::cuda,
        "ours: fused FlashAttention-2-style backward (mma.sync; sm80 and sm_90a), atomic or deterministic dQ",
        {},
        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_attention_backward_fa2))

}  // namespace genbench
