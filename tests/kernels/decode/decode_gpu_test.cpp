// GPU tests of decode/fa3 (kernels/decode/fa3_sm90): each point prepared through the registry
// and validated (sampled rows against double, outputs poisoned first; paged layouts also
// against the contiguous layout of the same data, bit for bit; graph mode replayed with two
// more sets of lengths). Skipped without a GPU.
#include <gtest/gtest.h>

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

class DecodeGpu : public test::GpuSuite {
 protected:
  // Validates one point; returns its validation detail.
  std::string check(const std::map<std::string, AxisValue>& axes) {
    const Point p = test::point_with(decode_op(), "fa3", axes);
    EXPECT_EQ(decode_op().check(p, 1), "");
    const Implementation* im = Registry::instance().find("decode", "fa3", BackendKind::cuda);
    EXPECT_NE(im, nullptr);
    if (!im) return "";
    Context ctx{*backend_, test::comm(), 500 + seed_++};
    const std::string why = im->can_implement(p, ctx);
    EXPECT_EQ(why, "") << decode_op().describe(p);
    if (!why.empty()) return why;
    auto c = im->prepare(p, ctx);
    const Validation v = c->validate();
    EXPECT_TRUE(v.ok) << decode_op().describe(p) << " [" << c->variant() << "]: " << v.detail;
    EXPECT_LE(v.error, v.tolerance);
    c->run();
    backend_->synchronize();
    return v.detail;
  }

  static std::uint64_t seed_;
};
std::uint64_t DecodeGpu::seed_ = 0;

using M = std::map<std::string, AxisValue>;
std::int64_t I(std::int64_t x) { return x; }

TEST_F(DecodeGpu, OddLengthsEveryPageSizeAgainstContiguous) {
  for (std::int64_t page : {0, 16, 64, 128, 256}) {
    const std::string d = check({{"batch", I(3)}, {"cache", I(1000)}, {"page_size", page}, {"varlen", I(1)}});
    if (page > 0) {
      EXPECT_NE(d.find("paged vs contiguous layout of the same data"), std::string::npos) << d;
    }
  }
}

TEST_F(DecodeGpu, GroupsNewTokensHeadDimsAndTypes) {
  check({{"batch", I(2)},
         {"heads", I(64)},
         {"heads_kv", I(8)},
         {"cache", I(3001)},
         {"page_size", I(64)},
         {"varlen", I(1)}});
  check({{"batch", I(2)}, {"heads", I(16)}, {"heads_kv", I(1)}, {"cache", I(1500)}, {"page_size", I(16)}});
  for (std::int64_t n : {2, 5, 16})
    check({{"batch", I(2)}, {"new_tokens", n}, {"cache", I(517)}, {"page_size", I(16)}, {"varlen", I(1)}});
  check({{"batch", I(2)}, {"new_tokens", I(3)}, {"cache", I(400)}, {"causal", I(0)}});
  for (std::int64_t hd : {64, 256})
    for (const char* dt : {"bf16", "fp16"})
      check({{"batch", I(2)},
             {"heads", I(16)},
             {"heads_kv", I(4)},
             {"head_dim", hd},
             {"new_tokens", I(2)},
             {"cache", I(700)},
             {"page_size", I(64)},
             {"dtype", std::string(dt)}});
}

TEST_F(DecodeGpu, Fp8KvCache) {
  for (std::int64_t hd : {64, 128, 256})
    check({{"batch", I(3)},
           {"heads", I(16)},
           {"heads_kv", I(4)},
           {"head_dim", hd},
           {"cache", I(1000)},
           {"page_size", I(16)},
           {"varlen", I(1)},
           {"kv_dtype", std::string("fp8_e4m3")}});
  check({{"batch", I(2)},
         {"heads", I(64)},
         {"heads_kv", I(8)},
         {"new_tokens", I(8)},
         {"cache", I(600)},
         {"kv_dtype", std::string("fp8_e4m3")},
         {"dtype", std::string("fp16")}});
}

TEST_F(DecodeGpu, GraphReplaysWithNewLengths) {
  for (const char* kv : {"same", "fp8_e4m3"}) {
    const std::string d = check({{"batch", I(3)},
                                 {"cache", I(1000)},
                                 {"page_size", I(16)},
                                 {"varlen", I(1)},
                                 {"mode", std::string("graph")},
                                 {"kv_dtype", std::string(kv)}});
    EXPECT_NE(d.find("replayed with 2 more sets of lengths"), std::string::npos) << d;
  }
}

TEST_F(DecodeGpu, OneLongSequenceSplitOverTheSms) {
  check({{"batch", I(1)}, {"cache", I(20000)}, {"page_size", I(64)}, {"mode", std::string("graph")}});
}

}  // namespace
}  // namespace genbench
