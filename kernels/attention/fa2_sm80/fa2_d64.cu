// fa2 instantiations: head_dim 64, tile 128x128, 4 warps (see fa2_dispatch.cu for when it is used).
#include "kernels/attention/fa2_sm80/fa2_kernel.cuh"

namespace genbench::fa2 {
template struct Kernel<__half, 64, 128, 128, 4, false>;
template struct Kernel<__half, 64, 128, 128, 4, true>;
template struct Kernel<__nv_bfloat16, 64, 128, 128, 4, false>;
template struct Kernel<__nv_bfloat16, 64, 128, 128, 4, true>;
}  // namespace genbench::fa2
