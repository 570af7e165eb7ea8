// GPU tests of attention_backward's cuda implementations (unfused, cudnn, fa2), prepared through
// the registry and validated (dQ, dK, dV poisoned, then sampled rows against double): MHA, GQA
// and MQA, causal, seqlen_q != seqlen_k, lengths that are not tile multiples, varlen, graph mode,
// deterministic, head_dim 64/128/256 and both dtypes; what each refuses says why. Skipped
// without a GPU.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ops/attention_backward/attention_backward.h"
#include "ops/implementation.h"
#include "support/gpu_suite.h"
#include "support/points.h"
#include "support/test_env.h"

namespace genbench {
namespace {

using M = std::map<std::string, AxisValue>;
std::int64_t I(std::int64_t x) { return x; }

class AttentionBackwardGpu : public test::GpuSuite {
 protected:
  // Validates the point with `impl`; returns false (and records why) when it refuses it.
  bool check(const char* impl, const M& axes) {
    const Op& op = attention_backward_op();
    const Point p = test::point_with(op, impl, axes);
    EXPECT_EQ(op.check(p, 1), "");
    const Implementation* im = Registry::instance().find("attention_backward", impl, BackendKind::cuda);
    EXPECT_NE(im, nullptr) << impl;
    if (!im) return false;
    Context ctx{*backend_, test::comm(), 1200 + seed_++};
    const std::string why = im->can_implement(p, ctx);
    if (!why.empty()) {
      EXPECT_GT(why.size(), 8u) << impl << " refused " << op.describe(p) << " without a reason";
      std::printf("  %-8s %-60s unsupported: %s\n", impl, op.describe(p).c_str(), why.c_str());
      return false;
    }
    auto c = im->prepare(p, ctx);
    const Validation v = c->validate();
    EXPECT_TRUE(v.ok) << impl << " " << op.describe(p) << ": " << v.detail;
    EXPECT_LE(v.error, v.tolerance);
    std::printf("  %-8s %-60s %s\n", impl, op.describe(p).c_str(), v.detail.substr(0, 150).c_str());
    c->run();
    backend_->synchronize();
    return true;
  }
  static inline std::uint64_t seed_ = 0;
};

const char* const kImpls[] = {"fa2", "cudnn", "unfused"};

TEST_F(AttentionBackwardGpu, HeadDimsDtypesAndMasks) {
  for (const char* impl : kImpls)
    for (const std::int64_t d : {64, 128, 256})
      for (const char* dt : {"bf16", "fp16"})
        for (const bool causal : {false, true}) {
          // cuDNN may refuse a length that is not a multiple of 128 (older cuDNN); check() then
          // requires the reason. Ours and the baseline run every one.
          const bool ran = check(impl, {{"batch", I(2)},
                                        {"heads", I(4)},
                                        {"seqlen_q", I(300)},
                                        {"head_dim", I(d)},
                                        {"causal", causal},
                                        {"dtype", std::string(dt)}});
          if (std::string(impl) != "cudnn") EXPECT_TRUE(ran) << impl << " d" << d << " " << dt;
          // a length cuDNN always takes
          if (std::string(impl) == "cudnn")
            EXPECT_TRUE(check(impl, {{"batch", I(2)},
                                     {"heads", I(4)},
                                     {"seqlen_q", I(256)},
                                     {"head_dim", I(d)},
                                     {"causal", causal},
                                     {"dtype", std::string(dt)}}))
                << "cudnn d" << d << " " << dt;
        }
}

TEST_F(AttentionBackwardGpu, GroupsTailsAndUnequalLengths) {
  struct S {
    std::int64_t heads_kv, sq, sk;
  };
  for (const char* impl : kImpls)
    for (const S& s : {S{4, 1, 77}, S{2, 129, 129}, S{1, 77, 300}, S{2, 300, 77}, S{4, 1000, 1000}})
      for (const bool causal : {false, true})
        check(impl, {{"batch", I(3)},
                     {"heads", I(8)},
                     {"heads_kv", I(s.heads_kv)},
                     {"seqlen_q", I(s.sq)},
                     {"seqlen_k", I(s.sk)},
                     {"head_dim", I(128)},
                     {"causal", causal}});
}

TEST_F(AttentionBackwardGpu, VarlenGraphAndDeterministic) {
  for (const char* impl : kImpls)
    for (const bool varlen : {false, true})
      for (const char* mode : {"eager", "graph"})
        for (const bool det : {false, true})
          check(impl, {{"batch", I(5)},
                       {"heads", I(4)},
                       {"heads_kv", I(2)},
                       {"seqlen_q", I(333)},
                       {"head_dim", I(64)},
                       {"causal", true},
                       {"varlen", varlen},
                       {"mode", std::string(mode)},
                       {"deterministic", det}});
}

// The fused kernel at a training shape, and refusals with reasons.
TEST_F(AttentionBackwardGpu, TrainingShapeAndRefusals) {
  EXPECT_TRUE(check("fa2", {{"tokens", I(16384)},
                            {"heads", I(32)},
                            {"heads_kv", I(8)},
                            {"seqlen_q", I(4096)},
                            {"head_dim", I(128)},
                            {"causal", true}}));
  EXPECT_FALSE(check("fa2", {{"heads", I(2)}, {"seqlen_q", I(128)}, {"head_dim", I(96)}}));
  EXPECT_FALSE(check("cudnn", {{"heads", I(2)}, {"seqlen_q", I(128)}, {"dtype", std::string("fp32")}}));
}

}  // namespace
}  // namespace genbench
