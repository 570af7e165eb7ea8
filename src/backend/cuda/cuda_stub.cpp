// Linked when the build has no CUDA backend.
#include <string>

#include "backend/backend.h"
#include "core/error.h"

namespace genbench {
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions&) { return nullptr; }
int cuda_device_count() { return 0; }
bool cuda_backend_built() { return false; }
void cuda_inject_device_fault(Backend&, const std::string& tag) {
  throw Error("a device fault needs the cuda backend, which this build lacks " + tag);
}
void cuda_skip_next_nccl_collective() { throw Error("NCCL collectives need the cuda backend, which this build lacks"); }
}  // namespace genbench
