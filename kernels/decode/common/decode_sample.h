#pragma once
// What the decode op's device implementations validate: a few whole sequences (the first,
// middle and last, and two seeded others), their keys and values gathered from the device
// pools through the block table into a contiguous scratch on the device (one copy per page),
// so validation reads what it checks and no more, whatever the pool's size. CUDA builds only.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "kernels/decode/common/decode_reference.h"
#include "ops/decode/decode.h"

namespace genbench::decode {

// The sampled sequences, sorted, each once.
std::vector<std::int64_t> sampled_sequences(const DecodeDims& d, std::uint64_t seed);

// Host data of the sequences `seqs` for validate_decode, as one contiguous batch (page_size 0)
// of n = seqs.size() sequences: dims, types, scale, its block table, and K and V downloaded as
// float times `kv_descale` (lengths, Q and the outputs are the caller's to add). `k` and `v` are
// the pools in the layout of s.dims with `table` (the block table) and `lengths` (per
// sequence). Runs on `stream` and synchronises it.
HostDecodeData gather_sequences(const DecodeShape& s, const std::vector<std::int64_t>& seqs, Backend& backend,
                                cudaStream_t stream, const DeviceBuffer& k, const DeviceBuffer& v,
                                const std::vector<std::int32_t>& table, const std::vector<std::int64_t>& lengths,
                                float kv_descale);

}  // namespace genbench::decode
