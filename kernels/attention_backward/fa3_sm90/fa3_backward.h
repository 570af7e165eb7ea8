#pragma once
// fa3 backward: a fused attention backward for Hopper (sm_90a: wgmma, TMA, warp specialization),
// fp16 and bf16, head_dim 64 and 128, MHA/GQA/MQA, causal (bottom-right aligned), varlen. The
// interface is BackwardParams (kernels/attention_backward/common/backward_params.h), as fa2's.
//
// launch() enqueues, in stream order and without host synchronization or allocation (so it can
// be captured in a graph; sequence lengths are read on the device):
//   1. pre:  D = rowsum(dO o O) and LSE x log2(e) per padded query row into the workspace, and
//            the fp32 dQ accumulator zeroed (common/backward_rows.cuh).
//   2. main: one CTA per (key block of 128, kv head, sequence), three warpgroups. A producer
//            thread loads the block's K and V once (TMA) and streams Q, dO, LSE and D of every
//            query block of every query head of the GQA group that sees the key block through a
//            two-stage ring. Each of the two consumer warpgroups owns 64 keys: S^T = K Q^T and
//            dP^T = V dO^T by wgmma from shared memory; P^T and dS^T computed in registers and fed
//            as register operands to dV += P^T dO and dK += dS^T Q, which accumulate in fp32
//            registers for the whole loop; dS^T staged in shared memory for dQ = dS K (wgmma with
//            both operands transposed), added to the fp32 accumulator with vector reductions.
//            head_dim 128: each consumer computes half of dQ's columns over all 128 keys (the
//            two warpgroups meet at a named barrier per query block); 64: each its own keys'
//            share of all columns.
//   3. post: dQ = scale x accumulator in the dtype; with varlen, rows of the buffers past the
//            last sequence are zeroed (common/backward_rows.cuh).
// dQ's reductions make the result's last bits depend on timing; there is no deterministic mode
// (fa2 has one).
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "kernels/attention_backward/common/backward_params.h"

namespace genbench::attention_backward::fa3 {

// "" when launch() can run p on a device of compute capability sm_major.sm_minor from this
// build, else why not.
std::string unsupported(const BackwardParams& p, int sm_major, int sm_minor);
// Scratch bytes launch() needs (D and LSE per padded query row and head; the fp32 dQ accumulator).
std::size_t workspace_bytes(const BackwardParams& p);
// The whole backward on `stream`; `workspace` holds workspace_bytes(p) bytes (256-byte aligned).
void launch(const BackwardParams& p, void* workspace, cudaStream_t stream);
// The configuration launch() uses for p, e.g. "fa3 bwd d128 Bn128 Bm64 ws3 split-dQ".
std::string config_name(const BackwardParams& p);

}  // namespace genbench::attention_backward::fa3
