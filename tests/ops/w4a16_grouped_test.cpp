// The w4a16 and grouped_gemm ops on the host: bad input refused with the reason before any
// device work, work counted by hand, effective columns, routed group sizes (they sum to the
// routed rows, follow the skew, repeat per seed), the registered implementations, and the host
// references against naive sums, through the Implementation/Case contract.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "backend/backend.h"
#include "kernels/w4a16/common/w4a16_layout.h"
#include "ops/gemm/gemm.h"
#include "ops/grouped_gemm/group_sizes.h"
#include "ops/grouped_gemm/grouped_gemm.h"
#include "ops/implementation.h"
#include "ops/w4a16/w4a16.h"
#include "support/points.h"
#include "support/test_env.h"

namespace genbench {
namespace {

using test::point_with;

std::string w4_check(const std::map<std::string, AxisValue>& v) {
  return w4a16_op().check(point_with(w4a16_op(), "reference", v), 1);
}
std::string gg_check(const std::map<std::string, AxisValue>& v) {
  return grouped_gemm_op().check(point_with(grouped_gemm_op(), "reference", v), 1);
}

TEST(W4a16Op, BadInputNamesTheProblem) {
  EXPECT_EQ(w4_check({}), "");
  EXPECT_NE(w4_check({{"n", std::int64_t{4095}}}).find("n=4095 is odd: two 4-bit codes share a byte"),
            std::string::npos);
  EXPECT_NE(w4_check({{"k", std::int64_t{4000}}}).find("k=4000 is not a multiple of the group size 128"),
            std::string::npos);
  EXPECT_NE(w4_check({{"k", std::int64_t{48}}, {"group", std::int64_t{32}}}).find("group size 32"), std::string::npos);
  EXPECT_EQ(w4_check({{"k", std::int64_t{4000}}, {"group", std::int64_t{0}}}), "");  // one group per column
  // The group axis takes only the documented sizes (the config layer refuses others).
  const auto& ax = w4a16_op().axes()[w4a16_op().axis_index("group")];
  EXPECT_EQ(ax.allowed, (std::vector<std::int64_t>{0, 32, 64, 128}));
}

TEST(W4a16Op, WorkIsCountedByHand) {
  const Point p = point_with(w4a16_op(), "reference",
                             {{"m", std::int64_t{16}}, {"n", std::int64_t{4096}}, {"k", std::int64_t{8192}}});
  const Work w = w4a16_op().work(p, 1);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 16 * 4096 * 8192);
  // A 16 x 8192 x 2 + W 8192 x 4096 / 2 + scales (8192/128) x 4096 x 2 + D 16 x 4096 x 2
  EXPECT_DOUBLE_EQ(w.bytes, 16.0 * 8192 * 2 + 8192.0 * 4096 / 2 + 64.0 * 4096 * 2 + 16.0 * 4096 * 2);
  const Point z = point_with(w4a16_op(), "reference",
                             {{"m", std::int64_t{1}},
                              {"n", std::int64_t{64}},
                              {"k", std::int64_t{256}},
                              {"weights", std::string("uint4")},
                              {"group", std::int64_t{32}}});
  // + zero points, half a byte each: 8 x 64 of them
  EXPECT_DOUBLE_EQ(w4a16_op().work(z, 1).bytes, 256.0 * 2 + 256.0 * 64 / 2 + 8.0 * 64 * 2 + 8.0 * 64 / 2 + 64.0 * 2);
  const auto eff = w4a16_op().values(
      point_with(w4a16_op(), "reference", {{"group", std::int64_t{0}}, {"k", std::int64_t{384}}}), 1, Work{}, 0, {});
  EXPECT_EQ(std::get<std::int64_t>(eff[0]), 384);  // per column: the group is k
  const auto metrics = w4a16_op().metrics();
  ASSERT_EQ(metrics.size(), 2u);
  EXPECT_EQ(metrics[0].name, "tflops");
  EXPECT_EQ(metrics[1].name, "GBps");
  EXPECT_DOUBLE_EQ(metrics[1].rate(w, 1e-3), w.bytes / 1e-3 / 1e9);
}

TEST(W4a16Op, CeilingAndDescriptionFollowTheShape) {
  EXPECT_EQ(w4a16_op().ceiling(point_with(w4a16_op(), "reference", {{"m", std::int64_t{16}}})).name, "copy_GBps");
  const CeilingId big = w4a16_op().ceiling(
      point_with(w4a16_op(), "reference", {{"m", std::int64_t{1024}}, {"dtype", std::string("bf16")}}));
  EXPECT_EQ(big.name, "gemm_bf16_tflops");
  EXPECT_EQ(big.unit, "TFLOP/s");
  const auto desc = nlohmann::json::parse(w4a16_op().description_json());
  EXPECT_EQ(desc["op"], "w4a16");
  EXPECT_EQ(desc["headline"], "tflops");
  EXPECT_EQ(desc["plot"]["x"], "m");
  EXPECT_EQ(w4a16_op().describe(point_with(w4a16_op(), "reference", {{"group", std::int64_t{0}}})),
            "int4 fp16 gcol m=16 n=4096 k=4096 hot");
}

TEST(W4a16Op, ImplementationsAreRegistered) {
  auto& r = Registry::instance();
  EXPECT_NE(r.find("w4a16", "reference", BackendKind::host), nullptr);
  EXPECT_NE(r.find("w4a16", "mma_sm80", BackendKind::cuda), nullptr);
  EXPECT_NE(r.find("w4a16", "cublaslt_dense", BackendKind::cuda), nullptr);
  EXPECT_NE(w4a16_op().axis_index("w4a16_path"), static_cast<std::size_t>(-1));
  EXPECT_NE(r.find("grouped_gemm", "reference", BackendKind::host), nullptr);
  EXPECT_NE(r.find("grouped_gemm", "cublas_grouped", BackendKind::cuda), nullptr);
  EXPECT_NE(r.find("grouped_gemm", "cublaslt_loop", BackendKind::cuda), nullptr);
}

TEST(W4a16Reference, MatchesANaiveDequantisedSumAndValidates) {
  auto host = make_host_backend({});
  const auto* impl = Registry::instance().find("w4a16", "reference", BackendKind::host);
  ASSERT_NE(impl, nullptr);
  for (const char* weights : {"int4", "uint4"}) {
    const Point p = point_with(w4a16_op(), "reference",
                               {{"m", std::int64_t{3}},
                                {"n", std::int64_t{10}},
                                {"k", std::int64_t{64}},
                                {"group", std::int64_t{32}},
                                {"weights", std::string(weights)},
                                {"dtype", std::string("bf16")}});
    Context ctx{*host, test::comm(), 77};
    ASSERT_EQ(impl->can_implement(p, ctx), "");
    auto c = impl->prepare(p, ctx);
    const Validation v = c->validate();
    EXPECT_TRUE(v.ok) << v.detail;
    EXPECT_LE(v.error, 1e-5);
  }
  // The reference itself against a sum written out here: 1 x 2 x 4, groups of 2.
  const std::vector<float> a = {1.0f, -2.0f, 0.5f, 3.0f};
  const std::vector<std::uint8_t> codes = {0, 15, 8, 9, 3, 4, 12, 1};  // k x n
  const std::vector<float> s = {0.5f, 0.25f, 2.0f, 1.0f};              // [k/2][n]
  const std::vector<std::uint8_t> z = {8, 7, 0, 15};
  const auto d = w4a16::reference_gemm(a, codes, s, z, 1, 2, 4, 2);
  EXPECT_FLOAT_EQ(d[0],
                  1.0f * (0 - 8) * 0.5f + -2.0f * (8 - 8) * 0.5f + 0.5f * (3 - 0) * 2.0f + 3.0f * (12 - 0) * 2.0f);
  EXPECT_FLOAT_EQ(d[1],
                  1.0f * (15 - 7) * 0.25f + -2.0f * (9 - 7) * 0.25f + 0.5f * (4 - 15) * 1.0f + 3.0f * (1 - 15) * 1.0f);
  EXPECT_NE(impl->can_implement(point_with(w4a16_op(), "reference", {{"cache", std::string("cold")}}),
                                Context{*host, test::comm(), 1}),
            "");
}

// Dense 4-bit GEMM types: in gemm's `dtype` set (so `auto` tries them), computed by the host
// reference on values of their grids, refused on GPUs (gemm/cublaslt names what the card has).
TEST(GemmFourBit, TypesRoundToTheirGridsAndCountHalfAByte) {
  EXPECT_EQ(parse_dtype("int4"), DType::int4);
  EXPECT_EQ(parse_dtype("fp4_e2m1"), DType::fp4_e2m1);
  EXPECT_EQ(round_to(DType::int4, 9.6f), 7.0f);
  EXPECT_EQ(round_to(DType::int4, -9.6f), -8.0f);
  EXPECT_EQ(round_to(DType::int4, 2.4f), 2.0f);
  for (const auto& [x, want] : std::vector<std::pair<float, float>>{{0.2f, 0.0f},
                                                                    {0.3f, 0.5f},
                                                                    {1.2f, 1.0f},
                                                                    {1.3f, 1.5f},
                                                                    {2.6f, 3.0f},
                                                                    {3.4f, 3.0f},
                                                                    {4.9f, 4.0f},
                                                                    {5.1f, 6.0f},
                                                                    {9.0f, 6.0f},
                                                                    {-2.6f, -3.0f}})
    EXPECT_EQ(round_to(DType::fp4_e2m1, x), want) << x;
  const auto& choices = gemm_op().axes()[gemm_op().axis_index("dtype")].choices;
  EXPECT_NE(std::find(choices.begin(), choices.end(), "int4"), choices.end());
  EXPECT_NE(std::find(choices.begin(), choices.end(), "fp4_e2m1"), choices.end());
  const Point p = point_with(
      gemm_op(), "reference",
      {{"m", std::int64_t{8}}, {"n", std::int64_t{16}}, {"k", std::int64_t{32}}, {"dtype", std::string("int4")}});
  EXPECT_DOUBLE_EQ(gemm_op().work(p, 1).bytes, 0.5 * (8 * 32 + 32 * 16) + 2.0 * 8 * 16);
  auto host = make_host_backend({});
  const auto* ref = Registry::instance().find("gemm", "reference", BackendKind::host);
  ASSERT_NE(ref, nullptr);
  for (const char* t : {"int4", "fp4_e2m1"}) {
    Point q = p;
    q.values[gemm_op().axis_index("dtype")] = std::string(t);
    Context ctx{*host, test::comm(), 3};
    ASSERT_EQ(ref->can_implement(q, ctx), "");
    const Validation v = ref->prepare(q, ctx)->validate();
    EXPECT_TRUE(v.ok) << t << ": " << v.detail;
  }
}

TEST(GroupedGemmOp, BadInputNamesTheProblem) {
  EXPECT_EQ(gg_check({}), "");
  EXPECT_NE(gg_check({{"groups", std::int64_t{0}}}).find("groups must be at least 1 (groups=0)"), std::string::npos);
  EXPECT_NE(gg_check({{"skew", 4.5}}).find("skew=4.5 is outside its range 0 to 4"), std::string::npos);
  EXPECT_NE(gg_check({{"skew", -1.0}}).find("outside its range"), std::string::npos);
  EXPECT_NE(gg_check({{"top_k", std::int64_t{9}}}).find("top_k=9 must be from 1 to groups (8)"), std::string::npos);
  EXPECT_NE(gg_check({{"tokens", std::int64_t{0}}}).find("tokens must be at least 1"), std::string::npos);
  EXPECT_EQ(gg_check({{"tokens", std::int64_t{0}}, {"rows", std::int64_t{4}}}), "");  // fixed sizes need no tokens
}

TEST(GroupedGemmOp, RoutedSizesSumToTheRoutedRowsAndFollowTheSkew) {
  for (std::int64_t groups : {1, 8, 256})
    for (std::int64_t top_k : {std::int64_t{1}, std::min<std::int64_t>(groups, 8)})
      for (double skew : {0.0, 1.0, 4.0}) {
        const auto s = grouped::routed_group_sizes(groups, 300, top_k, skew, 5);
        EXPECT_EQ(std::accumulate(s.begin(), s.end(), std::int64_t{0}), 300 * top_k);
        EXPECT_TRUE(
            std::all_of(s.begin(), s.end(), [](std::int64_t m) { return m >= 0 && m <= 300; }));  // distinct per token
      }
  const auto uniform = grouped::routed_group_sizes(8, 8000, 2, 0.0, 1);
  for (auto m : uniform) EXPECT_NEAR(static_cast<double>(m), 2000.0, 200.0);  // 16000 rows over 8 groups
  const auto skewed = grouped::routed_group_sizes(8, 8000, 2, 2.0, 1);
  EXPECT_GT(skewed[0], skewed[7] * 4);
  EXPECT_EQ(grouped::routed_group_sizes(16, 50, 2, 1.0, 3), grouped::routed_group_sizes(16, 50, 2, 1.0, 3));
  EXPECT_NE(grouped::routed_group_sizes(16, 50, 2, 1.0, 3), grouped::routed_group_sizes(16, 50, 2, 1.0, 4));
  EXPECT_THROW(grouped::routed_group_sizes(0, 5, 1, 0.0, 1), std::invalid_argument);
  EXPECT_THROW(grouped::routed_group_sizes(4, 5, 1, 4.5, 1), std::invalid_argument);
}

TEST(GroupedGemmOp, WorkAndEffectiveShapeAreCountedOverAllGroups) {
  const Point fixed = point_with(
      grouped_gemm_op(), "reference",
      {{"groups", std::int64_t{3}}, {"rows", std::int64_t{5}}, {"n", std::int64_t{64}}, {"k", std::int64_t{32}}});
  const Work w = grouped_gemm_op().work(fixed, 1);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 15 * 64 * 32);
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * (15 * 32 + 3 * 64 * 32 + 15 * 64));
  const auto eff = grouped_gemm_op().values(fixed, 1, w, 0, {});  // effective columns first
  EXPECT_EQ(std::get<std::int64_t>(eff[0]), 15);
  EXPECT_EQ(std::get<std::int64_t>(eff[1]), 3);
  EXPECT_EQ(std::get<std::int64_t>(eff[2]), 5);
  // Routed: 256 groups, 4 tokens x top 8 = 32 rows, so most groups are empty and their weights
  // are not counted.
  const Point routed = point_with(grouped_gemm_op(), "reference",
                                  {{"groups", std::int64_t{256}},
                                   {"top_k", std::int64_t{8}},
                                   {"tokens", std::int64_t{4}},
                                   {"n", std::int64_t{64}},
                                   {"k", std::int64_t{32}}});
  const auto er = grouped_gemm_op().values(routed, 1, Work{}, 0, {});
  const auto nonempty = std::get<std::int64_t>(er[1]);
  EXPECT_EQ(std::get<std::int64_t>(er[0]), 32);
  EXPECT_LE(nonempty, 32);
  EXPECT_GE(nonempty, 8);
  EXPECT_DOUBLE_EQ(grouped_gemm_op().work(routed, 1).bytes,
                   2.0 * (32 * 32 + static_cast<double>(nonempty) * 64 * 32 + 32 * 64));
  EXPECT_EQ(grouped_gemm_op().describe(routed), "bf16 groups=256 tokens=4 top8 skew=0 n=64 k=32");
}

TEST(GroupedReference, ValidatesOnRoutedAndFixedSizes) {
  auto host = make_host_backend({});
  const auto* impl = Registry::instance().find("grouped_gemm", "reference", BackendKind::host);
  ASSERT_NE(impl, nullptr);
  for (const auto& v :
       {std::map<std::string, AxisValue>{{"groups", std::int64_t{6}}, {"tokens", std::int64_t{9}}, {"skew", 2.0}},
        std::map<std::string, AxisValue>{{"groups", std::int64_t{2}}, {"rows", std::int64_t{3}}}}) {
    auto vals = v;
    vals["n"] = std::int64_t{24};
    vals["k"] = std::int64_t{40};
    const Point p = point_with(grouped_gemm_op(), "reference", vals);
    Context ctx{*host, test::comm(), 5};
    ASSERT_EQ(impl->can_implement(p, ctx), "");
    const Validation r = impl->prepare(p, ctx)->validate();
    EXPECT_TRUE(r.ok) << r.detail;
  }
}

}  // namespace
}  // namespace genbench
