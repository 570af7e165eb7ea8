// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_attention_fa3);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{
        "attention",
        "fa3",
        BackendKind::cuda,
        "fused FlashAttention-3-style forward for Hopper (sm_90a): TMA, wgmma, warp-specialized "
        "producer and 2-3 consumer warpgroups, persistent (own kernel); fp8_e4m3 inputs give a bf16 output",
        {tuning_axis("fa3_consumers", {"2", "3"}, "fa3: consumer warpgroups of 64 query rows (16-bit)"),
         tuning_axis("fa3_pingpong", {"on", "off"}, "fa3: consumer warpgroups take turns issuing their GEMMs"),
         tuning_axis("fa3_persistent", {"on", "off"}, "fa3: one CTA per SM claiming tiles (on) or one per tile"),
         tuning_axis("fa3_split", {"on", "off"}, "fa3: split a persistent launch's partial last round by key range")},
        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_attention_fa3))

}  // namespace genbench
