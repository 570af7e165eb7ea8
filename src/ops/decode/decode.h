#pragma once
// decode: the inference half of attention. A few new query tokens per sequence attend to a long
// KV cache (their own keys included, last), batched over sequences whose caches differ in
// length, with grouped-query heads and the cache stored in pages (decode_layout.h has the
// layouts). Memory-bound: the headline is GB/s (bytes of K and V actually read, Q, O and the
// block table), compared with the card's measured copy ceiling; tokens/s and TFLOP/s are
// columns too. A separate op rather than axes of `attention`: its shape vocabulary (cache,
// pages, KV dtype, new tokens), headline and ceiling differ from prefill's.
#include <cstdint>
#include <vector>

#include "ops/decode/decode_layout.h"
#include "ops/dtype.h"
#include "ops/op.h"

namespace genbench {

// Axis indices of the decode op, in schema order.
namespace decode_axis {
enum : std::size_t {
  batch,       // sequences
  heads,       // query heads
  heads_kv,    // key/value heads (GQA/MQA); heads must be a multiple
  head_dim,    // 64, 128, 256
  new_tokens,  // query tokens per sequence (1; up to 16 for speculative decoding)
  cache,       // keys per sequence (the largest, with varlen), the new tokens' included
  page_size,   // 0: contiguous; else a power of two (16, 64, 128, 256...) up to cache
  varlen,      // per-sequence lengths drawn in [max(cache/2, new_tokens), cache], seeded
  causal,      // among the new tokens, bottom-right aligned
  dtype,       // Q and O: bf16 | fp16
  kv_dtype,    // same | bf16 | fp16 | fp8_e4m3 (per-tensor descale)
  scale,       // softmax scale; 0 = 1/sqrt(head_dim)
  mode,        // eager | graph
  count
};
}

// K and V pools together may not exceed this (checked before any device work).
constexpr double kDecodeMaxPoolBytes = 100e9;

struct DecodeShape {
  decode::DecodeDims dims;
  DType dtype = DType::bf16;     // Q, O
  DType kv_dtype = DType::bf16;  // K, V
  float scale = 0;
  bool graph = false;

  static DecodeShape from(const Point& p);
  // Per-sequence cache lengths (draw 0: the timed set; graph replays validate draws 1, 2).
  std::vector<std::int64_t> lengths(std::uint64_t draw = 0) const { return decode::cache_lengths(dims, draw); }
  // Per-tensor descale of fp8 K/V (true = stored x descale): 1/64, as attention's fp8 inputs.
  float kv_descale() const { return kv_dtype == DType::fp8_e4m3 ? 1.0f / 64.0f : 1.0f; }
};

const Op& decode_op();

}  // namespace genbench
