// GPU tests of the cuda attention implementations (reference, unfused, fa2, cudnn): each
// point is prepared through the registry and validated against the double reference on
// sampled rows (kernels/attention/common/attention_validate.h). Skipped without a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "core/error.h"
#include "ops/attention/attention.h"
#include "ops/implementation.h"
#include "support/attention.h"
#include "support/gpu_suite.h"
#include "support/test_env.h"
#ifdef GENBENCH_HAVE_CUDA
#include "kernels/attention/common/attention_case.h"
#endif

namespace genbench {
namespace {

using Shape = test::AttentionDims;

class AttentionGpu : public test::GpuSuite {
 protected:
  // Prepares and validates one point; returns the case for further checks (nullptr when the
  // implementation reports it cannot run the point, which fails the test unless allowed).
  std::unique_ptr<Case> check(const std::string& impl, const Point& p, bool may_be_unsupported = false) {
    const Implementation* im = Registry::instance().find("attention", impl, BackendKind::cuda);
    EXPECT_NE(im, nullptr) << impl;
    if (!im) return nullptr;
    Context ctx{*backend_, test::comm(), 1234 + seed_++};
    const std::string why = im->can_implement(p, ctx);
    if (!why.empty()) {
      if (!may_be_unsupported) ADD_FAILURE() << impl << " " << attention_op().describe(p) << ": " << why;
      return nullptr;
    }
    auto c = im->prepare(p, ctx);
    const Validation v = c->validate();
    EXPECT_TRUE(v.ok) << impl << " " << attention_op().describe(p) << " [" << c->variant() << "]: " << v.detail;
    EXPECT_LE(v.error, v.tolerance);
    c->run();  // one timed-style execution must also go through
    backend_->synchronize();
    return c;
  }

  static Point point(const std::string& impl, const Shape& s, std::int64_t d, bool causal, const char* dtype,
                     bool varlen = false, bool graph = false) {
    return test::attention_point(impl, s, d, causal, dtype, varlen, graph);
  }

  static std::uint64_t seed_;
};
std::uint64_t AttentionGpu::seed_ = 0;

// Odd lengths, tile tails, sq != sk both ways (causal rows with no visible key), GQA and MQA.
const Shape kShapes[] = {
    {2, 4, 4, 1, 1},       {2, 4, 2, 17, 17},     {1, 4, 1, 127, 127}, {2, 4, 4, 1000, 1000},
    {1, 2, 2, 4097, 4097}, {1, 2, 1, 3000, 5000}, {1, 2, 2, 300, 200},
};

TEST_F(AttentionGpu, Fa2AllHeadDimsDtypesCausal) {
  for (const char* dt : {"fp16", "bf16"})
    for (std::int64_t d : {64, 128, 256})
      for (bool causal : {false, true})
        for (const auto& s : kShapes) check("fa2", point("fa2", s, d, causal, dt));
}

TEST_F(AttentionGpu, Fa2ScaleAndLargeBatch) {
  Point p = point("fa2", {16, 8, 2, 257, 513}, 128, true, "bf16");
  p.values[attention_axis::scale] = 0.5;
  check("fa2", p);
}

TEST_F(AttentionGpu, ReferenceMatchesDouble) {
  for (const char* dt : {"fp32", "bf16", "fp16"})
    for (bool causal : {false, true})
      for (const Shape& s : {Shape{2, 4, 2, 17, 17}, Shape{1, 2, 1, 1000, 1000}, Shape{1, 2, 2, 300, 500}})
        check("reference", point("reference", s, 128, causal, dt));
  check("reference", point("reference", {1, 2, 2, 130, 130}, 256, true, "bf16"));
  check("reference", point("reference", {1, 2, 2, 130, 130}, 64, false, "fp16"));
}

TEST_F(AttentionGpu, UnfusedMatchesDouble) {
  for (const char* dt : {"fp16", "bf16", "fp32"})
    for (std::int64_t d : {64, 128, 256})
      for (bool causal : {false, true})
        for (const Shape& s : {Shape{2, 4, 2, 17, 17}, Shape{1, 4, 1, 1000, 1000}, Shape{1, 2, 2, 300, 500}})
          check("unfused", point("unfused", s, d, causal, dt));
}

TEST_F(AttentionGpu, VarlenPackedBatches) {
  for (const char* impl : {"fa2", "reference"})
    for (std::int64_t d : {64, 128})
      for (bool causal : {false, true}) {
        check(impl, point(impl, {5, 4, 2, 1000, 1000}, d, causal, "bf16", true));
        check(impl, point(impl, {3, 4, 4, 301, 777}, d, causal, "fp16", true));
      }
}

#ifdef GENBENCH_HAVE_CUDA
TEST_F(AttentionGpu, GraphReplayServesNewLengthsWithoutRecapture) {
  for (bool causal : {false, true}) {
    auto c = check("fa2", point("fa2", {6, 4, 2, 900, 900}, 128, causal, "bf16", true, true));
    ASSERT_NE(c, nullptr);
    test::expect_graph_serves_new_lengths(*c);
  }
  // Graph mode without varlen, for every device implementation.
  for (const char* impl : {"reference", "unfused", "fa2"})
    check(impl, point(impl, {2, 4, 4, 333, 333}, 64, true, "fp16", false, true));
}
#endif

TEST_F(AttentionGpu, CudnnWhenAvailable) {
  const Implementation* im = Registry::instance().find("attention", "cudnn", BackendKind::cuda);
  ASSERT_NE(im, nullptr);
  Context ctx{*backend_, test::comm(), 99};
  const Point probe = point("cudnn", {2, 4, 4, 128, 128}, 128, false, "bf16");
  if (!im->can_implement(probe, ctx).empty()) GTEST_SKIP() << "cudnn: " << im->can_implement(probe, ctx);
  for (const char* dt : {"fp16", "bf16"})
    for (std::int64_t d : {64, 128})
      for (bool causal : {false, true})
        for (const Shape& s : {Shape{2, 4, 4, 128, 128}, Shape{2, 4, 2, 1000, 1000}, Shape{1, 2, 2, 3000, 5000}})
          check("cudnn", point("cudnn", s, d, causal, dt), true);
}

// Head dims 96 and 192 and unequal Q/K and V/O dims (MLA prefill's 192/128): the reference,
// unfused and cuDNN take them (cuDNN where its engines do: a graph no engine builds says so
// when prepared, and is reported here); fa2 refuses unequal dims by name.
TEST_F(AttentionGpu, HeadDims96And192AndUnequal) {
  const struct { std::int64_t d, dv; } dims[] = {{96, 0}, {192, 0}, {192, 128}};
  for (const auto& k : dims)
    for (bool causal : {false, true})
      for (const Shape& s : {Shape{2, 4, 2, 17, 17}, Shape{1, 2, 2, 1000, 1000}, Shape{1, 2, 1, 300, 500}}) {
        for (const char* impl : {"reference", "unfused"}) {
          Point p = point(impl, s, k.d, causal, "bf16");
          p.values[attention_axis::head_dim_v] = AxisValue{k.dv};
          check(impl, p);
        }
        Point p = point("cudnn", s, k.d, causal, "bf16");
        p.values[attention_axis::head_dim_v] = AxisValue{k.dv};
        try {
          check("cudnn", p, true);
        } catch (const Unsupported& e) {  // no engine for the graph: reported, anything else fails
          std::printf("  cudnn %s: %s\n", attention_op().describe(p).c_str(), e.what());
        }
      }
  const Implementation* fa2 = Registry::instance().find("attention", "fa2", BackendKind::cuda);
  ASSERT_NE(fa2, nullptr);
  Context ctx{*backend_, test::comm(), 5};
  Point p = point("fa2", {1, 2, 2, 128, 128}, 192, false, "bf16");
  p.values[attention_axis::head_dim_v] = AxisValue{128};
  EXPECT_NE(fa2->can_implement(p, ctx).find("one head dim"), std::string::npos);
}

}  // namespace
}  // namespace genbench
