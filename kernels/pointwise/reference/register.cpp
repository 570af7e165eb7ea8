// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

std::unique_ptr<Implementation> make_pointwise_reference_host();

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{"pointwise", "reference", BackendKind::host,
                                                     "each kind in fp32 on the CPU, results rounded to the dtype"}),
                                 &make_pointwise_reference_host)

}  // namespace genbench
