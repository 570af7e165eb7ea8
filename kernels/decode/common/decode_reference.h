#pragma once
// Decode attention on the host (plain C++ and ops/dtype, so standalone device programs link it
// too): the fp64 reference of one output row, the same computation in the input precision, and
// validation by attention's method: sampled rows (first and last new token of the first, middle
// and last sequence, the first and last head of a group, seeded random rows) recomputed in
// double; the implementation's largest error must stay within 2x that of the input-precision
// computation (fp32 scores, P rounded to the type the kernel multiplies V in, O rounded to the
// output type) plus half an ulp of the output; NaN never passes and every output element must
// have been written (outputs are poisoned before the run).
#include <cstdint>
#include <string>
#include <vector>

#include "ops/decode/decode_layout.h"
#include "ops/dtype.h"

namespace genbench::decode {

// Host copies of one execution's tensors, as float holding the stored values times their
// descale (exact for a power-of-two descale).
struct HostDecodeData {
  DecodeDims dims;
  DType q_dtype = DType::bf16;   // Q and O
  DType kv_dtype = DType::bf16;  // K and V pools
  float scale = 0;               // softmax scale
  std::vector<std::int64_t> lengths;
  std::vector<std::int32_t> table;  // [batch, pages_per_seq]
  std::vector<float> q, k, v;       // Q [batch, new, heads, D]; K, V pools
  std::vector<float> o, lse;        // outputs, O [batch, new, heads, D], LSE [batch, new, heads]
};

struct DecodeCheck {
  bool ok = true;
  double error = 0, tolerance = 0;
  std::string detail;
};

// The pool row of key j of sequence b.
std::int64_t pool_row(const DecodeDims& d, const std::vector<std::int32_t>& table, std::int64_t b, std::int64_t j);

// The type P is rounded to before the PV product: bf16 for bf16 K/V, fp16 otherwise (fp8 K/V
// are widened to fp16, exactly, and multiplied in fp16).
DType p_dtype(DType kv);

// Output row (b, new token i, head h) in double: out[head_dim], *lse (natural log).
void reference_row(const HostDecodeData& x, std::int64_t b, std::int64_t i, std::int64_t h, double* out, double* lse);
// The same in the input precision (fp32 scores, P rounded to p_dtype, O rounded to q_dtype).
void low_precision_row(const HostDecodeData& x, std::int64_t b, std::int64_t i, std::int64_t h, float* out, float* lse);

// Fills x.o and x.lse with the input-precision computation for every row (host implementation).
void compute_all(HostDecodeData& x);

// Checks x.o and x.lse; `seed` picks the random rows; `budget` bounds the multiply-adds of
// reference work.
DecodeCheck validate_decode(const HostDecodeData& x, std::uint64_t seed, double budget = 1.5e8);

// The K or V pool rearranged into the contiguous layout of the same dimensions (page_size 0,
// row b * cache + j = key j of sequence b, for every j < cache).
std::vector<float> to_contiguous(const DecodeDims& d, const std::vector<std::int32_t>& table,
                                 const std::vector<float>& pool);

}  // namespace genbench::decode
