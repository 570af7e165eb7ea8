#pragma once
// Whether this build holds sm_90a code for a kernel (host code; CUDA builds only).
#include <string>

namespace genbench {

// "" when `kernel` (a __global__ function's address) is loadable on the current device from
// sm_90a code, else why not, starting with `who`. The caller checks the device itself.
std::string sm90a_support(const char* who, const void* kernel);

}  // namespace genbench
