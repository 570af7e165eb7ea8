// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

std::unique_ptr<Implementation> make_attention_reference_host();
GENBENCH_CUDA_FACTORY_DECL(make_attention_reference_cuda);

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{"attention", "reference", BackendKind::host,
                                                     "fp32 attention on the CPU, inputs rounded to the dtype"}),
                                 &make_attention_reference_host)

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{
                                     "attention",
                                     "reference",
                                     BackendKind::cuda,
                                     "fp32 attention on the GPU, one block per query row (validation reference)",
                                     {},
                                     GENBENCH_CUDA_MISSING}),
                                 GENBENCH_CUDA_FACTORY(make_attention_reference_cuda))

}  // namespace genbench
