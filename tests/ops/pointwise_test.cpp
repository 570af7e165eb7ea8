// The pointwise op (ops/pointwise): its axes and byte counts, the shared check of sampled rows
// (kernels/pointwise/common) against values written out here, the backward kinds' fp32 row math
// and double reference against finite differences of the forward, and the host reference
// validating every kind at both dtypes, with rows and widths that are not multiples of 8.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "kernels/pointwise/common/pointwise_reference.h"
#include "ops/fill.h"
#include "ops/implementation.h"
#include "ops/pointwise/pointwise.h"
#include "support/points.h"
#include "support/test_env.h"

namespace genbench {
namespace {

using test::point_with;
using M = std::map<std::string, AxisValue>;
std::int64_t I(std::int64_t x) { return x; }

TEST(PointwiseOp, RegisteredWithItsBytes) {
  EXPECT_NE(Registry::instance().find("pointwise", "reference", BackendKind::host), nullptr);
  EXPECT_NE(Registry::instance().find("pointwise", "cuda", BackendKind::cuda), nullptr);
  const auto bytes = [](M m) { return PointwiseShape::from(point_with(pointwise_op(), "reference", m)).bytes(); };
  // rmsnorm 10 x 8 bf16: x and y (2 x 80 x 2 B) + the weights (8 x 2 B)
  EXPECT_DOUBLE_EQ(bytes({{"kind", std::string("rmsnorm")}, {"rows", I(10)}, {"hidden", I(8)}}), 336);
  EXPECT_DOUBLE_EQ(bytes({{"kind", std::string("add_rmsnorm")}, {"rows", I(10)}, {"hidden", I(8)}}), 656);
  EXPECT_DOUBLE_EQ(
      bytes({{"kind", std::string("silu_mul")}, {"rows", I(10)}, {"hidden", I(8)}, {"dtype", std::string("fp16")}}),
      480);
  EXPECT_DOUBLE_EQ(bytes({{"kind", std::string("embedding")}, {"rows", I(10)}, {"hidden", I(8)}}), 360);
  // rope: 10 rows of (2 + 1) heads of 4: Q|K in and out, 10 positions, 10 table rows of 4 floats
  EXPECT_DOUBLE_EQ(
      bytes({{"kind", std::string("rope")}, {"rows", I(10)}, {"heads", I(2)}, {"heads_kv", I(1)}, {"head_dim", I(4)}}),
      2.0 * 2 * 10 * 12 + 40 + 160);
  EXPECT_NE(pointwise_op().check(
                point_with(pointwise_op(), "reference", {{"kind", std::string("rope")}, {"head_dim", I(7)}}), 1),
            "");
  // the backward kinds, 10 x 8 bf16 (fp16 for silu_mul_backward); dw is fp32 (8 x 4 B)
  EXPECT_DOUBLE_EQ(bytes({{"kind", std::string("rmsnorm_backward")}, {"rows", I(10)}, {"hidden", I(8)}}),
                   2.0 * (3 * 80 + 8) + 32);  // x, dy in; dx out; w; dw
  EXPECT_DOUBLE_EQ(bytes({{"kind", std::string("add_rmsnorm_backward")}, {"rows", I(10)}, {"hidden", I(8)}}),
                   2.0 * (4 * 80 + 8) + 32);  // s, dy, dr_in in; dx out; w; dw
  EXPECT_DOUBLE_EQ(bytes({{"kind", std::string("silu_mul_backward")},
                          {"rows", I(10)},
                          {"hidden", I(8)},
                          {"dtype", std::string("fp16")}}),
                   2.0 * 5 * 80);  // g, u, dy in; dg, du out
  EXPECT_DOUBLE_EQ(bytes({{"kind", std::string("rope_backward")},
                          {"rows", I(10)},
                          {"heads", I(2)},
                          {"heads_kv", I(1)},
                          {"head_dim", I(4)}}),
                   2.0 * 2 * 10 * 12 + 40 + 160);
  // embedding_backward: dy and the ids in, the expected distinct ids' fp32 rows out
  const double touched = 500.0 * (1.0 - std::pow(499.0 / 500.0, 10));
  EXPECT_NEAR(
      bytes({{"kind", std::string("embedding_backward")}, {"rows", I(10)}, {"hidden", I(8)}, {"vocab", I(500)}}),
      2.0 * 80 + 40 + 4.0 * 8 * touched, 1e-9);
  PointwiseShape e;
  e.kind = PointwiseKind::embedding_backward;
  e.rows = 1000;
  e.vocab = 1;
  EXPECT_DOUBLE_EQ(e.touched_rows(), 1.0);  // every id the same row
  e.vocab = 1 << 24;
  EXPECT_NEAR(e.touched_rows(), 1000.0, 0.1);  // next to no repeats
  EXPECT_NE(
      pointwise_op().check(
          point_with(pointwise_op(), "reference", {{"kind", std::string("rope_backward")}, {"head_dim", I(7)}}), 1),
      "");
  EXPECT_EQ(pointwise_op().check(
                point_with(pointwise_op(), "reference", {{"kind", std::string("silu_mul")}, {"head_dim", I(7)}}), 1),
            "");
}

TEST(PointwiseReference, TableIdsAndRowsFollowTheirDefinitions) {
  std::vector<float> c, s;
  pointwise::rope_table(8, c, s);
  ASSERT_EQ(c.size(), static_cast<std::size_t>(PointwiseShape::kPositions * 4));
  const std::int64_t p = 1234, i = 3;
  const double angle = p * std::pow(PointwiseShape::kTheta, -2.0 * i / 8);
  EXPECT_FLOAT_EQ(c[p * 4 + i], static_cast<float>(std::cos(angle)));
  EXPECT_FLOAT_EQ(s[p * 4 + i], static_cast<float>(std::sin(angle)));
  EXPECT_FLOAT_EQ(c[0], 1.0f);
  for (std::int64_t r = 0; r < 1000; ++r) {
    const auto id = pointwise::token_id(9, r, 50);
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 50);
  }
  EXPECT_EQ(
      (pointwise::position(9, 1) - pointwise::position(9, 0) + PointwiseShape::kPositions) % PointwiseShape::kPositions,
      1);
  EXPECT_EQ(pointwise::sample_rows(5).size(), 5u);
  const auto big = pointwise::sample_rows(1000);
  EXPECT_EQ(big.size(), 48u);
  EXPECT_EQ(big.front(), 0);
  EXPECT_EQ(big.back(), 999);
}

// The check against outputs computed here: right ones pass, a wrong value or a NaN fails.
TEST(PointwiseReference, CheckFailsOnAWrongValueOrNaN) {
  PointwiseShape s;
  s.kind = PointwiseKind::rmsnorm;
  s.hidden = 2;
  s.rows = 1;
  pointwise::Sample x;
  x.in_a = {3.0f, 4.0f};  // mean square 12.5
  const double inv = 1.0 / std::sqrt(12.5 + PointwiseShape::kEps);
  x.out_a = {static_cast<float>(3 * inv * 2), static_cast<float>(4 * inv * 0.5)};
  const std::vector<float> w = {2.0f, 0.5f};
  EXPECT_TRUE(pointwise::check_samples(s, w, {x}).ok);
  auto bad = x;
  bad.out_a[1] *= 1.01f;
  EXPECT_FALSE(pointwise::check_samples(s, w, {bad}).ok);
  bad.out_a[1] = std::nanf("");
  const auto v = pointwise::check_samples(s, w, {bad});
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("NaN"), std::string::npos) << v.detail;
  // add_rmsnorm: the residual written back must be the rounded sum exactly
  s.kind = PointwiseKind::add_rmsnorm;
  pointwise::Sample a;
  a.in_a = {1.0f, 2.0f};
  a.in_b = {2.0f, 2.0f};  // s = 3, 4
  a.out_a = x.out_a;
  a.out_b = {3.0f, 4.0f};
  EXPECT_TRUE(pointwise::check_samples(s, w, {a}).ok) << pointwise::check_samples(s, w, {a}).detail;
  a.out_b[0] = 3.015625f;  // the next bf16 above 3
  EXPECT_FALSE(pointwise::check_samples(s, w, {a}).ok);
  // silu_mul and rope, one row each
  s.kind = PointwiseKind::silu_mul;
  s.hidden = 1;
  pointwise::Sample g;
  g.in_a = {1.0f, 3.0f};
  g.out_a = {static_cast<float>(1.0 / (1.0 + std::exp(-1.0)) * 3.0)};
  EXPECT_TRUE(pointwise::check_samples(s, {}, {g}).ok);
  g.out_a[0] = -g.out_a[0];
  EXPECT_FALSE(pointwise::check_samples(s, {}, {g}).ok);
  s.kind = PointwiseKind::rope;
  s.head_dim = 2;
  pointwise::Sample q;
  q.in_a = {1.0f, 0.0f};
  q.in_b = {0.0f, 1.0f};  // cos 0, sin 1: (x1, x2) -> (-x2, x1)
  q.out_a = {0.0f, 1.0f};
  EXPECT_TRUE(pointwise::check_samples(s, {}, {q}).ok);
  q.out_a = {1.0f, 0.0f};
  EXPECT_FALSE(pointwise::check_samples(s, {}, {q}).ok);
}

// The backward kinds against finite differences of the forward, on tiny shapes: the fp32 row
// math the host reference runs (kernels/pointwise/common) and the double reference validations
// use (check_samples, check_weight_grad). The forward is written out here in double; the loss is
// sum(dy * forward), so its gradient is what each backward kind computes.
namespace fd {

std::vector<float> normals(std::uint64_t seed, std::size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * random_normal(seed, i);
  return v;
}

std::vector<double> wide(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// The gradient of f at v by central differences, in double.
std::vector<double> gradient(std::vector<double> v, const std::function<double(const std::vector<double>&)>& f) {
  std::vector<double> g(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double at = v[i], step = 1e-6 * std::max(1.0, std::fabs(at));
    v[i] = at + step;
    const double up = f(v);
    v[i] = at - step;
    const double down = f(v);
    v[i] = at;
    g[i] = (up - down) / (2 * step);
  }
  return g;
}

// The worst |got - want| / (|want| + 1e-2 x mean |want|).
template <typename V>
double error(const V& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double mean = 0, worst = 0;
  for (double w : want) mean += std::fabs(w);
  mean /= static_cast<double>(want.size());
  for (std::size_t i = 0; i < want.size() && i < got.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]) / (std::fabs(want[i]) + 1e-2 * mean));
  return worst;
}

std::vector<float> narrow(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// y = x / sqrt(mean(x^2) + eps) * w of one row.
std::vector<double> rmsnorm(const std::vector<double>& x, const std::vector<double>& w) {
  double ss = 0;
  for (double e : x) ss += e * e;
  const double inv = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + PointwiseShape::kEps);
  std::vector<double> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * w[i];
  return y;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

std::vector<double> slice(const std::vector<double>& v, std::size_t at, std::size_t n) {
  return {v.begin() + static_cast<std::ptrdiff_t>(at), v.begin() + static_cast<std::ptrdiff_t>(at + n)};
}

constexpr double kRowMath = 1e-4;  // fp32 row math against double differences

}  // namespace fd

TEST(PointwiseBackward, RmsnormMatchesFiniteDifferences) {
  const std::int64_t rows = 3, h = 5;
  const auto x = fd::normals(11, rows * h), w = fd::normals(12, h), dy = fd::normals(13, rows * h);
  const auto xd = fd::wide(x), wd = fd::wide(w), dyd = fd::wide(dy);
  std::vector<float> dx(static_cast<std::size_t>(rows * h)), dw(static_cast<std::size_t>(h), 0.0f);
  for (std::int64_t r = 0; r < rows; ++r)
    pointwise::rmsnorm_backward_row(h, x.data() + r * h, w.data(), dy.data() + r * h, nullptr, dx.data() + r * h,
                                    dw.data());
  PointwiseShape s;
  s.kind = PointwiseKind::rmsnorm_backward;
  s.rows = rows;
  s.hidden = h;
  s.dtype = DType::fp16;
  std::vector<pointwise::Sample> samples;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto loss = [&](const std::vector<double>& xr) {
      return fd::dot(fd::slice(dyd, r * h, h), fd::rmsnorm(xr, wd));
    };
    const auto want = fd::gradient(fd::slice(xd, r * h, h), loss);
    const std::vector<float> got(dx.begin() + r * h, dx.begin() + (r + 1) * h);
    EXPECT_LE(fd::error(got, want), fd::kRowMath) << "dx of row " << r;
    pointwise::Sample one;
    one.row = r;
    one.in_a.assign(x.begin() + r * h, x.begin() + (r + 1) * h);
    one.in_b.assign(dy.begin() + r * h, dy.begin() + (r + 1) * h);
    one.out_a = fd::narrow(want);
    samples.push_back(one);
  }
  // dw: the loss of every row against w
  const auto loss_w = [&](const std::vector<double>& wv) {
    double l = 0;
    for (std::int64_t r = 0; r < rows; ++r)
      l += fd::dot(fd::slice(dyd, r * h, h), fd::rmsnorm(fd::slice(xd, r * h, h), wv));
    return l;
  };
  const auto want_dw = fd::gradient(wd, loss_w);
  EXPECT_LE(fd::error(dw, want_dw), fd::kRowMath);
  // the validations' double reference agrees with the differences, and fails a wrong dx or dw
  const auto v = pointwise::check_samples(s, w, samples);
  EXPECT_TRUE(v.ok) << v.detail;
  auto wrong = samples;
  wrong[1].out_a[2] += 0.01f * (std::fabs(wrong[1].out_a[2]) + 0.1f);
  EXPECT_FALSE(pointwise::check_samples(s, w, wrong).ok);
  std::vector<float> dw_read = fd::narrow(want_dw);
  const pointwise::ReadElements read = [&](pointwise::Buffer b, std::int64_t at, std::int64_t n) {
    const std::vector<float>& src = b == pointwise::Buffer::a ? x : b == pointwise::Buffer::b ? dy : dw_read;
    return std::vector<float>(src.begin() + at, src.begin() + at + n);
  };
  const auto g = pointwise::check_weight_grad(s, read);
  EXPECT_TRUE(g.ok) << g.detail;
  dw_read[3] *= 1.01f;
  EXPECT_FALSE(pointwise::check_weight_grad(s, read).ok);
  dw_read[3] = std::nanf("");
  const auto nan = pointwise::check_weight_grad(s, read);
  EXPECT_FALSE(nan.ok);
  EXPECT_NE(nan.detail.find("NaN"), std::string::npos) << nan.detail;
}

// s = x + r; y = rmsnorm(s); the loss sum(dy * y) + sum(dr_in * s), dr_in the gradient s gets
// from the residual path: its gradient against x and against r are the one dx.
TEST(PointwiseBackward, AddRmsnormMatchesFiniteDifferencesInBothInputs) {
  const std::int64_t h = 7;
  const auto sum = fd::normals(21, h), res = fd::normals(22, h), w = fd::normals(23, h), dy = fd::normals(24, h),
             dr = fd::normals(25, h);
  std::vector<double> xd(h);
  for (std::int64_t i = 0; i < h; ++i) xd[i] = static_cast<double>(sum[i]) - res[i];  // exact: s = x + r
  const auto rd = fd::wide(res), wd = fd::wide(w), dyd = fd::wide(dy), drd = fd::wide(dr);
  const auto loss = [&](const std::vector<double>& x, const std::vector<double>& r) {
    std::vector<double> s(h);
    for (std::int64_t i = 0; i < h; ++i) s[i] = x[i] + r[i];
    return fd::dot(dyd, fd::rmsnorm(s, wd)) + fd::dot(drd, s);
  };
  const auto by_x = fd::gradient(xd, [&](const std::vector<double>& x) { return loss(x, rd); });
  const auto by_r = fd::gradient(rd, [&](const std::vector<double>& r) { return loss(xd, r); });
  std::vector<float> dx(h), dw(h, 0.0f);
  pointwise::rmsnorm_backward_row(h, sum.data(), w.data(), dy.data(), dr.data(), dx.data(), dw.data());
  EXPECT_LE(fd::error(dx, by_x), fd::kRowMath);
  EXPECT_LE(fd::error(dx, by_r), fd::kRowMath);
  PointwiseShape s;
  s.kind = PointwiseKind::add_rmsnorm_backward;
  s.rows = 1;
  s.hidden = h;
  s.dtype = DType::fp16;
  pointwise::Sample one;
  one.in_a = sum;
  one.in_b = dy;
  one.in_c = dr;
  one.out_a = fd::narrow(by_x);
  EXPECT_TRUE(pointwise::check_samples(s, w, {one}).ok) << pointwise::check_samples(s, w, {one}).detail;
  one.in_c.assign(h, 0.0f);  // the residual's gradient left out
  EXPECT_FALSE(pointwise::check_samples(s, w, {one}).ok);
}

TEST(PointwiseBackward, RopeIsTheTransposedRotation) {
  const std::int64_t d = 6, half = d / 2, width = 3 * d, p = 777;
  std::vector<float> cos, sin;
  pointwise::rope_table(d, cos, sin);
  const auto q = fd::normals(31, width), dy = fd::normals(32, width);
  const auto dyd = fd::wide(dy);
  const float* c = cos.data() + p * half;
  const float* sn = sin.data() + p * half;
  const auto forward = [&](const std::vector<double>& x) {  // rotate-half by +angle
    std::vector<double> y(x.size());
    for (std::int64_t head = 0; head < width / d; ++head)
      for (std::int64_t i = 0; i < half; ++i) {
        const double x1 = x[head * d + i], x2 = x[head * d + half + i];
        y[head * d + i] = x1 * c[i] - x2 * sn[i];
        y[head * d + half + i] = x2 * c[i] + x1 * sn[i];
      }
    return y;
  };
  const auto want = fd::gradient(fd::wide(q), [&](const std::vector<double>& x) { return fd::dot(dyd, forward(x)); });
  std::vector<float> got = dy;
  pointwise::rope_backward_row(width, d, c, sn, got.data());
  EXPECT_LE(fd::error(got, want), fd::kRowMath);
  // the forward rotation is not its own gradient: the check can tell them apart
  const auto again = forward(dyd);
  EXPECT_GT(fd::error(again, want), 0.1);
  PointwiseShape s;
  s.kind = PointwiseKind::rope_backward;
  s.rows = 1;
  s.head_dim = d;
  s.dtype = DType::fp16;
  pointwise::Sample one;
  one.in_a = dy;
  one.in_b.assign(c, c + half);
  one.in_b.insert(one.in_b.end(), sn, sn + half);
  one.out_a = fd::narrow(want);
  EXPECT_TRUE(pointwise::check_samples(s, {}, {one}).ok) << pointwise::check_samples(s, {}, {one}).detail;
  one.out_a = fd::narrow(again);
  EXPECT_FALSE(pointwise::check_samples(s, {}, {one}).ok);
}

TEST(PointwiseBackward, SiluMulMatchesFiniteDifferences) {
  const std::int64_t h = 9;
  const auto x = fd::normals(41, 2 * h, 3.0f), dy = fd::normals(42, h);  // g out to about +-9: sigmoid's tails
  const auto dyd = fd::wide(dy);
  const auto loss = [&](const std::vector<double>& v) {
    double l = 0;
    for (std::int64_t i = 0; i < h; ++i) l += dyd[i] * v[i] / (1.0 + std::exp(-v[i])) * v[h + i];
    return l;
  };
  const auto want = fd::gradient(fd::wide(x), loss);
  std::vector<float> dx(2 * h);
  pointwise::silu_mul_backward_row(h, x.data(), dy.data(), dx.data());
  EXPECT_LE(fd::error(dx, want), fd::kRowMath);
  PointwiseShape s;
  s.kind = PointwiseKind::silu_mul_backward;
  s.rows = 1;
  s.hidden = h;
  s.dtype = DType::fp16;
  pointwise::Sample one;
  one.in_a = x;
  one.in_b = dy;
  one.out_a = fd::narrow(want);
  EXPECT_TRUE(pointwise::check_samples(s, {}, {one}).ok) << pointwise::check_samples(s, {}, {one}).detail;
  std::swap(one.out_a[0], one.out_a[h]);  // dg and du of an element swapped
  EXPECT_FALSE(pointwise::check_samples(s, {}, {one}).ok);
}

// y[r] = table[id[r]] with repeated ids: each table row's gradient is the sum of its tokens' dy.
TEST(PointwiseBackward, EmbeddingSumsRepeatedIds) {
  const std::int64_t rows = 9, h = 3, vocab = 4;
  const std::vector<std::int32_t> ids = {2, 0, 2, 3, 2, 0, 3, 3, 2};  // row 1 never named
  const auto dy = fd::normals(51, rows * h);
  const auto dyd = fd::wide(dy);
  const auto loss = [&](const std::vector<double>& table) {
    double l = 0;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t i = 0; i < h; ++i) l += dyd[r * h + i] * table[ids[r] * h + i];
    return l;
  };
  const auto want = fd::gradient(fd::wide(fd::normals(52, vocab * h)), loss);
  std::vector<float> table(vocab * h, 0.0f);
  for (std::int64_t r = 0; r < rows; ++r)
    pointwise::embedding_backward_row(h, dy.data() + r * h, table.data() + ids[r] * h);
  EXPECT_LE(fd::error(table, want), fd::kRowMath);
  EXPECT_EQ(table[1 * h], 0.0f);
  PointwiseShape s;
  s.kind = PointwiseKind::embedding_backward;
  s.rows = rows;
  s.hidden = h;
  s.vocab = vocab;
  s.dtype = DType::fp16;
  pointwise::Sample one;  // table row 2: rows 0, 2, 4 and 8
  for (std::int64_t r : {0, 2, 4, 8}) one.in_a.insert(one.in_a.end(), dy.begin() + r * h, dy.begin() + (r + 1) * h);
  one.out_a = fd::narrow(fd::slice(want, 2 * h, h));
  EXPECT_TRUE(pointwise::check_samples(s, {}, {one}).ok) << pointwise::check_samples(s, {}, {one}).detail;
  one.in_a.resize(3 * h);  // one repeat of the id left out
  EXPECT_FALSE(pointwise::check_samples(s, {}, {one}).ok);
}

TEST(PointwiseReference, EveryKindValidatesOnTheHost) {
  auto host = make_host_backend({});
  const auto* impl = Registry::instance().find("pointwise", "reference", BackendKind::host);
  ASSERT_NE(impl, nullptr);
  std::uint64_t seed = 40;
  for (const char* dtype : {"bf16", "fp16"})
    for (const char* kind : {"rmsnorm", "add_rmsnorm", "rope", "silu_mul", "embedding", "rmsnorm_backward",
                             "add_rmsnorm_backward", "rope_backward", "silu_mul_backward", "embedding_backward"})
      for (const std::int64_t rows : {1, 67})
        for (const std::int64_t width : {64, 1000, 37}) {
          const Point p = point_with(pointwise_op(), "reference",
                                     {{"kind", std::string(kind)},
                                      {"rows", I(rows)},
                                      {"hidden", I(width)},
                                      {"heads", I(3)},
                                      {"heads_kv", I(1)},
                                      {"head_dim", I(width % 2 ? width + 1 : width)},
                                      {"vocab", I(500)},
                                      {"dtype", std::string(dtype)}});
          Context ctx{*host, test::comm(), seed++};
          ASSERT_EQ(impl->can_implement(p, ctx), "") << pointwise_op().describe(p);
          auto c = impl->prepare(p, ctx);
          const Validation v = c->validate();
          EXPECT_TRUE(v.ok) << pointwise_op().describe(p) << ": " << v.detail;
          EXPECT_LE(v.error, v.tolerance);
          c->run();  // a timed iteration after the validation
        }
  // embedding_backward over a vocabulary of 3: nearly every id repeats
  for (const std::int64_t rows : {1, 70, 300}) {
    const Point p = point_with(
        pointwise_op(), "reference",
        {{"kind", std::string("embedding_backward")}, {"rows", I(rows)}, {"hidden", I(40)}, {"vocab", I(3)}});
    Context ctx{*host, test::comm(), seed++};
    auto c = impl->prepare(p, ctx);
    const Validation v = c->validate();
    EXPECT_TRUE(v.ok) << pointwise_op().describe(p) << ": " << v.detail;
  }
  const Point huge = point_with(pointwise_op(), "reference", {{"kind", std::string("embedding")}, {"hidden", I(8192)}});
  EXPECT_NE(impl->can_implement(huge, Context{*host, test::comm(), 1}).find("limit"), std::string::npos);
}

}  // namespace
}  // namespace genbench
