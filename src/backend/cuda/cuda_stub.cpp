// Linked when the build has no CUDA backend.
#include "backend/backend.h"

namespace genbench {
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions&) { return nullptr; }
int cuda_device_count() { return 0; }
bool cuda_backend_built() { return false; }
}  // namespace genbench
