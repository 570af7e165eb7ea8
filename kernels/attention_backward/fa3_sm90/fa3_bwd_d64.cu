// fa3 backward kernels for head_dim 64, fp16 and bf16 (fa3_bwd_kernel.cuh).
#include "kernels/attention_backward/fa3_sm90/fa3_bwd_run.cuh"

namespace genbench::attention_backward::fa3 {
template struct Backward<__half, 64>;
template struct Backward<__nv_bfloat16, 64>;
}  // namespace genbench::attention_backward::fa3
