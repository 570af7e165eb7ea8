// The attention_backward op (ops/attention_backward): its axes and work, the backward formula
// against finite differences of the forward, the host reference validating against double on
// MHA/GQA/MQA, causal and odd lengths, the validator catching wrong and unwritten gradients, and
// what the cuda implementations refuse.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backend/backend.h"
#include "kernels/attention_backward/common/backward_validate.h"
#include "ops/attention/attention_math.h"
#include "ops/attention_backward/attention_backward.h"
#include "ops/attention_backward/attention_backward_math.h"
#include "ops/implementation.h"
#include "support/points.h"
#include "support/test_env.h"

namespace genbench {
namespace {

using test::point_with;
std::int64_t I(std::int64_t x) { return x; }

TEST(AttentionBackwardOp, AxesWorkAndChecks) {
  const Op& op = attention_backward_op();
  EXPECT_EQ(op.axis_index("deterministic"), attention_backward_axis::deterministic);
  EXPECT_EQ(op.axis_index("head_dim"), attention_axis::head_dim);
  const Point p = point_with(op, "", {{"batch", I(2)}, {"heads", I(8)}, {"seqlen_q", I(1024)}, {"head_dim", I(128)}});
  const auto s = AttentionShape::from(p);
  // 2.5 x the forward's 4 b h sq sk d
  EXPECT_DOUBLE_EQ(op.work(p, 1).flops, 2.5 * 4.0 * 2 * 8 * 1024.0 * 1024.0 * 128);
  EXPECT_DOUBLE_EQ(attention_backward_flops(s), 2.5 * s.flops());
  // Q, O, dO, dQ and K, V, dK, dV in bf16, LSE in fp32
  EXPECT_DOUBLE_EQ(op.work(p, 1).bytes, 2.0 * 8 * 2 * 1024 * 128 * 8 + 4.0 * 2 * 8 * 1024);
  const Point causal = point_with(op, "", {{"seqlen_q", I(1024)}, {"causal", true}});
  EXPECT_DOUBLE_EQ(op.work(causal, 1).flops, 0.5 * op.work(point_with(op, "", {{"seqlen_q", I(1024)}}), 1).flops);
  EXPECT_NE(op.check(point_with(op, "", {{"heads", I(12)}, {"heads_kv", I(5)}}), 1).find("multiple"),
            std::string::npos);
  EXPECT_EQ(op.metrics().front().name, "tflops");
  EXPECT_NE(op.describe(point_with(op, "", {{"deterministic", true}})).find("deterministic"), std::string::npos);
}

// Loss L = sum(dO o O(Q, K, V)): its gradient by central differences of the double forward
// against attention_backward_head in double.
TEST(AttentionBackwardMath, MatchesFiniteDifferences) {
  for (bool causal : {false, true})
    for (std::int64_t heads_kv : {2, 1}) {
      AttentionShape s{};
      s.batch = 1;
      s.heads = 2;
      s.heads_kv = heads_kv;
      s.seqlen_q = 5;
      s.seqlen_k = 7;
      s.head_dim = 4;
      s.causal = causal;
      s.dtype = DType::fp32;
      s.scale = 0.7f;
      const std::size_t nq = 5 * 2 * 4, nk = 7 * static_cast<std::size_t>(heads_kv) * 4;
      std::mt19937_64 rng(7);
      std::normal_distribution<double> nd;
      std::vector<double> q(nq), k(nk), v(nk), dout(nq);
      for (auto* t : {&q, &k, &v, &dout})
        for (double& x : *t) x = nd(rng);
      auto forward = [&](std::vector<double>& o, std::vector<double>& lse) {
        o.assign(nq, 0);
        lse.assign(2 * 5, 0);
        std::vector<double> scratch;
        for (std::int64_t h = 0; h < 2; ++h)
          for (std::int64_t i = 0; i < 5; ++i)
            attention_row<double>(s, q.data(), k.data(), v.data(), 0, h, i, o.data() + (i * 2 + h) * 4,
                                  lse.data() + h * 5 + i, scratch);
      };
      auto loss = [&] {
        std::vector<double> o, lse;
        forward(o, lse);
        double l = 0;
        for (std::size_t e = 0; e < nq; ++e) l += dout[e] * o[e];
        return l;
      };
      std::vector<double> o, lse, dq(nq), dk(nk, 0), dv(nk, 0);
      forward(o, lse);
      for (std::int64_t h = 0; h < 2; ++h)
        attention_backward_head<double, double>(s, q.data(), k.data(), v.data(), o.data(), dout.data(), lse.data(), 0,
                                                h, dq.data(), dk.data(), dv.data());
      const double eps = 1e-5;
      double worst = 0;
      auto check = [&](std::vector<double>& x, const std::vector<double>& g) {
        for (std::size_t e = 0; e < x.size(); ++e) {
          const double keep = x[e];
          x[e] = keep + eps;
          const double up = loss();
          x[e] = keep - eps;
          const double down = loss();
          x[e] = keep;
          worst = std::max(worst, std::fabs((up - down) / (2 * eps) - g[e]));
        }
      };
      check(q, dq);
      check(k, dk);
      check(v, dv);
      EXPECT_LT(worst, 1e-7) << "causal " << causal << " heads_kv " << heads_kv;
      // a causal row past every key (seqlen_q > seqlen_k) gets dQ = 0; here sq < sk, so every row sees a key
      if (causal) EXPECT_NE(dq[0], 0.0);
    }
}

TEST(AttentionBackwardReference, ValidatesOnTheHost) {
  auto host = make_host_backend({});
  const Op& op = attention_backward_op();
  const auto* impl = Registry::instance().find("attention_backward", "reference", BackendKind::host);
  ASSERT_NE(impl, nullptr);
  struct Shape {
    std::int64_t heads, heads_kv, sq, sk, d;
    bool causal;
    const char* dtype;
  };
  for (const Shape& sh : {Shape{4, 4, 33, 33, 64, false, "bf16"}, Shape{4, 2, 17, 70, 64, true, "fp16"},
                          Shape{4, 1, 70, 17, 128, true, "bf16"}, Shape{2, 1, 1, 5, 64, false, "fp32"}}) {
    const Point p = point_with(op, "reference",
                               {{"batch", I(2)},
                                {"heads", sh.heads},
                                {"heads_kv", sh.heads_kv},
                                {"seqlen_q", sh.sq},
                                {"seqlen_k", sh.sk},
                                {"head_dim", sh.d},
                                {"causal", sh.causal},
                                {"dtype", std::string(sh.dtype)}});
    ASSERT_EQ(op.check(p, 1), "");
    Context ctx{*host, test::comm(), 11};
    ASSERT_EQ(impl->can_implement(p, ctx), "") << op.describe(p);
    auto c = impl->prepare(p, ctx);
    const Validation v = c->validate();
    EXPECT_TRUE(v.ok) << op.describe(p) << ": " << v.detail;
    EXPECT_LT(v.error, 1e-5) << v.detail;
    EXPECT_NE(v.detail.find("dK"), std::string::npos) << v.detail;
  }
  // graph, varlen and too much work are refused with the reason
  Context ctx{*host, test::comm(), 1};
  EXPECT_NE(impl->can_implement(point_with(op, "reference", {{"mode", std::string("graph")}}), ctx), "");
  EXPECT_NE(impl->can_implement(point_with(op, "reference", {{"varlen", true}}), ctx), "");
  EXPECT_NE(impl->can_implement(point_with(op, "reference", {{"seqlen_q", I(16384)}}), ctx).find("limit"),
            std::string::npos);
}

// The validator fails a wrong gradient, an unwritten element and a wrong LSE input.
TEST(AttentionBackwardValidate, CatchesWrongAndUnwrittenGradients) {
  AttentionShape s{};
  s.batch = 2;
  s.heads = 4;
  s.heads_kv = 2;
  s.seqlen_q = 9;
  s.seqlen_k = 12;
  s.head_dim = 8;
  s.causal = true;
  s.dtype = DType::bf16;
  s.scale = 0.35f;
  attention_backward::HostBackwardData d;
  d.shape = s;
  d.len_q = {9, 9};
  d.len_k = {12, 12};
  d.start_q = attention_backward::backward_starts(d.len_q, 9, false);
  d.start_k = attention_backward::backward_starts(d.len_k, 12, false);
  const std::size_t nq = 2 * 9 * 4 * 8, nk = 2 * 12 * 2 * 8;
  std::mt19937_64 rng(3);
  std::normal_distribution<float> nd;
  for (auto* t : {&d.q, &d.o, &d.dout}) t->resize(nq);
  for (auto* t : {&d.k, &d.v}) t->resize(nk);
  for (auto* t : {&d.q, &d.k, &d.v, &d.dout})
    for (float& x : *t) x = nd(rng);
  std::vector<float> lse(2 * 4 * 9), scratch;
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t h = 0; h < 4; ++h)
      for (std::int64_t i = 0; i < 9; ++i)
        attention_row<float>(s, d.q.data(), d.k.data(), d.v.data(), b, h, i, d.o.data() + ((b * 9 + i) * 4 + h) * 8,
                             lse.data() + (b * 4 + h) * 9 + i, scratch);
  d.lse = lse;
  d.dq.assign(nq, 0);
  d.dk.assign(nk, 0);
  d.dv.assign(nk, 0);
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t h = 0; h < 4; ++h)
      attention_backward_head<float, float>(s, d.q.data(), d.k.data(), d.v.data(), d.o.data(), d.dout.data(),
                                            lse.data(), b, h, d.dq.data(), d.dk.data(), d.dv.data());
  Validation v = attention_backward::validate_backward(d, 1);
  ASSERT_TRUE(v.ok) << v.detail;
  // dV of the last key row of a sequence off by 0.5 (its values are of order 1; the last row is always sampled)
  auto bad = d;
  for (int x = 0; x < 8; ++x) bad.dv[static_cast<std::size_t>(((0 * 12 + 11) * 2 + 1) * 8 + x)] += 0.5f;
  v = attention_backward::validate_backward(bad, 1);
  EXPECT_FALSE(v.ok) << v.detail;
  // an unwritten dK element
  bad = d;
  bad.dk[100] = std::nanf("");
  v = attention_backward::validate_backward(bad, 1);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("not written"), std::string::npos) << v.detail;
  // a wrong LSE input
  bad = d;
  for (float& x : bad.lse) x += 0.5f;
  v = attention_backward::validate_backward(bad, 1);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("LSE"), std::string::npos) << v.detail;
}

TEST(AttentionBackwardOp, CudaImplementationsAreRegistered) {
  auto& r = Registry::instance();
  for (const char* impl : {"unfused", "cudnn", "fa2"})
    EXPECT_NE(r.find("attention_backward", impl, BackendKind::cuda), nullptr) << impl;
}

}  // namespace
}  // namespace genbench
