#pragma once
// fa2 backward: a fused FlashAttention-2-style attention backward for sm80 and later (mma.sync
// m16n8k16, ldmatrix, cp.async double buffering), fp16 and bf16, head_dim 64, 128 and 256,
// MHA/GQA/MQA, causal (bottom-right aligned), varlen. The interface is BackwardParams
// (kernels/attention_backward/common/backward_params.h).
//
// launch() enqueues, in stream order and without host synchronization or allocation (so it can
// be captured in a graph; sequence lengths are read on the device):
//   1. pre:  D = rowsum(dO o O) and LSE x log2(e) (a row that sees no key: +inf, so P = 0) into
//            the workspace, padded per (sequence, head) to whole 64-row query blocks; zeroes the
//            fp32 dQ accumulator (atomic mode).
//   2. main: one thread block per (key block, kv head, sequence): K_j, V_j stay in shared
//            memory while Q_i, dO_i of every query head of the GQA group and every query block
//            that sees the key block stream through a double buffer; P is recomputed from LSE,
//            dV += P^T dO and dK += dS^T Q accumulate in registers (fp32) and are written once
//            (summed over the group). Atomic mode: dQ += dS K with red.global.add into the fp32
//            accumulator.
//   3. deterministic mode: a dQ kernel, one block per (query block, head, sequence), that
//            recomputes S, P, dP, dS over the visible key blocks and writes dQ (no atomics; the
//            result is bitwise reproducible).
//   4. post: dQ = scale x accumulator in the dtype (atomic mode); with varlen, rows of the
//            buffers past the last sequence are zeroed.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "kernels/attention_backward/common/backward_params.h"

namespace genbench::attention_backward::fa2 {

// "" when launch() can run p on a device of compute capability sm_major.sm_minor, else why not.
std::string unsupported(const BackwardParams& p, int sm_major, int sm_minor);
// Scratch bytes launch() needs (D and LSE per padded query row and head; fp32 dQ in atomic mode).
std::size_t workspace_bytes(const BackwardParams& p);
// The whole backward on `stream`; `workspace` holds workspace_bytes(p) bytes (256-byte aligned).
void launch(const BackwardParams& p, void* workspace, cudaStream_t stream);
// The configuration launch() uses for p, e.g. "fa2 bwd d128 Bc128 Br64 w8 atomic-dQ".
std::string config_name(const BackwardParams& p);

}  // namespace genbench::attention_backward::fa2
