#pragma once
// What the decode op's device implementations validate: a few whole sequences (the first,
// middle and last, and two seeded others), their keys and values gathered from the device
// pools through the block table into a contiguous scratch on the device (one copy per page),
// so validation reads what it checks and no more, whatever the pool's size; and graph mode's
// replays with more lengths. CUDA builds only.
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "kernels/decode/common/decode_reference.h"
#include "ops/decode/decode.h"
#include "ops/implementation.h"

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

// The validation of both implementations once they ran: every element of `o` and `lse` (the
// whole batch, downloaded as float) written (no NaN), then the sampled sequences' rows of `q`,
// `o` and `lse` and their lengths appended to `x` (from gather_sequences) and checked by
// validate_decode. `lse_at(r0, t, h)` is the index in `lse` of the LSE of token t, head h of
// the sequence whose rows start at r0 = b * new_tokens * heads (the implementations store LSE
// in different orders).
Validation check_sequences(const DecodeShape& s, const std::vector<std::int64_t>& seqs, HostDecodeData x,
                           const std::vector<std::int64_t>& lengths, const std::vector<float>& q,
                           const std::vector<float>& o, const std::vector<float>& lse,
                           const std::function<std::size_t(std::size_t, std::size_t, std::size_t)>& lse_at,
                           std::uint64_t seed);

// Graph mode's validation after `v` (that of the first execution): the captured graph reads the
// lengths from device memory, so it is replayed with two more sets of lengths (draws 1 and 2 of
// varlen dims), each put in place by `set_lengths` and validated by `rerun` (poison, execute,
// check); the shape's own lengths are set again after. Returns the first failed validation,
// named by its draw, or `v` with the largest error and a note of `captures` (graph captures
// made), which `graph_note` also receives for the variant's name.
Validation replay_with_lengths(const DecodeShape& s, Validation v,
                               const std::function<void(const std::vector<std::int64_t>&)>& set_lengths,
                               const std::function<Validation()>& rerun, const int& captures, std::string& graph_note);

}  // namespace genbench::decode
