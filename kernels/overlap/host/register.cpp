// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

std::unique_ptr<Implementation> make_overlap_host();

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{"overlap", "host", BackendKind::host,
                        "reference CPU GEMM in a thread while MPI runs the collective (pipeline test on the host)"}),
    &make_overlap_host)

}  // namespace genbench
