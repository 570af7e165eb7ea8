// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

std::unique_ptr<Implementation> make_grouped_gemm_reference_host();

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{"grouped_gemm", "reference", BackendKind::host,
                                                     "one GEMM per group on the CPU, fp32 accumulation"}),
                                 &make_grouped_gemm_reference_host)

}  // namespace genbench
