// The pointwise op (ops/pointwise): its axes and byte counts, the shared check of sampled rows
// (kernels/pointwise/common) against values written out here, and the host reference validating
// every kind at both dtypes, with rows and widths that are not multiples of 8.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "backend/backend.h"
#include "kernels/pointwise/common/pointwise_reference.h"
#include "ops/implementation.h"
#include "ops/pointwise/pointwise.h"
#include "support/points.h"
#include "support/test_env.h"

namespace genbench {
namespace {

using test::point_with;
using M = std::map<std::string, AxisValue>;
std::int64_t I(std::int64_t x) { return x; }

TEST(PointwiseOp, RegisteredWithItsBytes) {
  EXPECT_NE(Registry::instance().find("pointwise", "reference", BackendKind::host), nullptr);
  EXPECT_NE(Registry::instance().find("pointwise", "cuda", BackendKind::cuda), nullptr);
  const auto bytes = [](M m) { return PointwiseShape::from(point_with(pointwise_op(), "reference", m)).bytes(); };
  // rmsnorm 10 x 8 bf16: x and y (2 x 80 x 2 B) + the weights (8 x 2 B)
  EXPECT_DOUBLE_EQ(bytes({{"kind", std::string("rmsnorm")}, {"rows", I(10)}, {"hidden", I(8)}}), 336);
  EXPECT_DOUBLE_EQ(bytes({{"kind", std::string("add_rmsnorm")}, {"rows", I(10)}, {"hidden", I(8)}}), 656);
  EXPECT_DOUBLE_EQ(
      bytes({{"kind", std::string("silu_mul")}, {"rows", I(10)}, {"hidden", I(8)}, {"dtype", std::string("fp16")}}),
      480);
  EXPECT_DOUBLE_EQ(bytes({{"kind", std::string("embedding")}, {"rows", I(10)}, {"hidden", I(8)}}), 360);
  // rope: 10 rows of (2 + 1) heads of 4: Q|K in and out, 10 positions, 10 table rows of 4 floats
  EXPECT_DOUBLE_EQ(
      bytes({{"kind", std::string("rope")}, {"rows", I(10)}, {"heads", I(2)}, {"heads_kv", I(1)}, {"head_dim", I(4)}}),
      2.0 * 2 * 10 * 12 + 40 + 160);
  EXPECT_NE(pointwise_op().check(
                point_with(pointwise_op(), "reference", {{"kind", std::string("rope")}, {"head_dim", I(7)}}), 1),
            "");
  EXPECT_EQ(pointwise_op().check(
                point_with(pointwise_op(), "reference", {{"kind", std::string("silu_mul")}, {"head_dim", I(7)}}), 1),
            "");
}

TEST(PointwiseReference, TableIdsAndRowsFollowTheirDefinitions) {
  std::vector<float> c, s;
  pointwise::rope_table(8, c, s);
  ASSERT_EQ(c.size(), static_cast<std::size_t>(PointwiseShape::kPositions * 4));
  const std::int64_t p = 1234, i = 3;
  const double angle = p * std::pow(PointwiseShape::kTheta, -2.0 * i / 8);
  EXPECT_FLOAT_EQ(c[p * 4 + i], static_cast<float>(std::cos(angle)));
  EXPECT_FLOAT_EQ(s[p * 4 + i], static_cast<float>(std::sin(angle)));
  EXPECT_FLOAT_EQ(c[0], 1.0f);
  for (std::int64_t r = 0; r < 1000; ++r) {
    const auto id = pointwise::token_id(9, r, 50);
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 50);
  }
  EXPECT_EQ(
      (pointwise::position(9, 1) - pointwise::position(9, 0) + PointwiseShape::kPositions) % PointwiseShape::kPositions,
      1);
  EXPECT_EQ(pointwise::sample_rows(5).size(), 5u);
  const auto big = pointwise::sample_rows(1000);
  EXPECT_EQ(big.size(), 48u);
  EXPECT_EQ(big.front(), 0);
  EXPECT_EQ(big.back(), 999);
}

// The check against outputs computed here: right ones pass, a wrong value or a NaN fails.
TEST(PointwiseReference, CheckFailsOnAWrongValueOrNaN) {
  PointwiseShape s;
  s.kind = PointwiseKind::rmsnorm;
  s.hidden = 2;
  s.rows = 1;
  pointwise::Sample x;
  x.in_a = {3.0f, 4.0f};  // mean square 12.5
  const double inv = 1.0 / std::sqrt(12.5 + PointwiseShape::kEps);
  x.out_a = {static_cast<float>(3 * inv * 2), static_cast<float>(4 * inv * 0.5)};
  const std::vector<float> w = {2.0f, 0.5f};
  EXPECT_TRUE(pointwise::check_samples(s, w, {x}).ok);
  auto bad = x;
  bad.out_a[1] *= 1.01f;
  EXPECT_FALSE(pointwise::check_samples(s, w, {bad}).ok);
  bad.out_a[1] = std::nanf("");
  const auto v = pointwise::check_samples(s, w, {bad});
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("NaN"), std::string::npos) << v.detail;
  // add_rmsnorm: the residual written back must be the rounded sum exactly
  s.kind = PointwiseKind::add_rmsnorm;
  pointwise::Sample a;
  a.in_a = {1.0f, 2.0f};
  a.in_b = {2.0f, 2.0f};  // s = 3, 4
  a.out_a = x.out_a;
  a.out_b = {3.0f, 4.0f};
  EXPECT_TRUE(pointwise::check_samples(s, w, {a}).ok) << pointwise::check_samples(s, w, {a}).detail;
  a.out_b[0] = 3.015625f;  // the next bf16 above 3
  EXPECT_FALSE(pointwise::check_samples(s, w, {a}).ok);
  // silu_mul and rope, one row each
  s.kind = PointwiseKind::silu_mul;
  s.hidden = 1;
  pointwise::Sample g;
  g.in_a = {1.0f, 3.0f};
  g.out_a = {static_cast<float>(1.0 / (1.0 + std::exp(-1.0)) * 3.0)};
  EXPECT_TRUE(pointwise::check_samples(s, {}, {g}).ok);
  g.out_a[0] = -g.out_a[0];
  EXPECT_FALSE(pointwise::check_samples(s, {}, {g}).ok);
  s.kind = PointwiseKind::rope;
  s.head_dim = 2;
  pointwise::Sample q;
  q.in_a = {1.0f, 0.0f};
  q.in_b = {0.0f, 1.0f};  // cos 0, sin 1: (x1, x2) -> (-x2, x1)
  q.out_a = {0.0f, 1.0f};
  EXPECT_TRUE(pointwise::check_samples(s, {}, {q}).ok);
  q.out_a = {1.0f, 0.0f};
  EXPECT_FALSE(pointwise::check_samples(s, {}, {q}).ok);
}

TEST(PointwiseReference, EveryKindValidatesOnTheHost) {
  auto host = make_host_backend({});
  const auto* impl = Registry::instance().find("pointwise", "reference", BackendKind::host);
  ASSERT_NE(impl, nullptr);
  std::uint64_t seed = 40;
  for (const char* dtype : {"bf16", "fp16"})
    for (const char* kind : {"rmsnorm", "add_rmsnorm", "rope", "silu_mul", "embedding"})
      for (const std::int64_t rows : {1, 67})
        for (const std::int64_t width : {64, 1000, 37}) {
          const Point p = point_with(pointwise_op(), "reference",
                                     {{"kind", std::string(kind)},
                                      {"rows", I(rows)},
                                      {"hidden", I(width)},
                                      {"heads", I(3)},
                                      {"heads_kv", I(1)},
                                      {"head_dim", I(width % 2 ? width + 1 : width)},
                                      {"vocab", I(500)},
                                      {"dtype", std::string(dtype)}});
          Context ctx{*host, test::comm(), seed++};
          ASSERT_EQ(impl->can_implement(p, ctx), "") << pointwise_op().describe(p);
          auto c = impl->prepare(p, ctx);
          const Validation v = c->validate();
          EXPECT_TRUE(v.ok) << pointwise_op().describe(p) << ": " << v.detail;
          EXPECT_LE(v.error, v.tolerance);
          c->run();  // a timed iteration after the validation
        }
  const Point huge = point_with(pointwise_op(), "reference", {{"kind", std::string("embedding")}, {"hidden", I(8192)}});
  EXPECT_NE(impl->can_implement(huge, Context{*host, test::comm(), 1}).find("limit"), std::string::npos);
}

}  // namespace
}  // namespace genbench
