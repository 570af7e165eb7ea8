// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDNN_FACTORY_DECL(make_decode_cudnn);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{"decode",
                        "cudnn",
                        BackendKind::cuda,
                        "cuDNN 9.5+ SDPA forward through the backend graph API: K/V read from the pools through the "
                        "block table (paged-cache-load operations), per-sequence lengths as a padding mask; bf16/fp16 "
                        "Q with K/V of the same type (the vendor comparator of decode/fa3)",
                        {},
                        GENBENCH_CUDNN_MISSING}),
    GENBENCH_CUDNN_FACTORY(make_decode_cudnn))

}  // namespace genbench
