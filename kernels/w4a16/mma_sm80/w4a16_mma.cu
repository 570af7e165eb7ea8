// W4A16 GEMM kernel (mma.sync m16n8k16, sm_80+): see w4a16_mma.h for the design and
// kernels/w4a16/common/w4a16_layout.h for the operand layout.
#include "kernels/w4a16/mma_sm80/w4a16_mma.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <type_traits>

#include "kernels/common/sm80_ptx.cuh"
#include "kernels/common/sm90_ptx.cuh"
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

// Pipeline depth by tile height: weight bytes in flight per SM at 2 CTAs/SM (32 rows) or
// 1 CTA/SM (64 rows), within 227 KB of shared memory per SM.
template <int MT>
__host__ __device__ constexpr int stages() {
  return MT == 2 ? 5 : 4;
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
  int group_shift;  // k >> group_shift is the group row: log2(group), 31 for one group per column, else -1
  const void* a;
  const unsigned char* w;
  const unsigned char* s;
  const std::uint32_t* z;
  void* d;
  float* ws;      // m x n fp32, zero between launches (splits > 1)
  int* counters;  // per (m tile, n block), zero between launches
  int cluster;    // streaming kernel: a tile's splits are one cluster, reduced in shared memory
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
                                         std::uint32_t b1) {
  sm80::mma16816<std::is_same_v<T, __nv_bfloat16>>(c, a, b0, b1);
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool fill) {
  sm80::cp_async16(sm80::smem_addr(smem), gmem, fill);
}
using sm80::cp_async16_if;
using sm80::cp_async4_if;
// Commit and wait without sm80_ptx.cuh's memory clobber: the kernels were measured compiled so,
// and with the clobber their machine code differs (scripts/sass-diff.py).
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

// Four floats added to global memory (one vector reduction on sm_90 and newer).
__device__ __forceinline__ void add4(float* x, float a, float b, float c, float d) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(x), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
#else
  atomicAdd(x, a);
  atomicAdd(x + 1, b);
  atomicAdd(x + 2, c);
  atomicAdd(x + 3, d);
#endif
}

// D, or with split-k the fp32 workspace, from the CTA's reduced tile red[rows][RS] of BN columns,
// V (2 or 4) neighbouring columns a step (the last CTA of a tile, found with a counter, writes D
// from the workspace and zeroes it for the next launch).
template <typename T, int BN = kBlockN, int RS = kRedStride, int V = 2>
__device__ __forceinline__ void store_tile(const Params& p, const float* red, int* s_last, int tile_rows, int m_block,
                                           int n_block) {
  static_assert(V == 2 || V == 4, "two or four columns a step");
  const int tid = threadIdx.x;
  const int m0 = m_block * tile_rows;
  const int rows = min(tile_rows, p.m - m0);
  T* d = static_cast<T*>(p.d);
  auto store = [&](int r, int col, float v0, float v1) {
    store2(d + static_cast<std::size_t>(m0 + r) * p.n + col, v0, v1);
  };
  if (p.splits == 1) {
    for (int i = tid; i < rows * (BN / V); i += kThreads) {
      const int r = i / (BN / V), c = (i % (BN / V)) * V, col = n_block * BN + c;
      if (col < p.n) {
        store(r, col, red[r * RS + c], red[r * RS + c + 1]);
        if (V == 4) store(r, col + 2, red[r * RS + c + 2], red[r * RS + c + 3]);
      }
    }
    return;
  }
  for (int i = tid; i < rows * (BN / V); i += kThreads) {
    const int r = i / (BN / V), c = (i % (BN / V)) * V, col = n_block * BN + c;
    if (col < p.n) {
      float* x = p.ws + static_cast<std::size_t>(m0 + r) * p.n + col;
      if (V == 4) {
        add4(x, red[r * RS + c], red[r * RS + c + 1], red[r * RS + c + 2], red[r * RS + c + 3]);
      } else {
        atomicAdd(x, red[r * RS + c]);
        atomicAdd(x + 1, red[r * RS + c + 1]);
      }
    }
  }
  __threadfence();
  __syncthreads();
  const int tile = m_block * p.nb + n_block;
  if (tid == 0) *s_last = atomicAdd(&p.counters[tile], 1) == p.splits - 1;
  __syncthreads();
  if (!*s_last) return;
  __threadfence();
  for (int i = tid; i < rows * (BN / V); i += kThreads) {
    const int r = i / (BN / V), c = (i % (BN / V)) * V, col = n_block * BN + c;
    if (col < p.n) {
      float* x = p.ws + static_cast<std::size_t>(m0 + r) * p.n + col;
      if (V == 4) {
        const float4 v = __ldcg(reinterpret_cast<const float4*>(x));
        store(r, col, v.x, v.y);
        store(r, col + 2, v.z, v.w);
        __stcg(reinterpret_cast<float4*>(x), make_float4(0.0f, 0.0f, 0.0f, 0.0f));  // ready for the next launch
      } else {
        const float2 v = __ldcg(reinterpret_cast<const float2*>(x));
        store(r, col, v.x, v.y);
        __stcg(reinterpret_cast<float2*>(x), make_float2(0.0f, 0.0f));  // ready for the next launch
      }
    }
  }
  if (tid == 0) p.counters[tile] = 0;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// Split-k inside a cluster (sm_90 and newer; the plan uses it for two splits, plan_cluster()):
// the p.splits CTAs of a tile are one cluster (rank = split), each with its reduced tile in `red`
// (16 rows, kRedStride floats a row); CTA `rank` writes the column pairs rank, rank + splits, ...
// of every row, adding the CTAs' values in rank order (no workspace, no atomics, the same sum
// every launch), read from their shared memory.
template <typename T>
__device__ __forceinline__ void cluster_store_tile(const Params& p, const float* red, int rank, int m_block,
                                                   int n_block) {
  sm90::cluster_sync();  // every CTA's tile is in its shared memory
  const int m0 = m_block * 16, rows = min(16, p.m - m0);
  const std::uint32_t base = sm90::smem_addr(red);
  T* d = static_cast<T*>(p.d);
  for (int i = rank + p.splits * static_cast<int>(threadIdx.x); i < rows * (kBlockN / 2); i += p.splits * kThreads) {
    const int r = i / (kBlockN / 2), c = (i % (kBlockN / 2)) * 2, col = n_block * kBlockN + c;
    if (col >= p.n) continue;
    const std::uint32_t at = base + static_cast<std::uint32_t>((r * kRedStride + c) * 4);
    float v0 = 0.0f, v1 = 0.0f;
    for (int q = 0; q < p.splits; ++q) {
      const float2 x = sm90::ld_cluster_f32x2(sm90::cluster_map(at, q));
      v0 += x.x;
      v1 += x.y;
    }
    store2(d + static_cast<std::size_t>(m0 + r) * p.n + col, v0, v1);
  }
  sm90::cluster_sync();  // no CTA leaves (its shared memory with it) while another reads it
}
#endif

// The end of the fused kernel: the k-warps' partial sums meet in shared memory `red` (at least
// MT * 16 x kRedStride floats), one k-warp after the other (plain stores and adds, no atomics),
// then store_tile().
template <typename T, int MT>
__device__ __forceinline__ void finish_tile(const Params& p, const float (&acc)[MT][8][4], float* red, int* s_last,
                                            int m_block, int n_block, int wn, int wk, bool nt_ok) {
  const int tid = threadIdx.x, lane = tid & 31, g = lane / 4, t = lane % 4;
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
  store_tile<T>(p, red, s_last, MT * 16, m_block, n_block);
}

// ------------------------------------------------------------------ the fused kernel's parts
// As the streaming and wide kernels' (below): w4a16_mma_kernel's state stays in its locals, a
// part takes the arrays and what it changes by reference (mma_load from the kernel's load
// lambda, which passes its captures by reference), the values it only reads by value. The group
// test and the mma stay in the kernel: with either in a part (the test in mma_group, the mma with
// the operands) the kernels' accumulators are numbered and assigned registers otherwise.

// The copies of stage it into slot: this thread's weight chunks, the A rows (rows past m left as
// they are), the scale rows and (ZP) the zero words of the stage's groups.
template <typename T, int MT, bool ZP>
__device__ __forceinline__ void mma_load(const Params& p, const int& tid, const int& lane, const int& wn, const int& wk,
                                         const int& n_block, const int& it_begin, const int& nt, bool nt_ok,
                                         const int& group_rows, const int& m0, const T* const& a, int slot, int it) {
  extern __shared__ __align__(128) unsigned char smem[];  // the kernel's
  constexpr int kABytes = MT * 16 * kBlockK * 2;          // (rows, 128 k) halves, 256-byte rows
  constexpr int kStage = stage_bytes<MT>();
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
}

// Every accumulator set to 0.
template <int MT>
__device__ __forceinline__ void mma_zero(float (&acc)[MT][8][4]) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[mt][j][c] = 0.0f;
}

// The scales sw and (ZP) the negated MAGIC + zero terms zn of this lane's 8 columns for the
// k-warp's group grp, from its row of the stage at st (which starts at k0).
template <typename T, int MT, bool ZP>
__device__ __forceinline__ void mma_group(const Params& p, const unsigned char* st, int k0, int grp, int wn, int g,
                                          std::uint32_t (&sw)[4], std::uint32_t (&zn)[8]) {
  constexpr int kABytes = MT * 16 * kBlockK * 2;
  const int r = grp - k0 / p.group;
  const uint4 sv = *reinterpret_cast<const uint4*>(st + kABytes + kWeightBytes + r * 256 + wn * 128 + g * 16);
  sw[0] = sv.x;
  sw[1] = sv.y;
  sw[2] = sv.z;
  sw[3] = sv.w;
  if (ZP) {
    const std::uint32_t zw =
        *reinterpret_cast<const std::uint32_t*>(st + kABytes + kWeightBytes + kScaleBytes + r * 64 + wn * 32 + g * 4);
#pragma unroll
    for (int j = 0; j < 8; ++j) zn[j] = (Bits<T>::neg_magic | ((zw >> (4 * j)) & 0xFu)) * 0x10001u;
  }
}

// The operands of 16-deep slice h of the stage at st: the A fragments af (ldmatrix) and the
// lane's 4 code words wq.
template <int MT>
__device__ __forceinline__ void mma_operands(const unsigned char* st, int wn, int wk, int lane, int h,
                                             std::uint32_t (&af)[MT][4], std::uint32_t (&wq)[4]) {
  constexpr int kABytes = MT * 16 * kBlockK * 2;
  const int slice = wk * kSlices + h;  // 16-deep slice of the stage
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const int row = mt * 16 + (lane & 15), ch = slice * 2 + (lane >> 4);
    ldmatrix_x4(af[mt], st + row * 256 + ((ch ^ (row & 7)) << 4));
  }
  const uint4 wv =
      *reinterpret_cast<const uint4*>(st + kABytes + ((wn * kWarpsK + wk) * kSlices + h) * kTileBytes + lane * 16);
  wq[0] = wv.x;
  wq[1] = wv.y;
  wq[2] = wv.z;
  wq[3] = wv.w;
}

template <typename T, int MT, bool ZP>
__global__ void __launch_bounds__(kThreads, MT == 4 ? 1 : 2) w4a16_mma_kernel(const Params p) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ int s_last;
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
    mma_load<T, MT, ZP>(p, tid, lane, wn, wk, n_block, it_begin, nt, nt_ok, group_rows, m0, a, slot, it);
  };

  float acc[MT][8][4];
  mma_zero(acc);

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
      mma_group<T, MT, ZP>(p, st, k0, grp, wn, g, sw, zn);
    }
#pragma unroll
    for (int h = 0; h < kSlices; ++h) {
      std::uint32_t af[MT][4], wq[4];
      mma_operands<MT>(st, wn, wk, lane, h, af, wq);
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

// Few tokens (m <= 16; by default on sm_90 only 1-8, the wide kernel's wgmma form taking 9-16
// in 16-row tiles): the streaming kernel. A CTA of 8 warps owns 128 columns (2 warps of 64
// across n) and a k range (split-k); its 4 warps along k take every fourth stage (4 k-tiles, 64
// deep) of that range. Each warp keeps its own ring of kRing stages in shared memory, filled by
// its own lanes with cp.async (the weight bytes each lane dequantises, the stage's A rows, scale
// rows and zero words), so warps never wait for each other until the end: the ring keeps
// kRing - 1 stages of weights in flight per warp while it computes one.
//
// Operands are swapped: D^T = W^T A^T, so the weights are the mma's A operand (16 columns of W
// a row block) and the few tokens its n8 B operand; a 64-column tile takes 4 mma per k-tile (8
// with more than 8 tokens), and no fragment row is wasted on absent tokens. The weights enter
// the tensor cores as exact integers q - z; each stage's products gather in fp32 and are scaled
// once per group row (fp32 scale), so D carries no rounding of the weights.
//   R16    tokens 9-16 present: a second B operand and accumulator set
//   MULTI  groups of 32: two scale and zero rows per stage (else one)
constexpr int kStreamTiles = 4;  // k-tiles per stage
template <bool R16>
__host__ __device__ constexpr int ring_stages() {
  return R16 ? 3 : 4;  // stages per warp's ring: 2 CTAs an SM within 227 KB of shared memory
}
constexpr int kARowBytes = kStreamTiles * kTileK * 2 + 16;  // 144: padded, conflict-free fragment loads

template <bool R16>
__host__ __device__ constexpr int stream_stage_bytes() {
  return kStreamTiles * kTileBytes + (R16 ? 16 : 8) * kARowBytes + 2 * 8 * 16 + 2 * 8 * 4;
}
template <bool R16>
__host__ __device__ constexpr int stream_smem_bytes() {
  return kThreads / 32 * ring_stages<R16>() * stream_stage_bytes<R16>();
}

// q - z of one code word as mma A-operand registers {a0, a1, a2, a3} (rows g and g + 8 of the
// 16-column block = sub-tiles 2w and 2w+1; k 0-7 and 8-15), exact in either type. zlo/zhi:
// -(MAGIC + z) for the nibbles at bits 0-3 and 8-11 of each half; for fp16 the nibbles at bits
// 4-7 and 12-15 are used in place (1024 + 16 q, times 1/16 in the fma: no shift), so their zero
// term is -(64 + z), for bf16 (whose exponent reaches bit 7) they are shifted down first.
template <typename T>
__device__ __forceinline__ void codes_to_a(std::uint32_t q, std::uint32_t zlo0, std::uint32_t zhi0, std::uint32_t zlo1,
                                           std::uint32_t zhi1, std::uint32_t (&a)[4]) {
  constexpr std::uint32_t magic2 = Bits<T>::magic * 0x10001u;
  const std::uint32_t q8 = q >> 8;
  std::uint32_t x[4];  // register i of the layout: sub-tile 2w + i/2, k half i%2
  x[0] = fma2<T>(lop3_and_or(q, 0x000f000fu, magic2), Bits<T>::one2, zlo0);
  x[2] = fma2<T>(lop3_and_or(q8, 0x000f000fu, magic2), Bits<T>::one2, zlo1);
  if constexpr (std::is_same_v<T, __half>) {
    constexpr std::uint32_t sixteenth2 = 0x2C002C00u;  // 1/16
    x[1] = fma2<T>(lop3_and_or(q, 0x00f000f0u, magic2), sixteenth2, zhi0);
    x[3] = fma2<T>(lop3_and_or(q8, 0x00f000f0u, magic2), sixteenth2, zhi1);
  } else {
    x[1] = fma2<T>(lop3_and_or(q >> 4, 0x000f000fu, magic2), Bits<T>::one2, zhi0);
    x[3] = fma2<T>(lop3_and_or(q >> 12, 0x000f000fu, magic2), Bits<T>::one2, zhi1);
  }
  a[0] = x[0];  // row g, k 0-7
  a[1] = x[2];  // row g + 8, k 0-7
  a[2] = x[1];  // row g, k 8-15
  a[3] = x[3];  // row g + 8, k 8-15
}

// -(MAGIC + z) and the in-place nibbles' zero term, both halves, for zero code z.
template <typename T>
__device__ __forceinline__ std::uint32_t zero_lo(std::uint32_t z) {
  return (Bits<T>::neg_magic | z) * 0x10001u;
}
template <typename T>
__device__ __forceinline__ std::uint32_t zero_hi(std::uint32_t z) {
  if constexpr (std::is_same_v<T, __half>) return (0xD400u | (z << 4)) * 0x10001u;  // -(64 + z)
  return zero_lo<T>(z);
}

// codes_to_a's zero terms for code word w of a lane from its zero word (nibble j: sub-tile j):
// sub-tile 2w (lo0, hi0) and 2w + 1 (lo1, hi1).
template <typename T>
__device__ __forceinline__ void zero_terms(std::uint32_t zw, int w, std::uint32_t& lo0, std::uint32_t& hi0,
                                           std::uint32_t& lo1, std::uint32_t& hi1) {
  const std::uint32_t z0 = (zw >> (8 * w)) & 0xFu, z1 = (zw >> (8 * w + 4)) & 0xFu;
  lo0 = zero_lo<T>(z0);
  hi0 = zero_hi<T>(z0);
  lo1 = zero_lo<T>(z1);
  hi1 = zero_hi<T>(z1);
}

template <typename T>
__device__ __forceinline__ float to_float(std::uint16_t bits);
template <>
__device__ __forceinline__ float to_float<__half>(std::uint16_t bits) {
  __half_raw r;
  r.x = bits;
  return __half2float(__half(r));
}
template <>
__device__ __forceinline__ float to_float<__nv_bfloat16>(std::uint16_t bits) {
  return __uint_as_float(static_cast<std::uint32_t>(bits) << 16);
}

// ------------------------------------------------------------------ the streaming kernel's parts
// The state of w4a16_stream_kernel stays in the kernel's locals, declared in the kernel's order;
// a part returns nothing and takes the arrays and what it changes by reference (stream_load from
// the kernel's load lambda). Written this way the kernel's machine code is the same as with the
// parts in its body (scripts/sass-diff.py); how a part takes a scalar is part of that: the lane
// values g and t by reference change where the compiler recomputes them from threadIdx, and wk by
// value swaps the operands of a compare (one instruction).

// Every element of a warp's sums set to 0 (acc, and each stage's part).
template <int S>
__device__ __forceinline__ void stream_zero(float (&x)[S][4][4]) {
#pragma unroll
  for (int h = 0; h < S; ++h)
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int c = 0; c < 4; ++c) x[h][i][c] = 0.0f;
}

// The copies of one stage into ring slot load_slot: weights (the lane's own 16 bytes of each
// k-tile), A rows (token g, and g + 8 with R16: 2 chunks of 16 bytes a lane, zero-filled past
// m), scale rows (lanes t = 0, 1: row t, the 8 scales of column group g) and zero words (t = 2,
// 3); then the sources advance by one stage of this warp (kWarpsK stages) and the slot by one.
template <typename T, bool ZP, bool R16>
__device__ __forceinline__ void stream_load(
    const Params& p, const int& lane, const int& t, const std::size_t& tile_stride, const unsigned char*& w_src,
    const T* (&a_src)[R16 ? 2 : 1], const bool (&a_ok)[R16 ? 2 : 1], const int& shift,
    const unsigned char* const& s_col, const std::uint32_t* const& z_col, int& k_row, const std::uint32_t& ring_begin,
    const std::uint32_t& ring_end, const std::uint32_t& off_a, const std::uint32_t& off_sz, std::uint32_t& load_slot) {
  constexpr int kSets = R16 ? 2 : 1;
  constexpr int kStage = stream_stage_bytes<R16>();
#pragma unroll
  for (int u = 0; u < kStreamTiles; ++u)
    sm80::cp_async16(load_slot + u * kTileBytes + lane * 16, w_src + u * tile_stride, true);
#pragma unroll
  for (int h = 0; h < kSets; ++h)
#pragma unroll
    for (int c = 0; c < 2; ++c)
      sm80::cp_async16(load_slot + off_a + h * 8 * kARowBytes + c * 16, a_src[h] + c * 8, a_ok[h]);
  const int gr = shift >= 0 ? k_row >> shift : k_row / p.group;
  cp_async16_if(t < 2, load_slot + off_sz, s_col + static_cast<std::size_t>(gr) * p.n * 2);
  if (ZP) cp_async4_if(t >= 2, load_slot + off_sz, z_col + static_cast<std::size_t>(gr) * p.ntn * 8);
  w_src += kWarpsK * kStreamTiles * tile_stride;
#pragma unroll
  for (int h = 0; h < kSets; ++h) a_src[h] += kWarpsK * kStreamTiles * kTileK;
  k_row += kWarpsK * kStreamTiles * kTileK;
  load_slot = load_slot + kStage == ring_end ? ring_begin : load_slot + kStage;
}

// The k-warps' partial sums meet in shared memory red (the rings are done with), one k-warp
// after the other: red[token][column], token 2t + c%2 (+ 8 for the second set), column
// wn * 64 + 16 w + g (+ 8 for c >= 2).
template <bool R16>
__device__ __forceinline__ void stream_reduce(float* red, const int& wk, bool nt_ok, int wn, int g, int t,
                                              const float (&acc)[R16 ? 2 : 1][4][4]) {
  constexpr int kSets = R16 ? 2 : 1;
#pragma unroll 1
  for (int q = 0; q < kWarpsK; ++q) {
    if (wk == q && nt_ok) {
#pragma unroll
      for (int h = 0; h < kSets; ++h)
#pragma unroll
        for (int w = 0; w < 4; ++w)
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            const int row = 8 * h + 2 * t + (c & 1), col = wn * 64 + 16 * w + g + (c >= 2 ? 8 : 0);
            float* x = &red[row * kRedStride + col];
            *x = q == 0 ? acc[h][w][c] : *x + acc[h][w][c];
          }
    }
    __syncthreads();
  }
}

// Two CTAs an SM (128 registers), but one for 9-16 tokens with zero points or groups of 32
// (which need more registers than that: no spills).
template <typename T, bool ZP, bool MULTI, bool R16>
__global__ void __launch_bounds__(kThreads, R16 && (ZP || MULTI) ? 1 : 2) w4a16_stream_kernel(const Params p) {
  constexpr int kSets = R16 ? 2 : 1;  // B operands: tokens 0-7, 8-15
  constexpr int kRing = ring_stages<R16>();
  constexpr int kStage = stream_stage_bytes<R16>();
  constexpr int kOffA = kStreamTiles * kTileBytes, kOffS = kOffA + (R16 ? 16 : 8) * kARowBytes,
                kOffZ = kOffS + 2 * 8 * 16;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ int s_last;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wn = warp / kWarpsK, wk = warp % kWarpsK;
  const int g = lane / 4, t = lane % 4;
  // m tile fastest, as in the fused kernel (more than one only where a 16-row tile is forced);
  // in a cluster the splits of a tile are neighbours (the cluster's CTAs), then the m tile.
  const int cl_splits = p.cluster ? p.splits : 1;
  const int tile_id = blockIdx.x / cl_splits;
  const int m_block = tile_id % p.m_tiles, n_block = (tile_id / p.m_tiles) % p.nb,
            split = p.cluster ? static_cast<int>(blockIdx.x % p.splits) : blockIdx.x / (p.m_tiles * p.nb);
  const int stages = p.k / (kStreamTiles * kTileK);
  const int s_begin = static_cast<int>(static_cast<long long>(split) * stages / p.splits);
  const int s_end = static_cast<int>(static_cast<long long>(split + 1) * stages / p.splits);
  const int nt = n_block * 2 + wn;
  const bool nt_ok = nt < p.ntn;
  const int m0 = m_block * 16;
  // This warp's stages: s_begin + wk, + 4, ... below s_end.
  const int my_stages = nt_ok && s_begin + wk < s_end ? (s_end - s_begin - wk + kWarpsK - 1) / kWarpsK : 0;
  unsigned char* ring = smem + warp * kRing * kStage;

  // The copies of one stage into a ring slot (stream_load): shared addresses are a slot base plus
  // the lane's fixed offsets; source pointers advance by one stage of this warp per load.
  const std::size_t tile_stride = static_cast<std::size_t>(p.ntn) * kTileBytes;
  const int first = s_begin + wk;  // this warp's first stage
  const unsigned char* w_src =
      p.w + (static_cast<std::size_t>(first) * kStreamTiles * p.ntn + nt) * kTileBytes + lane * 16;
  const T* a_src[kSets];
  bool a_ok[kSets];
#pragma unroll
  for (int h = 0; h < kSets; ++h) {
    const int gm = m0 + g + 8 * h;
    a_ok[h] = gm < p.m;
    a_src[h] = static_cast<const T*>(p.a) + static_cast<std::size_t>(a_ok[h] ? gm : 0) * p.k +
               first * kStreamTiles * kTileK + t * 16;
  }
  // Scale and zero rows: lane's row r = t % 2 of the stage (k0 + 32 r) / group; by a shift
  // where the group is a power of two or the whole column, else by a division.
  const int r_own = t & 1;
  const int shift = p.group_shift;
  const unsigned char* s_col = p.s + (static_cast<std::size_t>(nt) * kTileN + g * 8) * 2;
  const std::uint32_t* z_col = ZP ? p.z + static_cast<std::size_t>(nt) * 8 + g : nullptr;
  int k_row = first * kStreamTiles * kTileK + 32 * r_own;  // k of the lane's scale row
  const std::uint32_t ring_begin = static_cast<std::uint32_t>(__cvta_generic_to_shared(ring));
  const std::uint32_t ring_end = ring_begin + kRing * kStage;
  const std::uint32_t off_a = kOffA + g * kARowBytes + t * 32;
  const std::uint32_t off_sz = t < 2 ? kOffS + (r_own * 8 + g) * 16 : kOffZ + (r_own * 8 + g) * 4;
  std::uint32_t load_slot = ring_begin;
  auto load = [&]() {
    stream_load<T, ZP, R16>(p, lane, t, tile_stride, w_src, a_src, a_ok, shift, s_col, z_col, k_row, ring_begin,
                            ring_end, off_a, off_sz, load_slot);
  };

  float acc[kSets][4][4], part[kSets][4][4];
  stream_zero(acc);

#pragma unroll
  for (int s = 0; s < kRing - 1; ++s) {
    if (s < my_stages) load();
    cp_commit();
  }
  constexpr std::uint32_t kZlo = (Bits<T>::neg_magic | kSymmetricZero) * 0x10001u;
  const std::uint32_t kZhi = zero_hi<T>(kSymmetricZero);

  const unsigned char* st = ring;  // the slot computed on
  for (int it = 0; it < my_stages; ++it) {
    cp_wait<kRing - 2>();
    __syncwarp();  // the lanes' copies of this stage (A rows, scales, zeros are shared in the warp)
    if (it + kRing - 1 < my_stages) load();
    cp_commit();
    stream_zero(part);
#pragma unroll
    for (int u = 0; u < kStreamTiles; ++u) {
      const int r = MULTI ? u / 2 : 0;  // scale / zero row of this k-tile
      const uint4 wv = *reinterpret_cast<const uint4*>(st + u * kTileBytes + lane * 16);
      const std::uint32_t wq[4] = {wv.x, wv.y, wv.z, wv.w};
      std::uint32_t zw = 0;
      if (ZP) zw = *reinterpret_cast<const std::uint32_t*>(st + kOffZ + (r * 8 + g) * 4);
      std::uint32_t b[kSets][2];
#pragma unroll
      for (int h = 0; h < kSets; ++h) {
        const unsigned char* row = st + kOffA + (g + 8 * h) * kARowBytes + u * 32 + t * 4;
        b[h][0] = *reinterpret_cast<const std::uint32_t*>(row);       // k 2t, 2t+1
        b[h][1] = *reinterpret_cast<const std::uint32_t*>(row + 16);  // k 2t+8, 2t+9
      }
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        std::uint32_t zl0 = kZlo, zh0 = kZhi, zl1 = kZlo, zh1 = kZhi;
        if (ZP) zero_terms<T>(zw, w, zl0, zh0, zl1, zh1);
        std::uint32_t af[4];
        codes_to_a<T>(wq[w], zl0, zh0, zl1, zh1, af);
#pragma unroll
        for (int h = 0; h < kSets; ++h) mma16816<T>(part[h][w], af, b[h][0], b[h][1]);
      }
      // The stage's products, times the scales of their group row, into the accumulators: at
      // the end of each 32 k with groups of 32, else at the stage's end (one group row).
      if (u == kStreamTiles - 1 || (MULTI && u % 2 == 1)) {
        const uint4 sv = *reinterpret_cast<const uint4*>(st + kOffS + (r * 8 + g) * 16);
        const std::uint32_t sw[4] = {sv.x, sv.y, sv.z, sv.w};
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          const float s_lo = to_float<T>(static_cast<std::uint16_t>(sw[w] & 0xFFFFu));  // column 16w + g
          const float s_hi = to_float<T>(static_cast<std::uint16_t>(sw[w] >> 16));      // column 16w + 8 + g
#pragma unroll
          for (int h = 0; h < kSets; ++h) {
            acc[h][w][0] = fmaf(part[h][w][0], s_lo, acc[h][w][0]);
            acc[h][w][1] = fmaf(part[h][w][1], s_lo, acc[h][w][1]);
            acc[h][w][2] = fmaf(part[h][w][2], s_hi, acc[h][w][2]);
            acc[h][w][3] = fmaf(part[h][w][3], s_hi, acc[h][w][3]);
            if (MULTI)
#pragma unroll
              for (int c = 0; c < 4; ++c) part[h][w][c] = 0.0f;
          }
        }
      }
    }
    st = st + kStage == ring + kRing * kStage ? ring : st + kStage;
  }

  // The k-warps' partial sums meet in shared memory (stream_reduce), then D.
  cp_wait<0>();
  __syncthreads();
  float* red = reinterpret_cast<float*>(smem);
  stream_reduce<R16>(red, wk, nt_ok, wn, g, t, acc);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (p.cluster) {
    cluster_store_tile<T>(p, red, split, m_block, n_block);
    return;
  }
#endif
  store_tile<T>(p, red, &s_last, 16, m_block, n_block);
}

// 17 tokens and more: the wide kernel. A CTA of 8 warps owns 256 columns (4 weight tiles, two
// warps of 32 columns each per tile) and 32 or 64 token rows, over a k range (split-k), in
// CTA-wide cp.async stages of 128 k (8 k-tiles). Every warp covers the stage's whole depth for
// its own columns, so the k loop has no reduction between warps, and the stage's activations (as
// many bytes as its weights at 64 tokens) are read once for all 8 warps.
//
// Operands are swapped as in the streaming kernel: D^T = W^T A^T, the weights are the mma's A
// operand (one code word, 16 columns x 16 k, a fragment: no shifts for fp16's high nibbles) and
// each 8 tokens a B operand, loaded with ldmatrix from XOR-swizzled 256-byte token rows. A
// dequantised fragment, (q - z) * s rounded once as in the staged kernel, feeds SETS mma (8 at 64
// tokens), so the dequantisation costs about 1.5 instructions an mma.
//   SETS  token sets of 8: 4 (32-row tiles) or 8 (64-row tiles); 2 (16-row tiles) in the wgmma
//         form only, where it takes 9-16 tokens in place of the streaming kernel
constexpr int kWideN = 256;                                          // columns per CTA
constexpr int kWideTiles = 8;                                        // k-tiles per stage
constexpr int kWideK = kWideTiles * kTileK;                          // 128
constexpr int kWideW = kWideTiles * (kWideN / kTileN) * kTileBytes;  // 16384 weight bytes a stage
constexpr int kWideS = 4 * kWideN * 2;                               // up to 4 scale rows (groups of 32)
constexpr int kWideZ = 4 * (kWideN / kTileN) * 32;                   // up to 4 rows of zero words
constexpr int kWideRed = kWideN + 4;                                 // floats per row of the final tile
template <int SETS>
__host__ __device__ constexpr int wide_stages() {
  return SETS == 8 ? 3 : 4;  // two CTAs an SM within 227 KB of shared memory
}
// WG (the wgmma form): stages 1024-aligned (the tokens' 128-byte swizzle repeats every 1024 bytes),
// and 1024 bytes more to align the first.
template <int SETS, bool WG = false>
__host__ __device__ constexpr int wide_stage_bytes() {
  constexpr int bytes = SETS * 8 * kWideK * 2 + kWideW + kWideS + kWideZ;  // token rows of 128 halves first
  return WG ? (bytes + 1023) / 1024 * 1024 : bytes;
}
template <int SETS, bool WG = false>
__host__ __device__ constexpr int wide_smem_bytes() {
  return (wide_stages<SETS>() * wide_stage_bytes<SETS, WG>() > SETS * 8 * kWideRed * 4
              ? wide_stages<SETS>() * wide_stage_bytes<SETS, WG>()
              : SETS * 8 * kWideRed * 4) +
         (WG ? 1024 : 0);
}

template <typename T>
__device__ __forceinline__ std::uint32_t mul2(std::uint32_t a, std::uint32_t b) {
  return fma2<T>(a, b, 0x80008000u);  // a * b (+ -0: exact)
}

// The wide kernel's wgmma steps (sm_90a; empty elsewhere, where that kernel traps first).
// One k-tile: a warpgroup's two products (its warps' fragments a0 and a1, the tokens at desc),
// then a wait for the previous k-tile's, whose A registers are then free.
template <typename T, int N>
__device__ __forceinline__ void wide_wgmma(float (&d0)[N / 2], float (&d1)[N / 2], const std::uint32_t (&a0)[4],
                                           const std::uint32_t (&a1)[4], std::uint64_t desc) {
#if defined(GENBENCH_SM90A_ENABLED)
  constexpr bool kBF16 = std::is_same_v<T, __nv_bfloat16>;
  sm90::wgmma_fence();
  sm90::wgmma_rs<N, kBF16>(d0, a0, desc, 1);
  sm90::wgmma_rs<N, kBF16>(d1, a1, desc, 1);
  sm90::wgmma_commit();
  sm90::wgmma_wait<1>();
#endif
}
// All of the warpgroup's products done (its stage's slot can be refilled, its accumulators read).
__device__ __forceinline__ void wide_wgmma_drain() {
#if defined(GENBENCH_SM90A_ENABLED)
  sm90::wgmma_wait<0>();
#endif
}
// This thread's cp.async writes of the tokens made visible to wgmma (the async proxy).
__device__ __forceinline__ void wide_fence_proxy() {
#if defined(GENBENCH_SM90A_ENABLED)
  sm90::fence_proxy_async_shared();
#endif
}
// The descriptor of a stage's tokens (two 64-k blocks of 128-byte swizzled rows) at `addr`.
__device__ __forceinline__ std::uint64_t wide_token_desc(std::uint32_t addr) {
#if defined(GENBENCH_SM90A_ENABLED)
  return sm90::make_desc_kmajor<128>(addr);
#else
  return addr;
#endif
}

// ------------------------------------------------------------------ the wide kernel's parts
// As the streaming kernel's: the state stays in w4a16_wide_kernel's locals, a part takes the
// arrays and what it changes by reference (wide_load from the kernel's load lambda), the values
// it only reads by value.

// This thread's copies of one stage into the slot at load_slot: A pieces (zero-filled past m),
// weight pieces, and its scale or zero row; then the sources and the slot advance by one stage.
template <typename T, bool ZP, int SETS, bool WG>
__device__ __forceinline__ void wide_load(const Params& p, const int& tid, const int& a_row, const int& rows_left,
                                          const T*& a_src, const std::size_t& a_step, const std::uint32_t& a_dst,
                                          const std::size_t& tile_stride, bool w_ok, const unsigned char*& w_src,
                                          bool s_copy, bool z_copy, const unsigned char* const& s_src,
                                          const unsigned char* const& z_src, const std::uint32_t& sz_dst,
                                          const int& shift, int& k_row, const std::uint32_t& smem0,
                                          std::uint32_t& load_slot) {
  constexpr int kRows = SETS * 8;
  constexpr int kRowBytes = kWideK * 2;
  constexpr int kOffW = kRows * kRowBytes;
  constexpr int kStage = wide_stage_bytes<SETS, WG>();
  constexpr int kStages = wide_stages<SETS>();
  constexpr int kAChunks = kRows * 16 / kThreads;           // 16-byte pieces of A a thread copies a stage
  constexpr int kWChunks = kWideW / 16 / kThreads;          // and of weights (4)
  constexpr int kARows16 = WG ? 16 * 128 : 16 * kRowBytes;  // 16 token rows further
#pragma unroll
  for (int e = 0; e < kAChunks; ++e) {
    const bool ok = 16 * e + a_row < rows_left;
    sm80::cp_async16(load_slot + a_dst + e * kARows16, ok ? a_src + e * a_step : a_src, ok);
  }
  a_src += kWideK;
#pragma unroll
  for (int e = 0; e < kWChunks; ++e)
    cp_async16_if(w_ok, load_slot + kOffW + (tid + e * kThreads) * 16, w_src + 2 * e * tile_stride);
  w_src += kWideTiles * tile_stride;
  const int gr = shift >= 0 ? k_row >> shift : k_row / p.group;
  cp_async16_if(s_copy, load_slot + sz_dst, s_src + static_cast<std::size_t>(gr) * p.n * 2);
  if (ZP) cp_async16_if(z_copy, load_slot + sz_dst, z_src + static_cast<std::size_t>(gr) * p.ntn * 32);
  k_row += kWideK;
  load_slot = load_slot + kStage == smem0 + kStages * kStage ? smem0 : load_slot + kStage;
}

// Every element of a thread's accumulators set to 0.
template <int SETS>
__device__ __forceinline__ void wide_zero(float (&acc)[2][SETS][4]) {
#pragma unroll
  for (int f = 0; f < 2; ++f)
#pragma unroll
    for (int h = 0; h < SETS; ++h)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[f][h][c] = 0.0f;
}

// The warp's sums into the tile in shared memory red: red[token][column], token 8 h + 2 t + c % 2,
// column 64 wt + 16 w + g (+ 8 for c >= 2), for code word w = 2 half + f of its tile.
template <int SETS>
__device__ __forceinline__ void wide_to_red(float* red, bool nt_ok, int g, int t, int wt, int half,
                                            const float (&acc)[2][SETS][4]) {
  if (nt_ok) {
#pragma unroll
    for (int f = 0; f < 2; ++f)
#pragma unroll
      for (int h = 0; h < SETS; ++h)
#pragma unroll
        for (int c = 0; c < 4; ++c)
          red[(8 * h + 2 * t + (c & 1)) * kWideRed + wt * 64 + 16 * (2 * half + f) + g + (c >= 2 ? 8 : 0)] =
              acc[f][h][c];
  }
}

// Where k-tile u starts a group row (row_shift: k-tiles per row, as a shift): the row's scales
// of the warp's two code words, in both halves (s_lo, s_hi), and their zero terms (zl, zh;
// the symmetric zero kZlo, kZhi without ZP).
template <typename T, bool ZP>
__device__ __forceinline__ void wide_group_row(std::uint32_t st, std::uint32_t s_off, std::uint32_t z_off, int half,
                                               std::uint32_t kZlo, std::uint32_t kZhi, int u, int row_shift,
                                               std::uint32_t (&s_lo)[2], std::uint32_t (&s_hi)[2],
                                               std::uint32_t (&zl)[2][2], std::uint32_t (&zh)[2][2]) {
  if (u == 0 || ((u >> row_shift) << row_shift) == u) {  // the scales and zeros of this k-tile's group row
    const std::uint32_t row = u >> row_shift;
    std::uint32_t s0, s1;
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n" : "=r"(s0), "=r"(s1) : "r"(st + s_off + row * kWideN * 2));
    s_lo[0] = __byte_perm(s0, 0, 0x1010);
    s_hi[0] = __byte_perm(s0, 0, 0x3232);
    s_lo[1] = __byte_perm(s1, 0, 0x1010);
    s_hi[1] = __byte_perm(s1, 0, 0x3232);
#pragma unroll
    for (int f = 0; f < 2; ++f) {
      zl[f][0] = kZlo;
      zh[f][0] = kZhi;
      zl[f][1] = kZlo;
      zh[f][1] = kZhi;
    }
    if (ZP) {
      std::uint32_t zw;
      asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(zw) : "r"(st + z_off + row * 128));
#pragma unroll
      for (int f = 0; f < 2; ++f)  // code word 2 half + f of the tile
        zero_terms<T>(zw, 2 * half + f, zl[f][0], zh[f][0], zl[f][1], zh[f][1]);
    }
  }
}

// The warp's two code words of k-tile u (WG: the ones loaded a k-tile ahead in qn0, qn1, which
// take the next k-tile's) as A fragments af, q - z times the scales.
template <typename T, bool WG>
__device__ __forceinline__ void wide_fragments(std::uint32_t st, std::uint32_t w_off, int u, std::uint32_t& qn0,
                                               std::uint32_t& qn1, const std::uint32_t (&s_lo)[2],
                                               const std::uint32_t (&s_hi)[2], const std::uint32_t (&zl)[2][2],
                                               const std::uint32_t (&zh)[2][2], std::uint32_t (&af)[2][4]) {
  std::uint32_t q0, q1;
  if constexpr (WG) {
    q0 = qn0;
    q1 = qn1;
    if (u + 1 < kWideTiles)
      asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n"
                   : "=r"(qn0), "=r"(qn1)
                   : "r"(st + w_off + (u + 1) * 4 * kTileBytes));
  } else {
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n" : "=r"(q0), "=r"(q1) : "r"(st + w_off + u * 4 * kTileBytes));
  }
  codes_to_a<T>(q0, zl[0][0], zh[0][0], zl[0][1], zh[0][1], af[0]);
  codes_to_a<T>(q1, zl[1][0], zh[1][0], zl[1][1], zh[1][1], af[1]);
#pragma unroll
  for (int f = 0; f < 2; ++f) {  // rows g (sub-tile 2w): s_lo; rows g + 8 (2w + 1): s_hi
    af[f][0] = mul2<T>(af[f][0], s_lo[f]);
    af[f][2] = mul2<T>(af[f][2], s_lo[f]);
    af[f][1] = mul2<T>(af[f][1], s_hi[f]);
    af[f][3] = mul2<T>(af[f][3], s_hi[f]);
  }
}

// The mma of k-tile u (ldmatrix form): the tokens' B fragments, two token sets a load, each
// with the warp's two A fragments af into acc.
template <typename T, int SETS>
__device__ __forceinline__ void wide_mma(std::uint32_t st, std::uint32_t b_off, int u, const std::uint32_t (&af)[2][4],
                                         float (&acc)[2][SETS][4]) {
  constexpr int kRowBytes = kWideK * 2;
  const std::uint32_t b_u = st + (b_off ^ (32u * u));
#pragma unroll
  for (int pr = 0; pr < SETS / 2; ++pr) {
    std::uint32_t b[4];
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
                 : "r"(b_u + pr * 16 * kRowBytes));
#pragma unroll
    for (int f = 0; f < 2; ++f) {
      mma16816<T>(acc[f][2 * pr], af[f], b[0], b[1]);
      mma16816<T>(acc[f][2 * pr + 1], af[f], b[2], b[3]);
    }
  }
}

//   WG    sm_90a: the products on wgmma (register A, m64 x tokens x k16: a warpgroup's two per
//         k-tile are its 4 warps' 2 fragments each), the tokens in shared memory as two 64-k
//         blocks of 128-byte rows in the 128-byte swizzle wgmma reads (row r's 16-byte piece c
//         at c ^ (r % 8)), read through descriptors instead of ldmatrix
template <typename T, bool ZP, int SETS, bool WG = false>
__global__ void __launch_bounds__(kThreads, 2) w4a16_wide_kernel(const Params p) {
#if !defined(GENBENCH_SM90A_ENABLED)
  if constexpr (WG) {  // built for sm_90a only; the host never launches it elsewhere
    __trap();
    return;
  }
#endif
  constexpr int kRows = SETS * 8;
  constexpr int kRowBytes = kWideK * 2;  // 256
  constexpr int kOffW = kRows * kRowBytes, kOffS = kOffW + kWideW, kOffZ = kOffS + kWideS;
  constexpr int kStage = wide_stage_bytes<SETS, WG>();
  constexpr int kStages = wide_stages<SETS>();
  constexpr int kAChunks = kRows * 16 / kThreads;  // 16-byte pieces of A a thread copies a stage (4, 2 or 1)
  static_assert(kAChunks >= 1 && (WG || SETS >= 4), "16-row tiles are the wgmma form's only");
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ int s_last;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int m_block = blockIdx.x % p.m_tiles, n_block = (blockIdx.x / p.m_tiles) % p.nb,
            split = blockIdx.x / (p.m_tiles * p.nb);
  const int stages = p.k / kWideK;
  const int s_begin = static_cast<int>(static_cast<long long>(split) * stages / p.splits);
  const int n_stages = static_cast<int>(static_cast<long long>(split + 1) * stages / p.splits) - s_begin;
  const int nt0 = n_block * (kWideN / kTileN);
  const int wt = warp >> 1, half = warp & 1;  // this warp's tile of the four, and its 32 columns in it
  const bool nt_ok = nt0 + wt < p.ntn;
  // WG: a warpgroup (tiles 2 wg and 2 wg + 1) runs its products together while its first tile is in n
  const bool run_ok = WG ? nt0 + 2 * (warp >> 2) < p.ntn : nt_ok;
  const int m0 = m_block * kRows;
  // Scale and zero rows of a stage: groups of 32 -> 4, 64 -> 2, else 1 (each 128 k in one group);
  // k-tile u takes row u >> row_shift.
  const int row_k = p.group < kWideK ? p.group : kWideK;
  const int n_rows = kWideK / row_k;
  const int row_shift = row_k == 32 ? 1 : row_k == 64 ? 2 : 3;
  const int shift = p.group_shift;
  const std::uint32_t smem0 = WG ? (static_cast<std::uint32_t>(__cvta_generic_to_shared(smem)) + 1023u) & ~1023u
                                 : static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));

  // This thread's copies of a stage. A: token rows 16 e + tid / 16 (zero-filled past m), piece
  // tid % 16 of the row; weights: linear in the stage (k-tile, tile, lane), pieces tid + 256 e,
  // all of one tile (tid / 32 % 4); scales (tid < 32 rows: row tid / 32) or zero words (128 <=
  // tid < 128 + 8 rows).
  const int a_row = tid >> 4, a_ch = tid & 15;
  const int rows_left = p.m - m0;
  const T* a_src = static_cast<const T*>(p.a) + static_cast<std::size_t>(m0 + (a_row < rows_left ? a_row : 0)) * p.k +
                   static_cast<std::size_t>(s_begin) * kWideK + a_ch * 8;
  const std::size_t a_step = static_cast<std::size_t>(16) * p.k;  // 16 token rows
  const std::uint32_t a_dst = WG ? (a_ch >> 3) * (kRows * 128) + a_row * 128 + (((a_ch & 7) ^ (a_row & 7)) << 4)
                                 : a_row * kRowBytes + ((a_ch ^ (a_row & 7)) << 4);
  const std::size_t tile_stride = static_cast<std::size_t>(p.ntn) * kTileBytes;  // one k-tile row of W
  const int w_tile = (tid >> 5) & 3;
  const bool w_ok = nt0 + w_tile < p.ntn;
  const unsigned char* w_src = p.w + (static_cast<std::size_t>(s_begin) * kWideTiles + (tid >> 7)) * tile_stride +
                               static_cast<std::size_t>(w_ok ? nt0 + w_tile : 0) * kTileBytes + lane * 16;
  const bool s_thread = tid < 128;
  const int sz_row = s_thread ? tid >> 5 : (tid - 128) >> 3;  // scale or zero row of this thread
  const bool s_copy = s_thread && sz_row < n_rows && nt0 + ((tid & 31) >> 3) < p.ntn;
  const bool z_copy = ZP && !s_thread && sz_row < n_rows && nt0 + (((tid - 128) & 7) >> 1) < p.ntn;
  const unsigned char* s_src = p.s + (static_cast<std::size_t>(nt0) * kTileN + (tid & 31) * 8) * 2;
  const unsigned char* z_src =
      ZP ? reinterpret_cast<const unsigned char*>(p.z) + static_cast<std::size_t>(nt0) * 32 + ((tid - 128) & 7) * 16
         : nullptr;
  const std::uint32_t sz_dst =
      s_thread ? kOffS + sz_row * (kWideN * 2) + (tid & 31) * 16 : kOffZ + sz_row * 128 + ((tid - 128) & 7) * 16;
  int k_row = s_begin * kWideK + row_k * (sz_row < n_rows ? sz_row : 0);  // k of this thread's scale / zero row

  std::uint32_t load_slot = smem0;
  auto load = [&]() {
    wide_load<T, ZP, SETS, WG>(p, tid, a_row, rows_left, a_src, a_step, a_dst, tile_stride, w_ok, w_src, s_copy, z_copy,
                               s_src, z_src, sz_dst, shift, k_row, smem0, load_slot);
  };

  float acc[2][SETS][4];
  wide_zero(acc);

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < n_stages) load();
    cp_commit();
  }

  // ldmatrix.x4 of two token sets of one k-tile: lanes 0-7 tokens 0-7 k 0-7, 8-15 the same tokens
  // k 8-15, 16-31 tokens 8-15. Piece 2 u + (lane / 8) % 2 of row r sits at piece (2 u + ...) ^ (r % 8),
  // so k-tile u's offset is the k-tile 0 one XOR 32 u.
  const int b_row = (lane & 7) + ((lane >> 4) << 3);
  const std::uint32_t b_off = b_row * kRowBytes + ((((lane >> 3) & 1) ^ (b_row & 7)) << 4);
  const std::uint32_t w_off = kOffW + wt * kTileBytes + lane * 16 + half * 8;
  const std::uint32_t s_off = kOffS + wt * 128 + g * 16 + half * 8;
  const std::uint32_t z_off = kOffZ + wt * 32 + g * 4;
  const std::uint32_t kZlo = zero_lo<T>(kSymmetricZero), kZhi = zero_hi<T>(kSymmetricZero);

  std::uint32_t st = smem0;  // the slot computed on
  for (int it = 0; it < n_stages; ++it) {
    cp_wait<kStages - 2>();
    if constexpr (WG) wide_fence_proxy();
    __syncthreads();
    if (it + kStages - 1 < n_stages) load();
    cp_commit();
    if (run_ok) {
      std::uint32_t s_lo[2], s_hi[2], zl[2][2], zh[2][2];
      const std::uint64_t desc = WG ? wide_token_desc(st) : 0;
      // WG: each k-tile's code words are loaded a k-tile ahead, before the wait on the products
      // two k-tiles back (the wgmma steps' ordering keeps later shared loads behind that wait)
      std::uint32_t qn0 = 0, qn1 = 0;
      if constexpr (WG) asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n" : "=r"(qn0), "=r"(qn1) : "r"(st + w_off));
#pragma unroll
      for (int u = 0; u < kWideTiles; ++u) {
        wide_group_row<T, ZP>(st, s_off, z_off, half, kZlo, kZhi, u, row_shift, s_lo, s_hi, zl, zh);
        std::uint32_t af[2][4];
        wide_fragments<T, WG>(st, w_off, u, qn0, qn1, s_lo, s_hi, zl, zh, af);
        if constexpr (WG) {  // k-tile u: 64-k block u / 4, 32 bytes a k-tile within its rows
          wide_wgmma<T, kRows>(reinterpret_cast<float(&)[SETS * 4]>(acc[0]),
                               reinterpret_cast<float(&)[SETS * 4]>(acc[1]), af[0], af[1],
                               sm90::desc_advance(desc, (u >> 2) * (kRows * 128) + (u & 3) * 32));
          continue;
        }
        wide_mma<T, SETS>(st, b_off, u, af, acc);
      }
      if constexpr (WG) wide_wgmma_drain();
    }
    st = st + kStage == smem0 + kStages * kStage ? smem0 : st + kStage;
  }

  // The tile through shared memory (the stages are done with), then D or the split-k workspace:
  // red[token][column], token 8 h + 2 t + c % 2, column 64 wt + 16 w + g (+ 8 for c >= 2).
  cp_wait<0>();
  __syncthreads();
  float* red = reinterpret_cast<float*>(smem);
  wide_to_red(red, nt_ok, g, t, wt, half, acc);
  __syncthreads();
  store_tile<T, kWideN, kWideRed, 4>(p, red, &s_last, kRows, m_block, n_block);
}

// W^T (n x k, T) from the tiled codes: one warp per 64 x 64 block (4 tiles along k), through
// shared memory so the stores are whole 128-byte rows. K_FAST: blockIdx.x walks k, so the CTAs
// running together write neighbouring 128-byte pieces of the same W^T rows (else it walks n).
template <typename T, bool ZP, bool K_FAST>
__global__ void __launch_bounds__(128) dequant_transposed_kernel(const Params p, T* wt) {
  constexpr int kRow = 64 + 8;  // halves per shared row: conflict-free fragment stores
  __shared__ __align__(16) std::uint16_t sm[4][64 * kRow];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane / 4, t = lane % 4;
  const int nt = (K_FAST ? blockIdx.y : blockIdx.x) * 4 + warp;  // adjacent warps read adjacent tiles
  const int kb = K_FAST ? blockIdx.x : blockIdx.y;
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
  p.group_shift = a.group == a.k ? 31 : -1;  // one group per column: row 0 for every k
  for (int b = 0; b < 31; ++b)
    if ((std::int64_t{1} << b) == a.group) p.group_shift = b;
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
KernelFn pick_stream(bool zp, bool multi, int* smem) {
  *smem = stream_smem_bytes<R16>();
  if (zp) return multi ? w4a16_stream_kernel<T, true, true, R16> : w4a16_stream_kernel<T, true, false, R16>;
  return multi ? w4a16_stream_kernel<T, false, true, R16> : w4a16_stream_kernel<T, false, false, R16>;
}

template <int SETS, bool WG>
KernelFn pick_wide(bool bf16, bool zp, int* smem) {
  *smem = wide_smem_bytes<SETS, WG>();
  if (bf16)
    return zp ? w4a16_wide_kernel<__nv_bfloat16, true, SETS, WG> : w4a16_wide_kernel<__nv_bfloat16, false, SETS, WG>;
  return zp ? w4a16_wide_kernel<__half, true, SETS, WG> : w4a16_wide_kernel<__half, false, SETS, WG>;
}

// Which kernel takes a tile height: 16-row tiles are the streaming kernel's, or with wgmma the
// wide kernel's; 32 and 64 rows the wide kernel's (the staged kernel's where asked).
bool wide(const Arguments& a, int tile_m) { return !a.staged && (tile_m != 16 || a.wgmma); }
bool is_streaming(const Arguments& a, int tile_m) { return tile_m == 16 && !wide(a, tile_m); }

// The kernel for a shape and tile height, and its dynamic shared memory.
KernelFn pick(const Arguments& a, int tile_m, int* smem) {
  if (wide(a, tile_m)) {
    if (a.wgmma)
      return tile_m == 16   ? pick_wide<2, true>(a.bf16, a.zero_points, smem)
             : tile_m == 32 ? pick_wide<4, true>(a.bf16, a.zero_points, smem)
                            : pick_wide<8, true>(a.bf16, a.zero_points, smem);
    return tile_m == 32 ? pick_wide<4, false>(a.bf16, a.zero_points, smem)
                        : pick_wide<8, false>(a.bf16, a.zero_points, smem);
  }
  switch (tile_m) {
    case 16: {
      const bool r16 = a.m > 8;  // some 16-row tile has rows 9-16
      const bool multi = a.group == 32;
      const bool zp = a.zero_points;
      if (a.bf16)
        return r16 ? pick_stream<__nv_bfloat16, true>(zp, multi, smem)
                   : pick_stream<__nv_bfloat16, false>(zp, multi, smem);
      return r16 ? pick_stream<__half, true>(zp, multi, smem) : pick_stream<__half, false>(zp, multi, smem);
    }
    case 32: *smem = smem_bytes<2>(); return pick_mt<2>(a.bf16, a.zero_points);
    default: *smem = smem_bytes<4>(); return pick_mt<4>(a.bf16, a.zero_points);
  }
}

// Units of k one split can take: the staged and wide kernels' 128-deep stages or the streaming
// kernel's 64-deep ones.
int k_units(const Arguments& a, int tile_m) {
  if (!is_streaming(a, tile_m)) return static_cast<int>(a.k / kBlockK);  // staged and wide: 128-deep stages
  return static_cast<int>(a.k / (kStreamTiles * kTileK));
}

// CTAs across n: 128 columns each (streaming, staged) or 256 (wide).
long long n_blocks(const Arguments& a, int tile_m) {
  const long long ntn = a.n / kTileN;
  return wide(a, tile_m) ? (ntn + 3) / 4 : (ntn + 1) / 2;
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

std::string MmaGemm::wgmma_support(int device) {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (major != 9 || minor != 0)
    return "the wgmma form needs compute capability 9.0 (this GPU is " + std::to_string(major) + "." +
           std::to_string(minor) + ")";
  cudaFuncAttributes fa{};
  const KernelFn fn = w4a16_wide_kernel<__half, false, 8, true>;
  if (cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(fn)) != cudaSuccess || fa.binaryVersion != 90) {
    cudaGetLastError();
    return "this build has no sm_90a code for the wgmma form (add 90a to the CUDA architectures)";
  }
  return "";
}

MmaGemm::MmaGemm(const Arguments& a, int device) : args_(a) {
  if (const std::string e = can_implement(a); !e.empty()) throw std::invalid_argument("w4a16 mma: " + e);
  tile_m_ = a.tile_m ? a.tile_m : a.m <= 16 ? 16 : a.m <= 32 ? 32 : 64;
  if (a.wgmma && wide(a, tile_m_))
    if (const std::string e = wgmma_support(device); !e.empty()) throw std::invalid_argument("w4a16 mma: " + e);
  cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device);
  cudaDeviceGetAttribute(&cc_major_, cudaDevAttrComputeCapabilityMajor, device);
  plan_splits();
  // Up to 64 tokens, where the 64-row wide grid (tiles x splits) fills under 60% of the CTA
  // slots because the splits are capped by k, 32-row tiles double the CTAs: at 4096 x 4096, m =
  // 64, 128 CTAs against 256, 13% faster (wgmma form; 10% on mma.sync; the split sweeps of
  // docs/lab/w4a16.md v5 and v6); on the other five layer shapes the 64-row grid fills 85-97%.
  const long long slots = static_cast<long long>(sms_) * ctas_per_sm_;
  if (a.tile_m == 0 && tile_m_ == 64 && a.m <= 64 && wide(a, 64) && a.split_k == 0 && ctas() * 10 < slots * 6) {
    const int splits64 = splits_, per_sm64 = ctas_per_sm_;
    const long long ctas64 = ctas();
    tile_m_ = 32;
    plan_splits();
    if (ctas() <= ctas64) {
      tile_m_ = 64;
      splits_ = splits64;
      ctas_per_sm_ = per_sm64;
    }
  }
  plan_cluster();
}

// The streaming kernel's two splits of a tile as one cluster where the device and this build's
// code for it have clusters (sm_90 and newer) and every cluster of the grid is resident at once:
// the two CTAs' sums then meet in shared memory, not in the workspace. Measured on the H200
// (docs/lab/w4a16.md v10): with 2 splits 1-12% faster at m = 1-8 (8192 x 8192, 8192 x 28672);
// with 4 splits 10-30% slower (4096 x 4096, 4096 x 14336), so those keep the workspace.
void MmaGemm::plan_cluster() {
  cluster_ = false;
  if (!is_streaming(args_, tile_m_) || splits_ != 2 || cc_major_ < 9) return;
  int smem = 0;
  const KernelFn fn = pick(args_, tile_m_, &smem);
  cudaFuncAttributes fa{};
  if (cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(fn)) != cudaSuccess || fa.binaryVersion < 90) {
    cudaGetLastError();
    return;
  }
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr{};
  cluster_config(cfg, attr, static_cast<unsigned>(ctas()), smem, nullptr);
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, fn, &cfg) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  cluster_ = static_cast<long long>(clusters) * splits_ >= ctas();
}

void MmaGemm::cluster_config(cudaLaunchConfig_t& cfg, cudaLaunchAttribute& attr, unsigned grid, int smem,
                             cudaStream_t stream) const {
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = static_cast<unsigned>(splits_);
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = static_cast<std::size_t>(smem);
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
}

bool MmaGemm::streaming() const { return is_streaming(args_, tile_m_); }

long long MmaGemm::ctas() const { return n_blocks(args_, tile_m_) * ((args_.m + tile_m_ - 1) / tile_m_) * splits_; }

void MmaGemm::plan_splits() {
  const Arguments& a = args_;
  int smem = 0;
  const KernelFn fn = pick(a, tile_m_, &smem);
  if (smem > 0 && cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
    check_launch("cudaFuncSetAttribute");
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas_per_sm_, fn, kThreads, smem) != cudaSuccess)
    check_launch("cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  ctas_per_sm_ = std::max(ctas_per_sm_, 1);
  const int units = k_units(a, tile_m_);
  const long long tiles = n_blocks(a, tile_m_) * ((a.m + tile_m_ - 1) / tile_m_);
  if (a.split_k > 0) {
    splits_ = a.split_k;
  } else {
    // About one full wave of CTAs: split k only while the tiles alone leave SMs idle (the
    // split-k partial sums cost fp32 atomics in L2), with at least 2 stages (staged) or 4 (wide:
    // 512 k; the split sweeps of docs/lab/w4a16.md v5 had their best there) per split, or one
    // stage per k-warp (streaming). A stream-K grid for the wide kernel (one CTA a slot, ranges
    // across tiles) ran 6% faster at 28672 x 8192, m = 64, where these splits leave 15% of the
    // slots empty, and its loop 3.5-9% slower on the other five layer shapes (same call): not kept. The streaming
    // kernel fills one CTA per SM, not ctas_per_sm_: at m = 1 and 16 on the six layer shapes of docs/int4-gemm.md the
    // fastest forced split was the largest that keeps the CTAs within the SM count, 5-15% faster than filling two per
    // SM where the two differ (H200, results/committed/w4a16-v3-h200-2026-12-02/sweep.txt).
    const bool stream = is_streaming(a, tile_m_);
    const long long slots = static_cast<long long>(sms_) * (stream ? 1 : ctas_per_sm_);
    const int per_split = stream ? kWarpsK : wide(a, tile_m_) ? 4 : 2;
    splits_ = static_cast<int>(
        std::max(1LL, std::min<long long>(slots / std::max(tiles, 1LL), std::max(1, units / per_split))));
  }
}

std::size_t MmaGemm::workspace_size() const {
  if (splits_ == 1 || cluster_) return 0;
  const std::size_t tiles = static_cast<std::size_t>(n_blocks(args_, tile_m_) * ((args_.m + tile_m_ - 1) / tile_m_));
  const std::size_t ws = static_cast<std::size_t>(args_.m * args_.n) * sizeof(float);
  return (ws + 255) / 256 * 256 + tiles * sizeof(int);
}

void MmaGemm::initialize(void* workspace, cudaStream_t stream) {
  if (splits_ == 1 || cluster_) return;
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
  p.nb = static_cast<int>(n_blocks(args_, tile_m_));
  p.ws = ws_;
  p.counters = counters_;
  p.cluster = cluster_ ? 1 : 0;
  if (splits_ > 1 && !cluster_ && !ws_) throw std::logic_error("w4a16 mma: run() before initialize()");
  int smem = 0;
  const KernelFn fn = pick(args_, tile_m_, &smem);
  const unsigned grid = static_cast<unsigned>(p.nb) * static_cast<unsigned>(p.m_tiles) * static_cast<unsigned>(splits_);
  if (cluster_) {
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr{};
    cluster_config(cfg, attr, grid, smem, stream);
    if (cudaLaunchKernelEx(&cfg, fn, p) != cudaSuccess) check_launch("w4a16_stream_kernel (cluster launch)");
  } else {
    fn<<<grid, kThreads, smem, stream>>>(p);
  }
  check_launch(is_streaming(args_, tile_m_) ? "w4a16_stream_kernel"
               : wide(args_, tile_m_)       ? "w4a16_wide_kernel"
                                            : "w4a16_mma_kernel");
}

std::string MmaGemm::describe() const {
  const long long ctas = this->ctas();
  char buf[160];
  if (is_streaming(args_, tile_m_)) {
    std::snprintf(buf, sizeof(buf), "mma_sm80 stream tile=16x%dx%d splitk=%d%s ctas=%lld/%dx%d ring=%d", kBlockN,
                  kStreamTiles * kTileK, splits_, cluster_ ? " cluster" : "", ctas, sms_, ctas_per_sm_,
                  args_.m > 8 ? ring_stages<true>() : ring_stages<false>());
    return buf;
  }
  if (wide(args_, tile_m_)) {
    std::snprintf(buf, sizeof(buf), "mma_sm80 wide%s tile=%dx%dx%d splitk=%d ctas=%lld/%dx%d stages=%d",
                  args_.wgmma ? "-wgmma" : "", tile_m_, kWideN, kWideK, splits_, ctas, sms_, ctas_per_sm_,
                  tile_m_ == 64   ? wide_stages<8>()
                  : tile_m_ == 32 ? wide_stages<4>()
                                  : wide_stages<2>());
    return buf;
  }
  const int st = tile_m_ == 32 ? stages<2>() : stages<4>();
  std::snprintf(buf, sizeof(buf), "mma_sm80 staged tile=%dx%dx%d splitk=%d ctas=%lld/%dx%d stages=%d", tile_m_, kBlockN,
                kBlockK, splits_, ctas, sms_, ctas_per_sm_, st);
  return buf;
}

namespace {

template <typename T, bool K_FAST>
void launch_dequant(const Arguments& a, const Params& p, void* wt, cudaStream_t stream) {
  const unsigned nb = static_cast<unsigned>((a.n / 64 + 3) / 4), kb = static_cast<unsigned>(a.k / 64);
  const dim3 grid = K_FAST ? dim3(kb, nb) : dim3(nb, kb);
  if (a.zero_points) dequant_transposed_kernel<T, true, K_FAST><<<grid, 128, 0, stream>>>(p, static_cast<T*>(wt));
  else dequant_transposed_kernel<T, false, K_FAST><<<grid, 128, 0, stream>>>(p, static_cast<T*>(wt));
}

}  // namespace

void dequantize_transposed(const Arguments& a, void* wt, cudaStream_t stream, bool k_fast) {
  if (const std::string e = tiled_layout_error(a.k, a.n, a.group); !e.empty())
    throw std::invalid_argument("w4a16 dequantize: " + e);
  if (a.n / 256 + 1 > 65535) throw std::invalid_argument("w4a16 dequantize: n beyond the grid's 65535 CTA columns");
  const Params p = params_of(a);
  if (a.bf16) {
    if (k_fast) launch_dequant<__nv_bfloat16, true>(a, p, wt, stream);
    else launch_dequant<__nv_bfloat16, false>(a, p, wt, stream);
  } else {
    if (k_fast) launch_dequant<__half, true>(a, p, wt, stream);
    else launch_dequant<__half, false>(a, p, wt, stream);
  }
  check_launch("dequant_transposed_kernel");
}

}  // namespace genbench::w4a16
