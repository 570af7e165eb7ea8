// The W4A16 mma.sync kernel (kernels/w4a16/mma_sm80) on the GPU against the host reference of
// kernels/w4a16/common: int4 and uint4 with zero points, every group size and per column, fp16
// and bf16, odd m, n not a multiple of 128, each tile height (32 and 64 rows on both the wide
// and the staged kernel; on sm_90 the wide kernel's wgmma form too), forced and automatic split-k
// (and the workspace it must leave zeroed; the streaming kernel's two splits as a cluster on sm_90+),
// the dequantise path's W^T bit for bit, and the shapes can_implement refuses. Skipped without a GPU of compute
// capability 8.0 or newer. Depends on nothing else of genbench (it builds on its own with nvcc).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/w4a16/common/w4a16_layout.h"
#include "kernels/w4a16/mma_sm80/w4a16_mma.h"

namespace genbench::w4a16 {
namespace {

bool have_sm80() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();
    return false;
  }
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  return p.major >= 8;
}
#define REQUIRE_SM80() \
  if (!have_sm80()) GTEST_SKIP() << "no GPU of compute capability 8.0 or newer"

bool have_sm90() {
  if (!have_sm80()) return false;
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  return p.major == 9 && p.minor == 0;
}

std::uint16_t bits_of(float x, bool bf16) {
  if (bf16) return static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(x)).x;
  return static_cast<__half_raw>(__float2half_rn(x)).x;
}
float value_of(std::uint16_t b, bool bf16) {
  if (bf16) {
    __nv_bfloat16_raw r;
    r.x = b;
    return __bfloat162float(__nv_bfloat16(r));
  }
  __half_raw r;
  r.x = b;
  return __half2float(__half(r));
}

struct DeviceBuf {
  void* p = nullptr;
  explicit DeviceBuf(std::size_t bytes) { EXPECT_EQ(cudaMalloc(&p, std::max<std::size_t>(bytes, 256)), cudaSuccess); }
  ~DeviceBuf() { cudaFree(p); }
  DeviceBuf(const DeviceBuf&) = delete;
  DeviceBuf& operator=(const DeviceBuf&) = delete;
};

struct Problem {
  std::int64_t m, n, k, group;  // group 0: per column
  bool bf16, zp;
  int split = 0, tile_m = 0;
  bool staged = false;
  bool wgmma = false;
};

std::uint32_t lcg(std::uint32_t& x) {
  x = x * 1664525u + 1013904223u;
  return x >> 8;
}

// Runs the kernel (twice: the second launch relies on the first leaving the split-k workspace
// zeroed) and returns the worst error relative to sum |a w| per element, the tolerance of the
// output type (fp16 2e-3, bf16 1e-2, as for the other GEMMs), and checks the workspace.
double run_problem(const Problem& pr, double* tol, std::string* plan_text = nullptr) {
  const std::int64_t g = pr.group ? pr.group : pr.k, rows = pr.k / g;
  std::uint32_t seed = static_cast<std::uint32_t>(pr.m * 131 + pr.n * 7 + pr.k + g + pr.bf16 * 3 + pr.zp * 5);
  std::vector<float> a(pr.m * pr.k), s(rows * pr.n);
  std::vector<std::uint8_t> codes(pr.k * pr.n), zeros(pr.zp ? rows * pr.n : 0);
  std::vector<std::uint16_t> ha(a.size()), hs(s.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ha[i] = bits_of(static_cast<float>(lcg(seed) % 2001) / 1000.0f - 1.0f, pr.bf16);
    a[i] = value_of(ha[i], pr.bf16);
  }
  for (auto& c : codes) c = static_cast<std::uint8_t>(lcg(seed) % 16);
  for (std::size_t i = 0; i < s.size(); ++i) {
    hs[i] = bits_of(0.005f + static_cast<float>(lcg(seed) % 1000) * 1e-5f, pr.bf16);
    s[i] = value_of(hs[i], pr.bf16);
  }
  for (auto& z : zeros) z = static_cast<std::uint8_t>(lcg(seed) % 16);
  const auto ref = reference_gemm(a, codes, s, zeros, pr.m, pr.n, pr.k, g);
  const auto tiled = pack_tiled(codes, pr.k, pr.n);
  const auto ps = permute_scales(hs, rows, pr.n);
  const auto pz = pr.zp ? pack_zeros(zeros, rows, pr.n) : std::vector<std::uint32_t>{};

  DeviceBuf da(ha.size() * 2), dw(tiled.size()), ds(ps.size() * 2), dz(pz.size() * 4), dd(pr.m * pr.n * 2);
  cudaMemcpy(da.p, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dw.p, tiled.data(), tiled.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(ds.p, ps.data(), ps.size() * 2, cudaMemcpyHostToDevice);
  if (pr.zp) cudaMemcpy(dz.p, pz.data(), pz.size() * 4, cudaMemcpyHostToDevice);
  cudaMemset(dd.p, 0xff, pr.m * pr.n * 2);  // NaN: an element never written fails
  Arguments args;
  args.m = pr.m;
  args.n = pr.n;
  args.k = pr.k;
  args.group = g;
  args.bf16 = pr.bf16;
  args.zero_points = pr.zp;
  args.a = da.p;
  args.w = dw.p;
  args.scales = ds.p;
  args.zeros = pr.zp ? static_cast<const std::uint32_t*>(dz.p) : nullptr;
  args.d = dd.p;
  args.split_k = pr.split;
  args.tile_m = pr.tile_m;
  args.staged = pr.staged;
  args.wgmma = pr.wgmma;
  EXPECT_EQ(MmaGemm::can_implement(args), "");
  MmaGemm plan(args, 0);
  if (plan_text) *plan_text = plan.describe();
  DeviceBuf ws(plan.workspace_size());
  plan.initialize(plan.workspace_size() ? ws.p : nullptr, nullptr);
  plan.run(nullptr);
  plan.run(nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  if (plan.workspace_size()) {
    std::vector<unsigned char> w(plan.workspace_size());
    cudaMemcpy(w.data(), ws.p, w.size(), cudaMemcpyDeviceToHost);
    EXPECT_TRUE(std::all_of(w.begin(), w.end(), [](unsigned char c) { return c == 0; }))
        << "split-k workspace not left zeroed (" << plan.describe() << ")";
  }
  std::vector<std::uint16_t> hd(pr.m * pr.n);
  cudaMemcpy(hd.data(), dd.p, hd.size() * 2, cudaMemcpyDeviceToHost);
  double worst = 0;
  for (std::int64_t i = 0; i < pr.m; ++i)
    for (std::int64_t j = 0; j < pr.n; ++j) {
      double mag = 0;
      for (std::int64_t kk = 0; kk < pr.k; ++kk) {
        const std::size_t gi = static_cast<std::size_t>((kk / g) * pr.n + j);
        mag += std::fabs(a[i * pr.k + kk] * dequantize(codes[kk * pr.n + j], pr.zp ? zeros[gi] : 8, s[gi]));
      }
      const float got = value_of(hd[i * pr.n + j], pr.bf16);
      worst = std::max(worst, std::isnan(got) ? INFINITY : std::fabs(got - ref[i * pr.n + j]) / std::max(mag, 1e-30));
    }
  *tol = pr.bf16 ? 1e-2 : 2e-3;
  return worst;
}

TEST(W4a16Mma, MatchesTheReferenceForEveryGroupAndZeroPoints) {
  REQUIRE_SM80();
  for (bool bf16 : {false, true})
    for (bool zp : {false, true})
      for (std::int64_t group : {32, 64, 128, 0})
        for (auto [m, n, k] :
             {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1, 128, 256}, {17, 192, 512}, {64, 128, 384}}) {
          if (group && k % group) continue;
          double tol = 0;
          const double err = run_problem({m, n, k, group, bf16, zp}, &tol);
          EXPECT_LE(err, tol) << (bf16 ? "bf16" : "fp16") << (zp ? " uint4+zp" : " int4") << " group " << group
                              << " m=" << m << " n=" << n << " k=" << k;
        }
}

TEST(W4a16Mma, EveryTileHeightAndSplitGivesTheSameAnswer) {
  REQUIRE_SM80();
  for (int tile : {16, 32, 64})
    for (bool staged : {false, true})
      for (int split : {0, 1, 3}) {
        if (tile == 16 && staged) continue;  // 16-row tiles are the streaming kernel's alone
        double tol = 0;
        const double err = run_problem({37, 192, 768, 128, false, true, split, tile, staged}, &tol);
        EXPECT_LE(err, tol) << "tile_m " << tile << (staged ? " staged" : " wide") << " split " << split;
      }
}

// The streaming kernel's split-k: on sm_90 and newer two splits run as one cluster whose CTAs
// add each other's tiles from shared memory (no workspace); more splits, or older GPUs, take the
// workspace. Ragged m (one and two 16-row tiles), a half-empty last 128-column block, zero points.
TEST(W4a16Mma, StreamingSplitsInAClusterOrTheWorkspace) {
  REQUIRE_SM80();
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  for (int split : {2, 3, 8, 12})
    for (std::int64_t m : {1, 5, 21}) {
      const bool zp = split == 3;
      double tol = 0;
      std::string plan;
      const double err = run_problem({m, 448, 2048, zp ? 64 : 128, m == 5, zp, split, 16}, &tol, &plan);
      EXPECT_LE(err, tol) << plan;
      const bool cluster = plan.find("cluster") != std::string::npos;
      EXPECT_EQ(cluster, prop.major >= 9 && split == 2) << plan;
      EXPECT_NE(plan.find("splitk=" + std::to_string(split)), std::string::npos) << plan;
    }
}

// The wide kernel's edges: 256-column CTAs with one to three of their four weight tiles past n,
// groups of 32 (four scale and zero rows a stage), every token row of a 64-row tile present, and
// the automatic split of 3 tiles x 10 stages.
TEST(W4a16Mma, WideKernelEdges) {
  REQUIRE_SM80();
  for (std::int64_t n : {64, 320, 448})
    for (bool bf16 : {false, true}) {
      double tol = 0;
      const double err = run_problem({64, n, 640, bf16 ? 32 : 128, bf16, !bf16, 3, 64}, &tol);
      EXPECT_LE(err, tol) << "n=" << n << (bf16 ? " bf16" : " fp16");
    }
  for (bool zp : {false, true}) {
    double tol = 0;
    const double err = run_problem({64, 704, 1280, zp ? 64 : 128, false, zp}, &tol);
    EXPECT_LE(err, tol) << "automatic split" << (zp ? " uint4" : " int4");
  }
}

// The wide kernel's wgmma form (sm_90 only) on the same edges, both tile heights with ragged m,
// zero points or not, and forced and automatic splits.
TEST(W4a16Mma, WideKernelWgmmaEdges) {
  if (!have_sm90()) GTEST_SKIP() << "no GPU of compute capability 9.0 (the wgmma form is sm_90a's)";
  for (std::int64_t n : {64, 320, 448})
    for (bool bf16 : {false, true}) {
      double tol = 0;
      Problem pr{64, n, 640, bf16 ? 32 : 128, bf16, !bf16, 3, 64};
      pr.wgmma = true;
      const double err = run_problem(pr, &tol);
      EXPECT_LE(err, tol) << "wgmma n=" << n << (bf16 ? " bf16" : " fp16");
    }
  for (int tile : {32, 64})
    for (bool zp : {false, true})
      for (int split : {0, 3}) {
        double tol = 0;
        Problem pr{37, 704, 1280, zp ? 64 : 128, !zp, zp, split, tile};
        pr.wgmma = true;
        const double err = run_problem(pr, &tol);
        EXPECT_LE(err, tol) << "wgmma tile_m " << tile << (zp ? " uint4" : " int4") << " split " << split;
      }
  // 16-row tiles (up to 16 tokens on the wgmma form): rows past m, tiles past n, every group size
  for (std::int64_t m : {1, 9, 16})
    for (std::int64_t group : {32, 64, 0}) {
      double tol = 0;
      Problem pr{m, m == 9 ? 448 : 320, 512, group, m == 9, group == 64, m == 16 ? 3 : 0, 16};
      pr.wgmma = true;
      const double err = run_problem(pr, &tol);
      EXPECT_LE(err, tol) << "wgmma tile_m 16, m " << m << " group " << group;
    }
}

// Asking for the wgmma form on a device that is not sm_90 is refused by name.
TEST(W4a16Mma, WgmmaElsewhereIsRefused) {
  REQUIRE_SM80();
  if (have_sm90()) GTEST_SKIP() << "this device runs the wgmma form";
  Arguments args;
  args.m = 64;
  args.n = 128;
  args.k = 256;
  args.wgmma = true;
  EXPECT_THROW(MmaGemm(args, 0), std::invalid_argument);
}

TEST(W4a16Mma, DequantizedTransposeIsBitExact) {
  REQUIRE_SM80();
  const std::int64_t n = 192, k = 256, g = 64, rows = k / g;
  for (bool bf16 : {false, true}) {
    std::uint32_t seed = 99;
    std::vector<std::uint8_t> codes(k * n), zeros(rows * n);
    std::vector<std::uint16_t> hs(rows * n);
    for (auto& c : codes) c = static_cast<std::uint8_t>(lcg(seed) % 16);
    for (auto& z : zeros) z = static_cast<std::uint8_t>(lcg(seed) % 16);
    for (auto& v : hs) v = bits_of(0.01f + static_cast<float>(lcg(seed) % 100) * 1e-4f, bf16);
    const auto tiled = pack_tiled(codes, k, n);
    const auto ps = permute_scales(hs, rows, n);
    const auto pz = pack_zeros(zeros, rows, n);
    DeviceBuf dw(tiled.size()), ds(ps.size() * 2), dz(pz.size() * 4), dt(n * k * 2);
    cudaMemcpy(dw.p, tiled.data(), tiled.size(), cudaMemcpyHostToDevice);
    cudaMemcpy(ds.p, ps.data(), ps.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dz.p, pz.data(), pz.size() * 4, cudaMemcpyHostToDevice);
    Arguments args;
    args.m = 1;
    args.n = n;
    args.k = k;
    args.group = g;
    args.bf16 = bf16;
    args.zero_points = true;
    args.w = dw.p;
    args.scales = ds.p;
    args.zeros = static_cast<const std::uint32_t*>(dz.p);
    dequantize_transposed(args, dt.p, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<std::uint16_t> wt(n * k);
    cudaMemcpy(wt.data(), dt.p, wt.size() * 2, cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const std::size_t gi = static_cast<std::size_t>((kk / g) * n + j);
        const float want = dequantize(codes[kk * n + j], zeros[gi], value_of(hs[gi], bf16));
        wrong += wt[j * k + kk] != bits_of(want, bf16);
      }
    EXPECT_EQ(wrong, 0) << (bf16 ? "bf16" : "fp16");
  }
}

TEST(W4a16Mma, CanImplementNamesWhatIsWrong) {
  alignas(16) static unsigned char buf[64];
  Arguments a;
  a.m = 1;
  a.n = 4096;
  a.k = 4096;
  a.group = 128;
  a.a = a.w = a.scales = a.d = buf;
  EXPECT_EQ(MmaGemm::can_implement(a), "");
  Arguments b = a;
  b.n = 4000;
  EXPECT_NE(MmaGemm::can_implement(b).find("n to be a multiple of 64"), std::string::npos);
  b = a;
  b.group = 96;
  EXPECT_NE(MmaGemm::can_implement(b).find("group"), std::string::npos);
  b = a;
  b.zero_points = true;
  EXPECT_NE(MmaGemm::can_implement(b).find("zeros buffer"), std::string::npos);
  b = a;
  b.a = buf + 2;
  EXPECT_NE(MmaGemm::can_implement(b).find("16-byte aligned"), std::string::npos);
  b = a;
  b.tile_m = 48;
  EXPECT_NE(MmaGemm::can_implement(b).find("tile_m"), std::string::npos);
}

}  // namespace
}  // namespace genbench::w4a16
