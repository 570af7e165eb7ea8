// gemm/cublaslt on the GPU: validation in every precision (odd shapes where cuBLASLt allows
// them), batched and transposed layouts, graph mode, cold mode, memory accounting, and the
// reasons given for what cuBLASLt cannot do. Skipped without a GPU.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backend/backend.h"
#include "ops/gemm/gemm.h"
#include "ops/implementation.h"
#include "support/points.h"
#include "support/test_env.h"
#ifdef GENBENCH_HAVE_CUDA
#include <cstdlib>

#include "core/error.h"
#include "kernels/gemm/cublaslt/lt_matmul.h"
#endif

namespace genbench {
namespace {

#ifdef GENBENCH_HAVE_CUDA
// The workspace setting (host only, no GPU needed): unset or empty gives 32 MiB, a whole number
// of MiB from 0 to 4096 is taken, anything else is refused with the variable's name.
TEST(CublasLtWorkspace, SettingIsAWholeNumberOfMiBOrAnError) {
  const char* name = "GENBENCH_CUBLASLT_WORKSPACE_MB";
  const char* saved = std::getenv(name);
  const std::string keep = saved ? saved : "";
  unsetenv(name);
  EXPECT_EQ(lt_workspace_bytes(), std::size_t{32} << 20);
  setenv(name, "", 1);
  EXPECT_EQ(lt_workspace_bytes(), std::size_t{32} << 20);
  for (const auto& [text, mb] : {std::pair<const char*, std::size_t>{"0", 0}, {"64", 64}, {"4096", 4096}}) {
    setenv(name, text, 1);
    EXPECT_EQ(lt_workspace_bytes(), mb << 20) << text;
  }
  for (const char* bad : {"lots", "64MB", "-1", "4097", "1.5", "nan", "inf"}) {
    setenv(name, bad, 1);
    try {
      lt_workspace_bytes();
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  // The cublaslt_workspace_mb axis: a value other than auto wins over the alias; bad values name the axis.
  setenv(name, "64", 1);
  EXPECT_EQ(lt_workspace_bytes("auto"), std::size_t{64} << 20);
  EXPECT_EQ(lt_workspace_bytes("256"), std::size_t{256} << 20);
  EXPECT_EQ(lt_workspace_bytes("0"), std::size_t{0});
  try {
    lt_workspace_bytes("4097");
    ADD_FAILURE() << "4097 was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("cublaslt_workspace_mb"), std::string::npos) << e.what();
  }
  if (saved) setenv(name, keep.c_str(), 1);
  else unsetenv(name);
}
#endif

struct G {
  std::int64_t m, n, k, batch;
  const char* ta;
  const char* tb;
  const char* dtype;
  const char* cache = "hot";
  const char* mode = "eager";
};

Point gemm_point(const G& g) {
  Point p = test::point_with(gemm_op(), "cublaslt");
  namespace x = gemm_axis;
  p.values[x::m] = g.m;
  p.values[x::n] = g.n;
  p.values[x::k] = g.k;
  p.values[x::batch] = g.batch;
  p.values[x::trans_a] = std::string(g.ta);
  p.values[x::trans_b] = std::string(g.tb);
  p.values[x::dtype] = std::string(g.dtype);
  p.values[x::cache] = std::string(g.cache);
  p.values[x::mode] = std::string(g.mode);
  return p;
}

class CublasLt : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::have_gpu()) GTEST_SKIP() << "no GPU";
    backend_ = make_cuda_backend(BackendOptions{});
    impl_ = Registry::instance().find("gemm", "cublaslt", BackendKind::cuda);
    ASSERT_NE(impl_, nullptr);
  }
  Context ctx(std::uint64_t seed = 1234) { return Context{*backend_, test::comm(), seed}; }
  bool cc_at_least(int major, int minor) {
    const auto d = backend_->device_info();
    return d.cc_major * 10 + d.cc_minor >= major * 10 + minor;
  }

  // Prepares, validates and runs one point; returns the case for further checks.
  std::unique_ptr<Case> check(const G& g) {
    const Point p = gemm_point(g);
    Context c = ctx();
    const std::string why = impl_->can_implement(p, c);
    EXPECT_EQ(why, "") << gemm_op().describe(p);
    if (!why.empty()) return nullptr;
    auto cs = impl_->prepare(p, c);
    const Validation v = cs->validate();
    EXPECT_TRUE(v.ok) << gemm_op().describe(p) << ": " << v.detail;
    EXPECT_LE(v.error, v.tolerance) << gemm_op().describe(p);
    EXPECT_FALSE(cs->variant().empty());
    cs->run();
    backend_->synchronize();
    return cs;
  }

  std::unique_ptr<Backend> backend_;
  const Implementation* impl_ = nullptr;
};

TEST_F(CublasLt, ValidatesFloatPrecisionsOnOddShapes) {
  for (const char* dt : {"fp32", "tf32", "fp16", "bf16"}) {
    check({100, 75, 37, 1, "n", "n", dt});
    check({100, 75, 37, 1, "t", "t", dt});
    check({129, 257, 300, 1, "n", "t", dt});
  }
}

TEST_F(CublasLt, ValidatesBatchedTransposed) {
  check({96, 40, 72, 3, "t", "n", "bf16"});
  check({64, 48, 33, 5, "n", "t", "fp32"});
}

TEST_F(CublasLt, ValidatesFp8AndInt8InTnLayout) {
  if (cc_at_least(8, 9)) check({256, 128, 64, 1, "n", "t", "fp8_e4m3"});
  check({256, 128, 64, 1, "n", "t", "int8"});
  check({512, 384, 1024, 2, "n", "t", "int8"});
}

TEST_F(CublasLt, ReportsWhatItCannotDo) {
  Context c = ctx();
  // fp8 outside the TN layout: unsupported, with a reason naming the layout.
  const std::string why = impl_->can_implement(gemm_point({256, 128, 64, 1, "n", "n", "fp8_e4m3"}), c);
  EXPECT_NE(why, "");
  if (cc_at_least(8, 9)) {
    EXPECT_NE(why.find("trans_b=t"), std::string::npos) << why;
  }
  // e5m2 x e5m2 either works and validates, or is reported with a reason.
  const Point p = gemm_point({256, 128, 64, 1, "n", "t", "fp8_e5m2"});
  const std::string why2 = impl_->can_implement(p, c);
  if (why2.empty()) {
    auto cs = impl_->prepare(p, c);
    const Validation v = cs->validate();
    EXPECT_TRUE(v.ok) << v.detail;
  } else {
    EXPECT_NE(why2.find("fp8_e5m2"), std::string::npos) << why2;
  }
}

TEST_F(CublasLt, GraphModeReplaysSeveralIterations) {
  auto cs = check({512, 512, 512, 1, "n", "t", "bf16", "hot", "graph"});
  ASSERT_NE(cs, nullptr);
  EXPECT_GE(cs->iterations_per_run(), 10);
  EXPECT_LE(cs->iterations_per_run(), 100);
  auto timer = backend_->make_timer();
  timer->start();
  cs->run();
  timer->stop();
  EXPECT_GT(timer->seconds(), 0.0);
  // Eager mode does one iteration per run().
  auto eager = check({512, 512, 512, 1, "n", "t", "bf16"});
  ASSERT_NE(eager, nullptr);
  EXPECT_EQ(eager->iterations_per_run(), 1);
}

TEST_F(CublasLt, ColdModeRotatesCopiesBeyondTwiceL2) {
  backend_->reset_peak();
  auto cs = check({1024, 1024, 1024, 1, "n", "t", "fp16", "cold"});
  ASSERT_NE(cs, nullptr);
  // bytes of one copy of A, B and D; the copies together exceed 2 x L2.
  const double set = 3.0 * 1024 * 1024 * 2;
  EXPECT_GE(static_cast<double>(backend_->peak_bytes()), 2.0 * static_cast<double>(backend_->device_info().l2_bytes));
  EXPECT_GT(static_cast<double>(backend_->peak_bytes()), set);
  EXPECT_NE(cs->variant().find(" c"), std::string::npos) << cs->variant();
  // several consecutive iterations of the rotating eager path stay correct
  for (int i = 0; i < 5; ++i) cs->run();
  backend_->synchronize();
  const Validation v = cs->validate();
  EXPECT_TRUE(v.ok) << v.detail;
}

TEST_F(CublasLt, PeakMemoryCountsOperandsAndWorkspace) {
  backend_->reset_peak();
  const std::int64_t base = backend_->current_bytes();
  {
    Context c = ctx();
    auto cs = impl_->prepare(gemm_point({2048, 1024, 512, 1, "n", "t", "bf16"}), c);
    const std::int64_t operands = (2048LL * 512 + 512LL * 1024 + 2048LL * 1024) * 2;
    EXPECT_GE(backend_->peak_bytes() - base, operands);
    EXPECT_LE(backend_->peak_bytes() - base, operands + (std::int64_t{1} << 30));
  }
  EXPECT_EQ(backend_->current_bytes(), base);  // everything released with the case
}

TEST_F(CublasLt, ValidationIsRepeatable) {
  // Each validate() poisons the output and recomputes it: two in a row agree exactly.
  Context c = ctx();
  auto cs = impl_->prepare(gemm_point({128, 96, 80, 1, "n", "n", "fp32"}), c);
  const Validation a = cs->validate(), b = cs->validate();
  EXPECT_TRUE(a.ok && b.ok) << a.detail << " / " << b.detail;
  EXPECT_DOUBLE_EQ(a.error, b.error);
}

}  // namespace
}  // namespace genbench
