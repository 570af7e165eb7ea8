// The W4A16 packing layout (kernels/w4a16/common/w4a16_layout.h) checked without a GPU: the
// round trips, and a simulation of what each lane of the kernel computes from its 16 bytes —
// the bit tricks of dequant_word() on the host — against the mma.sync m16n8k16 B fragment
// element each register half must hold (PTX ISA: row = 2 t + (i & 1) + 8 (i >= 2), col = g).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "kernels/w4a16/common/w4a16_layout.h"

namespace genbench::w4a16 {
namespace {

std::vector<std::uint8_t> codes_of(std::int64_t k, std::int64_t n, unsigned seed) {
  std::vector<std::uint8_t> c(static_cast<std::size_t>(k * n));
  std::uint32_t x = seed;
  for (auto& v : c) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<std::uint8_t>(x >> 28);
  }
  return c;
}

// A 16-bit pattern as a number: IEEE half or bfloat16 (normal numbers and zero only).
double decode16(std::uint32_t b, bool bf16) {
  const int mant_bits = bf16 ? 7 : 10, exp_bits = bf16 ? 8 : 5, bias = bf16 ? 127 : 15;
  const int sign = (b >> 15) & 1, e = (b >> mant_bits) & ((1 << exp_bits) - 1);
  const int m = b & ((1 << mant_bits) - 1);
  if (e == 0 && m == 0) return sign ? -0.0 : 0.0;
  const double v = std::ldexp(1.0 + m / static_cast<double>(1 << mant_bits), e - bias);
  return sign ? -v : v;
}

TEST(W4a16Layout, TileCoordIsABijectionOntoTheTile) {
  std::set<std::pair<int, int>> seen;
  for (int lane = 0; lane < 32; ++lane)
    for (int w = 0; w < 4; ++w)
      for (int p = 0; p < 8; ++p) {
        const TileCoord c = tile_coord(lane, w, p);
        ASSERT_GE(c.k, 0);
        ASSERT_LT(c.k, kTileK);
        ASSERT_GE(c.n, 0);
        ASSERT_LT(c.n, kTileN);
        EXPECT_TRUE(seen.insert({c.k, c.n}).second) << "lane " << lane << " word " << w << " nibble " << p;
      }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kTileK * kTileN));
}

TEST(W4a16Layout, TiledIndexInvertsTileCoord) {
  const std::int64_t k = 64, n = 128;
  for (std::int64_t nt = 0; nt < n / kTileN; ++nt)
    for (std::int64_t kt = 0; kt < k / kTileK; ++kt)
      for (int lane = 0; lane < 32; ++lane)
        for (int w = 0; w < 4; ++w)
          for (int p = 0; p < 8; ++p) {
            const TileCoord c = tile_coord(lane, w, p);
            const TiledIndex ti = tiled_index(n, kt * kTileK + c.k, nt * kTileN + c.n);
            EXPECT_EQ(ti.byte, tile_offset(n, nt, kt) + static_cast<std::size_t>(lane * 16 + w * 4 + p / 2));
            EXPECT_EQ(ti.shift, 4 * (p % 2));
          }
}

TEST(W4a16Layout, TilesAreStoredRowByRow) {
  const std::int64_t n = 192;  // 3 tiles across
  EXPECT_EQ(tile_offset(n, 0, 0), 0u);
  EXPECT_EQ(tile_offset(n, 1, 0), static_cast<std::size_t>(kTileBytes));
  EXPECT_EQ(tile_offset(n, 0, 1), static_cast<std::size_t>(3 * kTileBytes));
  EXPECT_EQ(tile_offset(n, 2, 5), static_cast<std::size_t>((5 * 3 + 2) * kTileBytes));
}

TEST(W4a16Layout, PackUnpackRoundTrips) {
  const std::int64_t k = 96, n = 192;
  const auto codes = codes_of(k, n, 3);
  EXPECT_EQ(unpack_tiled(pack_tiled(codes, k, n), k, n), codes);
  EXPECT_EQ(unpack_canonical(pack_canonical(codes, k, n), k, n), codes);
  const auto canon = pack_canonical(codes, k, n);
  EXPECT_EQ(canon[0] & 0xF, codes[0]);  // even column in the low nibble
  EXPECT_EQ(canon[0] >> 4, codes[1]);
  const auto tiled = pack_tiled(codes, k, n);
  for (std::int64_t kk = 0; kk < k; kk += 7)
    for (std::int64_t j = 0; j < n; j += 5) {
      const TiledIndex ti = tiled_index(n, kk, j);
      EXPECT_EQ((tiled[ti.byte] >> ti.shift) & 0xF, codes[static_cast<std::size_t>(kk * n + j)]);
    }
  EXPECT_THROW(pack_tiled(codes_of(16, 96, 1), 16, 96), std::invalid_argument);  // n % 64
  EXPECT_THROW(pack_canonical(codes_of(2, 3, 1), 2, 3), std::invalid_argument);  // odd n
}

TEST(W4a16Layout, ScalesAndZerosSitWhereTheLaneLoadsThem) {
  const std::int64_t rows = 3, n = 128;
  std::vector<std::uint16_t> s(static_cast<std::size_t>(rows * n));
  std::vector<std::uint8_t> z(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    s[i] = static_cast<std::uint16_t>(i);
    z[i] = static_cast<std::uint8_t>((i * 7) % 16);
  }
  const auto ps = permute_scales(s, rows, n);
  const auto pz = pack_zeros(z, rows, n);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t nt = 0; nt < n / kTileN; ++nt)
      for (int g = 0; g < 8; ++g)
        for (int j = 0; j < 8; ++j) {
          const std::int64_t col = nt * kTileN + 8 * j + g;  // the column of sub-tile j, lane group g
          // the kernel: 16-byte load at scale row + 64 nt + 8 g, element j
          EXPECT_EQ(ps[static_cast<std::size_t>(r * n + nt * kTileN + 8 * g + j)],
                    s[static_cast<std::size_t>(r * n + col)]);
          // the kernel: word g of tile nt, nibble j
          const std::uint32_t word = pz[static_cast<std::size_t>((r * (n / kTileN) + nt) * 8 + g)];
          EXPECT_EQ((word >> (4 * j)) & 0xF, z[static_cast<std::size_t>(r * n + col)]);
        }
}

// What dequant_word() computes, bit for bit, for one register half: (MAGIC | q) as a number,
// plus -(MAGIC + z), times s; compared with the B fragment element of the PTX layout.
TEST(W4a16Layout, LaneSimulationGivesTheMmaFragments) {
  const std::int64_t k = 32, n = 64;
  const auto codes = codes_of(k, n, 11);
  const auto tiled = pack_tiled(codes, k, n);
  for (bool bf16 : {false, true}) {
    const std::uint32_t magic = bf16 ? 0x4300 : 0x6400, neg_magic = bf16 ? 0xC300 : 0xE400;
    for (std::int64_t kt = 0; kt < k / kTileK; ++kt)
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane / 4, t = lane % 4;
        const std::uint8_t* chunk = tiled.data() + tile_offset(n, 0, kt) + lane * 16;
        for (int w = 0; w < 4; ++w) {
          std::uint32_t q = 0;
          std::memcpy(&q, chunk + 4 * w, 4);  // little-endian, as the GPU loads it
          for (int i = 0; i < 4; ++i) {
            const std::uint32_t x = ((q >> (4 * i)) & 0x000f000fu) | (magic * 0x10001u);
            const int j = 2 * w + i / 2, reg = i % 2;  // sub-tile, fragment register b0/b1
            for (int half = 0; half < 2; ++half) {
              const int row = 2 * t + half + 8 * reg, col = 8 * j + g;  // PTX: B fragment element
              const int want = codes[static_cast<std::size_t>((kt * kTileK + row) * n + col)];
              const double v = decode16((x >> (16 * half)) & 0xFFFF, bf16);
              ASSERT_EQ(v, (bf16 ? 128.0 : 1024.0) + want) << "lane " << lane << " word " << w << " pair " << i;
              for (int z : {0, 8, 15}) {
                const double zn = decode16(neg_magic | static_cast<std::uint32_t>(z), bf16);
                EXPECT_EQ(v + zn, want - z);  // exact in either type: the fma by one rounds nothing
              }
            }
          }
        }
      }
  }
}

// The streaming kernel's codes_to_a() on the host: the weights as the mma's A operand (D^T =
// W^T A^T). Word w of a lane's 16 bytes gives rows g and g + 8 of the 16-column block 16 w ..
// 16 w + 15, k 0-7 and 8-15 of the tile: a0 = (row g, k 2t + h), a1 = (row g + 8, k 2t + h),
// a2 = (row g, k 2t + 8 + h), a3 = (row g + 8, k 2t + 8 + h) (PTX ISA, m16n8k16 A fragment).
// fp16 reads the nibbles at bits 4-7 and 12-15 in place (1024 + 16 q, times 1/16, minus 64 +
// z); bf16 shifts them down first (its exponent reaches bit 7). Every step exact.
TEST(W4a16Layout, StreamLaneSimulationGivesTheMmaAFragments) {
  const std::int64_t k = 32, n = 128;
  const auto codes = codes_of(k, n, 17);
  const auto tiled = pack_tiled(codes, k, n);
  for (bool bf16 : {false, true}) {
    const std::uint32_t magic = bf16 ? 0x4300 : 0x6400, neg_magic = bf16 ? 0xC300 : 0xE400;
    const double m = bf16 ? 128.0 : 1024.0;
    for (std::int64_t nt = 0; nt < n / kTileN; ++nt)
      for (std::int64_t kt = 0; kt < k / kTileK; ++kt)
        for (int lane = 0; lane < 32; ++lane) {
          const int g = lane / 4, t = lane % 4;
          const std::uint8_t* chunk = tiled.data() + tile_offset(n, nt, kt) + lane * 16;
          for (int w = 0; w < 4; ++w) {
            std::uint32_t q = 0;
            std::memcpy(&q, chunk + 4 * w, 4);
            // x[i] before its fma: the register's two codes under the exponent, and the fma's
            // multiplier; a[r] = x[order[r]] (a0 = x0, a1 = x2, a2 = x1, a3 = x3).
            std::uint32_t x[4];
            double mul[4] = {1, 1, 1, 1};
            x[0] = (q & 0x000f000fu) | magic * 0x10001u;
            x[2] = ((q >> 8) & 0x000f000fu) | magic * 0x10001u;
            if (!bf16) {
              x[1] = (q & 0x00f000f0u) | magic * 0x10001u;
              x[3] = ((q >> 8) & 0x00f000f0u) | magic * 0x10001u;
              mul[1] = mul[3] = decode16(0x2C00, false);  // 1/16
            } else {
              x[1] = ((q >> 4) & 0x000f000fu) | magic * 0x10001u;
              x[3] = ((q >> 12) & 0x000f000fu) | magic * 0x10001u;
            }
            const int order[4] = {0, 2, 1, 3};
            for (int r = 0; r < 4; ++r)
              for (int h = 0; h < 2; ++h) {
                const int row = g + 8 * (r & 1), kk = 2 * t + h + 8 * (r >> 1);  // PTX A fragment
                const std::int64_t col = nt * kTileN + 16 * w + row;
                const int want = codes[static_cast<std::size_t>((kt * kTileK + kk) * n + col)];
                const int i = order[r];
                const double v = decode16((x[i] >> (16 * h)) & 0xFFFF, bf16) * mul[i];
                ASSERT_EQ(v, (i % 2 == 1 && !bf16 ? m / 16 : m) + want) << "lane " << lane << " word " << w;
                for (std::uint32_t z : {0u, 8u, 15u}) {
                  const std::uint32_t zn = i % 2 == 1 && !bf16 ? 0xD400u | (z << 4) : neg_magic | z;
                  EXPECT_EQ(v + decode16(zn, bf16), want - static_cast<int>(z));
                }
              }
          }
        }
  }
}

TEST(W4a16Layout, ReferenceGemmMatchesANaiveSum) {
  const std::int64_t m = 3, n = 4, k = 8, group = 4;
  const auto codes = codes_of(k, n, 5);
  std::vector<float> a(static_cast<std::size_t>(m * k)), s(static_cast<std::size_t>(k / group * n));
  std::vector<std::uint8_t> z(s.size());
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  for (std::size_t i = 0; i < s.size(); ++i) {
    s[i] = 0.25f * static_cast<float>(i + 1);
    z[i] = static_cast<std::uint8_t>(i % 16);
  }
  for (bool zp : {false, true}) {
    const auto d = reference_gemm(a, codes, s, zp ? z : std::vector<std::uint8_t>{}, m, n, k, group);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (std::int64_t kk = 0; kk < k; ++kk) {
          const std::size_t gi = static_cast<std::size_t>((kk / group) * n + j);
          const int zero = zp ? z[gi] : 8;
          want += a[static_cast<std::size_t>(i * k + kk)] *
                  static_cast<float>(codes[static_cast<std::size_t>(kk * n + j)] - zero) * s[gi];
        }
        EXPECT_DOUBLE_EQ(d[static_cast<std::size_t>(i * n + j)], want);
      }
  }
  EXPECT_THROW(reference_gemm(a, codes, s, {}, m, n, k, 3), std::invalid_argument);
}

TEST(W4a16Layout, TiledLayoutErrorsNameTheProblem) {
  EXPECT_EQ(tiled_layout_error(4096, 4096, 128), "");
  EXPECT_EQ(tiled_layout_error(4096, 4096, 4096), "");
  EXPECT_EQ(tiled_layout_error(4096, 4096, 32), "");
  EXPECT_NE(tiled_layout_error(4096, 4000, 128).find("multiple of 64"), std::string::npos);
  EXPECT_EQ(tiled_layout_error(4096, 4096, 64), "");
  EXPECT_EQ(tiled_layout_error(4096, 4096, 256), "");
  EXPECT_NE(tiled_layout_error(4032, 4096, 32).find("k to be a multiple of 128"), std::string::npos);
  EXPECT_NE(tiled_layout_error(4096, 4096, 48).find("group"), std::string::npos);
  EXPECT_NE(tiled_layout_error(4096, 4096, 192).find("group"), std::string::npos);  // 192 does not divide 4096
}

}  // namespace
}  // namespace genbench::w4a16
