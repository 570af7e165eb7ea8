// Fault injection on the cuda backend (backend/backend.h): a real device fault, and skipping
// this rank's next NCCL collective.
#include <string>

#include "backend/backend.h"
#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/nccl_comm.h"
#include "core/error.h"

namespace genbench {

namespace {

// One thread that executes a trap instruction. Loaded from PTX at run time (the driver compiles
// it for the device), so the core library needs no device compiler for it.
constexpr const char* kTrapPtx = R"(.version 7.0
.target sm_80
.address_size 64

.visible .entry genbench_fault_trap()
{
	trap;
	ret;
}
)";

}  // namespace

[[noreturn]] void cuda_inject_device_fault(Backend& backend, const std::string& tag) {
  const cudaStream_t stream = cuda_backend_of(backend).stream();
  cudaLibrary_t lib = nullptr;
  GENBENCH_CHECK_CUDA(cudaLibraryLoadData(&lib, kTrapPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t trap = nullptr;
  GENBENCH_CHECK_CUDA(cudaLibraryGetKernel(&trap, lib, "genbench_fault_trap"));
  GENBENCH_CHECK_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(trap), dim3(1), dim3(1), nullptr, 0, stream));
  // The fault is real: the context is lost from here on, and this checked call reports it.
  try {
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream));
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " " + tag);
  }
  throw Error("cudaStreamSynchronize did not report the injected device fault " + tag);
}

void cuda_skip_next_nccl_collective() { nccl_skip_next_collective(); }

}  // namespace genbench
