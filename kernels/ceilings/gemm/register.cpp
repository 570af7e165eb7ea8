// The GEMM ceilings (ceilings::gemm(dtype)): the best cuBLASLt rate of every precision the device
// has, on the cuda backend.
#include "backend/ceilings.h"

namespace genbench {
GENBENCH_CUDA_CEILINGS_DECL(measure_gemm_ceilings);  // cuda_gemm.cpp
}  // namespace genbench

GENBENCH_REGISTER_CEILINGS((::genbench::CeilingSourceInfo{
                               "gemm", ::genbench::BackendKind::cuda,
                               "gemm_<dtype>_tflops: cuBLASLt 8192^3 TN per precision the device has, fastest of 4 "
                               "candidates, best of 10",
                               GENBENCH_CUDA_CEILINGS_MISSING}),
                           GENBENCH_CUDA_CEILINGS(::genbench::measure_gemm_ceilings))
