// The attention validation helper on the host: a correct output passes, a perturbed one,
// a NaN and a wrong -inf LSE fail.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/attention/common/attention_validate.h"
#include "ops/fill.h"

namespace genbench::attention {
namespace {

HostAttentionData make_data(bool causal, std::int64_t sq, std::int64_t sk, DType dt) {
  HostAttentionData d;
  d.shape = AttentionShape{2, 4, 2, sq, sk, 64, causal, dt, 0.125f, false, false};
  d.len_q = {sq, sq};
  d.len_k = {sk, sk};
  d.start_q = {0, sq};
  d.start_k = {0, sk};
  d.q.resize(static_cast<std::size_t>(2 * sq * 4 * 64));
  d.k.resize(static_cast<std::size_t>(2 * sk * 2 * 64));
  d.v.resize(d.k.size());
  fill_random(d.q, 1, dt);
  fill_random(d.k, 2, dt);
  fill_random(d.v, 3, dt);
  d.o.assign(d.q.size(), 0.f);
  d.lse.assign(static_cast<std::size_t>(2 * 4 * sq), 0.f);
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t h = 0; h < 4; ++h)
      for (std::int64_t i = 0; i < sq; ++i)
        low_precision_row(d, b, h, i, d.o.data() + ((b * sq + i) * 4 + h) * 64, d.lse.data() + d.lse_index(b, h, i));
  return d;
}

TEST(AttentionValidate, InputPrecisionComputationPasses) {
  for (bool causal : {false, true}) {
    const auto d = make_data(causal, 40, 30, DType::bf16);
    const Validation v = validate_attention(d, 7);
    EXPECT_TRUE(v.ok) << v.detail;
  }
}

TEST(AttentionValidate, PerturbedOutputFails) {
  auto d = make_data(false, 33, 33, DType::fp16);
  d.o[static_cast<std::size_t>((32 * 4 + 0) * 64 + 5)] += 0.05f;  // batch 0, last row, head 0
  const Validation v = validate_attention(d, 7);
  EXPECT_FALSE(v.ok) << v.detail;
  EXPECT_GT(v.error, v.tolerance);
}

TEST(AttentionValidate, NaNFails) {
  auto d = make_data(false, 20, 20, DType::bf16);
  d.o[100] = std::nanf("");
  EXPECT_FALSE(validate_attention(d, 7).ok);
  auto e = make_data(false, 20, 20, DType::bf16);
  e.lse[3] = std::nanf("");
  EXPECT_FALSE(validate_attention(e, 7).ok);
}

TEST(AttentionValidate, RowWithoutKeysNeedsMinusInfinityLse) {
  // causal with sq > sk: the first sq - sk rows see no key.
  auto d = make_data(true, 30, 10, DType::bf16);
  EXPECT_TRUE(std::isinf(d.lse[0]) && d.lse[0] < 0);
  EXPECT_TRUE(validate_attention(d, 7).ok);
  d.lse[static_cast<std::size_t>(d.lse_index(0, 0, 0))] = 0.f;
  EXPECT_FALSE(validate_attention(d, 7).ok);
}

TEST(AttentionShapeVarlen, LengthsAreSeededAndBounded) {
  AttentionShape s{8, 4, 4, 1000, 1000, 64, false, DType::bf16, 0.125f, false, true};
  const auto a = s.lengths_q(), b = s.lengths_q(), c = s.lengths_q(1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a, s.lengths_k());  // self-attention: keys take the query lengths
  for (auto n : a) {
    EXPECT_GE(n, 500);
    EXPECT_LE(n, 1000);
  }
  double pairs = 0;
  for (auto n : a) pairs += static_cast<double>(n) * static_cast<double>(n);
  EXPECT_DOUBLE_EQ(s.flops(), 4.0 * 4 * 64 * pairs);
  AttentionShape one{3, 1, 1, 1, 1, 64, false, DType::bf16, 1.f, false, true};
  for (auto n : one.lengths_q()) EXPECT_EQ(n, 1);
}

}  // namespace
}  // namespace genbench::attention
