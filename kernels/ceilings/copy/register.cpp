// The copy ceiling (ceilings::copy()): device-to-device copy bandwidth on the cuda backend.
#include "backend/ceilings.h"

namespace genbench {
GENBENCH_CUDA_CEILINGS_DECL(measure_copy_ceiling);  // cuda_copy.cpp
}  // namespace genbench

GENBENCH_REGISTER_CEILINGS(
    (::genbench::CeilingSourceInfo{
        "copy", ::genbench::BackendKind::cuda,
        "copy_GBps: cudaMemcpyAsync device to device of up to 2 GiB, read + write bytes, best of 5",
        GENBENCH_CUDA_CEILINGS_MISSING}),
    GENBENCH_CUDA_CEILINGS(::genbench::measure_copy_ceiling))
