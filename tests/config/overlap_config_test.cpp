// configs/overlap.yaml (the device measurement of issue 9) and the timing/settings keys added
// with it: launches_per_sample and measure_ceilings.
#include <gtest/gtest.h>

#include "config/config.h"
#include "core/error.h"
#include "ops/overlap/overlap.h"
#include "support/test_env.h"
#include "sweep/sweep.h"

namespace genbench {
namespace {

TEST(OverlapConfig, DeviceConfigExpandsAsDocumented) {
  const Config cfg = load_config(test::source_dir() + "/configs/overlap.yaml");
  ASSERT_EQ(cfg.benchmarks.size(), 3u);
  EXPECT_EQ(cfg.backend, "cuda");
  EXPECT_TRUE(cfg.measure_ceilings);
  const auto& b = cfg.benchmarks[0];
  EXPECT_EQ(b.op->name(), "overlap");
  // 5 CTA limits x 2 chunk counts x 3 priorities.
  EXPECT_EQ(sweep_size(b), 30u);
  const auto pts = expand(b);
  for (const auto& p : pts) {
    const auto s = OverlapShape::from(p, 2);
    EXPECT_EQ(s.gemm.m, 8192);
    EXPECT_EQ(s.gemm.k, 8192);
    EXPECT_EQ(s.gemm.dtype, DType::bf16);
    EXPECT_EQ(s.coll.kind, CollectiveKind::all_reduce);
    EXPECT_EQ(s.coll.bytes, std::int64_t{256} << 20);
    EXPECT_EQ(s.piece.recv_count * s.chunks, s.coll.recv_count);  // 256 MiB splits evenly
    EXPECT_EQ(b.op->check(p, 2), "");
    EXPECT_EQ(b.op->skip_reason(p, 2), "");
  }
  EXPECT_EQ(sweep_size(cfg.benchmarks[1]), 8u);
  EXPECT_EQ(sweep_size(cfg.benchmarks[2]), 6u);
}

TEST(OverlapConfig, ChunksMustDivideM) {
  const Config cfg = parse_config(R"(benchmarks:
  - name: o
    op: overlap
    implementations: [host]
    axes: {m: 100, chunks: 3}
)",
                                  "o.yaml");
  const auto pts = expand(cfg.benchmarks[0]);
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_NE(overlap_op().check(pts[0], 2).find("multiple"), std::string::npos);
}

TEST(OverlapConfig, CollectivePiecesKeepWholeElementsPerRank) {
  CollectiveShape s{};
  s.kind = CollectiveKind::all_to_all;
  s.dtype = DType::fp32;
  s.world = 4;
  s.send_count = s.recv_count = 1000;  // 250 per peer
  const auto p = collective_piece(s, 3);
  EXPECT_EQ(p.send_count % 4, 0);
  EXPECT_EQ(p.send_count, 332);  // 83 per peer and piece
  s.kind = CollectiveKind::all_gather;
  s.send_count = 250;
  s.recv_count = 1000;
  const auto g = collective_piece(s, 2);
  EXPECT_EQ(g.send_count, 125);
  EXPECT_EQ(g.recv_count, 500);
  s.kind = CollectiveKind::reduce_scatter;
  s.send_count = 1000;
  s.recv_count = 250;
  const auto r = collective_piece(s, 2);
  EXPECT_EQ(r.recv_count, 125);
  EXPECT_EQ(r.send_count, 500);
}

TEST(OverlapConfig, MetricsFromTheMedians) {
  // GEMM 10 ms alone, collective 4 ms alone, 11 ms together: 3 ms of the collective hidden.
  const auto m = overlap_metrics(10e-3, 4e-3, 11e-3, 10.5e-3, 5e-3);
  std::vector<std::string> extras;
  for (const auto& c : overlap_op().columns())
    if (c.kind == ColumnKind::extra) extras.push_back(c.name);
  ASSERT_EQ(m.size(), extras.size());
  for (std::size_t i = 0; i < m.size(); ++i) EXPECT_EQ(m[i].first, extras[i]);
  // What every overlap case reports is what the op's columns expect.
  EXPECT_EQ(overlap_op().check_report({{}, m}, {}), "");
  EXPECT_NEAR(m[5].second, 0.75, 1e-12);  // efficiency
  EXPECT_NEAR(m[6].second, 1.05, 1e-12);  // compute slowdown
  EXPECT_NEAR(m[7].second, 1.25, 1e-12);  // comm slowdown
}

TEST(TimingConfig, LaunchesPerSampleAndCeilingsSetting) {
  const Config cfg = parse_config(R"(settings:
  measure_ceilings: false
  timing: {launches_per_sample: 20}
benchmarks:
  - name: c
    op: collective
    implementations: [mpi]
  - name: d
    op: collective
    implementations: [mpi]
    timing: {launches_per_sample: 1}
)",
                                  "t.yaml");
  EXPECT_FALSE(cfg.measure_ceilings);
  EXPECT_EQ(cfg.benchmarks[0].timing.launches_per_sample, 20);
  EXPECT_EQ(cfg.benchmarks[1].timing.launches_per_sample, 1);
  EXPECT_TRUE(
      parse_config("benchmarks: [{name: x, op: gemm, implementations: [reference]}]", "d.yaml").measure_ceilings);
  EXPECT_THROW(parse_config("settings: {timing: {launches_per_sample: 0}}\nbenchmarks: [{name: x, op: gemm, "
                            "implementations: [reference]}]",
                            "z.yaml"),
               UsageError);
}

}  // namespace
}  // namespace genbench
