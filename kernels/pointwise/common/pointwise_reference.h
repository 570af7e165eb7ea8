#pragma once
// What every pointwise implementation shares (ops/pointwise/pointwise.h): the inputs that are
// not random normals (token ids, positions, the rope table), and the check of sampled rows
// against a double-precision reference of the op's math.
#include <cstdint>
#include <functional>
#include <vector>

#include "ops/implementation.h"
#include "ops/pointwise/pointwise.h"

namespace genbench::pointwise {

// Token id of row r (embedding), uniform over [0, vocab), from the point's seed.
std::int32_t token_id(std::uint64_t seed, std::int64_t r, std::int64_t vocab);
// Position of row r (rope): (r + offset) % kPositions, the offset drawn from the seed.
std::int32_t position(std::uint64_t seed, std::int64_t r);
// cos and sin of pos * theta^(-2i/head_dim) for pos < kPositions, i < head_dim/2, row-major.
void rope_table(std::int64_t head_dim, std::vector<float>& cos, std::vector<float>& sin);

// Per row the table row it reads: its position (rope) or its token id (embedding); empty for the
// other kinds.
std::vector<std::int32_t> row_index(const PointwiseShape& s, std::uint64_t seed);

// The rows a validation reads back: every row up to 64, else 47 spread over them and the last.
std::vector<std::int64_t> sample_rows(std::int64_t rows);

// One checked row, as floats (values of the point's dtype).
struct Sample {
  std::int64_t row = 0;
  std::vector<float> in_a;   // x (norms), Q|K of the row (rope), g|u (silu_mul), the table row of its id (embedding)
  std::vector<float> in_b;   // the residual (add_rmsnorm), cos|sin at the row's position (rope)
  std::vector<float> out_a;  // y (norms, silu_mul, embedding), Q|K rotated (rope)
  std::vector<float> out_b;  // add_rmsnorm: the residual written back
};

// Each sample against double math on its inputs. Error: |got - ref| / (|ref| + 1e-3 x the row's
// mean |ref|), held to 2^-8 (bf16) or 2^-11 (fp16), about two units in the last place; the
// embedding gather and add_rmsnorm's residual are held to 0 (a copy and one rounded sum). A NaN
// (a poisoned element never written) fails.
Validation check_samples(const PointwiseShape& s, const std::vector<float>& weight, const std::vector<Sample>& samples);

// A case's buffers, as a validation reads them: the main input (rope: Q|K, rotated in place; the
// embedding: the table), add_rmsnorm's residual, the output.
enum class Buffer { a, b, y };
using ReadElements = std::function<std::vector<float>(Buffer, std::int64_t at, std::int64_t n)>;

// The validation both implementations run on inputs filled afresh: reads the sampled rows'
// inputs, calls poison_and_run (outputs set to NaN, one call), reads the rows' outputs, checks.
Validation validate_rows(const PointwiseShape& s, const std::vector<std::int32_t>& index, const std::vector<float>& cos,
                         const std::vector<float>& sin, const std::vector<float>& weight, const ReadElements& read,
                         const std::function<void()>& poison_and_run);

}  // namespace genbench::pointwise
