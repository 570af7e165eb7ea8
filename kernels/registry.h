#pragma once
// Factories of every implementation; registered in kernels/registry.cpp.
#include <memory>
#include <string>

#include "ops/implementation.h"

namespace genbench {

// host backend
std::unique_ptr<Implementation> make_attention_reference_host();
std::unique_ptr<Implementation> make_gemm_reference_host();
std::unique_ptr<Implementation> make_collective_mpi();
std::unique_ptr<Implementation> make_overlap_host();

// cuda backend (defined only in builds with GENBENCH_HAVE_CUDA)
std::unique_ptr<Implementation> make_gemm_cublaslt();
std::unique_ptr<Implementation> make_attention_fa3();
std::unique_ptr<Implementation> make_attention_reference_cuda();
std::unique_ptr<Implementation> make_attention_unfused();
std::unique_ptr<Implementation> make_attention_fa2();
std::unique_ptr<Implementation> make_attention_cudnn();
std::unique_ptr<Implementation> make_collective_nccl();
std::unique_ptr<Implementation> make_overlap_cuda();

// A CUDA implementation in a build without the CUDA backend: listed, never runnable.
std::unique_ptr<Implementation> make_unavailable(const Op& op, const std::string& name, const std::string& description);

}  // namespace genbench
