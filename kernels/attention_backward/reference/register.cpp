// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

std::unique_ptr<Implementation> make_attention_backward_reference_host();

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{
                                     "attention_backward", "reference", BackendKind::host,
                                     "fp32 attention backward on the CPU, inputs rounded to the dtype"}),
                                 &make_attention_backward_reference_host)

}  // namespace genbench
