#include <gtest/gtest.h>

#include <set>

#include "config/config.h"
#include "ops/gemm/gemm.h"
#include "sweep/sweep.h"

namespace genbench {
namespace {

TEST(Sweep, CartesianProductWithImplementationInnermost) {
  const Config c = parse_config(
      "benchmarks:\n  - name: g\n    op: gemm\n    implementations: [reference]\n"
      "    axes: {m: [1, 2, 3], n: [10, 20], dtype: [fp32, bf16]}\n",
      "t.yaml");
  const auto pts = expand(c.benchmarks[0]);
  ASSERT_EQ(pts.size(), 12u);
  std::set<std::tuple<std::int64_t, std::int64_t, std::string>> seen;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    EXPECT_EQ(pts[i].index, i);
    EXPECT_EQ(pts[i].values.size(), gemm_op().axes().size());  // the op's axes and its tuning axes
    seen.insert({pts[i].integer(gemm_axis::m), pts[i].integer(gemm_axis::n), pts[i].choice(gemm_axis::dtype)});
  }
  EXPECT_EQ(seen.size(), 12u);  // every combination exactly once
  // First axis outermost, last varying fastest.
  EXPECT_EQ(pts[0].integer(gemm_axis::m), 1);
  EXPECT_EQ(pts[0].choice(gemm_axis::dtype), "fp32");
  EXPECT_EQ(pts[1].choice(gemm_axis::dtype), "bf16");
  EXPECT_EQ(pts[11].integer(gemm_axis::m), 3);
  // Unlisted axes keep their defaults.
  EXPECT_EQ(pts[0].integer(gemm_axis::k), 1024);
  EXPECT_EQ(pts[0].choice(gemm_axis::trans_a), "n");
}

TEST(Sweep, AutoExpandsEveryPrecision) {
  const Config c = parse_config(
      "benchmarks:\n  - {name: g, op: gemm, implementations: [reference], axes: {dtype: auto}}\n", "t.yaml");
  EXPECT_EQ(expand(c.benchmarks[0]).size(), gemm_op().axes()[gemm_axis::dtype].choices.size());
  EXPECT_TRUE(c.benchmarks[0].uses_auto);
  const Config listed = parse_config(
      "benchmarks:\n  - {name: g, op: gemm, implementations: [reference], axes: {dtype: [bf16, fp8_e4m3]}}\n",
      "t.yaml");
  EXPECT_FALSE(listed.benchmarks[0].uses_auto);
}

TEST(Sweep, RangeWithStep) {
  const Config c = parse_config(
      "benchmarks:\n  - {name: g, op: gemm, implementations: [reference], axes: {k: {from: 100, to: 130, step: 10}}}\n",
      "t.yaml");
  const auto pts = expand(c.benchmarks[0]);
  ASSERT_EQ(pts.size(), 4u);
  EXPECT_EQ(pts[3].integer(gemm_axis::k), 130);
}

}  // namespace
}  // namespace genbench
