// The framework's seams: ops and implementations register from their own folders; an op's
// columns, metrics, effective shape, tuning axes and file description come from its
// declarations alone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "ops/attention/attention.h"
#include "ops/collective/collective.h"
#include "ops/gemm/gemm.h"
#include "ops/implementation.h"
#include "support/points.h"
#include "support/test_env.h"

namespace genbench {
namespace {

TEST(Seams, OpsRegisterThemselvesInNameOrder) {
  const auto names = op_names();
  ASSERT_GE(names.size(), 4u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char* n : {"attention", "collective", "gemm", "overlap"}) {
    const Op* op = find_op(n);
    ASSERT_NE(op, nullptr) << n;
    EXPECT_EQ(op->name(), n);
    EXPECT_FALSE(op->metrics().empty()) << n << " declares no headline metric";
  }
  EXPECT_EQ(find_op("no_such_op"), nullptr);
}

TEST(Seams, EveryImplementationNamesARegisteredOpAndIsFoundByItsKey) {
  std::set<std::string> keys;
  for (const Implementation* impl : Registry::instance().all()) {
    ASSERT_NE(find_op(impl->info().op), nullptr) << impl->name();
    EXPECT_EQ(&impl->op(), find_op(impl->info().op));
    EXPECT_FALSE(impl->description().empty()) << impl->name();
    const std::string key = impl->info().op + "/" + impl->name() + "/" + backend_name(impl->backend());
    EXPECT_TRUE(keys.insert(key).second) << "registered twice: " << key;
    EXPECT_EQ(Registry::instance().find(impl->info().op, impl->name(), impl->backend()), impl) << key;
  }
  // The host implementations of the four ops, and the CUDA ones (real or their twins) in every build.
  for (const char* key : {"attention/reference/host", "gemm/reference/host", "collective/mpi/host", "overlap/host/host",
                          "attention/fa3/cuda", "attention/fa2/cuda", "attention/cudnn/cuda", "gemm/cublaslt/cuda",
                          "collective/nccl/cuda"})
    EXPECT_TRUE(keys.count(key)) << key;
}

#ifndef GENBENCH_HAVE_CUDA
TEST(Seams, BuildWithoutCudaListsTheTwinThatNeverRuns) {
  const Implementation* fa3 = Registry::instance().find("attention", "fa3", BackendKind::cuda);
  ASSERT_NE(fa3, nullptr);
  EXPECT_NE(fa3->description().find("FlashAttention-3"), std::string::npos);  // the one descriptor
  auto host = make_host_backend({});
  Context ctx{*host, test::comm(), 1};
  const std::string why = fa3->can_implement(test::point_with(attention_op(), "fa3"), ctx);
  EXPECT_NE(why.find("needs the CUDA backend"), std::string::npos) << why;
  EXPECT_EQ(fa3->prepare(test::point_with(attention_op(), "fa3"), ctx), nullptr);
}
#endif

TEST(Seams, TuningAxesOfImplementationsAreAxesOfTheirOp) {
  const Op& att = attention_op();
  for (const char* axis : {"fa3_consumers", "fa3_pingpong", "fa3_persistent", "fa3_split", "fa2_tile"}) {
    const std::size_t i = att.axis_index(axis);
    ASSERT_NE(i, static_cast<std::size_t>(-1)) << axis;
    EXPECT_TRUE(att.axes()[i].tuning);
    EXPECT_EQ(to_string(att.axes()[i].default_value), "auto") << axis;
    EXPECT_EQ(att.axes()[i].choices.front(), "auto");
  }
  // The op's own axes keep their enum positions ahead of the tuning axes.
  EXPECT_EQ(att.axes()[attention_axis::varlen].name, "varlen");
  EXPECT_GE(att.axes().size(), static_cast<std::size_t>(attention_axis::count) + 5);
  EXPECT_NE(gemm_op().axis_index("cublaslt_workspace_mb"), static_cast<std::size_t>(-1));
  // Each tuning axis has its "<axis>_chosen" column.
  std::set<std::string> cols;
  for (const auto& c : att.columns()) cols.insert(c.name);
  EXPECT_TRUE(cols.count("fa3_consumers_chosen"));
  EXPECT_TRUE(cols.count("fa2_tile_chosen"));
}

TEST(Seams, TuningValueIsThePointsOrTheAliasOrAuto) {
  const Op& att = attention_op();
  Point p = test::point_with(att, "fa3");
  unsetenv("GENBENCH_TEST_ALIAS");
  EXPECT_EQ(tuning_value(p, att, "fa3_consumers", "GENBENCH_TEST_ALIAS"), "auto");
  setenv("GENBENCH_TEST_ALIAS", "3", 1);
  EXPECT_EQ(tuning_value(p, att, "fa3_consumers", "GENBENCH_TEST_ALIAS"), "3");
  p = test::point_with(att, "fa3", {{"fa3_consumers", std::string("2")}});
  EXPECT_EQ(tuning_value(p, att, "fa3_consumers", "GENBENCH_TEST_ALIAS"), "2");  // the config wins
  unsetenv("GENBENCH_TEST_ALIAS");
  EXPECT_EQ(tuning_value(p, att, "no_such_axis"), "auto");
}

TEST(Seams, ColumnsAreEffectiveThenChosenThenMetricsThenExtras) {
  for (const Op* op : all_ops()) {
    const auto& cols = op->columns();
    // The kinds in file order, each chosen column after a tuning axis, in axis order.
    std::size_t i = 0;
    for (ColumnKind k : {ColumnKind::effective, ColumnKind::chosen, ColumnKind::metric, ColumnKind::extra})
      while (i < cols.size() && cols[i].kind == k) ++i;
    EXPECT_EQ(i, cols.size()) << op->name() << ": column " << (i < cols.size() ? cols[i].name : "") << " out of order";
    std::vector<std::string> chosen, tuning;
    for (const auto& c : cols)
      if (c.kind == ColumnKind::chosen) {
        chosen.push_back(c.name);
        EXPECT_EQ(c.type, ColumnType::str);
        EXPECT_EQ(c.name, c.axis + "_chosen");
      }
    for (const auto& a : op->axes())
      if (a.tuning) tuning.push_back(a.name + "_chosen");
    EXPECT_EQ(chosen, tuning) << op->name();
    const auto m = op->metrics();
    ASSERT_FALSE(m.empty()) << op->name();
    for (const auto& c : m) {
      EXPECT_EQ(c.kind, ColumnKind::metric);
      EXPECT_NE(c.rate, nullptr) << c.name;
      EXPECT_FALSE(c.unit.empty()) << op->name() << ": metric " << c.name << " has no unit";
    }
    std::set<std::string> names;
    for (const auto& c : cols) {
      EXPECT_TRUE(names.insert(c.name).second) << op->name() << ": " << c.name << " twice";
      EXPECT_FALSE(c.meaning.empty()) << op->name() << ": " << c.name;
      if (c.kind == ColumnKind::effective) EXPECT_TRUE(static_cast<bool>(c.of_point)) << c.name;
    }
    for (const auto& a : op->axes())
      EXPECT_FALSE(names.count(a.name)) << op->name() << ": column shadows axis " << a.name;
  }
}

// The row the runner writes: one value a column, of the column's type, in columns() order.
TEST(Seams, ValuesFollowTheColumnsAndTheirTypes) {
  for (const Op* op : all_ops()) {
    Point p;
    p.impl = "reference";
    for (const auto& a : op->axes()) p.values.push_back(a.default_value);
    const Work w = op->work(p, 1);
    CaseReport r;
    for (const auto& c : op->columns())
      if (c.kind == ColumnKind::extra) r.extra.emplace_back(c.name, 1.5);
    const auto v = op->values(p, 1, w, 1e-3, r);
    const auto& cols = op->columns();
    ASSERT_EQ(v.size(), cols.size()) << op->name();
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::size_t want = cols[i].type == ColumnType::i64 ? 0 : cols[i].type == ColumnType::f64 ? 1 : 2;
      EXPECT_EQ(v[i].index(), want) << op->name() << ": " << cols[i].name;
      if (cols[i].kind == ColumnKind::extra) EXPECT_EQ(std::get<double>(v[i]), 1.5) << cols[i].name;
      if (cols[i].kind == ColumnKind::chosen) EXPECT_EQ(std::get<std::string>(v[i]), "") << cols[i].name;
    }
    // Not timed: every metric NaN; no report: every extra NaN.
    const auto u = op->values(p, 1, w, 0, {});
    for (std::size_t i = 0; i < u.size(); ++i)
      if (cols[i].kind == ColumnKind::metric || cols[i].kind == ColumnKind::extra)
        EXPECT_TRUE(std::isnan(std::get<double>(u[i]))) << op->name() << ": " << cols[i].name;
  }
}

TEST(Seams, DescriptionJsonCarriesWhatTheAnalysisNeeds) {
  for (const Op* op : all_ops()) {
    const auto d = nlohmann::json::parse(op->description_json());
    EXPECT_EQ(d.at("op"), op->name());
    EXPECT_EQ(d.at("headline"), op->metrics().front().name);
    EXPECT_EQ(d.at("metrics").size(), op->metrics().size());
    EXPECT_EQ(d.at("columns").size(), op->columns().size());
    EXPECT_EQ(d.at("axes").size(), op->axes().size());
    EXPECT_FALSE(d.at("plot").at("x").get<std::string>().empty()) << op->name();
    EXPECT_NE(op->axis_index(d.at("plot").at("x").get<std::string>()), static_cast<std::size_t>(-1)) << op->name();
    EXPECT_FALSE(d.at("compare").at("metric").get<std::string>().empty());
  }
  const auto c = nlohmann::json::parse(collective_op().description_json());
  EXPECT_EQ(c.at("headline"), "busbw_GBps");
  EXPECT_EQ(c.at("metrics")[0].at("unit"), "GB/s");
  bool effective = false;
  for (const auto& col : c.at("columns"))
    if (col.at("name") == "busbw_factor") effective = col.at("kind") == "effective";
  EXPECT_TRUE(effective);
}

TEST(Seams, AttentionEffectiveShapeIsWhatRuns) {
  namespace a = attention_axis;
  Point p = test::point_with(attention_op(), "reference");
  p.values[a::tokens] = std::int64_t{16384};
  p.values[a::hidden] = std::int64_t{2048};
  p.values[a::seqlen_q] = std::int64_t{512};
  p.values[a::head_dim] = std::int64_t{128};
  p.values[a::heads_kv] = std::int64_t{4};
  const auto v = attention_op().values(p, 1, Work{}, 0, {});  // the effective columns first
  ASSERT_GE(v.size(), 6u);
  EXPECT_EQ(attention_op().columns()[5].name, "total_tokens_k");
  EXPECT_EQ(std::get<std::int64_t>(v[0]), 32);  // 16384 tokens / 512
  EXPECT_EQ(std::get<std::int64_t>(v[1]), 16);  // 2048 / 128
  EXPECT_EQ(std::get<std::int64_t>(v[2]), 4);
  EXPECT_EQ(std::get<std::int64_t>(v[3]), 512);  // seqlen_k 0 = seqlen_q
  EXPECT_EQ(std::get<std::int64_t>(v[4]), 32 * 512);
  // varlen: the drawn lengths' sum, below the padded total and at least half of it.
  p.values[a::varlen] = std::int64_t{1};
  const auto w = attention_op().values(p, 1, Work{}, 0, {});
  std::int64_t sum = 0;
  for (auto n : AttentionShape::from(p).lengths_q()) sum += n;
  EXPECT_EQ(std::get<std::int64_t>(w[4]), sum);
  EXPECT_LT(sum, 32 * 512);
  EXPECT_GE(sum, 32 * 256);
}

TEST(Seams, MetricsFromWorkAndTime) {
  const auto m = collective_op().metrics();
  Work w;
  w.bytes = 2e9;
  w.busbw_factor = 1.5;
  EXPECT_DOUBLE_EQ(metric_value(m[0], w, 0.5), 6.0);    // busbw = 4 GB/s x 1.5
  EXPECT_DOUBLE_EQ(metric_value(m[1], w, 0.5), 4.0);    // algbw
  EXPECT_TRUE(std::isnan(metric_value(m[0], w, 0.0)));  // no time: no rate
  EXPECT_EQ(format_metric(m[0], 6.0), "busbw 6.00 GB/s");
  const auto t = gemm_op().metrics();
  Work g;
  g.flops = 3e12;
  EXPECT_DOUBLE_EQ(metric_value(t[0], g, 2.0), 1.5);
  EXPECT_EQ(format_metric(t[0], 1.5), "1.5 TFLOP/s");
  EXPECT_EQ(format_metric(t[0], 0.002), "2 GFLOP/s");
  EXPECT_EQ(format_metric(t[0], std::nan("")), "");
}

}  // namespace
}  // namespace genbench
