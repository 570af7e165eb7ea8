// The decode op on the host: its legality checks (one clear error each, before any device
// work), work counted by hand, seeded length and page draws, its description, and the host
// reference: validation passes and fails when it should, paged equals contiguous, and one row
// against a naive computation written out here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "backend/backend.h"
#include "kernels/decode/common/decode_reference.h"
#include "ops/decode/decode.h"
#include "ops/fill.h"
#include "ops/implementation.h"
#include "support/points.h"
#include "support/test_env.h"

namespace genbench {
namespace {

Point dpoint(const std::map<std::string, AxisValue>& v) { return test::point_with(decode_op(), "reference", v); }

std::string check_of(const std::map<std::string, AxisValue>& v) { return decode_op().check(dpoint(v), 1); }

TEST(DecodeOp, RegisteredWithItsImplementations) {
  ASSERT_EQ(find_op("decode"), &decode_op());
  EXPECT_NE(Registry::instance().find("decode", "reference", BackendKind::host), nullptr);
  EXPECT_NE(Registry::instance().find("decode", "fa3", BackendKind::cuda), nullptr);
  EXPECT_NE(Registry::instance().find("decode", "cudnn", BackendKind::cuda), nullptr);  // or its twin
  EXPECT_EQ(decode_op().check(dpoint({}), 1), "");
}

TEST(DecodeOp, BadInputGetsOneClearError) {
  EXPECT_NE(check_of({{"page_size", std::int64_t{48}}}).find("page_size 48 is not a power of two"), std::string::npos);
  EXPECT_NE(
      check_of({{"cache", std::int64_t{100}}, {"page_size", std::int64_t{128}}}).find("exceeds the cache length (100)"),
      std::string::npos);
  EXPECT_NE(check_of({{"cache", std::int64_t{0}}}).find("cache length must be at least 1"), std::string::npos);
  EXPECT_NE(check_of({{"heads", std::int64_t{12}}, {"heads_kv", std::int64_t{8}}})
                .find("heads (12) is not a multiple of heads_kv (8)"),
            std::string::npos);
  EXPECT_NE(check_of({{"cache", std::int64_t{4}}, {"new_tokens", std::int64_t{5}}}).find("exceeds the cache length"),
            std::string::npos);
  // 256 sequences x 128K keys x 8 KV heads x 128 x 2 bytes x K and V: 137 GB.
  const std::string pool = check_of({{"batch", std::int64_t{256}}, {"cache", std::int64_t{131072}}});
  EXPECT_NE(pool.find("the K and V pools need 137 GB, over the limit of 100 GB"), std::string::npos) << pool;
  EXPECT_EQ(
      check_of({{"batch", std::int64_t{256}}, {"cache", std::int64_t{131072}}, {"kv_dtype", std::string("fp8_e4m3")}}),
      "");
  EXPECT_NE(check_of({{"dtype", std::string("fp16")}, {"kv_dtype", std::string("bf16")}}).find("must match"),
            std::string::npos);
  EXPECT_EQ(check_of({{"dtype", std::string("fp16")}, {"kv_dtype", std::string("fp8_e4m3")}}), "");
  EXPECT_EQ(check_of({{"page_size", std::int64_t{16}}}), "");
}

TEST(DecodeOp, WorkCountedByHand) {
  const Point p = dpoint({{"batch", std::int64_t{2}},
                          {"heads", std::int64_t{4}},
                          {"heads_kv", std::int64_t{2}},
                          {"head_dim", std::int64_t{64}},
                          {"new_tokens", std::int64_t{3}},
                          {"cache", std::int64_t{100}},
                          {"page_size", std::int64_t{16}}});
  const Work w = decode_op().work(p, 1);
  // K and V: 2 x 2 sequences x 100 keys x 2 KV heads x 64 x 2 bytes; Q and O: 2 x 3 x 4 x 64 x 2
  // each; the block table: 2 sequences x ceil(100 / 16) = 7 pages x 4 bytes.
  EXPECT_DOUBLE_EQ(w.bytes, 102400.0 + 3072 + 3072 + 56);
  // Causal among 3 new tokens: they see 98, 99 and 100 keys; 4 x heads x d x pairs x sequences.
  EXPECT_DOUBLE_EQ(w.flops, 4.0 * 4 * 64 * (98 + 99 + 100) * 2);
  EXPECT_DOUBLE_EQ(w.tokens, 6.0);
  // fp8 K/V: one byte each; contiguous: no table.
  Point q = p;
  q.values[decode_axis::kv_dtype] = std::string("fp8_e4m3");
  q.values[decode_axis::page_size] = std::int64_t{0};
  q.values[decode_axis::causal] = std::int64_t{0};
  const Work w8 = decode_op().work(q, 1);
  EXPECT_DOUBLE_EQ(w8.bytes, 51200.0 + 3072 + 3072);
  EXPECT_DOUBLE_EQ(w8.flops, 4.0 * 4 * 64 * 300 * 2);
  const auto metrics = decode_op().metrics();
  ASSERT_EQ(metrics.size(), 3u);
  EXPECT_EQ(metrics[0].name, "GBps");
  EXPECT_DOUBLE_EQ(metric_value(metrics[0], w, 1e-6), w.bytes / 1e-6 / 1e9);
  EXPECT_EQ(metrics[1].name, "tflops");
  EXPECT_EQ(metrics[2].name, "tokens_per_s");
  EXPECT_DOUBLE_EQ(metric_value(metrics[2], w, 1e-3), 6000.0);
  EXPECT_EQ(decode_op().ceiling(p), ceilings::copy());
  EXPECT_EQ(decode_op().ceiling(p).name, "copy_GBps");
}

TEST(DecodeOp, VarlenLengthsAreSeededAndBounded) {
  const Point p = dpoint({{"batch", std::int64_t{64}},
                          {"cache", std::int64_t{1001}},
                          {"new_tokens", std::int64_t{4}},
                          {"varlen", std::int64_t{1}}});
  const auto s = DecodeShape::from(p);
  const auto a = s.lengths(0), b = s.lengths(0), c = s.lengths(1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::set<std::int64_t> distinct(a.begin(), a.end());
  EXPECT_GT(distinct.size(), 10u);
  for (auto L : a) {
    EXPECT_GE(L, 501);
    EXPECT_LE(L, 1001);
  }
  // The effective columns follow the drawn lengths.
  const auto eff = decode_op().values(p, 1, Work{}, 0, {});  // effective columns first
  std::int64_t total = 0;
  for (auto L : a) total += L;
  EXPECT_EQ(std::get<std::int64_t>(eff[1]), total);
  EXPECT_EQ(std::get<std::int64_t>(eff[2]), *std::min_element(a.begin(), a.end()));
  // Short caches: no length below the new tokens.
  decode::DecodeDims d;
  d.batch = 50;
  d.cache = 5;
  d.new_tokens = 4;
  d.varlen = true;
  for (auto L : decode::cache_lengths(d)) EXPECT_GE(L, 4);
}

TEST(DecodeOp, BlockTableIsASeededPermutationOfThePool) {
  decode::DecodeDims d;
  d.batch = 5;
  d.cache = 1000;
  d.page_size = 64;
  const auto t = decode::block_table(d, 7);
  ASSERT_EQ(static_cast<std::int64_t>(t.size()), 5 * 16);
  std::vector<std::int32_t> sorted = t;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], static_cast<std::int32_t>(i));
  int in_place = 0;
  for (std::size_t i = 0; i < t.size(); ++i) in_place += t[i] == static_cast<std::int32_t>(i);
  EXPECT_LT(in_place, 10);  // scattered, not the identity
  EXPECT_EQ(t, decode::block_table(d, 7));
  EXPECT_NE(t, decode::block_table(d, 8));
  d.page_size = 0;
  EXPECT_EQ(decode::block_table(d, 7), (std::vector<std::int32_t>{0, 1, 2, 3, 4}));
}

TEST(DecodeOp, DescriptionDeclaresThePlotAgainstCacheWithTheCopyCeiling) {
  const auto j = nlohmann::json::parse(decode_op().description_json());
  EXPECT_EQ(j.at("op"), "decode");
  EXPECT_EQ(j.at("headline"), "GBps");
  EXPECT_EQ(j.at("metrics")[0].at("unit"), "GB/s");
  EXPECT_EQ(j.at("plot").at("x"), "cache");
  EXPECT_EQ(j.at("plot").at("ceiling_line"), "copy_GBps");
  EXPECT_EQ(j.at("compare").at("metric"), "GBps");
  const std::string text =
      decode_op().describe(dpoint({{"page_size", std::int64_t{16}}, {"kv_dtype", std::string("fp8_e4m3")}}));
  EXPECT_NE(text.find("kv=fp8_e4m3"), std::string::npos) << text;
  EXPECT_NE(text.find("page=16"), std::string::npos) << text;
}

// Small problems of the host reference's data layout, filled with rounded normal draws.
decode::HostDecodeData host_problem(std::int64_t page, DType kv, std::int64_t n, bool causal) {
  decode::HostDecodeData x;
  x.dims.batch = 3;
  x.dims.heads = 6;
  x.dims.heads_kv = 2;
  x.dims.head_dim = 64;
  x.dims.new_tokens = n;
  x.dims.cache = 150;
  x.dims.page_size = page;
  x.dims.varlen = true;
  x.dims.causal = causal;
  x.q_dtype = DType::bf16;
  x.kv_dtype = kv;
  x.scale = 0.125f;
  x.lengths = decode::cache_lengths(x.dims);
  x.table = decode::block_table(x.dims, 3);
  x.q.resize(static_cast<std::size_t>(3 * n * 6 * 64));
  fill_random(x.q, 11, DType::bf16);
  x.k.resize(static_cast<std::size_t>(x.dims.pool_elements()));
  x.v.resize(x.k.size());
  fill_random(x.k, 12, kv);
  fill_random(x.v, 13, kv);
  return x;
}

TEST(DecodeReference, RowMatchesANaiveComputation) {
  decode::HostDecodeData x = host_problem(16, DType::bf16, 3, true);
  const auto& d = x.dims;
  for (std::int64_t b : {0, 2})
    for (std::int64_t i : {0, 2})
      for (std::int64_t h : {0, 5}) {
        // Naive: gather sequence b's keys through its page list, softmax in double.
        const std::int64_t L = x.lengths[static_cast<std::size_t>(b)], visible = L - 3 + i + 1, hk = h / 3;
        std::vector<double> s(static_cast<std::size_t>(visible)), out(64, 0.0);
        const float* q = x.q.data() + ((b * 3 + i) * 6 + h) * 64;
        for (std::int64_t j = 0; j < visible; ++j) {
          const std::int64_t page = x.table[static_cast<std::size_t>(b * d.pages_per_seq() + j / 16)];
          const float* k = x.k.data() + ((page * 16 + j % 16) * 2 + hk) * 64;
          double dot = 0;
          for (int c = 0; c < 64; ++c) dot += static_cast<double>(q[c]) * k[c];
          s[static_cast<std::size_t>(j)] = 0.125 * dot;
        }
        const double mx = *std::max_element(s.begin(), s.end());
        double sum = 0;
        for (std::int64_t j = 0; j < visible; ++j) {
          const std::int64_t page = x.table[static_cast<std::size_t>(b * d.pages_per_seq() + j / 16)];
          const float* v = x.v.data() + ((page * 16 + j % 16) * 2 + hk) * 64;
          const double p = std::exp(s[static_cast<std::size_t>(j)] - mx);
          sum += p;
          for (int c = 0; c < 64; ++c) out[static_cast<std::size_t>(c)] += p * v[c];
        }
        std::vector<double> ref(64);
        double lse = 0;
        decode::reference_row(x, b, i, h, ref.data(), &lse);
        for (int c = 0; c < 64; ++c)
          EXPECT_NEAR(ref[static_cast<std::size_t>(c)], out[static_cast<std::size_t>(c)] / sum, 1e-12);
        EXPECT_NEAR(lse, mx + std::log(sum), 1e-12);
      }
}

TEST(DecodeReference, ValidationPassesTheModelAndFailsAWrongOutput) {
  for (DType kv : {DType::bf16, DType::fp8_e4m3}) {
    decode::HostDecodeData x = host_problem(16, kv, 2, true);
    if (kv == DType::fp8_e4m3) x.q_dtype = DType::bf16;
    decode::compute_all(x);
    const auto ok = decode::validate_decode(x, 5);
    EXPECT_TRUE(ok.ok) << ok.detail;
    EXPECT_LE(ok.error, ok.tolerance);
    // One element off by 0.05 (well over the bound of a few 1e-3), a NaN, a wrong LSE.
    auto wrong = x;
    wrong.o[static_cast<std::size_t>(7)] += 0.05f;  // batch 0, token 0, head 0: always sampled
    EXPECT_FALSE(decode::validate_decode(wrong, 5).ok);
    auto unwritten = x;
    unwritten.o.back() = std::nanf("");
    const auto u = decode::validate_decode(unwritten, 5);
    EXPECT_FALSE(u.ok);
    EXPECT_NE(u.detail.find("NaN"), std::string::npos);
    auto lse = x;
    lse.lse[0] += 0.01f;
    EXPECT_FALSE(decode::validate_decode(lse, 5).ok);
  }
}

TEST(DecodeReference, PagedEqualsContiguousOnTheSameData) {
  for (std::int64_t page : {16, 64, 128}) {
    decode::HostDecodeData paged = host_problem(page, DType::bf16, 3, true);
    decode::compute_all(paged);
    decode::HostDecodeData flat = paged;
    flat.dims.page_size = 0;
    flat.table = decode::block_table(flat.dims, 0);
    flat.k = decode::to_contiguous(paged.dims, paged.table, paged.k);
    flat.v = decode::to_contiguous(paged.dims, paged.table, paged.v);
    decode::compute_all(flat);
    EXPECT_EQ(paged.o, flat.o) << "page " << page;
    EXPECT_EQ(paged.lse, flat.lse) << "page " << page;
  }
}

TEST(DecodeReference, HostImplementationValidatesEachLayoutAndKvType) {
  auto host = make_host_backend({});
  const Implementation* im = Registry::instance().find("decode", "reference", BackendKind::host);
  ASSERT_NE(im, nullptr);
  std::uint64_t seed = 40;
  for (std::int64_t page : {0, 16, 64})
    for (const char* kv : {"same", "fp8_e4m3"})
      for (std::int64_t n : {1, 4}) {
        const Point p = dpoint({{"batch", std::int64_t{3}},
                                {"heads", std::int64_t{8}},
                                {"heads_kv", std::int64_t{2}},
                                {"head_dim", std::int64_t{64}},
                                {"new_tokens", n},
                                {"cache", std::int64_t{257}},
                                {"page_size", page},
                                {"varlen", std::int64_t{1}},
                                {"kv_dtype", std::string(kv)}});
        Context ctx{*host, test::comm(), seed++};
        ASSERT_EQ(im->can_implement(p, ctx), "");
        auto c = im->prepare(p, ctx);
        const Validation v = c->validate();
        EXPECT_TRUE(v.ok) << decode_op().describe(p) << ": " << v.detail;
        if (page > 0) {
          EXPECT_NE(v.detail.find("paged vs contiguous layout of the same data: 0 of"), std::string::npos) << v.detail;
        }
        c->run();
      }
  const Point graph = dpoint({{"mode", std::string("graph")}});
  Context ctx{*host, test::comm(), 1};
  EXPECT_EQ(im->can_implement(graph, ctx), "graph mode needs the cuda backend");
}

}  // namespace
}  // namespace genbench
