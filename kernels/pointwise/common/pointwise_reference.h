#pragma once
// What every pointwise implementation shares (ops/pointwise/pointwise.h): the inputs that are
// not random normals (token ids, positions, the rope table), the backward kinds' fp32 math of a
// row as the host reference runs it, and the check of sampled rows against a double-precision
// reference of the op's math.
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

// Per row the table row it reads: its position (rope kinds) or its token id (embedding kinds);
// empty for the other kinds.
std::vector<std::int32_t> row_index(const PointwiseShape& s, std::uint64_t seed);

// The rows a validation reads back: every row up to 64, else 47 spread over them and the last.
std::vector<std::int64_t> sample_rows(std::int64_t rows);

// The backward kinds' math of one row in fp32, as the host reference runs it (results not yet
// rounded to the dtype); tests/ops/pointwise_test.cpp holds them to finite differences of the
// forward. rmsnorm_backward_row: dx = w*dy/rms - x*sum(w*dy*x)/(hidden*rms^3), plus dr when dr is
// not null (add_rmsnorm_backward), and dw[i] += dy[i]*x[i]/rms (the caller's fp32 accumulator).
void rmsnorm_backward_row(std::int64_t hidden, const float* x, const float* w, const float* dy, const float* dr,
                          float* dx, float* dw);
// The heads of one Q|K row rotated by -angle in place: (x1, x2) -> (x1 c + x2 s, x2 c - x1 s).
void rope_backward_row(std::int64_t width, std::int64_t head_dim, const float* cos, const float* sin, float* qk);
// x = [g | u], dy [hidden] -> dx = [dy*u*sig(g)*(1 + g*(1 - sig(g))) | dy*silu(g)].
void silu_mul_backward_row(std::int64_t hidden, const float* x, const float* dy, float* dx);
// table_row += dy: one token's share of the embedding's gradient (the row of its id).
void embedding_backward_row(std::int64_t hidden, const float* dy, float* table_row);

// One checked row, as floats (values of the point's dtype; fp32 for dw and embedding_backward's table).
struct Sample {
  std::int64_t row = 0;
  // x (norms; s for add_rmsnorm_backward), Q|K (rope) or dQ|dK (rope_backward) of the row, g|u
  // (silu_mul, silu_mul_backward), the table row of its id (embedding), every dy row of its id
  // one after the other (embedding_backward)
  std::vector<float> in_a;
  // the residual (add_rmsnorm), cos|sin at the row's position (rope kinds), dy (rmsnorm_backward,
  // add_rmsnorm_backward, silu_mul_backward)
  std::vector<float> in_b;
  std::vector<float> in_c;   // dr_in (add_rmsnorm_backward)
  std::vector<float> out_a;  // y or dx, Q|K rotated (rope kinds), the gradient table's row (embedding_backward)
  std::vector<float> out_b;  // add_rmsnorm: the residual written back
};

// Each sample against double math on its inputs. Error: |got - ref| / (|ref| + 1e-3 x the row's
// mean |ref|), held to 2^-8 (bf16) or 2^-11 (fp16), about two units in the last place; the
// embedding gather and add_rmsnorm's residual are held to 0 (a copy and one rounded sum). The
// backward kinds are held to twice that, 2^-7 or 2^-10: their outputs are differences of terms
// near 1, so a small one carries the fp32 rounding of its terms besides its own. A NaN (a
// poisoned element never written) fails.
Validation check_samples(const PointwiseShape& s, const std::vector<float>& weight, const std::vector<Sample>& samples);

// A case's buffers, as a validation reads them: a, the main input (rope kinds: Q|K or dQ|dK,
// rotated in place; embedding: the table; embedding_backward: the fp32 gradient table, its
// output); b, the second input (add_rmsnorm: the residual, updated in place; the other backward
// kinds: dy); c, add_rmsnorm_backward's dr_in; y, the output (y or dx); dw, the fp32 weight
// gradient of the norms' backward.
enum class Buffer { a, b, c, y, dw };
using ReadElements = std::function<std::vector<float>(Buffer, std::int64_t at, std::int64_t n)>;

// dw of rmsnorm_backward and add_rmsnorm_backward against double math over every row (read from
// a and b in pieces of rows), error and tolerance as check_samples; a NaN fails.
Validation check_weight_grad(const PointwiseShape& s, const ReadElements& read);

// The validation both implementations run on inputs filled afresh: reads the sampled rows'
// inputs, calls poison_and_run (outputs set to NaN, one call; embedding_backward's table zeroed
// instead, as it adds into it), reads the rows' outputs, checks; the norms' backward checks dw
// too, embedding_backward that table rows no id names stay 0.
Validation validate_rows(const PointwiseShape& s, const std::vector<std::int32_t>& index, const std::vector<float>& cos,
                         const std::vector<float>& sin, const std::vector<float>& weight, const ReadElements& read,
                         const std::function<void()>& poison_and_run);

}  // namespace genbench::pointwise
