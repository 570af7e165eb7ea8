// GPU tests of decode/cudnn (kernels/decode/cudnn): each point prepared through the registry
// and validated as decode/fa3's (outputs poisoned, sampled rows of whole sequences against
// double, their keys gathered through the block table; graph mode replayed with two more sets
// of lengths). Shapes cuDNN may refuse on some versions (several new tokens, head_dim 64/256,
// fp16) must then be refused with cuDNN's reason, never run wrong. Skipped without a GPU, or
// where this build or this cuDNN has no decode/cudnn.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "ops/decode/decode.h"
#include "ops/implementation.h"
#include "support/gpu_suite.h"
#include "support/points.h"
#include "support/test_env.h"

namespace genbench {
namespace {

using M = std::map<std::string, AxisValue>;
std::int64_t I(std::int64_t x) { return x; }

class DecodeCudnnGpu : public test::GpuSuite {
 protected:
  void SetUp() override {
    test::GpuSuite::SetUp();
    if (IsSkipped()) return;
    im_ = Registry::instance().find("decode", "cudnn", BackendKind::cuda);
    ASSERT_NE(im_, nullptr);
    Context ctx{*backend_, test::comm(), 1};
    const Point probe = test::point_with(decode_op(), "cudnn", {{"batch", I(2)}, {"cache", I(256)}});
    const std::string why = im_->can_implement(probe, ctx);
    if (!why.empty()) GTEST_SKIP() << "decode/cudnn: " << why;
  }

  // Validates one point; returns its validation detail, or "unsupported: <reason>" where
  // `may_refuse` and cuDNN refused it.
  std::string check(const M& axes, bool may_refuse = false) {
    const Point p = test::point_with(decode_op(), "cudnn", axes);
    EXPECT_EQ(decode_op().check(p, 1), "");
    Context ctx{*backend_, test::comm(), 700 + seed_++};
    const std::string why = im_->can_implement(p, ctx);
    if (!why.empty()) {
      if (may_refuse) {
        EXPECT_NE(why.find("cuDNN"), std::string::npos) << why;
        std::cout << "[ refused  ] " << decode_op().describe(p) << ": " << why << "\n";
        return "unsupported: " + why;
      }
      ADD_FAILURE() << decode_op().describe(p) << ": " << why;
      return why;
    }
    auto c = im_->prepare(p, ctx);
    const Validation v = c->validate();
    EXPECT_TRUE(v.ok) << decode_op().describe(p) << " [" << c->variant() << "]: " << v.detail;
    EXPECT_LE(v.error, v.tolerance);
    c->run();
    backend_->synchronize();
    std::cout << "[ variant  ] " << decode_op().describe(p) << ": " << c->variant() << "\n";
    return v.detail;
  }

  const Implementation* im_ = nullptr;
  static inline std::uint64_t seed_ = 0;
};

TEST_F(DecodeCudnnGpu, OddLengthsContiguousAndPaged) {
  for (std::int64_t page : {0, 16, 64, 128, 256}) {
    const std::string d = check({{"batch", I(3)}, {"cache", I(1000)}, {"page_size", page}, {"varlen", I(1)}});
    EXPECT_NE(d.find(page == 0 ? "contiguous" : "pool "), std::string::npos) << d;
  }
  check({{"batch", I(5)}, {"cache", I(333)}, {"page_size", I(16)}});
}

TEST_F(DecodeCudnnGpu, GroupsAndMultiQuery) {
  check({{"batch", I(2)},
         {"heads", I(64)},
         {"heads_kv", I(8)},
         {"cache", I(3001)},
         {"page_size", I(64)},
         {"varlen", I(1)}});
  check({{"batch", I(2)}, {"heads", I(16)}, {"heads_kv", I(1)}, {"cache", I(1500)}, {"page_size", I(16)}});
}

TEST_F(DecodeCudnnGpu, NewTokensHeadDimsAndFp16OrTheirReason) {
  for (std::int64_t n : {2, 5})
    check({{"batch", I(2)}, {"new_tokens", n}, {"cache", I(517)}, {"page_size", I(16)}, {"varlen", I(1)}}, true);
  check({{"batch", I(2)}, {"new_tokens", I(3)}, {"cache", I(400)}, {"causal", I(0)}}, true);
  for (std::int64_t hd : {64, 256})
    check({{"batch", I(2)},
           {"heads", I(16)},
           {"heads_kv", I(4)},
           {"head_dim", hd},
           {"cache", I(700)},
           {"page_size", I(64)},
           {"dtype", std::string("fp16")}},
          true);
}

TEST_F(DecodeCudnnGpu, Fp8KvWith16BitQIsRefusedWithTheReason) {
  const Point p = test::point_with(decode_op(), "cudnn",
                                   {{"batch", I(2)}, {"cache", I(256)}, {"kv_dtype", std::string("fp8_e4m3")}});
  Context ctx{*backend_, test::comm(), 1};
  const std::string why = im_->can_implement(p, ctx);
  EXPECT_NE(why.find("no engine for fp8_e4m3 K/V with bf16 Q"), std::string::npos) << why;
}

TEST_F(DecodeCudnnGpu, GraphReplaysWithNewLengths) {
  for (std::int64_t page : {0, 16}) {
    const std::string d = check(
        {{"batch", I(3)}, {"cache", I(1000)}, {"page_size", page}, {"varlen", I(1)}, {"mode", std::string("graph")}});
    EXPECT_NE(d.find("replayed with 2 more sets of lengths"), std::string::npos) << d;
  }
}

}  // namespace
}  // namespace genbench
