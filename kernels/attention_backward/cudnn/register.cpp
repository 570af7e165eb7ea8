// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDNN_FACTORY_DECL(make_attention_backward_cudnn);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{"attention_backward",
                        "cudnn",
                        BackendKind::cuda,
                        "cuDNN 9 fused flash attention backward (SDPA backward) through the backend graph API; "
                        "deterministic as cudnn-frontend asks for it",
                        {},
                        GENBENCH_CUDNN_MISSING}),
    GENBENCH_CUDNN_FACTORY(make_attention_backward_cudnn))

}  // namespace genbench
