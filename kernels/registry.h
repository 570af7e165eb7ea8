#pragma once
// Factories of every implementation; registered in kernels/registry.cpp.
#include <memory>

#include "ops/implementation.h"

namespace genbench {

std::unique_ptr<Implementation> make_attention_reference_host();
std::unique_ptr<Implementation> make_gemm_reference_host();
std::unique_ptr<Implementation> make_collective_mpi();

}  // namespace genbench
