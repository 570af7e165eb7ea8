#pragma once
// NCCL pieces shared by collective/nccl and overlap/cuda: enqueueing one collective of a shape
// on device buffers, and checking a device result against collective_expected().
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>

#include "ops/collective/collective.h"

namespace genbench {

ncclDataType_t nccl_type(DType t);
ncclRedOp_t nccl_op(ReduceOp op);

// Enqueues the collective of `s` (see kernels/collective/nccl/cuda_collective_nccl.cpp for the
// mapping of each kind) on `stream`. `in` and `out` are this rank's buffers.
void nccl_enqueue(const CollectiveShape& s, const void* in, void* out, ncclComm_t comm, cudaStream_t stream, int rank,
                  int world);

// Wrong elements of this rank's device output `out` (recv_count elements of s.dtype) against
// collective_expected(s, seed, rank): every element up to 2^24 elements, else 65 blocks of 4096
// spread over the buffer (last block included). *compared receives how many were compared.
std::int64_t nccl_count_wrong(const CollectiveShape& s, std::uint64_t seed, int rank, const void* out,
                              std::int64_t* compared);

}  // namespace genbench
