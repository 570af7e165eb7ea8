// attention_backward/fa3 on the cuda backend: our fused Hopper backward (fa3_backward.h) as a fused-kernel
// implementation (common/backward_case.h: the shared device case, the checks around the module).
#include "kernels/attention_backward/common/backward_case.h"
#include "kernels/attention_backward/fa3_sm90/fa3_backward.h"
#include "ops/implementation.h"

namespace genbench {

std::unique_ptr<Implementation> make_attention_backward_fa3() {
  namespace k = attention_backward::fa3;
  return attention_backward::make_fused_backward({k::unsupported, k::workspace_bytes, k::launch, k::config_name});
}

}  // namespace genbench
