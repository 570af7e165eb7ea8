// Pieces of the fa3 fp8 path: the V^T key permutation against the wgmma register layouts
// (written out here from the PTX ISA independently of the kernel), the V^T pre-pass on the
// device byte for byte (skipped without a Hopper GPU), the e4m3 rounding the validation uses
// against CUDA's own conversion, and the fp8 validation model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "kernels/attention/common/attention_validate.h"
#include "ops/dtype.h"
#include "ops/fill.h"
#ifdef GENBENCH_HAVE_CUDA
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <random>

#include "backend/cuda/check.h"
#include "kernels/attention/fa3_sm90/fa3_fp8_sm90.h"
#include "support/test_env.h"
#endif

namespace genbench {
namespace {

#ifdef GENBENCH_HAVE_CUDA
TEST(Fa3Fp8Layout, VtKeyPermutationIsAPermutationOfEachGroup) {
  std::set<int> keys;
  for (int p = 0; p < 16; ++p) {
    const int k = fa3::fp8::vt_key_at(p);
    EXPECT_GE(k, 0);
    EXPECT_LT(k, 16);
    keys.insert(k);
  }
  EXPECT_EQ(keys.size(), 16u);
  // Position -> key as listed in the kernel's comment.
  const int expected[16] = {0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15};
  for (int p = 0; p < 16; ++p) EXPECT_EQ(fa3::fp8::vt_key_at(p), expected[p]) << "position " << p;
}

// For every lane and every byte of the four A registers of one m64nNk32 step: the accumulator
// element the kernel packs there (p_pack_source) must be P of the same row, and of the key that
// V^T holds at that byte's k position.
TEST(Fa3Fp8Layout, PackedAccumulatorIsTheAFragmentOfPermutedKeys) {
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int r = 0; r < 4; ++r)
      for (int j = 0; j < 4; ++j) {
        // PTX ISA, wgmma m64nNk32 A fragment (8-bit): a0..a3 row g, k 4t..4t+3; a4..a7 row g+8;
        // a8..a11 row g, k 16+4t..; a12..a15 row g+8, k 16+4t..
        const int a_row = (r % 2) ? g + 8 : g;
        const int a_k = 4 * t + j + 16 * (r / 2);
        // PTX ISA, wgmma fp32 accumulator: d[4i + e], row g (+8 for e >= 2), column 8i + 2t + e % 2.
        const int acc = fa3::fp8::p_pack_source(r, j);
        ASSERT_GE(acc, 0);
        ASSERT_LT(acc, 16);
        const int i = acc / 4, e = acc % 4;
        const int d_row = e >= 2 ? g + 8 : g;
        const int d_col = 8 * i + 2 * t + e % 2;
        EXPECT_EQ(a_row, d_row) << "lane " << lane << " reg " << r << " byte " << j;
        const int key_at_k = 16 * (a_k / 16) + fa3::fp8::vt_key_at(a_k % 16);
        EXPECT_EQ(key_at_k, d_col) << "lane " << lane << " reg " << r << " byte " << j;
      }
  }
}

TEST(Fa3Fp8Layout, VtScratchIsPaddedToWholeKeyBlocks) {
  EXPECT_EQ(fa3::fp8::vt_bytes(2, 3, 128, 1), 2u * 3u * 128u * 128u);
  EXPECT_EQ(fa3::fp8::vt_bytes(1, 1, 256, 128), 256u * 128u);
  EXPECT_EQ(fa3::fp8::vt_bytes(1, 1, 256, 129), 256u * 256u);
}

// The V^T pre-pass on the device, byte for byte against the layout written out here: random
// bytes in, V^T poisoned first (so the zeros past seqlen_k must be written), key counts that are
// and are not multiples of the 128-key padding, one and several (batch, head) pairs.
TEST(Fa3Fp8Layout, TransposePassWritesPermutedVtExactly) {
  if (!test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  int dev = 0, major = 0;
  GENBENCH_CHECK_CUDA(cudaGetDevice(&dev));
  GENBENCH_CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  if (major != 9) GTEST_SKIP() << "the fa3 fp8 path is built for compute capability 9.0";
  struct Shape {
    int batch, seqlen_k, heads_kv, d;
  };
  std::mt19937 rng(20261201);
  for (const Shape s : {Shape{2, 1000, 3, 128}, Shape{1, 129, 1, 256}, Shape{3, 256, 2, 128}, Shape{1, 1, 2, 256}}) {
    const std::size_t n_v = static_cast<std::size_t>(s.batch) * s.seqlen_k * s.heads_kv * s.d;
    const std::size_t n_vt = fa3::fp8::vt_bytes(s.batch, s.heads_kv, s.d, s.seqlen_k);
    const int sk_pad = static_cast<int>(n_vt / (static_cast<std::size_t>(s.batch) * s.heads_kv * s.d));
    std::vector<std::uint8_t> v(n_v), vt(n_vt, 0xa5);
    for (auto& x : v) x = static_cast<std::uint8_t>(rng());
    void *dv = nullptr, *dvt = nullptr;
    GENBENCH_CHECK_CUDA(cudaMalloc(&dv, n_v));
    GENBENCH_CHECK_CUDA(cudaMalloc(&dvt, n_vt));
    GENBENCH_CHECK_CUDA(cudaMemcpy(dv, v.data(), n_v, cudaMemcpyHostToDevice));
    GENBENCH_CHECK_CUDA(cudaMemcpy(dvt, vt.data(), n_vt, cudaMemcpyHostToDevice));
    fa3::fp8::transpose_v(dv, dvt, s.batch, s.seqlen_k, s.heads_kv, s.d, nullptr);
    GENBENCH_CHECK_CUDA(cudaDeviceSynchronize());
    GENBENCH_CHECK_CUDA(cudaMemcpy(vt.data(), dvt, n_vt, cudaMemcpyDeviceToHost));
    GENBENCH_CHECK_CUDA(cudaFree(dv));
    GENBENCH_CHECK_CUDA(cudaFree(dvt));
    std::size_t wrong = 0, first = n_vt;
    for (int b = 0; b < s.batch; ++b)
      for (int h = 0; h < s.heads_kv; ++h)
        for (int x = 0; x < s.d; ++x)
          for (int p = 0; p < sk_pad; ++p) {
            const int key = 16 * (p / 16) + fa3::fp8::vt_key_at(p % 16);
            const std::uint8_t want =
                key < s.seqlen_k ? v[((static_cast<std::size_t>(b) * s.seqlen_k + key) * s.heads_kv + h) * s.d + x]
                                 : std::uint8_t{0};
            const std::size_t at = ((static_cast<std::size_t>(b) * s.heads_kv + h) * s.d + x) * sk_pad + p;
            if (vt[at] != want) {
              ++wrong;
              first = std::min(first, at);
            }
          }
    EXPECT_EQ(wrong, 0u) << "batch " << s.batch << " seqlen_k " << s.seqlen_k << " heads_kv " << s.heads_kv << " d "
                         << s.d << ": first wrong byte at " << first;
  }
}

// round_to(fp8_e4m3) (the validation's P rounding) against CUDA's satfinite round-to-nearest
// conversion, the one the kernel's cvt.rn.satfinite.e4m3x2.f32 performs.
TEST(Fa3Fp8Rounding, RoundToE4m3MatchesCudaConversion) {
  int checked = 0;
  for (int e = -14; e <= 10; ++e)
    for (int m = 0; m < 64; ++m) {
      const float x = std::ldexp(1.0f + static_cast<float>(m) / 64.0f, e);
      for (float v : {x, -x}) {
        const __nv_fp8_storage_t b = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
        __nv_fp8_e4m3 f;
        f.__x = b;
        EXPECT_EQ(round_to(DType::fp8_e4m3, v), static_cast<float>(f)) << v;
        ++checked;
      }
    }
  EXPECT_EQ(checked, 25 * 64 * 2);
  EXPECT_EQ(round_to(DType::fp8_e4m3, 1000.0f), 448.0f);                             // saturates
  EXPECT_EQ(round_to(DType::fp8_e4m3, std::ldexp(1.0f, -9)), std::ldexp(1.0f, -9));  // smallest subnormal
}
#endif

TEST(Fa3Fp8Validation, OutputIsBf16AndDescaleIsAPowerOfTwo) {
  EXPECT_EQ(attention::output_dtype(DType::fp8_e4m3), DType::bf16);
  EXPECT_EQ(attention::output_dtype(DType::bf16), DType::bf16);
  EXPECT_EQ(attention::output_dtype(DType::fp16), DType::fp16);
  const float s = attention::input_descale(DType::fp8_e4m3);
  int e = 0;
  EXPECT_EQ(std::frexp(s, &e), 0.5f);  // exact power of two: dequantization is exact
  EXPECT_LE(6.0f / s, 448.0f);         // a 6-sigma draw still fits e4m3
  EXPECT_EQ(attention::input_descale(DType::bf16), 1.0f);
}

attention::HostAttentionData fp8_data(bool causal, std::int64_t sq, std::int64_t sk, float scale = 0.088f) {
  attention::HostAttentionData d;
  d.shape = AttentionShape{1, 2, 1, sq, sk, 128, causal, DType::fp8_e4m3, scale, false, false};
  d.len_q = {sq};
  d.len_k = {sk};
  d.start_q = {0};
  d.start_k = {0};
  d.q.resize(static_cast<std::size_t>(sq * 2 * 128));
  d.k.resize(static_cast<std::size_t>(sk * 1 * 128));
  d.v.resize(d.k.size());
  // Dequantized e4m3 inputs, as the device case downloads them.
  const float ds = attention::input_descale(DType::fp8_e4m3);
  for (auto* x : {&d.q, &d.k, &d.v}) {
    fill_random(*x, x == &d.q ? 1 : x == &d.k ? 2 : 3, DType::fp32);
    for (float& y : *x) y = round_to(DType::fp8_e4m3, y / ds) * ds;
  }
  d.o.assign(d.q.size(), 0.f);
  d.lse.assign(static_cast<std::size_t>(2 * sq), 0.f);
  for (std::int64_t h = 0; h < 2; ++h)
    for (std::int64_t i = 0; i < sq; ++i)
      attention::low_precision_row(d, 0, h, i, d.o.data() + (i * 2 + h) * 128, d.lse.data() + d.lse_index(0, h, i));
  return d;
}

// Replaces d's outputs (40 rows, 2 heads, 512 keys, as fp8_data makes them) by the model's
// outputs computed from V with keys swapped in pairs (what a wrong V^T permutation would do);
// V itself stays true.
void with_pairwise_swapped_keys(attention::HostAttentionData& d) {
  auto permuted = d;
  for (std::int64_t j = 0; j < 512; j += 2)
    for (std::int64_t x = 0; x < 128; ++x)
      std::swap(permuted.v[static_cast<std::size_t>(j * 128 + x)],
                permuted.v[static_cast<std::size_t>((j + 1) * 128 + x)]);
  for (std::int64_t h = 0; h < 2; ++h)
    for (std::int64_t i = 0; i < 40; ++i)
      attention::low_precision_row(permuted, 0, h, i, d.o.data() + (i * 2 + h) * 128,
                                   d.lse.data() + d.lse_index(0, h, i));
}

TEST(Fa3Fp8Validation, ModelOutputIsBf16AndPasses) {
  for (bool causal : {false, true}) {
    const auto d = fp8_data(causal, 70, 300);
    for (float x : d.o) EXPECT_EQ(x, round_to(DType::bf16, x));
    const Validation v = attention::validate_attention(d, 3);
    EXPECT_TRUE(v.ok) << v.detail;
  }
}

// A single visible key: P = 1 exactly, so the model's output is V rounded to bf16 (no fp8
// rounding of P left over).
TEST(Fa3Fp8Validation, OneKeyGivesVRoundedToBf16) {
  const auto d = fp8_data(false, 3, 1);
  for (std::int64_t h = 0; h < 2; ++h)
    for (std::int64_t x = 0; x < 128; ++x)
      EXPECT_EQ(d.o[static_cast<std::size_t>((0 * 2 + h) * 128 + x)],
                round_to(DType::bf16, d.v[static_cast<std::size_t>(x)]));
}

// Keys in the wrong order inside 16-key groups (what a wrong V^T permutation would do) and an
// output 1.5x too large must fail the fp8 bound.
TEST(Fa3Fp8Validation, PermutedKeysOrWrongScaleFail) {
  auto d = fp8_data(false, 40, 512);
  with_pairwise_swapped_keys(d);
  const Validation v1 = attention::validate_attention(d, 3);
  EXPECT_FALSE(v1.ok) << v1.detail;

  auto e = fp8_data(false, 40, 512);
  for (float& x : e.o) x = round_to(DType::bf16, x * 1.5f);
  const Validation v2 = attention::validate_attention(e, 3);
  EXPECT_FALSE(v2.ok) << v2.detail;
}

// The weight-error term of the fp8 bound (independent relative errors of the softmax weights):
// a few percent of the bound at the default scale, where many keys share the weight; most of it
// at softmax scale 1, where a few keys dominate each row. At scale 1, outputs with each row's
// dominant weight 1.5x too large (a block rescaled by a wrong factor) must still fail, as must
// permuted keys. (1.125x gave O errors of 0.13 against the bound of 0.18: about what the
// kernel's rounding of P does there.)
double weight_term_of(const Validation& v) {
  const auto at = v.detail.find("weight-error term ");
  EXPECT_NE(at, std::string::npos) << v.detail;
  return at == std::string::npos ? -1.0 : std::stod(v.detail.substr(at + 18));
}

TEST(Fa3Fp8Validation, WeightErrorTermGrowsWithPeakedRowsOnly) {
  const auto flat = fp8_data(false, 40, 512);
  const Validation vf = attention::validate_attention(flat, 3);
  EXPECT_TRUE(vf.ok) << vf.detail;
  EXPECT_GT(weight_term_of(vf), 0.0);
  EXPECT_LT(weight_term_of(vf), 0.1 * vf.tolerance) << vf.detail;

  const auto peaked = fp8_data(false, 40, 512, 1.0f);
  const Validation vp = attention::validate_attention(peaked, 3);
  EXPECT_TRUE(vp.ok) << vp.detail;
  EXPECT_GT(weight_term_of(vp), 0.25 * vp.tolerance) << vp.detail;

  // Scale 1: outputs with the largest weight of every row taken 1.5x, o' = (o + 0.5 p v) / (1 + 0.5 p)
  // with p and v the dominant key's weight and value.
  auto off = peaked;
  for (std::int64_t h = 0; h < 2; ++h)
    for (std::int64_t i = 0; i < 40; ++i) {
      const float* q = peaked.q.data() + (i * 2 + h) * 128;
      std::vector<double> dot(512, 0.0);
      for (std::int64_t j = 0; j < 512; ++j)
        for (std::int64_t x = 0; x < 128; ++x)
          dot[static_cast<std::size_t>(j)] +=
              static_cast<double>(q[x]) * peaked.k[static_cast<std::size_t>(j * 128 + x)];
      const auto top = std::max_element(dot.begin(), dot.end()) - dot.begin();
      double sum = 0;
      for (double x : dot) sum += std::exp(x - dot[static_cast<std::size_t>(top)]);
      const double p = 1.0 / sum;
      const float* v = peaked.v.data() + top * 128;
      float* o = off.o.data() + (i * 2 + h) * 128;
      for (std::int64_t x = 0; x < 128; ++x)
        o[x] = round_to(DType::bf16, static_cast<float>((o[x] + 0.5 * p * v[x]) / (1.0 + 0.5 * p)));
    }
  const Validation vo = attention::validate_attention(off, 3);
  EXPECT_FALSE(vo.ok) << vo.detail;
  auto permuted = peaked;
  with_pairwise_swapped_keys(permuted);
  const Validation vs = attention::validate_attention(permuted, 3);
  EXPECT_FALSE(vs.ok) << vs.detail;
}

}  // namespace
}  // namespace genbench
