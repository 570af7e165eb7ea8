// W4A16 GEMM kernel (mma.sync m16n8k16, sm_80+): see w4a16_mma.h for the design and
// kernels/w4a16/common/w4a16_layout.h for the operand layout.
#include "kernels/w4a16/mma_sm80/w4a16_mma.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "kernels/w4a16/common/w4a16_layout.h"

namespace genbench::w4a16 {

namespace {

constexpr int kThreads = 256;
constexpr int kWarpsK = 4;  // warps along k; 2 along n
constexpr int kBlockN = 128;
constexpr int kBlockK = 128;                                      // one 32-deep range (two 16-deep slices) per k-warp
constexpr int kSlices = kBlockK / kTileK / kWarpsK;               // 2 slices per k-warp per stage
constexpr int kWeightBytes = 2 * kWarpsK * kSlices * kTileBytes;  // 8192 per stage
constexpr int kMaxGroupRows = kBlockK / 32;                       // group rows one stage can touch
constexpr int kScaleBytes = kMaxGroupRows * kBlockN * 2;
constexpr int kZeroBytes = kMaxGroupRows * 2 * 8 * 4;  // rows x 2 tiles x 8 words
constexpr int kRedStride = kBlockN + 4;                // floats per row of the k-warp reduction

// Pipeline depth by tile height: weight bytes in flight per SM at 2 CTAs/SM (16, 32 rows) or
// 1 CTA/SM (64 rows), within 227 KB of shared memory per SM.
template <int MT>
__host__ __device__ constexpr int stages() {
  return MT == 1 ? 6 : MT == 2 ? 5 : 4;
}
template <int MT>
__host__ __device__ constexpr int stage_bytes() {
  return MT * 16 * kBlockK * 2 + kWeightBytes + kScaleBytes + kZeroBytes;
}
template <int MT>
__host__ __device__ constexpr int smem_bytes() {
  return stages<MT>() * stage_bytes<MT>() > MT * 16 * kRedStride * 4 ? stages<MT>() * stage_bytes<MT>()
                                                                     : MT * 16 * kRedStride * 4;
}

struct Params {
  int m, n, k, group;
  int iters;   // k / 128
  int splits;  // k ranges
  int ntn;     // n / 64
  int nb;      // CTAs across n: ceil(ntn / 2)
  int m_tiles;
  const void* a;
  const unsigned char* w;
  const unsigned char* s;
  const std::uint32_t* z;
  void* d;
  float* ws;      // m x n fp32, zero between launches (splits > 1)
  int* counters;  // per (m tile, n block), zero between launches
};

// 16-bit constants of the type: the exponent that makes (bits | q) = MAGIC + q, and one.
template <typename T>
struct Bits;
template <>
struct Bits<__half> {
  static constexpr std::uint32_t magic = 0x6400;      // 1024
  static constexpr std::uint32_t neg_magic = 0xE400;  // -(1024 + z) = neg_magic | z
  static constexpr std::uint32_t one2 = 0x3C003C00;
};
template <>
struct Bits<__nv_bfloat16> {
  static constexpr std::uint32_t magic = 0x4300;      // 128
  static constexpr std::uint32_t neg_magic = 0xC300;  // -(128 + z)
  static constexpr std::uint32_t one2 = 0x3F803F80;
};

__device__ __forceinline__ std::uint32_t lop3_and_or(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  std::uint32_t d;  // (a & b) | c
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

template <typename T>
__device__ __forceinline__ std::uint32_t fma2(std::uint32_t a, std::uint32_t b, std::uint32_t c);
template <>
__device__ __forceinline__ std::uint32_t fma2<__half>(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  std::uint32_t d;
  asm("fma.rn.f16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
template <>
__device__ __forceinline__ std::uint32_t fma2<__nv_bfloat16>(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  std::uint32_t d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

template <typename T>
__device__ __forceinline__ void mma16816(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1);
template <>
__device__ __forceinline__ void mma16816<__half>(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                                 std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                                        std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool fill) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int bytes = fill ? 16 : 0;  // 0: the 16 bytes are zero-filled, nothing is read
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* smem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

// The four B fragment registers of one code word (w4a16_layout.h): pairs (nibbles i, i+4)
// for i = 0..3 are sub-tile 2w (r0, r1) and 2w+1 (r0, r1); q - z exact, then times s.
template <typename T>
__device__ __forceinline__ void dequant_word(std::uint32_t q, std::uint32_t zneg_lo, std::uint32_t zneg_hi,
                                             std::uint32_t s_lo, std::uint32_t s_hi, std::uint32_t (&b)[4]) {
  constexpr std::uint32_t magic2 = Bits<T>::magic * 0x10001u;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t t = lop3_and_or(q >> (4 * i), 0x000f000fu, magic2);        // MAGIC + q, exact
    const std::uint32_t x = fma2<T>(t, Bits<T>::one2, i < 2 ? zneg_lo : zneg_hi);  // q - z, exact
    b[i] = fma2<T>(x, i < 2 ? s_lo : s_hi, 0x80008000u);                           // (q - z) * s
  }
}

__device__ __forceinline__ void store2(__half* d, float v0, float v1) {
  *reinterpret_cast<__half2*>(d) = __floats2half2_rn(v0, v1);
}
__device__ __forceinline__ void store2(__nv_bfloat16* d, float v0, float v1) {
  *reinterpret_cast<__nv_bfloat162*>(d) = __floats2bfloat162_rn(v0, v1);
}

// The end of every kernel here: the k-warps' partial sums meet in shared memory `red` (at least
// MT * 16 x kRedStride floats), one k-warp after the other (plain stores and adds, no atomics);
// then the CTA's tile goes to D, or with split-k into the fp32 workspace, and the last CTA of
// the tile (a counter) writes D from it and zeroes it for the next launch.
template <typename T, int MT>
__device__ __forceinline__ void finish_tile(const Params& p, const float (&acc)[MT][8][4], float* red, int* s_last,
                                            int m_block, int n_block, int wn, int wk, bool nt_ok) {
  const int tid = threadIdx.x, lane = tid & 31, g = lane / 4, t = lane % 4;
  const int m0 = m_block * MT * 16;
#pragma unroll 1
  for (int q = 0; q < kWarpsK; ++q) {
    if (wk == q && nt_ok) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            const int row = mt * 16 + g + (c >= 2 ? 8 : 0), col = wn * 64 + j * 8 + 2 * t + (c & 1);
            float* x = &red[row * kRedStride + col];
            *x = q == 0 ? acc[mt][j][c] : *x + acc[mt][j][c];
          }
    }
    __syncthreads();
  }

  const int rows = min(MT * 16, p.m - m0);
  T* d = static_cast<T*>(p.d);
  auto store = [&](int r, int col, float v0, float v1) {
    store2(d + static_cast<std::size_t>(m0 + r) * p.n + col, v0, v1);
  };
  if (p.splits == 1) {
    for (int i = tid; i < rows * (kBlockN / 2); i += kThreads) {
      const int r = i / (kBlockN / 2), c2 = (i % (kBlockN / 2)) * 2, col = n_block * kBlockN + c2;
      if (col < p.n) store(r, col, red[r * kRedStride + c2], red[r * kRedStride + c2 + 1]);
    }
    return;
  }
  for (int i = tid; i < rows * (kBlockN / 2); i += kThreads) {
    const int r = i / (kBlockN / 2), c2 = (i % (kBlockN / 2)) * 2, col = n_block * kBlockN + c2;
    if (col < p.n) {
      float* x = p.ws + static_cast<std::size_t>(m0 + r) * p.n + col;
      atomicAdd(x, red[r * kRedStride + c2]);
      atomicAdd(x + 1, red[r * kRedStride + c2 + 1]);
    }
  }
  __threadfence();
  __syncthreads();
  const int tile = m_block * p.nb + n_block;
  if (tid == 0) *s_last = atomicAdd(&p.counters[tile], 1) == p.splits - 1;
  __syncthreads();
  if (!*s_last) return;
  __threadfence();
  for (int i = tid; i < rows * (kBlockN / 2); i += kThreads) {
    const int r = i / (kBlockN / 2), c2 = (i % (kBlockN / 2)) * 2, col = n_block * kBlockN + c2;
    if (col < p.n) {
      float* x = p.ws + static_cast<std::size_t>(m0 + r) * p.n + col;
      const float2 v = __ldcg(reinterpret_cast<const float2*>(x));
      store(r, col, v.x, v.y);
      __stcg(reinterpret_cast<float2*>(x), make_float2(0.0f, 0.0f));  // ready for the next launch
    }
  }
  if (tid == 0) p.counters[tile] = 0;
}

template <typename T, int MT, bool ZP>
__global__ void __launch_bounds__(kThreads, MT == 4 ? 1 : 2) w4a16_mma_kernel(const Params p) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ int s_last;
  constexpr int kABytes = MT * 16 * kBlockK * 2;  // (rows, 128 k) halves, 256-byte rows
  constexpr int kStage = stage_bytes<MT>();
  constexpr int kStages = stages<MT>();
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wn = warp / kWarpsK, wk = warp % kWarpsK;
  const int g = lane / 4;
  // One-dimensional grid, m tile fastest: the CTAs that read the same weights run together,
  // so all but the first read them from L2.
  const int m_block = blockIdx.x % p.m_tiles, n_block = (blockIdx.x / p.m_tiles) % p.nb,
            split = blockIdx.x / (p.m_tiles * p.nb);
  const int it_begin = static_cast<int>(static_cast<long long>(split) * p.iters / p.splits);
  const int iters = static_cast<int>(static_cast<long long>(split + 1) * p.iters / p.splits) - it_begin;
  const int nt = n_block * 2 + wn;
  const bool nt_ok = nt < p.ntn;
  const int group_rows = p.group == 32 ? 4 : p.group == 64 ? 2 : 1;  // group rows of one stage
  const int m0 = m_block * MT * 16;
  const T* a = static_cast<const T*>(p.a);

  auto load = [&](int slot, int it) {
    const int ki = it_begin + it, k0 = ki * kBlockK;
    unsigned char* st = smem + slot * kStage;
    if (nt_ok) {  // this thread's own chunks: (warp wn, wk, slice h), lane's 16 bytes
#pragma unroll
      for (int h = 0; h < kSlices; ++h) {
        const std::size_t kt = static_cast<std::size_t>(ki) * (kBlockK / kTileK) + wk * kSlices + h;
        cp_async16(st + kABytes + ((wn * kWarpsK + wk) * kSlices + h) * kTileBytes + lane * 16,
                   p.w + (kt * p.ntn + nt) * kTileBytes + lane * 16, true);
      }
    }
    // Rows past m are left as they are: row i of D depends on row i of A alone, and rows past
    // m are never stored.
    for (int c = tid; c < MT * 16 * 16; c += kThreads) {  // (rows, 16 chunks of 8 elements)
      const int r = c >> 4, ch = c & 15, gm = m0 + r;
      if (gm < p.m)
        cp_async16(st + r * 256 + ((ch ^ (r & 7)) << 4), a + static_cast<std::size_t>(gm) * p.k + k0 + ch * 8, true);
    }
    if (tid < 16 * group_rows) {  // (rows, 16 chunks of 8 scales)
      const int r = tid >> 4, ch = tid & 15, gr = k0 / p.group + r;
      if (n_block * 2 + (ch >> 3) < p.ntn)
        cp_async16(st + kABytes + kWeightBytes + r * 256 + ch * 16,
                   p.s + (static_cast<std::size_t>(gr) * p.n + n_block * kBlockN) * 2 + ch * 16, true);
    }
    if (ZP && tid >= 64 && tid < 64 + 4 * group_rows) {  // (rows, 4 chunks of 4 words)
      const int c = tid - 64, r = c >> 2, ch = c & 3, gr = k0 / p.group + r;
      if (n_block * 2 + (ch >> 1) < p.ntn)
        cp_async16(st + kABytes + kWeightBytes + kScaleBytes + r * 64 + ch * 16,
                   reinterpret_cast<const unsigned char*>(p.z) +
                       (static_cast<std::size_t>(gr) * p.ntn + n_block * 2) * 32 + ch * 16,
                   true);
    }
  };

  float acc[MT][8][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[mt][j][c] = 0.0f;

  // Scales (8 x 16 bits in 4 words; duplicated into both halves at use, one prmt each) and
  // negated MAGIC + zero of this lane's 8 columns, reloaded when the group changes. A k-warp's
  // 32-deep range lies in one group (groups are 32, 64 or multiples of 128 deep).
  std::uint32_t sw[4] = {0, 0, 0, 0}, zn[8];
  constexpr std::uint32_t kSymZ = (Bits<T>::neg_magic | kSymmetricZero) * 0x10001u;
#pragma unroll
  for (int j = 0; j < 8; ++j) zn[j] = kSymZ;
  int cur_group = -1;

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < iters) load(s, s);
    cp_commit();
  }

  for (int it = 0; it < iters; ++it) {
    cp_wait<kStages - 2>();
    __syncthreads();
    if (it + kStages - 1 < iters) load((it + kStages - 1) % kStages, it + kStages - 1);
    cp_commit();
    if (!nt_ok) continue;
    const unsigned char* st = smem + (it % kStages) * kStage;
    const int k0 = (it_begin + it) * kBlockK;
    const int grp = (k0 + wk * 32) / p.group;
    if (grp != cur_group) {
      cur_group = grp;
      const int r = grp - k0 / p.group;
      const uint4 sv = *reinterpret_cast<const uint4*>(st + kABytes + kWeightBytes + r * 256 + wn * 128 + g * 16);
      sw[0] = sv.x;
      sw[1] = sv.y;
      sw[2] = sv.z;
      sw[3] = sv.w;
      if (ZP) {
        const std::uint32_t zw = *reinterpret_cast<const std::uint32_t*>(st + kABytes + kWeightBytes + kScaleBytes +
                                                                         r * 64 + wn * 32 + g * 4);
#pragma unroll
        for (int j = 0; j < 8; ++j) zn[j] = (Bits<T>::neg_magic | ((zw >> (4 * j)) & 0xFu)) * 0x10001u;
      }
    }
#pragma unroll
    for (int h = 0; h < kSlices; ++h) {
      const int slice = wk * kSlices + h;  // 16-deep slice of the stage
      std::uint32_t af[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        const int row = mt * 16 + (lane & 15), ch = slice * 2 + (lane >> 4);
        ldmatrix_x4(af[mt], st + row * 256 + ((ch ^ (row & 7)) << 4));
      }
      const uint4 wv =
          *reinterpret_cast<const uint4*>(st + kABytes + ((wn * kWarpsK + wk) * kSlices + h) * kTileBytes + lane * 16);
      const std::uint32_t wq[4] = {wv.x, wv.y, wv.z, wv.w};
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        std::uint32_t b[4];
        // scale of sub-tile 2w: low half of sw[w]; of 2w+1: high half, each put in both halves
        dequant_word<T>(wq[w], zn[2 * w], zn[2 * w + 1], __byte_perm(sw[w], 0, 0x1010), __byte_perm(sw[w], 0, 0x3232),
                        b);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma16816<T>(acc[mt][2 * w], af[mt], b[0], b[1]);
          mma16816<T>(acc[mt][2 * w + 1], af[mt], b[2], b[3]);
        }
      }
    }
  }

  cp_wait<0>();
  __syncthreads();
  finish_tile<T, MT>(p, acc, reinterpret_cast<float*>(smem), &s_last, m_block, n_block, wn, wk, nt_ok);
}

// Few tokens (m <= 16): the weights stream from device memory straight into registers. A CTA of
// 8 warps owns 128 columns (2 warps of 64 across n) and a k range (split-k); its 4 warps along k
// take every fourth batch of U k-tiles (16 deep each) of that range. Per batch a lane issues its
// U 16-byte weight loads (not kept in L1: each byte is read once), the scale rows (and zero
// words) of the batch and its A fragments (rows g and g + 8, read through L1: every warp at the
// same k reads the same A), all before the first use; then dequantises and issues 8 mma per
// k-tile. No shared memory until the k-warps' partial sums meet in finish_tile().
//   R16    rows 9-16 present (else rows g + 8 of the A fragment are zero and not loaded)
//   MULTI  groups of 32 or 64: one scale row per 32 k of the batch (else one for the batch)
template <bool R16>
__host__ __device__ constexpr int stream_unroll() {
  return R16 ? 4 : 8;  // k-tiles per batch: 16 or 32 registers of A fragments
}

__device__ __forceinline__ uint4 ld_stream(const unsigned char* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

template <typename T, bool ZP, bool MULTI, bool R16>
__global__ void __launch_bounds__(kThreads, 2) w4a16_stream_kernel(const Params p) {
  constexpr int U = stream_unroll<R16>();
  constexpr int kRows = MULTI ? U / 2 : 1;  // scale rows per batch
  __shared__ float red[16 * kRedStride];
  __shared__ int s_last;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wn = warp / kWarpsK, wk = warp % kWarpsK;
  const int g = lane / 4, t = lane % 4;
  // m tile fastest, as in the fused kernel (more than one only where a 16-row tile is forced).
  const int m_block = blockIdx.x % p.m_tiles, n_block = (blockIdx.x / p.m_tiles) % p.nb,
            split = blockIdx.x / (p.m_tiles * p.nb);
  const int batches = p.k / (16 * U);
  const int b_begin = static_cast<int>(static_cast<long long>(split) * batches / p.splits);
  const int b_end = static_cast<int>(static_cast<long long>(split + 1) * batches / p.splits);
  const int nt = n_block * 2 + wn;
  const bool nt_ok = nt < p.ntn;

  float acc[1][8][4];
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[0][j][c] = 0.0f;

  const T* a = static_cast<const T*>(p.a);
  const int m0 = m_block * 16;
  const bool row_lo = m0 + g < p.m, row_hi = R16 && m0 + g + 8 < p.m;
  const std::uint32_t* a_lo =
      reinterpret_cast<const std::uint32_t*>(a + static_cast<std::size_t>(row_lo ? m0 + g : 0) * p.k + 2 * t);
  const std::uint32_t* a_hi =
      reinterpret_cast<const std::uint32_t*>(a + static_cast<std::size_t>(row_hi ? m0 + g + 8 : 0) * p.k + 2 * t);
  const std::size_t tile_stride = static_cast<std::size_t>(p.ntn) * kTileBytes;
  const unsigned char* w_lane = p.w + static_cast<std::size_t>(nt) * kTileBytes + lane * 16;
  const unsigned char* s_lane = p.s + (static_cast<std::size_t>(nt) * kTileN + g * 8) * 2;
  constexpr std::uint32_t kSymZ = (Bits<T>::neg_magic | kSymmetricZero) * 0x10001u;

  for (int b = b_begin + wk; nt_ok && b < b_end; b += kWarpsK) {
    const int k0 = b * 16 * U;
    // Every load of the batch first.
    uint4 wv[U];
    const unsigned char* wp = w_lane + static_cast<std::size_t>(b) * U * tile_stride;
#pragma unroll
    for (int u = 0; u < U; ++u) wv[u] = ld_stream(wp + u * tile_stride);
    uint4 sv[kRows];
    std::uint32_t zw[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int gr = (k0 + 32 * r) / p.group;
      sv[r] = __ldg(reinterpret_cast<const uint4*>(s_lane + static_cast<std::size_t>(gr) * p.n * 2));
      if (ZP) zw[r] = __ldg(p.z + (static_cast<std::size_t>(gr) * p.ntn + nt) * 8 + g);
    }
    std::uint32_t af[U][4];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int kk = (k0 + 16 * u) / 2;  // in 32-bit words
      af[u][0] = row_lo ? __ldg(a_lo + kk) : 0u;
      af[u][2] = row_lo ? __ldg(a_lo + kk + 4) : 0u;
      af[u][1] = row_hi ? __ldg(a_hi + kk) : 0u;
      af[u][3] = row_hi ? __ldg(a_hi + kk + 4) : 0u;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int r = MULTI ? u / 2 : 0;
      const std::uint32_t sw[4] = {sv[r].x, sv[r].y, sv[r].z, sv[r].w};
      const std::uint32_t wq[4] = {wv[u].x, wv[u].y, wv[u].z, wv[u].w};
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        const std::uint32_t z_lo = ZP ? (Bits<T>::neg_magic | ((zw[r] >> (8 * w)) & 0xFu)) * 0x10001u : kSymZ;
        const std::uint32_t z_hi = ZP ? (Bits<T>::neg_magic | ((zw[r] >> (8 * w + 4)) & 0xFu)) * 0x10001u : kSymZ;
        std::uint32_t bq[4];
        dequant_word<T>(wq[w], z_lo, z_hi, __byte_perm(sw[w], 0, 0x1010), __byte_perm(sw[w], 0, 0x3232), bq);
        mma16816<T>(acc[0][2 * w], af[u], bq[0], bq[1]);
        mma16816<T>(acc[0][2 * w + 1], af[u], bq[2], bq[3]);
      }
    }
  }
  finish_tile<T, 1>(p, acc, red, &s_last, m_block, n_block, wn, wk, nt_ok);
}

// W^T (n x k, T) from the tiled codes: one warp per 64 x 64 block (4 tiles along k), through
// shared memory so the stores are whole 128-byte rows.
template <typename T, bool ZP>
__global__ void __launch_bounds__(128) dequant_transposed_kernel(const Params p, T* wt) {
  constexpr int kRow = 64 + 8;  // halves per shared row: conflict-free fragment stores
  __shared__ __align__(16) std::uint16_t sm[4][64 * kRow];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane / 4, t = lane % 4;
  const int nt = blockIdx.x * 4 + warp, kb = blockIdx.y;  // adjacent warps read adjacent tiles
  if (nt >= p.ntn) return;
  std::uint16_t* s = sm[warp];
#pragma unroll
  for (int q4 = 0; q4 < 4; ++q4) {
    const int kt = kb * 4 + q4, gr = kt * kTileK / p.group;
    const uint4 wv =
        *reinterpret_cast<const uint4*>(p.w + (static_cast<std::size_t>(kt) * p.ntn + nt) * kTileBytes + lane * 16);
    const uint4 sv = *reinterpret_cast<const uint4*>(p.s + (static_cast<std::size_t>(gr) * p.n + nt * 64 + g * 8) * 2);
    const std::uint32_t sw[4] = {sv.x, sv.y, sv.z, sv.w};
    const std::uint32_t zw = ZP ? p.z[(static_cast<std::size_t>(gr) * p.ntn + nt) * 8 + g] : 0u;
    const std::uint32_t wq[4] = {wv.x, wv.y, wv.z, wv.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      std::uint32_t s2[2], zn[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int j = 2 * w + h;
        const std::uint32_t sb = (sw[j >> 1] >> (16 * (j & 1))) & 0xFFFFu;
        s2[h] = sb | (sb << 16);
        const std::uint32_t z = ZP ? (zw >> (4 * j)) & 0xFu : static_cast<std::uint32_t>(kSymmetricZero);
        zn[h] = (Bits<T>::neg_magic | z) * 0x10001u;
      }
      std::uint32_t b[4];
      dequant_word<T>(wq[w], zn[0], zn[1], s2[0], s2[1], b);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int j = 2 * w + i / 2, r = i % 2;
        const int kk = q4 * 16 + 2 * t + 8 * r, n = 8 * j + g;
        *reinterpret_cast<std::uint32_t*>(s + n * kRow + kk) = b[i];
      }
    }
  }
  __syncwarp();
  for (int c = lane; c < 64 * 8; c += 32) {
    const int row = c >> 3, ch = c & 7;
    *reinterpret_cast<uint4*>(wt + static_cast<std::size_t>(nt * 64 + row) * p.k + kb * 64 + ch * 8) =
        *reinterpret_cast<const uint4*>(s + row * kRow + ch * 8);
  }
}

void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

Params params_of(const Arguments& a) {
  Params p{};
  p.m = static_cast<int>(a.m);
  p.n = static_cast<int>(a.n);
  p.k = static_cast<int>(a.k);
  p.group = static_cast<int>(a.group);
  p.iters = p.k / kBlockK;
  p.splits = 1;
  p.ntn = p.n / kTileN;
  p.nb = (p.ntn + 1) / 2;
  p.m_tiles = 1;
  p.a = a.a;
  p.w = static_cast<const unsigned char*>(a.w);
  p.s = static_cast<const unsigned char*>(a.scales);
  p.z = a.zeros;
  p.d = a.d;
  return p;
}

using KernelFn = void (*)(Params);

template <int MT>
KernelFn pick_mt(bool bf16, bool zp) {
  if (bf16) return zp ? w4a16_mma_kernel<__nv_bfloat16, MT, true> : w4a16_mma_kernel<__nv_bfloat16, MT, false>;
  return zp ? w4a16_mma_kernel<__half, MT, true> : w4a16_mma_kernel<__half, MT, false>;
}

template <typename T, bool R16>
KernelFn pick_stream(bool zp, bool multi) {
  if (zp) return multi ? w4a16_stream_kernel<T, true, true, R16> : w4a16_stream_kernel<T, true, false, R16>;
  return multi ? w4a16_stream_kernel<T, false, true, R16> : w4a16_stream_kernel<T, false, false, R16>;
}

// The kernel for a shape and tile height, and its dynamic shared memory. 16-row tiles are the
// streaming kernel's.
KernelFn pick(const Arguments& a, int tile_m, int* smem) {
  switch (tile_m) {
    case 16: {
      *smem = 0;
      const bool r16 = a.m > 8;  // some 16-row tile has rows 9-16
      const bool multi = a.group < 16 * (r16 ? stream_unroll<true>() : stream_unroll<false>());
      if (a.bf16) return r16 ? pick_stream<__nv_bfloat16, true>(a.zero_points, multi)
                             : pick_stream<__nv_bfloat16, false>(a.zero_points, multi);
      return r16 ? pick_stream<__half, true>(a.zero_points, multi) : pick_stream<__half, false>(a.zero_points, multi);
    }
    case 32: *smem = smem_bytes<2>(); return pick_mt<2>(a.bf16, a.zero_points);
    default: *smem = smem_bytes<4>(); return pick_mt<4>(a.bf16, a.zero_points);
  }
}

// Units of k one split can take: stages of 128 (fused) or the streaming kernel's batches.
int k_units(const Arguments& a, int tile_m) {
  if (tile_m != 16) return static_cast<int>(a.k / kBlockK);
  return static_cast<int>(a.k / (16 * (a.m > 8 ? stream_unroll<true>() : stream_unroll<false>())));
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

}  // namespace

std::string MmaGemm::can_implement(const Arguments& a) {
  if (a.m < 1 || a.n < 1 || a.k < 1) return "m, n and k must be positive";
  if (const std::string e = tiled_layout_error(a.k, a.n, a.group); !e.empty()) return e;
  if (a.m > (1 << 24) || a.n > (1 << 24) || a.k > (1 << 24) || a.m * a.n > (std::int64_t{1} << 31) ||
      a.m * a.k > (std::int64_t{1} << 31) || a.n * a.k > (std::int64_t{1} << 33))
    return "sizes beyond the kernel's 32-bit indexing";
  if (a.split_k < 0 || a.split_k > a.k / kBlockK) return "split_k must be 0 (auto) or 1..k/128";
  if (a.tile_m != 0 && a.tile_m != 16 && a.tile_m != 32 && a.tile_m != 64)
    return "tile_m must be 0 (auto), 16, 32 or 64";
  if ((a.m + 15) / 16 * ((a.n / kTileN + 1) / 2) * (a.k / kBlockK) > INT32_MAX) return "grid beyond 2^31 CTAs";
  if (!aligned16(a.a) || !aligned16(a.w) || !aligned16(a.scales) || !aligned16(a.zeros) || !aligned16(a.d))
    return "operands must be 16-byte aligned";
  if (a.zero_points && !a.zeros) return "zero points asked for without a zeros buffer";
  return "";
}

MmaGemm::MmaGemm(const Arguments& a, int device) : args_(a) {
  if (const std::string e = can_implement(a); !e.empty()) throw std::invalid_argument("w4a16 mma: " + e);
  // 64-row tiles from m = 33: at m = 64 they beat two 32-row tiles on 5 of the 6 layer shapes
  // measured (docs/int4-gemm.md).
  tile_m_ = a.tile_m ? a.tile_m : a.m <= 16 ? 16 : a.m <= 32 ? 32 : 64;
  int smem = 0;
  const KernelFn fn = pick(a, tile_m_, &smem);
  if (smem > 0 && cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
    check_launch("cudaFuncSetAttribute");
  cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device);
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas_per_sm_, fn, kThreads, smem) != cudaSuccess)
    check_launch("cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  ctas_per_sm_ = std::max(ctas_per_sm_, 1);
  const int units = k_units(a, tile_m_);
  const long long tiles = ((a.n / kTileN + 1) / 2) * ((a.m + tile_m_ - 1) / tile_m_);
  if (a.split_k > 0) {
    splits_ = a.split_k;
  } else {
    // About one full wave of CTAs: split k only while the tiles alone leave SMs idle (the
    // split-k partial sums cost fp32 atomics in L2), with at least 2 stages per split (fused),
    // or one batch per k-warp (streaming).
    const long long slots = static_cast<long long>(sms_) * ctas_per_sm_;
    const int per_split = tile_m_ == 16 ? kWarpsK : 2;
    splits_ = static_cast<int>(
        std::max(1LL, std::min<long long>(slots / std::max(tiles, 1LL), std::max(1, units / per_split))));
  }
}

std::size_t MmaGemm::workspace_size() const {
  if (splits_ == 1) return 0;
  const std::size_t tiles =
      static_cast<std::size_t>(((args_.n / kTileN + 1) / 2) * ((args_.m + tile_m_ - 1) / tile_m_));
  const std::size_t ws = static_cast<std::size_t>(args_.m * args_.n) * sizeof(float);
  return (ws + 255) / 256 * 256 + tiles * sizeof(int);
}

void MmaGemm::initialize(void* workspace, cudaStream_t stream) {
  if (splits_ == 1) return;
  if (!workspace) throw std::invalid_argument("w4a16 mma: split-k needs its workspace");
  ws_ = static_cast<float*>(workspace);
  const std::size_t ws = static_cast<std::size_t>(args_.m * args_.n) * sizeof(float);
  counters_ = reinterpret_cast<int*>(static_cast<unsigned char*>(workspace) + (ws + 255) / 256 * 256);
  if (cudaMemsetAsync(workspace, 0, workspace_size(), stream) != cudaSuccess) check_launch("cudaMemsetAsync");
}

void MmaGemm::run(cudaStream_t stream) const {
  Params p = params_of(args_);
  p.splits = splits_;
  p.m_tiles = static_cast<int>((args_.m + tile_m_ - 1) / tile_m_);
  p.ws = ws_;
  p.counters = counters_;
  if (splits_ > 1 && !ws_) throw std::logic_error("w4a16 mma: run() before initialize()");
  int smem = 0;
  const KernelFn fn = pick(args_, tile_m_, &smem);
  const unsigned grid = static_cast<unsigned>(p.nb) * static_cast<unsigned>(p.m_tiles) * static_cast<unsigned>(splits_);
  fn<<<grid, kThreads, smem, stream>>>(p);
  check_launch("w4a16_mma_kernel");
}

std::string MmaGemm::describe() const {
  const long long ctas = ((args_.n / kTileN + 1) / 2) * ((args_.m + tile_m_ - 1) / tile_m_) * splits_;
  char buf[160];
  if (tile_m_ == 16) {
    const int u = args_.m > 8 ? stream_unroll<true>() : stream_unroll<false>();
    std::snprintf(buf, sizeof(buf), "mma_sm80 stream tile=16x%dx%d splitk=%d ctas=%lld/%dx%d", kBlockN, 16 * u, splits_,
                  ctas, sms_, ctas_per_sm_);
    return buf;
  }
  const int st = tile_m_ == 32 ? stages<2>() : stages<4>();
  std::snprintf(buf, sizeof(buf), "mma_sm80 tile=%dx%dx%d splitk=%d ctas=%lld/%dx%d stages=%d", tile_m_, kBlockN,
                kBlockK, splits_, ctas, sms_, ctas_per_sm_, st);
  return buf;
}

void dequantize_transposed(const Arguments& a, void* wt, cudaStream_t stream) {
  if (const std::string e = tiled_layout_error(a.k, a.n, a.group); !e.empty())
    throw std::invalid_argument("w4a16 dequantize: " + e);
  const Params p = params_of(a);
  const dim3 grid(static_cast<unsigned>((a.n / 64 + 3) / 4), static_cast<unsigned>(a.k / 64));
  if (a.bf16) {
    if (a.zero_points)
      dequant_transposed_kernel<__nv_bfloat16, true><<<grid, 128, 0, stream>>>(p, static_cast<__nv_bfloat16*>(wt));
    else dequant_transposed_kernel<__nv_bfloat16, false><<<grid, 128, 0, stream>>>(p, static_cast<__nv_bfloat16*>(wt));
  } else {
    if (a.zero_points) dequant_transposed_kernel<__half, true><<<grid, 128, 0, stream>>>(p, static_cast<__half*>(wt));
    else dequant_transposed_kernel<__half, false><<<grid, 128, 0, stream>>>(p, static_cast<__half*>(wt));
  }
  check_launch("dequant_transposed_kernel");
}

}  // namespace genbench::w4a16
