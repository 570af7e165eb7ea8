#pragma once
// Checked CUDA / NCCL / cuBLAS calls: a failure throws genbench::Error naming the call, the
// file and line, and the rank and host.
#include <cuda_runtime.h>

#include "core/error.h"

#define GENBENCH_CHECK_CUDA(call)                                                                     \
  do {                                                                                                \
    const cudaError_t genbench_cuda_rc_ = (call);                                                     \
    if (genbench_cuda_rc_ != cudaSuccess)                                                             \
      ::genbench::throw_call_error(#call, cudaGetErrorString(genbench_cuda_rc_), __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors surface here.
#define GENBENCH_CHECK_LAUNCH() GENBENCH_CHECK_CUDA(cudaGetLastError())

// NCCL and cuBLAS(Lt) status codes. The headers are included by the files that use these.
#define GENBENCH_CHECK_NCCL(call)                                                                     \
  do {                                                                                                \
    const ncclResult_t genbench_nccl_rc_ = (call);                                                    \
    if (genbench_nccl_rc_ != ncclSuccess)                                                             \
      ::genbench::throw_call_error(#call, ncclGetErrorString(genbench_nccl_rc_), __FILE__, __LINE__); \
  } while (0)

#define GENBENCH_CHECK_CUBLAS(call)                                                                          \
  do {                                                                                                       \
    const cublasStatus_t genbench_cublas_rc_ = (call);                                                       \
    if (genbench_cublas_rc_ != CUBLAS_STATUS_SUCCESS)                                                        \
      ::genbench::throw_call_error(#call, cublasLtGetStatusString(genbench_cublas_rc_), __FILE__, __LINE__); \
  } while (0)
