// fa3 backward kernels for head_dim 128, fp16 and bf16 (fa3_bwd_kernel.cuh).
#include "kernels/attention_backward/fa3_sm90/fa3_bwd_run.cuh"

namespace genbench::attention_backward::fa3 {
template struct Backward<__half, 128>;
template struct Backward<__nv_bfloat16, 128>;
}  // namespace genbench::attention_backward::fa3
