// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_attention_backward_fa3);

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{"attention_backward",
                                                     "fa3",
                                                     BackendKind::cuda,
                                                     "ours: fused FlashAttention-3-style backward for sm_90a (wgmma, "
                                                     "TMA, warp specialization), head_dim 64 and 128, atomic dQ",
                                                     {},
                                                     GENBENCH_CUDA_MISSING}),
                                 GENBENCH_CUDA_FACTORY(make_attention_backward_fa3))

}  // namespace genbench
