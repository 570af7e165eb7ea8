// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

GENBENCH_CUDA_FACTORY_DECL(make_w4a16_mma_sm80);

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{
        "w4a16",
        "mma_sm80",
        BackendKind::cuda,
        "W4A16 kernel: int4 codes dequantised in registers to mma.sync m16n8k16 fragments (sm_80+) or wgmma's A "
        "operand (sm_90, 9 tokens and more), split-k for few tokens; or dequantise to a dense W^T then cuBLASLt",
        {tuning_axis("w4a16_path", {"fused", "dequant"},
                     "mma_sm80: fused (the kernel) or dequant (dense W^T, then a cuBLASLt GEMM); auto: fused up to m = "
                     "128 (256 "
                     "where the wgmma form runs)"),
         tuning_axis(
             "w4a16_mma", {"sync", "wgmma"},
             "mma_sm80, fused path: the products on mma.sync (up to 16 tokens the streaming kernel) or wgmma (sm_90 "
             "GPUs; up to 16 tokens 16-row tiles of the wide kernel); auto: wgmma where it runs, from 9 tokens")},
        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_w4a16_mma_sm80))

}  // namespace genbench
