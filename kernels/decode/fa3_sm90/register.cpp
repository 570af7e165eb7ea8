// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_decode_fa3);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{
        "decode",
        "fa3",
        BackendKind::cuda,
        "split-KV paged decode attention (own kernel): the query heads of a KV head x new tokens as one tile's rows, "
        "cp.async page gathers, mma.sync, an LSE combine of the splits; bf16/fp16/fp8_e4m3 K/V; sm_80+, tuned on H200",
        {},
        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_decode_fa3))

}  // namespace genbench
