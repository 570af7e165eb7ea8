// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDNN_FACTORY_DECL(make_attention_cudnn);

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{
                                     "attention",
                                     "cudnn",
                                     BackendKind::cuda,
                                     "cuDNN 9 fused flash attention (SDPA forward) through the backend graph API",
                                     {},
                                     GENBENCH_CUDNN_MISSING}),
                                 GENBENCH_CUDNN_FACTORY(make_attention_cudnn))

}  // namespace genbench
