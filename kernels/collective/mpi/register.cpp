// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

std::unique_ptr<Implementation> make_collective_mpi();

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{"collective", "mpi", BackendKind::host,
                                                     "MPI collectives on host memory"}),
                                 &make_collective_mpi)

}  // namespace genbench
