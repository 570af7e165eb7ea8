// GPU tests of pointwise/cuda (kernels/pointwise/cuda): every kind, forward and backward, at both
// dtypes, prepared through the registry and validated (sampled rows against double math, outputs
// poisoned first; dw over every row; embedding_backward's table zeroed, untouched rows checked),
// at Llama-3 widths, widths that are not multiples of 8 (the one-element path), one row and row
// counts that are not multiples of a block (rmsnorm_backward: more rows than its blocks, so a
// block sums several rows' dw); repeated ids; the widths the norms refuse. Skipped without a GPU.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ops/implementation.h"
#include "ops/pointwise/pointwise.h"
#include "support/gpu_suite.h"
#include "support/points.h"
#include "support/test_env.h"

namespace genbench {
namespace {

using M = std::map<std::string, AxisValue>;
std::int64_t I(std::int64_t x) { return x; }

class PointwiseGpu : public test::GpuSuite {
 protected:
  void check(const M& axes) {
    const Point p = test::point_with(pointwise_op(), "cuda", axes);
    ASSERT_EQ(pointwise_op().check(p, 1), "");
    const Implementation* im = Registry::instance().find("pointwise", "cuda", BackendKind::cuda);
    ASSERT_NE(im, nullptr);
    Context ctx{*backend_, test::comm(), 900 + seed_++};
    ASSERT_EQ(im->can_implement(p, ctx), "") << pointwise_op().describe(p);
    auto c = im->prepare(p, ctx);
    const Validation v = c->validate();
    EXPECT_TRUE(v.ok) << pointwise_op().describe(p) << ": " << v.detail;
    EXPECT_LE(v.error, v.tolerance);
    c->run();
    backend_->synchronize();
  }
  static inline std::uint64_t seed_ = 0;
};

TEST_F(PointwiseGpu, NormsAtModelAndOddWidths) {
  for (const char* kind : {"rmsnorm", "add_rmsnorm"})
    for (const char* dt : {"bf16", "fp16"})
      for (const std::int64_t hidden : {4096, 7168, 8192, 512, 1000, 4095, 32768})
        for (const std::int64_t rows : {1, 67, 4099})
          check({{"kind", std::string(kind)}, {"rows", I(rows)}, {"hidden", I(hidden)}, {"dtype", std::string(dt)}});
}

TEST_F(PointwiseGpu, RopeSiluAndEmbedding) {
  for (const char* dt : {"bf16", "fp16"}) {
    for (const std::int64_t rows : {1, 67, 8193}) {
      check({{"kind", std::string("rope")},
             {"rows", I(rows)},
             {"heads", I(32)},
             {"heads_kv", I(8)},
             {"head_dim", I(128)},
             {"dtype", std::string(dt)}});
      check({{"kind", std::string("rope")},
             {"rows", I(rows)},
             {"heads", I(16)},
             {"heads_kv", I(1)},
             {"head_dim", I(64)},
             {"dtype", std::string(dt)}});
      check({{"kind", std::string("rope")},
             {"rows", I(rows)},
             {"heads", I(3)},
             {"heads_kv", I(0)},
             {"head_dim", I(22)},
             {"dtype", std::string(dt)}});
      for (const std::int64_t hidden : {14336, 3584, 1001})
        check(
            {{"kind", std::string("silu_mul")}, {"rows", I(rows)}, {"hidden", I(hidden)}, {"dtype", std::string(dt)}});
      for (const std::int64_t hidden : {4096, 1001})
        check({{"kind", std::string("embedding")},
               {"rows", I(rows)},
               {"hidden", I(hidden)},
               {"vocab", I(128256)},
               {"dtype", std::string(dt)}});
    }
  }
}

TEST_F(PointwiseGpu, NormsBackwardAtModelAndOddWidths) {
  for (const char* kind : {"rmsnorm_backward", "add_rmsnorm_backward"})
    for (const char* dt : {"bf16", "fp16"})
      for (const std::int64_t hidden : {4096, 7168, 8192, 512, 1000, 4095, 16384, 32768})
        for (const std::int64_t rows : {1, 67, 4099})
          check({{"kind", std::string(kind)}, {"rows", I(rows)}, {"hidden", I(hidden)}, {"dtype", std::string(dt)}});
  // a training step's rows: each block sums dw over many rows
  check({{"kind", std::string("add_rmsnorm_backward")}, {"rows", I(16384)}, {"hidden", I(4096)}});
}

TEST_F(PointwiseGpu, RopeSiluAndEmbeddingBackward) {
  for (const char* dt : {"bf16", "fp16"}) {
    for (const std::int64_t rows : {1, 67, 8193}) {
      check({{"kind", std::string("rope_backward")},
             {"rows", I(rows)},
             {"heads", I(32)},
             {"heads_kv", I(8)},
             {"head_dim", I(128)},
             {"dtype", std::string(dt)}});
      check({{"kind", std::string("rope_backward")},
             {"rows", I(rows)},
             {"heads", I(3)},
             {"heads_kv", I(0)},
             {"head_dim", I(22)},
             {"dtype", std::string(dt)}});
      for (const std::int64_t hidden : {14336, 3584, 1001})
        check({{"kind", std::string("silu_mul_backward")},
               {"rows", I(rows)},
               {"hidden", I(hidden)},
               {"dtype", std::string(dt)}});
      // the Llama-3 vocabulary (few repeats), and 7 ids (nearly every row adds into a shared one)
      for (const std::int64_t vocab : {128256, 7})
        for (const std::int64_t hidden : {4096, 1001})
          check({{"kind", std::string("embedding_backward")},
                 {"rows", I(rows)},
                 {"hidden", I(hidden)},
                 {"vocab", I(vocab)},
                 {"dtype", std::string(dt)}});
    }
  }
}

TEST_F(PointwiseGpu, RmsnormRefusesRowsItCannotHold) {
  const Implementation* im = Registry::instance().find("pointwise", "cuda", BackendKind::cuda);
  ASSERT_NE(im, nullptr);
  Context ctx{*backend_, test::comm(), 1};
  for (const char* kind : {"rmsnorm", "add_rmsnorm", "rmsnorm_backward", "add_rmsnorm_backward"})
    for (const std::int64_t hidden : {32776, 4097}) {
      const Point p = test::point_with(pointwise_op(), "cuda", {{"kind", std::string(kind)}, {"hidden", I(hidden)}});
      const std::string why = im->can_implement(p, ctx);
      EXPECT_NE(why.find("registers"), std::string::npos) << kind << " " << hidden;
      EXPECT_NE(why.find(std::string(kind).find("backward") != std::string::npos ? kind : "rmsnorm"), std::string::npos)
          << why;
    }
}

}  // namespace
}  // namespace genbench
