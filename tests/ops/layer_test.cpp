// The layer op (ops/layer) and its composition (kernels/layer/common): the parts of a Llama-3-8B
// decode and prefill layer with their shapes, bad input, the host reference layer validating
// and timing every part alone, and what the cuda implementations refuse.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "backend/backend.h"
#include "core/error.h"
#include "ops/implementation.h"
#include "ops/layer/layer.h"
#include "support/points.h"
#include "support/test_env.h"

namespace genbench {
namespace {

using test::point_with;
std::int64_t I(std::int64_t x) { return x; }

TEST(LayerOp, PartsOfALlama3Layer) {
  LayerShape s = LayerShape::from(point_with(layer_op(), "reference", {{"batch", I(16)}, {"cache", I(8192)}}));
  const auto parts = layer_parts(s);
  ASSERT_EQ(parts.size(), layer_part_names().size());
  std::map<std::string, LayerPart> by;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    EXPECT_EQ(parts[i].name, layer_part_names()[i]);
    by[parts[i].name] = parts[i];
  }
  EXPECT_EQ(by["add_rmsnorm"].count, 2);
  EXPECT_EQ(by["attention"].op, "decode");
  const auto axis = [](const LayerPart& p, const std::string& n) {
    for (const auto& [k, v] : p.axes)
      if (k == n) return to_string(v);
    return std::string("-");
  };
  EXPECT_EQ(axis(by["qkv"], "n"), "6144");  // (32 + 2 x 8) x 128
  EXPECT_EQ(axis(by["qkv"], "m"), "16");
  EXPECT_EQ(axis(by["gate_up"], "n"), "28672");
  EXPECT_EQ(axis(by["down"], "k"), "14336");
  EXPECT_EQ(axis(by["attention"], "cache"), "8192");
  EXPECT_EQ(axis(by["silu_mul"], "hidden"), "14336");
  s = LayerShape::from(
      point_with(layer_op(), "reference",
                 {{"phase", std::string("prefill")}, {"seq", I(2048)}, {"precision", std::string("int4")}}));
  for (const auto& p : layer_parts(s)) {
    if (p.name == "attention") EXPECT_EQ(p.op, "attention");
    if (p.name == "o") EXPECT_EQ(p.op, "w4a16");
    if (p.name == "rope") EXPECT_EQ(axis(p, "rows"), "2048");
  }
  // the layer's work is its parts' (norm twice)
  const Point p = point_with(layer_op(), "reference");
  double bytes = 0;
  for (const auto& part : layer_parts(LayerShape::from(p))) {
    const Op& op = *find_op(part.op);
    bytes += part.count * op.work(point_of(op, "", part.axes), 1).bytes;
  }
  EXPECT_DOUBLE_EQ(layer_op().work(p, 1).bytes, bytes);
  EXPECT_NE(layer_op().check(point_with(layer_op(), "reference", {{"heads", I(30)}}), 1).find("multiple"),
            std::string::npos);
  EXPECT_NE(
      layer_op().check(
          point_with(layer_op(), "reference",
                     {{"head_dim", I(64)}, {"phase", std::string("prefill")}, {"heads", I(8)}, {"heads_kv", I(8)}}),
          1),
      "x");
  EXPECT_THROW(point_of(layer_op(), "reference", {{"no_such_axis", I(1)}}), Error);
  EXPECT_THROW(point_of(layer_op(), "reference", {{"batch", std::string("one")}}), Error);
}

TEST(LayerReference, ValidatesEveryPartAndTimesThemAlone) {
  auto host = make_host_backend({});
  const auto* impl = Registry::instance().find("layer", "reference", BackendKind::host);
  ASSERT_NE(impl, nullptr);
  for (const char* phase : {"decode", "prefill"})
    for (const char* precision : {"bf16", "int4"}) {
      const Point p = point_with(layer_op(), "reference",
                                 {{"phase", std::string(phase)},
                                  {"batch", I(2)},
                                  {"cache", I(70)},
                                  {"seq", I(33)},
                                  {"hidden", I(128)},
                                  {"heads", I(4)},
                                  {"heads_kv", I(2)},
                                  {"head_dim", I(64)},
                                  {"inter", I(256)},
                                  {"precision", std::string(precision)}});
      ASSERT_EQ(layer_op().check(p, 1), "");
      Context ctx{*host, test::comm(), 5};
      ASSERT_EQ(impl->can_implement(p, ctx), "") << layer_op().describe(p);
      auto c = impl->prepare(p, ctx);
      const Validation v = c->validate();
      EXPECT_TRUE(v.ok) << v.detail;
      EXPECT_NE(v.detail.find("every part validated"), std::string::npos) << v.detail;
      c->run();
      const auto extra = c->extra_metrics();
      EXPECT_EQ(layer_op().check_report({c->chosen(), extra}, impl->info().tuning), "");
      ASSERT_EQ(extra.size(), 1 + layer_part_names().size());
      EXPECT_EQ(extra[0].first, "parts_alone_s");
      double sum = 0;
      for (std::size_t i = 1; i < extra.size(); ++i) {
        EXPECT_EQ(extra[i].first, "t_" + layer_part_names()[i - 1] + "_s");
        EXPECT_GT(extra[i].second, 0) << extra[i].first;
        sum += (extra[i].first == "t_add_rmsnorm_s" ? 2 : 1) * extra[i].second;
      }
      EXPECT_DOUBLE_EQ(extra[0].second, sum);
    }
  // a part the host cannot run (GEMMs beyond the host reference's FLOP limit) is named with its op,
  // implementation and reason
  const Point big = point_with(layer_op(), "reference", {{"hidden", I(1 << 16)}, {"inter", I(1 << 18)}});
  const std::string why = impl->can_implement(big, Context{*host, test::comm(), 1});
  EXPECT_NE(why, "");
  EXPECT_NE(why.find("("), std::string::npos) << why;  // "<part> (<op>/<impl>): <reason>"
}

TEST(LayerOp, CudaImplementationsAndWhatVendorLacks) {
  auto& r = Registry::instance();
  ASSERT_NE(r.find("layer", "ours", BackendKind::cuda), nullptr);
  const auto* vendor = r.find("layer", "vendor", BackendKind::cuda);
  ASSERT_NE(vendor, nullptr);
  auto host = make_host_backend({});
  const std::string why = vendor->can_implement(point_with(layer_op(), "vendor", {{"precision", std::string("int4")}}),
                                                Context{*host, test::comm(), 1});
#ifdef GENBENCH_HAVE_CUDA
  EXPECT_NE(why.find("no w4a16 implementation"), std::string::npos) << why;
#else
  EXPECT_NE(why, "");
#endif
}

}  // namespace
}  // namespace genbench
