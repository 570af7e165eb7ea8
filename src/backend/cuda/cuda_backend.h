#pragma once
// The CUDA backend: one device per rank, one stream on which every implementation enqueues.
#include <cuda_runtime.h>

#include "backend/backend.h"
#include "backend/cuda/check.h"

namespace genbench {

class CudaBackend : public Backend {
 public:
  virtual cudaStream_t stream() const = 0;
  virtual int device() const = 0;
  virtual const cudaDeviceProp& properties() const = 0;
};

// The CUDA backend of a Context (throws if the context's backend is not CUDA).
CudaBackend& cuda_backend_of(Backend& b);

}  // namespace genbench
