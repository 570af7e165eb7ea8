#include <cuda_runtime.h>

#include "core/strings.h"
#include "kernels/common/sm90_support.h"

namespace genbench {

std::string sm90a_support(const char* who, const void* kernel) {
  cudaFuncAttributes a{};
  const cudaError_t e = cudaFuncGetAttributes(&a, kernel);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return strprintf("%s: kernel not loadable on this device (%s)", who, cudaGetErrorString(e));
  }
  if (a.binaryVersion != 90)
    return strprintf(
        "%s: this build has no sm_90a code for the device (binary version %d); add 90a to "
        "GENBENCH_CUDA_ARCHITECTURES",
        who, a.binaryVersion);
  return "";
}

}  // namespace genbench
