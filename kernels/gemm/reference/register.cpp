// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

std::unique_ptr<Implementation> make_gemm_reference_host();

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{"gemm", "reference", BackendKind::host,
                                                     "row-major GEMM on the CPU with fp32 accumulation"}),
                                 &make_gemm_reference_host)

}  // namespace genbench
