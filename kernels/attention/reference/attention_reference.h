#pragma once
// The device reference forward (fp32 arithmetic, one block per query row) as a plain launch,
// for other ops that need a forward's O and LSE on the device (attention_backward's inputs).
// Buffers as kernels/attention/common/attention_case.h lays them out; cu_q / cu_k hold the
// cumulative lengths (batch + 1) in device memory; lse_head_stride is LSE's rows per head with
// varlen. fp32, fp16 and bf16.
#include <cuda_runtime.h>

#include "ops/attention/attention.h"

namespace genbench {

void attention_reference_forward(const AttentionShape& s, const void* q, const void* k, const void* v, void* o,
                                 float* lse, const int* cu_q, const int* cu_k, long long lse_head_stride,
                                 cudaStream_t stream);

}  // namespace genbench
