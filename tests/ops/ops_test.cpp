#include <gtest/gtest.h>

#include <cmath>

#include "ops/attention/attention.h"
#include "ops/collective/collective.h"
#include "ops/collective/collective_data.h"
#include "ops/dtype.h"
#include "ops/gemm/gemm.h"
#include "support/points.h"

namespace genbench {
namespace {

TEST(Attention, FlopsFollowFlashAttentionConvention) {
  Point p = test::point_with(attention_op(), "");
  namespace a = attention_axis;
  p.values[a::batch] = std::int64_t{2};
  p.values[a::heads] = std::int64_t{16};
  p.values[a::seqlen_q] = std::int64_t{8192};
  p.values[a::head_dim] = std::int64_t{128};
  auto s = AttentionShape::from(p);
  EXPECT_DOUBLE_EQ(s.flops(), 4.0 * 2 * 16 * 8192.0 * 8192.0 * 128);
  p.values[a::causal] = std::int64_t{1};
  EXPECT_DOUBLE_EQ(AttentionShape::from(p).flops(), 2.0 * 2 * 16 * 8192.0 * 8192.0 * 128);
  // sq != sk causal: exact count of visible pairs, bottom-right aligned.
  p.values[a::seqlen_q] = std::int64_t{3};
  p.values[a::seqlen_k] = std::int64_t{5};
  // rows see 3, 4, 5 keys
  EXPECT_DOUBLE_EQ(AttentionShape::from(p).flops(), 4.0 * 2 * 16 * 12 * 128);
  p.values[a::seqlen_q] = std::int64_t{5};
  p.values[a::seqlen_k] = std::int64_t{3};
  // rows see 0, 0, 1, 2, 3 keys
  EXPECT_DOUBLE_EQ(AttentionShape::from(p).flops(), 4.0 * 2 * 16 * 6 * 128);
}

// head_dim_v (V's and O's dim; MLA prefill: Q/K 192, V 128): 2 * (d + dv) FLOPs a pair, V and O
// bytes by dv, the describe line names both; 0 and head_dim itself mean the same dim.
TEST(Attention, HeadDimVCountsFlopsAndBytesByEachDim) {
  Point p = test::point_with(attention_op(), "");
  namespace a = attention_axis;
  p.values[a::batch] = std::int64_t{1};
  p.values[a::heads] = std::int64_t{4};
  p.values[a::heads_kv] = std::int64_t{2};
  p.values[a::seqlen_q] = std::int64_t{100};
  p.values[a::seqlen_k] = std::int64_t{300};
  p.values[a::head_dim] = std::int64_t{192};
  p.values[a::dtype] = std::string("bf16");
  const Work same = attention_op().work(p, 1);
  EXPECT_DOUBLE_EQ(same.flops, 4.0 * 4 * 100 * 300 * 192);
  EXPECT_DOUBLE_EQ(same.bytes, 2.0 * 192 * (4 * 100 + 2 * 2 * 300 + 4 * 100));
  EXPECT_EQ(attention_op().describe(p).find("d=192/"), std::string::npos);
  p.values[a::head_dim_v] = std::int64_t{192};
  EXPECT_DOUBLE_EQ(attention_op().work(p, 1).flops, same.flops);
  p.values[a::head_dim_v] = std::int64_t{128};
  const auto s = AttentionShape::from(p);
  EXPECT_EQ(s.dv(), 128);
  const Work w = attention_op().work(p, 1);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 4 * 100 * 300 * (192 + 128));
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * (192 * (4 * 100 + 2 * 300) + 128 * (2 * 300 + 4 * 100)));
  EXPECT_NE(attention_op().describe(p).find("d=192/128"), std::string::npos) << attention_op().describe(p);
  // A shape built by hand (head_dim_v left 0) has V's dim equal to head_dim.
  AttentionShape by_hand{1, 2, 2, 8, 8, 64, false, DType::bf16, 0.125f, false, false};
  EXPECT_EQ(by_hand.dv(), 64);
}

TEST(Attention, TokensAndHiddenDeriveBatchAndHeads) {
  Point p = test::point_with(attention_op(), "");
  namespace a = attention_axis;
  p.values[a::tokens] = std::int64_t{16384};
  p.values[a::hidden] = std::int64_t{2048};
  p.values[a::seqlen_q] = std::int64_t{2048};
  p.values[a::head_dim] = std::int64_t{64};
  const auto s = AttentionShape::from(p);
  EXPECT_EQ(s.batch, 8);
  EXPECT_EQ(s.heads, 32);
  EXPECT_EQ(s.heads_kv, 32);
  EXPECT_FLOAT_EQ(s.scale, 0.125f);
  EXPECT_EQ(attention_op().check(p, 1), "");
  p.values[a::heads_kv] = std::int64_t{5};
  EXPECT_NE(attention_op().check(p, 1), "");
}

TEST(Collective, SizesAndBusBandwidthFactorsFollowNcclTests) {
  Point p = test::point_with(collective_op(), "");
  namespace c = collective_axis;
  p.values[c::bytes] = std::int64_t{1 << 20};
  p.values[c::collective] = std::string("all_reduce");
  auto s = CollectiveShape::from(p, 8);
  EXPECT_DOUBLE_EQ(s.busbw_factor(), 2.0 * 7 / 8);
  EXPECT_EQ(s.send_count, (1 << 20) / 4);
  p.values[c::collective] = std::string("all_gather");
  s = CollectiveShape::from(p, 8);
  EXPECT_EQ(s.recv_count, (1 << 20) / 4);  // size = total output
  EXPECT_EQ(s.send_count, (1 << 20) / 32);
  EXPECT_DOUBLE_EQ(s.busbw_factor(), 7.0 / 8);
  p.values[c::collective] = std::string("reduce_scatter");
  s = CollectiveShape::from(p, 8);
  EXPECT_EQ(s.send_count, (1 << 20) / 4);  // size = total input
  EXPECT_EQ(s.recv_count, (1 << 20) / 32);
  p.values[c::collective] = std::string("broadcast");
  EXPECT_DOUBLE_EQ(CollectiveShape::from(p, 8).busbw_factor(), 1.0);
  // Too small for one element per rank: skipped, not an error.
  p.values[c::collective] = std::string("all_gather");
  p.values[c::bytes] = std::int64_t{8};
  EXPECT_NE(collective_op().skip_reason(p, 8), "");
  EXPECT_EQ(collective_op().check(p, 8), "");
  p.values[c::root] = std::int64_t{8};
  EXPECT_NE(collective_op().check(p, 8), "");
}

TEST(Collective, ExpectedValuesAreExactIntegers) {
  Point p = test::point_with(collective_op(), "");
  namespace c = collective_axis;
  p.values[c::bytes] = std::int64_t{4096};
  const auto s = CollectiveShape::from(p, 4);
  const auto e = collective_expected(s, 7, 0);
  ASSERT_EQ(e.size(), 1024u);
  double sum0 = 0;
  for (int r = 0; r < 4; ++r) sum0 += collective_input(s, 7, r, 0);
  EXPECT_DOUBLE_EQ(e[0], sum0);
  for (double x : e) EXPECT_EQ(x, std::floor(x));
  std::vector<double> got = e;
  EXPECT_EQ(count_wrong(s, e, got), 0);
  got[5] += 1;
  got[9] = NAN;
  EXPECT_EQ(count_wrong(s, e, got), 2);
}

TEST(DType, NotInNamesTheDtypeAndTheAllowedOnes) {
  EXPECT_EQ(dtype_not_in(DType::bf16, {DType::fp16, DType::bf16}), "");
  EXPECT_EQ(dtype_not_in(DType::fp8_e4m3, {DType::fp16, DType::bf16}), "dtype fp8_e4m3 is not supported (fp16, bf16)");
  EXPECT_EQ(dtype_not_in(DType::fp32, {}), "dtype fp32 is not supported ()");
}

TEST(DType, RoundingMatchesFormats) {
  EXPECT_EQ(round_to(DType::bf16, 1.0f + 1.0f / 256), 1.0f);      // below half an ulp of bf16
  EXPECT_EQ(round_to(DType::bf16, 1.0f + 1.0f / 64), 1.015625f);  // representable
  EXPECT_EQ(round_to(DType::fp16, 65504.0f * 2), 65504.0f);       // saturates
  EXPECT_EQ(round_to(DType::fp16, 1.0f + 1.0f / 1024), 1.0f + 1.0f / 1024);
  EXPECT_EQ(round_to(DType::fp8_e4m3, 17.0f), 16.0f);
  EXPECT_EQ(round_to(DType::int8, 300.0f), 127.0f);
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_FALSE(parse_dtype("bf17"));
}

}  // namespace
}  // namespace genbench
