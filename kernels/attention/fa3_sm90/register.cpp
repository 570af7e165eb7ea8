// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_attention_fa3);

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{"attention", "fa3", BackendKind::cuda,
      "fused FlashAttention-3-style forward for Hopper (sm_90a): TMA, wgmma, warp-specialized "
                 "producer and 2-3 consumer warpgroups, persistent (own kernel); fp8_e4m3 inputs give a bf16 output",
      {}, GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_attention_fa3))

}  // namespace genbench
