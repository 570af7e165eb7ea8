// fa2 backward kernels for head_dim 128, fp16 (the tile: fa2_bwd_tiles.h).
#include "kernels/attention_backward/fa2_sm80/fa2_bwd_run.cuh"

namespace genbench::attention_backward::fa2 {
template struct Backward<__half, 128>;
}  // namespace genbench::attention_backward::fa2
