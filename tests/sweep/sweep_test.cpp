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

// Rounds: every round holds every point once, a shape's implementations stay adjacent (rotated
// by the round), the order depends on seed / name / round only, and one round keeps the sweep's.
TEST(Sweep, RoundOrderShufflesShapesAndKeepsImplementationsTogether) {
  const char* text =
      "settings: {timing: {rounds: 4}}\n"
      "benchmarks:\n  - name: g\n    op: gemm\n    implementations: [reference, cublaslt]\n"
      "    axes: {m: [1, 2, 3, 4, 5, 6, 7, 8], n: [10, 20]}\n";
  const Config c = parse_config(text, "t.yaml");
  const auto& b = c.benchmarks[0];
  ASSERT_EQ(b.timing.rounds, 4);
  const std::size_t n = expand(b).size();
  ASSERT_EQ(n, 32u);
  std::set<std::vector<std::size_t>> orders;
  for (std::size_t r = 0; r < 4; ++r) {
    const auto order = round_order(b, r, 1234);
    ASSERT_EQ(order.size(), n);
    std::vector<std::size_t> idx;
    std::set<std::size_t> seen;
    for (const auto& p : order) {
      idx.push_back(p.index);
      seen.insert(p.index);
    }
    EXPECT_EQ(seen.size(), n) << "round " << r << " repeats or drops a point";
    for (std::size_t k = 0; k < n; k += 2) {
      EXPECT_EQ(idx[k] / 2, idx[k + 1] / 2) << "a shape's implementations are split in round " << r;
      EXPECT_EQ(order[k].impl, r % 2 ? "cublaslt" : "reference") << "round " << r << " does not rotate them";
    }
    orders.insert(idx);
    // The same inputs give the same order (every rank, a --resume).
    std::vector<std::size_t> again;
    for (const auto& p : round_order(b, r, 1234)) again.push_back(p.index);
    EXPECT_EQ(again, idx);
  }
  EXPECT_EQ(orders.size(), 4u) << "rounds share an order";
  std::vector<std::size_t> other;
  for (const auto& p : round_order(b, 0, 99)) other.push_back(p.index);
  std::vector<std::size_t> seed1234;
  for (const auto& p : round_order(b, 0, 1234)) seed1234.push_back(p.index);
  EXPECT_NE(other, seed1234) << "the seed does not change the order";

  const Config one = parse_config(
      "benchmarks:\n  - {name: g, op: gemm, implementations: [reference], axes: {m: [1, 2, 3, 4]}}\n", "t.yaml");
  const auto kept = round_order(one.benchmarks[0], 0, 1234);
  for (std::size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(kept[i].index, i);
}

}  // namespace
}  // namespace genbench
