#pragma once
// Packing layout of the W4A16 (4-bit weights, 16-bit activations) GEMM, D = A · W:
//   A  m x k activations, row-major, fp16 or bf16
//   W  k x n weights, 4-bit codes q in [0, 15] with one scale s (and zero point z) per group of
//      `group` consecutive k of one column: w[k][n] = (q[k][n] - z[k/group][n]) * s[k/group][n].
//      Symmetric int4 stores the signed value v in [-8, 7] as q = v + 8 with z = 8 fixed.
//   D  m x n, in A's type, fp32 accumulation.
//
// Two layouts of the codes:
//   canonical  row-major k x n, two columns per byte, even column in the low nibble (n even)
//   tiled      what the CUDA kernel reads (below); pack_tiled() converts
//
// Tiled codes: W is cut into tiles of 16 k x 64 n (512 bytes each), stored tile row by tile
// row: tile (nt, kt) starts at byte (kt * n/64 + nt) * 512. CTAs that own neighbouring columns
// read neighbouring bytes at the same k, so the whole grid sweeps the matrix front to back (a
// column-slab order, each CTA streaming its own far-apart range, ran at a quarter of the
// bandwidth: docs/int4-gemm.md). Inside a tile, lane l of a warp owns bytes [16 l, 16 l + 16):
// four 32-bit words, one 128-bit load, holding exactly the 32 weights that lane needs as
// mma.sync m16n8k16 B fragments for the 8 n8 sub-tiles of the tile:
//
//   lane l = 4 g + t  (g = l / 4: column within an n8 sub-tile, t = l % 4)
//   word w (0..3) serves n8 sub-tiles j = 2w and 2w+1; nibble p (0..7, bits 4p..4p+3) of it:
//       i = p % 4, odd = p / 4
//       sub-tile j = 2w + i/2, fragment register r = i % 2
//       k = 2t + 8r + odd,  n = 8j + g
//
//   word w:  bits 31..28 27..24 23..20 19..16 | 15..12 11..8  7..4   3..0
//            p=7    p=6    p=5    p=4         p=3    p=2    p=1    p=0
//            j+1,r1 j+1,r0 j,r1   j,r0        j+1,r1 j+1,r0 j,r1   j,r0     (j = 2w)
//            k+1    k+1    k+1    k+1         k      k      k      k        (k = 2t + 8r)
//
// So (word >> 4i) & 0x000f000f puts the codes of k and k+1 of one column in the two 16-bit
// halves of a register, the order of an mma B fragment register {B[k][n], B[k+1][n]}; OR-ing
// in the exponent of 1024 (fp16) or 128 (bf16) makes them 1024 + q exactly, and one packed
// subtraction of 1024 + z leaves q - z, exact in either type. One packed multiply by s
// rounds once: the weight the tensor core sees is round((q - z) * s).
//
// Scales: [k/group][n] in A's type, columns permuted inside each 64-column tile so that lane
// group g finds the scales of its 8 columns (8j + g, j = 0..7) in one 16-byte load:
//   position 8 g + j of tile nt  <->  column 64 nt + 8 j + g.
// Zero points (uint4 only): [k/group][n/64][8] 32-bit words; word g of tile nt holds the zero
// of column 64 nt + 8 j + g in nibble j.
//
// Per column (one group per column) is group = k.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#define GENBENCH_W4_HD __host__ __device__
#else
#define GENBENCH_W4_HD
#endif

namespace genbench::w4a16 {

constexpr int kTileK = 16;
constexpr int kTileN = 64;
constexpr int kTileBytes = kTileK * kTileN / 2;  // 512: 32 lanes x 16 bytes
constexpr int kSymmetricZero = 8;

struct TileCoord {
  int k, n;  // inside the 16 x 64 tile
};

// Which weight of a tile nibble p of word w of lane l holds.
GENBENCH_W4_HD constexpr TileCoord tile_coord(int lane, int word, int nibble) {
  const int g = lane / 4, t = lane % 4;
  const int i = nibble % 4, odd = nibble / 4;
  const int j = 2 * word + i / 2, r = i % 2;
  return TileCoord{2 * t + 8 * r + odd, 8 * j + g};
}

// Byte offset of tile (nt, kt) in the tiled codes of an n-column matrix.
GENBENCH_W4_HD constexpr std::size_t tile_offset(std::int64_t n, std::int64_t nt, std::int64_t kt) {
  return static_cast<std::size_t>((kt * (n / kTileN) + nt) * kTileBytes);
}

// Where the code of weight (k, n) of an n-column matrix lives in the tiled layout: byte
// offset and bit shift (0 or 4); the inverse of tile_coord().
struct TiledIndex {
  std::size_t byte;
  int shift;
};
GENBENCH_W4_HD constexpr TiledIndex tiled_index(std::int64_t n_cols, std::int64_t k, std::int64_t n) {
  const int kk = static_cast<int>(k % kTileK), c = static_cast<int>(n % kTileN);
  const int j = c / 8, g = c % 8;
  const int odd = kk & 1, t = (kk >> 1) & 3, r = kk >> 3;
  const int lane = 4 * g + t, word = j / 2, nibble = (2 * (j % 2) + r) + 4 * odd;
  return TiledIndex{
      tile_offset(n_cols, n / kTileN, k / kTileK) + static_cast<std::size_t>(lane * 16 + word * 4 + nibble / 2),
      4 * (nibble % 2)};
}

// Permuted position of column n among the scales of one group row (see above).
GENBENCH_W4_HD constexpr std::int64_t scale_position(std::int64_t n) {
  const std::int64_t nt = n / kTileN, c = n % kTileN;
  return nt * kTileN + (c % 8) * 8 + c / 8;
}

// "" when the tiled layout covers a k x n matrix with groups of `group` (k for per column),
// else why not.
std::string tiled_layout_error(std::int64_t k, std::int64_t n, std::int64_t group);

// Canonical <-> tiled. `codes` holds one code (0..15) per byte, row-major k x n.
std::vector<std::uint8_t> pack_canonical(const std::vector<std::uint8_t>& codes, std::int64_t k, std::int64_t n);
std::vector<std::uint8_t> unpack_canonical(const std::vector<std::uint8_t>& packed, std::int64_t k, std::int64_t n);
std::vector<std::uint8_t> pack_tiled(const std::vector<std::uint8_t>& codes, std::int64_t k, std::int64_t n);
std::vector<std::uint8_t> unpack_tiled(const std::vector<std::uint8_t>& tiled, std::int64_t k, std::int64_t n);
// Scales as 16-bit patterns [k/group][n] -> permuted; zero codes [k/group][n] -> words.
std::vector<std::uint16_t> permute_scales(const std::vector<std::uint16_t>& scales, std::int64_t rows, std::int64_t n);
std::vector<std::uint32_t> pack_zeros(const std::vector<std::uint8_t>& zeros, std::int64_t rows, std::int64_t n);

// Seeded codes (uniform 0..15) and scales (uniform in [0.005, 0.015), before rounding to the
// activation type): value i does not depend on how a buffer is split.
std::uint8_t random_code(std::uint64_t seed, std::uint64_t i);
float random_scale(std::uint64_t seed, std::uint64_t i);

// Dequantised weight (q - z) * s in fp32 (exact: s has at most 11 significant bits).
inline float dequantize(std::uint8_t q, std::uint8_t z, float s) {
  return static_cast<float>(static_cast<int>(q) - static_cast<int>(z)) * s;
}

// The host reference: D[i][j] = sum_k A[i][k] * w[k][j] with w dequantised, fp32 accumulation
// in k order. a: m x k, codes: k x n (one per byte), scales/zeros: [k/group][n] (zeros empty:
// symmetric, z = 8). Returns m x n floats (not rounded to the output type).
std::vector<float> reference_gemm(const std::vector<float>& a, const std::vector<std::uint8_t>& codes,
                                  const std::vector<float>& scales, const std::vector<std::uint8_t>& zeros,
                                  std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t group);

}  // namespace genbench::w4a16
