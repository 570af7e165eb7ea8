// fa2 instantiations: head_dim 256, tile 128x64, 8 warps (see fa2_attention.cu for when it is used).
#include "kernels/attention/fa2_sm80/fa2_kernel.cuh"

namespace genbench::fa2 {
template struct Kernel<__half, 256, 128, 64, 8, false>;
template struct Kernel<__half, 256, 128, 64, 8, true>;
template struct Kernel<__nv_bfloat16, 256, 128, 64, 8, false>;
template struct Kernel<__nv_bfloat16, 256, 128, 64, 8, true>;
}  // namespace genbench::fa2
