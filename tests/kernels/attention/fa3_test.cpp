// GPU tests of attention/fa3 (the sm_90a kernel in kernels/attention/fa3_sm90): every point
// is validated against the double reference on sampled rows (first/last rows, causal edges,
// tile boundaries), with the outputs poisoned before the run. Skipped without a GPU and on
// devices other than compute capability 9.0.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "core/error.h"
#ifdef GENBENCH_HAVE_CUDA
#include "kernels/attention/common/attention_case.h"
#endif
#include "ops/attention/attention.h"
#include "ops/implementation.h"
#include "support/attention.h"
#include "support/gpu_suite.h"
#include "support/test_env.h"

namespace genbench {
namespace {

using Fa3Shape = test::AttentionDims;

Point fa3_point(const Fa3Shape& s, std::int64_t d, bool causal, const char* dtype, bool graph = false,
                bool varlen = false) {
  return test::attention_point("fa3", s, d, causal, dtype, varlen, graph);
}

class Fa3Gpu : public test::GpuSuite {
 protected:
  static void SetUpTestSuite() {
    GpuSuite::SetUpTestSuite();
    if (!backend_) return;
    const DeviceInfo info = backend_->device_info();
    hopper_ = info.cc_major == 9 && info.cc_minor == 0;
  }
  void SetUp() override {
    GpuSuite::SetUp();
    if (IsSkipped()) return;
    if (!hopper_) GTEST_SKIP() << "fa3 needs a compute capability 9.0 device";
  }

  // Validates one point (poisoned outputs, double reference) and runs it once more; returns
  // the case for further checks.
  std::unique_ptr<Case> check(const Fa3Shape& s, std::int64_t d, bool causal, const char* dtype, bool graph = false,
                              bool varlen = false) {
    return check(fa3_point(s, d, causal, dtype, graph, varlen));
  }
  std::unique_ptr<Case> check(const Point& p) {
    const Implementation* im = Registry::instance().find("attention", "fa3", BackendKind::cuda);
    EXPECT_NE(im, nullptr);
    if (!im) return nullptr;
    Context ctx{*backend_, test::comm(), 777 + seed_++};
    const std::string why = im->can_implement(p, ctx);
    EXPECT_EQ(why, "") << attention_op().describe(p);
    if (!why.empty()) return nullptr;
    auto c = im->prepare(p, ctx);
    const Validation v = c->validate();
    std::printf("  %s [%s]: %s\n", attention_op().describe(p).c_str(), c->variant().c_str(), v.detail.c_str());
    EXPECT_TRUE(v.ok) << attention_op().describe(p) << " [" << c->variant() << "]: " << v.detail;
    EXPECT_LE(v.error, v.tolerance);
    EXPECT_FALSE(c->variant().empty());
    c->run();
    backend_->synchronize();
    return c;
  }

  static bool hopper_;
  static std::uint64_t seed_;
};
bool Fa3Gpu::hopper_ = false;
std::uint64_t Fa3Gpu::seed_ = 0;

TEST_F(Fa3Gpu, Bf16D128OddLengths) {
  for (std::int64_t n : {1, 17, 127, 128, 1000, 4097})
    for (bool causal : {false, true}) check({2, 3, 3, n, n}, 128, causal, "bf16");
}

TEST_F(Fa3Gpu, Fp16D128OddLengths) {
  for (std::int64_t n : {1, 17, 1000, 4097})
    for (bool causal : {false, true}) check({1, 4, 4, n, n}, 128, causal, "fp16");
}

TEST_F(Fa3Gpu, UnequalLengths) {
  // sq < sk: every row sees keys; sq > sk with causal: the first sq - sk rows see none
  // (O = 0, LSE = -inf).
  for (bool causal : {false, true}) {
    check({2, 4, 4, 3000, 5000}, 128, causal, "bf16");
    check({1, 4, 4, 5000, 3000}, 128, causal, "bf16");
    check({1, 2, 2, 17, 300}, 128, causal, "fp16");
    check({1, 2, 2, 300, 17}, 128, causal, "fp16");
  }
}

TEST_F(Fa3Gpu, GroupedAndMultiQuery) {
  for (bool causal : {false, true}) {
    check({2, 8, 2, 1000, 1000}, 128, causal, "bf16");
    check({1, 8, 1, 777, 1500}, 128, causal, "bf16");
  }
}

TEST_F(Fa3Gpu, HeadDim64) {
  for (const char* dt : {"bf16", "fp16"})
    for (bool causal : {false, true})
      for (std::int64_t n : {1, 17, 1000, 4097}) check({1, 4, 2, n, n}, 64, causal, dt);
  check({1, 4, 4, 3000, 5000}, 64, true, "bf16");
  // 1000 rows = six 192-row tiles, the last with 40 rows: two of its three warpgroups are idle
  // (they keep only the barrier protocol). 8 x 8 x 6 = 384 tiles on a persistent launch of one
  // CTA per SM, so CTAs go on to further tiles after one with idle warpgroups.
  auto c = check({8, 8, 8, 1000, 1000}, 64, false, "bf16");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->variant().rfind("m192n128d64-ws4", 0), 0u) << c->variant();
  EXPECT_NE(c->variant().find("-ps"), std::string::npos) << c->variant();
}

// d=64 takes 192-row tiles (3 consumer warpgroups) except causal with seqlen_q <= 1024 (128 rows),
// both with a 3-stage K/V ring.
TEST_F(Fa3Gpu, HeadDim64TileByCausalLength) {
  const struct {
    std::int64_t sq;
    bool causal;
    const char* tile;
  } cases[] = {{512, true, "m128n128d64-ws3-kv3"},
               {1024, true, "m128n128d64-ws3-kv3"},
               {1025, true, "m192n128d64-ws4-kv3"},
               {512, false, "m192n128d64-ws4-kv3"},
               {2048, true, "m192n128d64-ws4-kv3"}};
  for (const auto& k : cases) {
    auto c = check({2, 4, 4, k.sq, k.sq}, 64, k.causal, "bf16");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->variant().rfind(k.tile, 0), 0u) << k.sq << (k.causal ? " causal: " : ": ") << c->variant();
  }
}

TEST_F(Fa3Gpu, HeadDim256) {
  for (const char* dt : {"bf16", "fp16"})
    for (bool causal : {false, true})
      for (std::int64_t n : {1, 17, 1000, 4097}) check({1, 4, 2, n, n}, 256, causal, dt);
  check({1, 4, 4, 3000, 5000}, 256, true, "bf16");
}

// Head dims without a kernel of their own run on the next compiled one, padded by TMA's zero
// fill: 96 on d=128, 192 on its own kernel (112-key tiles), MLA's 192/128 (Q/K 192, V/O 128) and
// 128/192 on d=192. Odd lengths, causal, GQA, varlen with tiles running into the next
// sequence (O's 16-byte stores, whose columns past O's own must not be written), graph mode.
Point fa3_dims_point(const Fa3Shape& s, std::int64_t d, std::int64_t dv, bool causal, const char* dtype,
                     bool varlen = false, bool graph = false) {
  Point p = fa3_point(s, d, causal, dtype, graph, varlen);
  p.values[attention_axis::head_dim_v] = AxisValue{dv};
  return p;
}

TEST_F(Fa3Gpu, HeadDims96And192AndMla) {
  const struct {
    std::int64_t d, dv;
    const char* kernel;  // the variant's start
  } dims[] = {{96, 0, "m128n128d96@128"},
              {192, 0, "m128n112d192-"},
              {192, 128, "m128n112d192/128@192"},
              {128, 192, "m128n112d128/192@192"}};
  for (const auto& k : dims)
    for (const char* dt : {"bf16", "fp16"})
      for (bool causal : {false, true})
        for (std::int64_t n : {1, 17, 1000, 4097}) {
          auto c = check(fa3_dims_point({1, 4, 2, n, n}, k.d, k.dv, causal, dt));
          ASSERT_NE(c, nullptr);
          EXPECT_EQ(c->variant().rfind(k.kernel, 0), 0u) << c->variant();
        }
  for (const auto& k : dims)
    for (bool causal : {false, true}) {
      check(fa3_dims_point({1, 4, 4, 3000, 5000}, k.d, k.dv, causal, "bf16"));
      check(fa3_dims_point({5, 4, 2, 1000, 1000}, k.d, k.dv, causal, "bf16", true));
      check(fa3_dims_point({3, 4, 4, 301, 777}, k.d, k.dv, causal, "fp16", true));
    }
  check(fa3_dims_point({2, 4, 4, 1000, 1000}, 192, 128, true, "bf16", false, true));
}

TEST_F(Fa3Gpu, RefusesHeadDimsItCannotRun) {
  const Implementation* im = Registry::instance().find("attention", "fa3", BackendKind::cuda);
  ASSERT_NE(im, nullptr);
  Context ctx{*backend_, test::comm(), 1};
  // fp8 takes 128 and 256 with V's the same.
  EXPECT_NE(im->can_implement(fa3_dims_point({1, 4, 4, 128, 128}, 192, 128, false, "fp8_e4m3"), ctx), "");
  EXPECT_NE(im->can_implement(fa3_dims_point({1, 4, 4, 128, 128}, 96, 0, false, "fp8_e4m3"), ctx), "");
}

TEST_F(Fa3Gpu, GraphMode) { check({2, 4, 4, 1000, 1000}, 128, true, "bf16", true); }

// Packed variable-length batches: lengths drawn in [seqlen/2, seqlen] per sequence, tails that
// are not tile multiples, tiles that load rows of the next sequence (masked, not stored).
TEST_F(Fa3Gpu, VarlenPackedBatches) {
  for (std::int64_t d : {64, 128, 256})
    for (bool causal : {false, true}) {
      check({5, 4, 2, 1000, 1000}, d, causal, "bf16", false, true);
      check({3, 4, 4, 301, 777}, d, causal, "fp16", false, true);
      check({4, 2, 2, 777, 301}, d, causal, "bf16", false, true);
    }
  check({64, 2, 1, 17, 17}, 128, true, "bf16", false, true);
}

#ifdef GENBENCH_HAVE_CUDA
// One captured graph serves new sets of lengths (read from device memory) without re-capture.
TEST_F(Fa3Gpu, VarlenGraphServesNewLengthsWithoutRecapture) {
  for (bool causal : {false, true}) {
    auto c = check({6, 4, 2, 900, 900}, 128, causal, "bf16", true, true);
    ASSERT_NE(c, nullptr);
    test::expect_graph_serves_new_lengths(*c);
  }
}
#endif

// fp8 (e4m3 inputs with per-tensor descale, bf16 output; kernel in fa3_fp8_sm90.cu): odd
// lengths (tails in the query, key and V^T tiles), causal and not.
TEST_F(Fa3Gpu, Fp8D128OddLengths) {
  for (std::int64_t n : {1, 17, 1000, 4097})
    for (bool causal : {false, true}) check({2, 3, 3, n, n}, 128, causal, "fp8_e4m3");
}

TEST_F(Fa3Gpu, Fp8D256OddLengths) {
  for (std::int64_t n : {1, 17, 1000, 4097})
    for (bool causal : {false, true}) check({1, 4, 2, n, n}, 256, causal, "fp8_e4m3");
}

TEST_F(Fa3Gpu, Fp8UnequalLengths) {
  for (std::int64_t d : {128, 256})
    for (bool causal : {false, true}) {
      check({1, 4, 4, 3000, 5000}, d, causal, "fp8_e4m3");
      check({1, 4, 4, 5000, 3000}, d, causal, "fp8_e4m3");  // causal: the first 2000 rows see no key
      check({1, 2, 2, 17, 300}, d, causal, "fp8_e4m3");
    }
}

TEST_F(Fa3Gpu, Fp8GroupedAndMultiQuery) {
  for (bool causal : {false, true}) {
    check({2, 8, 2, 1000, 1000}, 128, causal, "fp8_e4m3");
    check({1, 8, 1, 777, 1500}, 128, causal, "fp8_e4m3");
    check({2, 4, 1, 1000, 1000}, 256, causal, "fp8_e4m3");
  }
}

#ifdef GENBENCH_HAVE_CUDA
// The V^T pre-pass is part of the captured launch; the output buffer holds bf16.
TEST_F(Fa3Gpu, Fp8GraphModeAndBf16Output) {
  auto c = check({2, 4, 4, 1000, 1000}, 128, true, "fp8_e4m3", true);
  ASSERT_NE(c, nullptr);
  auto* dc = dynamic_cast<attention::DeviceAttentionCase*>(c.get());
  ASSERT_NE(dc, nullptr);
  EXPECT_EQ(dc->graph_captures(), 1);
  EXPECT_NE(c->variant().find("fp8"), std::string::npos) << c->variant();
  EXPECT_NE(c->variant().find("-ps"), std::string::npos) << c->variant();  // persistent by default
  EXPECT_LE(c->variant().size(), 64u) << c->variant();
  EXPECT_EQ(attention::output_dtype(DType::fp8_e4m3), DType::bf16);
  EXPECT_EQ(dc->descale(), attention::input_descale(DType::fp8_e4m3));
  dc->poison_outputs();  // poisoned and not executed: the check must see unwritten outputs
  EXPECT_FALSE(dc->check_outputs().ok);
  dc->execute();
  EXPECT_TRUE(dc->check_outputs().ok);
  // Many replays later (the tile counters reset themselves at the end of every launch): still right.
  for (int i = 0; i < 5; ++i) dc->execute();
  dc->poison_outputs();
  dc->execute();
  EXPECT_TRUE(dc->check_outputs().ok);
}
#endif

// Lazy rescaling (fa3_device.cuh; e4m3 at both head dims, 16-bit at d=256) at softmax scales
// away from 1/sqrt(d) (unit-variance inputs, so the scores' spread is scale x sqrt(d)): at 1
// the scores spread ~11-16x wider, the row maxima jump and many blocks move the exponent base;
// at 0.15 (at d=128) a row's max grows after its first block by a few log2 units, mostly below
// the slack (4.5 for e4m3, 8 for 16-bit), so P grows past 2^offset and few blocks move the
// base; at 0.01 the rows are nearly flat and the base never moves after the first block.
TEST_F(Fa3Gpu, LazyRescaleAtExtremeScales) {
  const std::size_t scale_axis = attention_op().axis_index("scale");
  for (double scale : {1.0, 0.15, 0.01})
    for (const char* dt : {"fp8_e4m3", "bf16", "fp16"})
      for (std::int64_t d : {128, 256})
        for (bool causal : {false, true}) {
          Point p = fa3_point({1, 4, 2, 4097, 4097}, d, causal, dt);
          p.values[scale_axis] = scale;
          check(p);
        }
}

TEST_F(Fa3Gpu, Fp8RefusesVarlenAndHeadDim64) {
  const Implementation* im = Registry::instance().find("attention", "fa3", BackendKind::cuda);
  ASSERT_NE(im, nullptr);
  Context ctx{*backend_, test::comm(), 1};
  EXPECT_EQ(im->can_implement(fa3_point({1, 4, 4, 128, 128}, 128, false, "fp8_e4m3"), ctx), "");
  EXPECT_NE(im->can_implement(fa3_point({2, 4, 4, 128, 128}, 128, false, "fp8_e4m3", false, true), ctx), "");
  EXPECT_NE(im->can_implement(fa3_point({1, 4, 4, 128, 128}, 64, false, "fp8_e4m3"), ctx), "");
}

// Both launch modes, forced: persistent (the default; tiles claimed from a counter: causal
// tiles of unequal length, varlen with skipped tiles, graph replays that rely on the counters
// resetting themselves) and one CTA per tile.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

// Runs a validated case `times` more, each on poisoned outputs, and checks each result.
void expect_reruns_valid(Case* c, int times) {
  ASSERT_NE(c, nullptr);
#ifdef GENBENCH_HAVE_CUDA
  auto* dc = dynamic_cast<attention::DeviceAttentionCase*>(c);
  ASSERT_NE(dc, nullptr);
  for (int i = 0; i < times; ++i) {
    dc->poison_outputs();
    dc->execute();
    const Validation v = dc->check_outputs();
    EXPECT_TRUE(v.ok) << v.detail;
  }
#else
  (void)times;
#endif
}

// The narrow first block (kernels/attention/fa3_sm90/fa3_kernel.cuh, kNarrowFirst: d=64 on two
// consumer warpgroups): a warpgroup whose rows see keys only in the first half of the tile's
// first key block computes that block 64 keys wide. Causal with seqlen_k = seqlen_q (the first
// warpgroup of every tile), seqlen_k > seqlen_q (the diagonal shifted: narrow for some tiles'
// first warpgroup only), seqlen_k < seqlen_q (rows without keys), grouped heads; non-causal on
// two consumers with 26 keys in the last block (narrow for both) and 104 (not narrow).
TEST_F(Fa3Gpu, NarrowFirstBlockShapes) {
  for (const char* dt : {"bf16", "fp16"})
    for (std::int64_t n : {1, 65, 129, 512, 1000}) {
      auto c = check({2, 4, 4, n, n}, 64, true, dt);
      ASSERT_NE(c, nullptr);
      EXPECT_EQ(c->variant().rfind("m128n128d64-ws3", 0), 0u) << c->variant();
    }
  check({1, 4, 4, 700, 900}, 64, true, "bf16");
  check({1, 4, 4, 1000, 600}, 64, true, "bf16");
  check({2, 8, 2, 1000, 1000}, 64, true, "bf16");
  ScopedEnv two("GENBENCH_FA3_CONSUMERS", "2");
  for (std::int64_t sk : {1050, 1000}) {
    auto c = check({2, 4, 4, 300, sk}, 64, false, "bf16");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->variant().rfind("m128n128d64-ws3", 0), 0u) << c->variant();
    expect_reruns_valid(c.get(), 1);
  }
}

TEST_F(Fa3Gpu, PersistentLaunchEveryMode) {
  ScopedEnv env("GENBENCH_FA3_PERSISTENT", "1");
  for (std::int64_t d : {64, 128, 256}) {
    check({2, 3, 3, 1000, 1000}, d, true, "bf16");
    check({1, 4, 2, 3000, 5000}, d, true, "fp16");
  }
  check({1, 4, 4, 5000, 3000}, 128, true, "bf16");  // rows that see no key
  for (std::int64_t d : {128, 256}) {               // the e4m3 instantiations share the scheduler
    check({2, 3, 3, 1000, 1000}, d, true, "fp8_e4m3");
    check({1, 4, 4, 5000, 3000}, d, true, "fp8_e4m3");
  }
  check({5, 4, 2, 1000, 1000}, 128, true, "bf16", false, true);
  auto c = check({6, 4, 2, 900, 900}, 64, true, "bf16", true, true);  // graph: replays reuse the counters
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->variant().find("-ps"), std::string::npos) << c->variant();
  // After the validation's 20-odd replays: still correct (the counters reset every launch).
  expect_reruns_valid(c.get(), 1);
}

// The split tail (kernels/attention/fa3_sm90/fa3_split.h), forced on: the small shapes have
// fewer tiles than SMs, so every tile is cut into pieces of 2-20 key blocks across CTAs (odd
// lengths put the masked last block in one of them; 3000 x 5000 with GQA); {2, 16, 4, 2048,
// 2048} has whole rounds before a split last one (512 tiles on 132 SMs). Causal, d=64, d=256,
// e4m3 and one-CTA-per-tile launches never split.
TEST_F(Fa3Gpu, SplitTailEveryMode) {
  ScopedEnv env("GENBENCH_FA3_SPLIT", "1");
  auto expect_split = [](const std::unique_ptr<Case>& c, bool split) {
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->variant().find("-st") != std::string::npos, split) << c->variant();
  };
  expect_split(check({2, 3, 3, 1000, 1000}, 128, false, "bf16"), true);
  expect_split(check({2, 16, 4, 2048, 2048}, 128, false, "bf16"), true);
  expect_split(check({1, 4, 2, 3000, 5000}, 128, false, "fp16"), true);
  expect_split(check({1, 4, 2, 3000, 5000}, 64, false, "fp16"), false);  // kSplitTail: d=128 only
  expect_split(check({2, 3, 3, 1000, 1000}, 128, true, "bf16"), false);
  expect_split(check({2, 3, 3, 1000, 1000}, 256, false, "bf16"), false);
  expect_split(check({2, 3, 3, 1000, 1000}, 128, false, "fp8_e4m3"), false);  // E4m3::kSplitTail
  {
    ScopedEnv per_tile("GENBENCH_FA3_PERSISTENT", "0");
    expect_split(check({2, 3, 3, 1000, 1000}, 128, false, "bf16"), false);
  }
  // Graph replays reuse the piece counters, which the last piece of each tile zeroes.
  auto c = check({2, 4, 4, 1000, 1000}, 128, false, "bf16", true);
  expect_split(c, true);
  expect_reruns_valid(c.get(), 2);
}

// The default plan splits a long tail (10 heads x 32 query blocks = 320 tiles, 56 in the last
// round, 32 key blocks a tile) and not a short one (512 tiles of 4 key blocks, 116 in the last
// round: a piece would cost about as much as a tile).
TEST_F(Fa3Gpu, SplitTailByDefaultWhereItPays) {
  auto c = check({1, 10, 10, 4096, 4096}, 128, false, "bf16");
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->variant().find("-st"), std::string::npos) << c->variant();
  c = check({8, 16, 16, 512, 512}, 128, false, "bf16");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->variant().find("-st"), std::string::npos) << c->variant();
}

TEST_F(Fa3Gpu, OneCtaPerTileEveryMode) {
  ScopedEnv env("GENBENCH_FA3_PERSISTENT", "0");
  for (std::int64_t d : {64, 128, 256}) check({2, 3, 3, 1000, 1000}, d, false, "bf16");
  for (std::int64_t d : {128, 256}) {
    auto f = check({2, 3, 3, 1000, 1000}, d, true, "fp8_e4m3");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->variant().find("-ps"), std::string::npos) << f->variant();
  }
  auto c = check({5, 4, 2, 1000, 1000}, 128, false, "bf16", true, true);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->variant().find("-ps"), std::string::npos) << c->variant();
}

#ifdef GENBENCH_HAVE_CUDA
// Max-free softmax blocks (e4m3 d=128; fa3_kernel.cuh) on the same inputs with the default P
// limit (448), with a low limit (a quarter of P at a row's max, 2^offset: some row of most
// blocks reaches it, so most blocks rebase) and with the path off: each validates, and the
// kernel's counters (GENBENCH_FA3_FP8_COUNT) show which path ran. d=256 has no max-free blocks:
// its counters stay 0.
long long count_in(const std::string& variant, const char* key) {
  const auto at = variant.find(key);
  return at == std::string::npos ? -1 : std::atoll(variant.c_str() + at + std::strlen(key));
}

TEST_F(Fa3Gpu, Fp8MaxFreeBlocksAndRebase) {
  ScopedEnv count("GENBENCH_FA3_FP8_COUNT", "1");
  const std::string low = std::to_string(static_cast<int>(attention::kFp8POffset / 4));
  for (std::int64_t d : {128, 256})
    for (bool causal : {false, true})
      for (const std::string& limit : {std::string("448"), low, std::string("0")}) {
        ScopedEnv env("GENBENCH_FA3_FP8_P_LIMIT", limit.c_str());
        auto c = check({1, 4, 2, 4097, 4097}, d, causal, "fp8_e4m3");
        ASSERT_NE(c, nullptr);
        const std::string v = c->variant();
        const long long max_free = count_in(v, "maxfree="), rebase = count_in(v, "rebase=");
        EXPECT_EQ(v.find("-plim") == std::string::npos, limit == "448") << v;
        if (limit == "0" || d == 256) {
          EXPECT_EQ(max_free, 0) << v;
          EXPECT_EQ(rebase, 0) << v;
        } else {
          EXPECT_GT(max_free, 0) << v;
          if (limit == low) {
            EXPECT_GT(rebase, max_free / 2) << v;
          } else EXPECT_LT(rebase, max_free / 100) << v;  // default: rare
        }
      }
  ScopedEnv env("GENBENCH_FA3_FP8_P_LIMIT", low.c_str());
  check({1, 4, 4, 5000, 3000}, 128, true, "fp8_e4m3");  // rows that see no key: their blocks take the max
  check({2, 3, 3, 17, 300}, 128, false, "fp8_e4m3");
  check({1, 2, 2, 3000, 5000}, 128, false, "fp8_e4m3");
}

TEST_F(Fa3Gpu, Fp8RefusesBadPLimit) {
  for (const char* limit : {"0.5", "500", "x"}) {
    ScopedEnv env("GENBENCH_FA3_FP8_P_LIMIT", limit);
    const Implementation* im = Registry::instance().find("attention", "fa3", BackendKind::cuda);
    ASSERT_NE(im, nullptr);
    Context ctx{*backend_, test::comm(), 1};
    EXPECT_THROW(im->prepare(fa3_point({1, 2, 2, 128, 128}, 128, false, "fp8_e4m3"), ctx), Error) << limit;
  }
}
#endif

TEST_F(Fa3Gpu, RefusesOtherDtypes) {
  const Implementation* im = Registry::instance().find("attention", "fa3", BackendKind::cuda);
  ASSERT_NE(im, nullptr);
  Context ctx{*backend_, test::comm(), 1};
  EXPECT_NE(im->can_implement(fa3_point({1, 4, 4, 128, 128}, 128, false, "fp32"), ctx), "");
}

}  // namespace
}  // namespace genbench
