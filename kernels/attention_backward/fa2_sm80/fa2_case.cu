// attention_backward/fa2 on the cuda backend: our fused FlashAttention-2-style backward (fa2_backward.h) as a
// fused-kernel implementation (common/backward_case.h: the shared device case, the checks around the module).
#include "kernels/attention_backward/common/backward_case.h"
#include "kernels/attention_backward/fa2_sm80/fa2_backward.h"
#include "ops/implementation.h"

namespace genbench {

std::unique_ptr<Implementation> make_attention_backward_fa2() {
  namespace k = attention_backward::fa2;
  return attention_backward::make_fused_backward({k::unsupported, k::workspace_bytes, k::launch, k::config_name});
}

}  // namespace genbench
