// Registers this folder's implementation(s): the one place they are named.
#include "kernels/attention/fa2_sm80/fa2_tiles.h"
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_attention_fa2);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{
        "attention",
        "fa2",
        BackendKind::cuda,
        "fused FlashAttention-2-style forward: mma.sync m16n8k16, ldmatrix, cp.async double buffering (sm80+)",
        {tuning_axis("fa2_tile", fa2::tile_names(),
                     "fa2: tile configuration (must match head_dim; fa2_attention.cu's configs())")},
        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_attention_fa2))

}  // namespace genbench
