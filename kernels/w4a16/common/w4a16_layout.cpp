// Host side of the W4A16 packing layout (w4a16_layout.h): pack/unpack and the reference GEMM.
// Plain C++ with no genbench dependencies, so standalone device checks compile it as is.
#include "kernels/w4a16/common/w4a16_layout.h"

#include <stdexcept>

namespace genbench::w4a16 {

namespace {
std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }
void need(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}
}  // namespace

namespace {
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

std::uint8_t random_code(std::uint64_t seed, std::uint64_t i) {
  return static_cast<std::uint8_t>(mix(mix(seed) ^ i) >> 60);
}

float random_scale(std::uint64_t seed, std::uint64_t i) {
  const double u = static_cast<double>(mix(mix(seed + 1) ^ i) >> 11) * (1.0 / 9007199254740992.0);
  return static_cast<float>(0.005 + 0.01 * u);
}

std::string tiled_layout_error(std::int64_t k, std::int64_t n, std::int64_t group) {
  if (n % kTileN != 0) return "the tiled layout needs n to be a multiple of 64 (n=" + std::to_string(n) + ")";
  if (k % 128 != 0) return "the tiled layout needs k to be a multiple of 128 (k=" + std::to_string(k) + ")";
  if (!(group == 32 || group == 64 || (group % 128 == 0 && k % group == 0)))
    return "the tiled layout needs a group of 32, 64 or a multiple of 128 that divides k (group=" +
           std::to_string(group) + ")";
  return "";
}

std::vector<std::uint8_t> pack_canonical(const std::vector<std::uint8_t>& codes, std::int64_t k, std::int64_t n) {
  need(n % 2 == 0 && codes.size() == sz(k * n), "pack_canonical: n must be even and codes k x n");
  std::vector<std::uint8_t> out(sz(k * n / 2));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::uint8_t>((codes[2 * i] & 0xF) | ((codes[2 * i + 1] & 0xF) << 4));
  return out;
}

std::vector<std::uint8_t> unpack_canonical(const std::vector<std::uint8_t>& packed, std::int64_t k, std::int64_t n) {
  need(n % 2 == 0 && packed.size() == sz(k * n / 2), "unpack_canonical: n must be even and packed k x n / 2 bytes");
  std::vector<std::uint8_t> out(sz(k * n));
  for (std::size_t i = 0; i < packed.size(); ++i) {
    out[2 * i] = packed[i] & 0xF;
    out[2 * i + 1] = packed[i] >> 4;
  }
  return out;
}

std::vector<std::uint8_t> pack_tiled(const std::vector<std::uint8_t>& codes, std::int64_t k, std::int64_t n) {
  need(k % kTileK == 0 && n % kTileN == 0 && codes.size() == sz(k * n), "pack_tiled: k % 16, n % 64, codes k x n");
  std::vector<std::uint8_t> out(sz(k * n / 2), 0);
  for (std::int64_t nt = 0; nt < n / kTileN; ++nt)
    for (std::int64_t kt = 0; kt < k / kTileK; ++kt) {
      std::uint8_t* tile = out.data() + tile_offset(n, nt, kt);
      for (int lane = 0; lane < 32; ++lane)
        for (int w = 0; w < 4; ++w) {
          std::uint32_t word = 0;
          for (int p = 0; p < 8; ++p) {
            const TileCoord c = tile_coord(lane, w, p);
            const std::uint32_t q = codes[sz((kt * kTileK + c.k) * n + nt * kTileN + c.n)] & 0xFu;
            word |= q << (4 * p);
          }
          for (int b = 0; b < 4; ++b) tile[lane * 16 + w * 4 + b] = static_cast<std::uint8_t>(word >> (8 * b));
        }
    }
  return out;
}

std::vector<std::uint8_t> unpack_tiled(const std::vector<std::uint8_t>& tiled, std::int64_t k, std::int64_t n) {
  need(k % kTileK == 0 && n % kTileN == 0 && tiled.size() == sz(k * n / 2),
       "unpack_tiled: k % 16, n % 64, k x n / 2 bytes");
  std::vector<std::uint8_t> out(sz(k * n));
  for (std::int64_t nt = 0; nt < n / kTileN; ++nt)
    for (std::int64_t kt = 0; kt < k / kTileK; ++kt) {
      const std::uint8_t* tile = tiled.data() + tile_offset(n, nt, kt);
      for (int lane = 0; lane < 32; ++lane)
        for (int w = 0; w < 4; ++w) {
          std::uint32_t word = 0;
          for (int b = 0; b < 4; ++b) word |= static_cast<std::uint32_t>(tile[lane * 16 + w * 4 + b]) << (8 * b);
          for (int p = 0; p < 8; ++p) {
            const TileCoord c = tile_coord(lane, w, p);
            out[sz((kt * kTileK + c.k) * n + nt * kTileN + c.n)] = static_cast<std::uint8_t>((word >> (4 * p)) & 0xF);
          }
        }
    }
  return out;
}

std::vector<std::uint16_t> permute_scales(const std::vector<std::uint16_t>& scales, std::int64_t rows, std::int64_t n) {
  need(n % kTileN == 0 && scales.size() == sz(rows * n), "permute_scales: n % 64, scales rows x n");
  std::vector<std::uint16_t> out(scales.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < n; ++c) out[sz(r * n + scale_position(c))] = scales[sz(r * n + c)];
  return out;
}

std::vector<std::uint32_t> pack_zeros(const std::vector<std::uint8_t>& zeros, std::int64_t rows, std::int64_t n) {
  need(n % kTileN == 0 && zeros.size() == sz(rows * n), "pack_zeros: n % 64, zeros rows x n");
  std::vector<std::uint32_t> out(sz(rows * (n / kTileN) * 8), 0);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < n; ++c) {
      const std::int64_t nt = c / kTileN, j = (c % kTileN) / 8, g = c % 8;
      out[sz((r * (n / kTileN) + nt) * 8 + g)] |= (static_cast<std::uint32_t>(zeros[sz(r * n + c)]) & 0xFu) << (4 * j);
    }
  return out;
}

std::vector<float> reference_gemm(const std::vector<float>& a, const std::vector<std::uint8_t>& codes,
                                  const std::vector<float>& scales, const std::vector<std::uint8_t>& zeros,
                                  std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t group) {
  need(group > 0 && k % group == 0, "reference_gemm: group must divide k");
  need(a.size() == sz(m * k) && codes.size() == sz(k * n) && scales.size() == sz(k / group * n) &&
           (zeros.empty() || zeros.size() == scales.size()),
       "reference_gemm: operand sizes");
  // Dequantise once (k x n), then i-k-j so the inner loop runs along D's row.
  std::vector<float> w(sz(k * n));
  for (std::int64_t kk = 0; kk < k; ++kk)
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t g = sz((kk / group) * n + j);
      const std::uint8_t z = zeros.empty() ? std::uint8_t{kSymmetricZero} : zeros[g];
      w[sz(kk * n + j)] = dequantize(codes[sz(kk * n + j)], z, scales[g]);
    }
  std::vector<float> d(sz(m * n), 0.0f);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const float av = a[sz(i * k + kk)];
      const float* wr = w.data() + kk * n;
      float* dr = d.data() + i * n;
      for (std::int64_t j = 0; j < n; ++j) dr[j] += av * wr[j];
    }
  return d;
}

}  // namespace genbench::w4a16
