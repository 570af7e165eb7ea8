#pragma once
// The fa2 forward kernel template. Included only by the fa2_d*.cu files, which instantiate
// the (dtype, head dim, tile, causal) combinations the dispatch table uses.
//
// Per thread block: BM query rows of one (sequence, head), W warps, each warp owning
// MT = BM / (16 W) row tiles of 16. Q stays in shared memory for the whole block; K and V
// tiles of BN keys are double buffered: the cp.async copy of block j-1 is in flight while
// block j is computed. Key blocks are visited from the last to the first, so only the first
// iterations (the partial tail block and, for causal, the diagonal) need masking, and causal
// blocks past the diagonal are never visited.
//
// Fragments follow mma.sync.m16n8k16 (lane = 4 g + t):
//   A (16x16): a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..)
//   B (16x8):  b0 (k = 2t..2t+1, n = g), b1 (k = 2t+8.., n = g)
//   C (16x8):  c0,c1 (g, 2t..2t+1), c2,c3 (g+8, 2t..2t+1)
// so the S accumulators of two adjacent 8-key tiles are, once rounded, the A operand of PV.
// Shared tiles are row-major with 16-byte chunks XOR-swizzled by (row & 7): ldmatrix rows
// and cp.async writes of 8 consecutive rows hit 8 distinct bank groups.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backend/cuda/check.h"
#include "kernels/attention/fa2_sm80/fa2.h"
#include "kernels/common/fast_math.cuh"

namespace genbench::fa2 {

namespace detail {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte asynchronous copy; when !valid the destination is zero-filled and nothing is read.
__device__ __forceinline__ void cp_async16(std::uint32_t dst, const void* src, bool valid) {
  const int n = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(n));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// Four 8x8 16-bit matrices from shared memory (lanes 8i .. 8i + 7 address matrix i's rows), as
// stored or transposed.
#define GENBENCH_FA2_LDSM(NAME, SHAPE)                                                  \
  __device__ __forceinline__ void NAME(std::uint32_t(&r)[4], std::uint32_t addr) {      \
    asm volatile("ldmatrix.sync.aligned." SHAPE ".shared.b16 {%0, %1, %2, %3}, [%4];\n" \
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])                       \
                 : "r"(addr));                                                          \
  }
GENBENCH_FA2_LDSM(ldsm_x4, "m8n8.x4")
GENBENCH_FA2_LDSM(ldsm_x4_trans, "m8n8.x4.trans")
#undef GENBENCH_FA2_LDSM

// The element type's mma.sync (C += A B, fp32 accumulators) and the packing of two fp32 values
// into its A fragment registers.
template <typename T>
struct Math;

#define GENBENCH_FA2_MATH(TYPE, PTX_TYPE, BF16)                                                              \
  template <>                                                                                                \
  struct Math<TYPE> {                                                                                        \
    static __device__ __forceinline__ void mma(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, \
                                               std::uint32_t b1) {                                           \
      asm("mma.sync.aligned.m16n8k16.row.col.f32." PTX_TYPE "." PTX_TYPE                                     \
          ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"                           \
          : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                                   \
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));                                   \
    }                                                                                                        \
    static __device__ __forceinline__ std::uint32_t pack(float lo, float hi) { return pack2<BF16>(lo, hi); } \
  };
GENBENCH_FA2_MATH(__half, "f16", false)
GENBENCH_FA2_MATH(__nv_bfloat16, "bf16", true)
#undef GENBENCH_FA2_MATH

__device__ __forceinline__ float neg_inf() { return __int_as_float(static_cast<int>(0xff800000u)); }

// Per-thread part of a tile copy: thread tid copies the 16-byte chunk (tid % (D/8)) of rows
// tid / (D/8) + i * (NT / (D/8)).
struct TileLane {
  int row0;             // first row this thread copies
  std::uint32_t sbase;  // shared byte offset of (row0, its swizzled chunk) with the row-step XOR left out
  int cx;               // its chunk ^ (row0 & 7)
};

template <int D, int NT>
__device__ __forceinline__ TileLane tile_lane(int tid) {
  constexpr int kChunks = D / 8;
  static_assert(NT % kChunks == 0, "threads must cover whole rows");
  TileLane l;
  l.row0 = tid / kChunks;
  l.cx = (tid % kChunks) ^ (l.row0 & 7);
  l.sbase = static_cast<std::uint32_t>(l.row0 * D * 2);
  return l;
}

// ROWS x D tile: `g` is this thread's first source element (tile base + row0 * stride +
// chunk * 8), `g_safe` any readable address; rows >= rows_valid are zero-filled.
template <int ROWS, int D, int NT, typename T>
__device__ __forceinline__ void load_tile(std::uint32_t s_tile, const TileLane& l, const T* g, const T* g_safe,
                                          long long stride, int rows_valid) {
  constexpr int kChunks = D / 8, kRowStep = NT / kChunks;
  static_assert(ROWS % kRowStep == 0, "tile rows must divide among the threads");
#pragma unroll
  for (int it = 0; it < ROWS / kRowStep; ++it) {
    const int r = l.row0 + it * kRowStep;
    const bool valid = r < rows_valid;
    // (row0 + it * step) & 7 == (row0 & 7) ^ ((it * step) & 7) for steps that are powers of two >= 4.
    const std::uint32_t dst = s_tile + l.sbase + it * kRowStep * D * 2 + ((l.cx ^ ((it * kRowStep) & 7)) << 4);
    cp_async16(dst, valid ? g : g_safe, valid);
    g += kRowStep * stride;
  }
}

// Sequence b's first row and length of Q and of K/V (varlen: from the cumulative lengths).
__device__ __forceinline__ void seq_bounds(const Params& p, int b, int& start_q, int& len_q, int& start_k, int& len_k) {
  if (p.cu_q) {
    start_q = p.cu_q[b];
    len_q = p.cu_q[b + 1] - start_q;
    start_k = p.cu_k[b];
    len_k = p.cu_k[b + 1] - start_k;
  } else {
    start_q = b * p.seqlen_q;
    len_q = p.seqlen_q;
    start_k = b * p.seqlen_k;
    len_k = p.seqlen_k;
  }
}

// O, the row maxima and the row sums before the first key block.
template <int MT, int DTILES>
__device__ __forceinline__ void init_rows(float (&acc)[MT][DTILES][4], float (&row_max)[MT][2],
                                          float (&row_sum)[MT][2]) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int dt = 0; dt < DTILES; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mt][dt][e] = 0.f;
    row_max[mt][0] = row_max[mt][1] = neg_inf();
    row_sum[mt][0] = row_sum[mt][1] = 0.f;
  }
}

// S = Q K^T for this warp's rows and the BN keys of the stage at cK (qa, kb: the fragments).
template <typename M, int D, int BN, int MT, int NTILES>
__device__ __forceinline__ void score(float (&s)[MT][NTILES][4], std::uint32_t (&qa)[MT][4], std::uint32_t (&kb)[4],
                                      std::uint32_t sQ_addr, std::uint32_t q_off, std::uint32_t cK,
                                      std::uint32_t k_off) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NTILES; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[mt][nt][e] = 0.f;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const std::uint32_t qk = sQ_addr + (q_off ^ (kk * 32));
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) ldsm_x4(qa[mt], qk + mt * 16 * D * 2);
    const std::uint32_t kkk = cK + (k_off ^ (kk * 32));
#pragma unroll
    for (int np = 0; np < BN / 16; ++np) {
      ldsm_x4(kb, kkk + np * 16 * D * 2);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        M::mma(s[mt][2 * np], qa[mt], kb[0], kb[1]);
        M::mma(s[mt][2 * np + 1], qa[mt], kb[2], kb[3]);
      }
    }
  }
}

// Masks the tail block and, for causal, keys past the diagonal (row m0 + warp_row0 + ... sees
// key j when j < len_k and j <= row + diag).
template <int BN, int MT, int NTILES, bool Causal>
__device__ __forceinline__ void mask_block(float (&s)[MT][NTILES][4], int nb, int len_k, int m0, const int& diag,
                                           int warp_row0, int g, int t) {
  const int n0 = nb * BN;
  if (n0 + BN > len_k || (Causal && n0 + BN - 1 > m0 + diag)) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < NTILES; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = n0 + nt * 8 + 2 * t + (e & 1);
          const int row = m0 + warp_row0 + mt * 16 + g + (e >> 1) * 8;
          if (key >= len_k || (Causal && key > row + diag)) s[mt][nt][e] = neg_inf();
        }
  }
}

// Online softmax: new row maxima (over the quad that shares a row), rescale, exponentiate.
template <int MT, int NTILES, int DTILES>
__device__ __forceinline__ void online_softmax(float (&s)[MT][NTILES][4], float (&acc)[MT][DTILES][4],
                                               float (&row_max)[MT][2], float (&row_sum)[MT][2], float sl2) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      float mx = row_max[mt][hf];
#pragma unroll
      for (int nt = 0; nt < NTILES; ++nt) mx = fmaxf(mx, fmaxf(s[mt][nt][2 * hf], s[mt][nt][2 * hf + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // A row that has seen no visible key yet keeps max -inf; subtracting 0 then keeps
      // every exponential at 0 instead of NaN.
      const float base = mx == neg_inf() ? 0.f : mx * sl2;
      const float corr = ex2(row_max[mt][hf] * sl2 - base);
      row_max[mt][hf] = mx;
      float sum = row_sum[mt][hf] * corr;
#pragma unroll
      for (int dt = 0; dt < DTILES; ++dt) {
        acc[mt][dt][2 * hf] *= corr;
        acc[mt][dt][2 * hf + 1] *= corr;
      }
#pragma unroll
      for (int nt = 0; nt < NTILES; ++nt) {
        const float p0 = ex2(fmaf(s[mt][nt][2 * hf], sl2, -base));
        const float p1 = ex2(fmaf(s[mt][nt][2 * hf + 1], sl2, -base));
        s[mt][nt][2 * hf] = p0;
        s[mt][nt][2 * hf + 1] = p1;
        sum += p0 + p1;
      }
      row_sum[mt][hf] = sum;
    }
}

// P rounded to the input type straight from the S registers (A fragments of P V).
template <typename M, int BN, int MT, int NTILES>
__device__ __forceinline__ void pack_p(std::uint32_t (&pa)[MT][BN / 16][4], const float (&s)[MT][NTILES][4]) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      pa[mt][kk][0] = M::pack(s[mt][2 * kk][0], s[mt][2 * kk][1]);
      pa[mt][kk][1] = M::pack(s[mt][2 * kk][2], s[mt][2 * kk][3]);
      pa[mt][kk][2] = M::pack(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
      pa[mt][kk][3] = M::pack(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
    }
}

// O += P V for the stage at cV (vb: the V fragment).
template <typename M, int D, int BN, int MT, int DTILES>
__device__ __forceinline__ void accumulate_pv(float (&acc)[MT][DTILES][4], std::uint32_t (&pa)[MT][BN / 16][4],
                                              std::uint32_t (&vb)[4], std::uint32_t cV, std::uint32_t v_off) {
#pragma unroll
  for (int kk = 0; kk < BN / 16; ++kk) {
#pragma unroll
    for (int dp = 0; dp < D / 16; ++dp) {
      ldsm_x4_trans(vb, cV + (v_off ^ (dp * 32)) + kk * 16 * D * 2);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        M::mma(acc[mt][2 * dp], pa[mt][kk], vb[0], vb[1]);
        M::mma(acc[mt][2 * dp + 1], pa[mt][kk], vb[2], vb[3]);
      }
    }
  }
}

// Epilogue: O / l in the input type; LSE = max * scale + ln(l); rows without a visible key
// give O = 0 and LSE = -inf.
template <typename M, typename T, int D, int MT, int DTILES>
__device__ __forceinline__ void store_rows(const Params& p, float (&acc)[MT][DTILES][4], float (&row_max)[MT][2],
                                           float (&row_sum)[MT][2], int start_q, int m0, int len_q, int h, int b,
                                           int warp_row0, int g, int t, long long qs) {
  T* gO = static_cast<T*>(p.o) + static_cast<long long>(start_q + m0) * qs + static_cast<long long>(h) * D;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      float l = row_sum[mt][hf];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      const int r = warp_row0 + mt * 16 + g + hf * 8;
      if (m0 + r < len_q) {
        const float inv = l > 0.f ? 1.f / l : 0.f;
        T* orow = gO + static_cast<long long>(r) * qs;
#pragma unroll
        for (int dt = 0; dt < DTILES; ++dt)
          *reinterpret_cast<std::uint32_t*>(orow + dt * 8 + 2 * t) =
              M::pack(acc[mt][dt][2 * hf] * inv, acc[mt][dt][2 * hf + 1] * inv);
        if (t == 0) {
          const long long li = p.cu_q ? h * p.lse_head_stride + start_q + m0 + r
                                      : (static_cast<long long>(b) * p.heads + h) * p.seqlen_q + m0 + r;
          p.lse[li] = l > 0.f ? row_max[mt][hf] * p.scale + logf(l) : neg_inf();
        }
      }
    }
}

template <typename T, int D, int BM, int BN, int W, bool Causal>
__global__ void __launch_bounds__(W * 32) fa2_forward(const Params p) {
  constexpr int NT = W * 32;
  constexpr int MT = BM / (16 * W);
  constexpr int NTILES = BN / 8, DTILES = D / 8;
  static_assert(BM % (16 * W) == 0 && BN % 16 == 0 && D % 64 == 0, "tile shape");
  using M = Math<T>;

  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* sQ = reinterpret_cast<T*>(smem_raw);
  T* sK = sQ + BM * D;      // [2][BN][D]
  T* sV = sK + 2 * BN * D;  // [2][BN][D]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  // Causal: the heaviest row blocks (last rows, most keys) are scheduled first.
  const int m_block = Causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  const int h = blockIdx.y, b = blockIdx.z, hk = h / p.group;
  int start_q, len_q, start_k, len_k;
  seq_bounds(p, b, start_q, len_q, start_k, len_k);
  const int m0 = m_block * BM;
  if (m0 >= len_q) return;

  const long long qs = p.q_row_stride, kvs = p.kv_row_stride;
  const T* gQ = static_cast<const T*>(p.q) + static_cast<long long>(start_q + m0) * qs + static_cast<long long>(h) * D;
  const T* gK = static_cast<const T*>(p.k) + static_cast<long long>(start_k) * kvs + static_cast<long long>(hk) * D;
  const T* gV = static_cast<const T*>(p.v) + static_cast<long long>(start_k) * kvs + static_cast<long long>(hk) * D;

  // Key j is visible to row i when j < len_k and (causal) j <= i + diag.
  const int diag = len_k - len_q;
  const int n_blocks = (len_k + BN - 1) / BN;
  int n_block_max = n_blocks;
  if (Causal) {
    const int lim = m0 + BM + diag;  // keys below lim can be visible to some row of the block
    n_block_max = lim <= 0 ? 0 : min(n_blocks, (lim + BN - 1) / BN);
  }

  const TileLane tl = tile_lane<D, NT>(tid);
  const long long q_lane = tl.row0 * qs + (tid % (D / 8)) * 8, kv_lane = tl.row0 * kvs + (tid % (D / 8)) * 8;
  const std::uint32_t sQ_addr = smem_addr(sQ), sK_addr = smem_addr(sK), sV_addr = smem_addr(sV);
  // K/V double buffer: stage b of each at s*_addr + b * BN * D * 2 bytes.
  auto k_stage = [&](int b) { return sK_addr + b * BN * D * 2; };
  auto v_stage = [&](int b) { return sV_addr + b * BN * D * 2; };
  // Key block nb into stage `to` of both buffers, rows past len_k zero-filled (the caller commits).
  auto load_kv = [&](int nb, int to) {
    const long long off = static_cast<long long>(nb) * BN * kvs;
    load_tile<BN, D, NT>(k_stage(to), tl, gK + off + kv_lane, gK + off, kvs, len_k - nb * BN);
    load_tile<BN, D, NT>(v_stage(to), tl, gV + off + kv_lane, gV + off, kvs, len_k - nb * BN);
  };
  // The first commit group: Q and the first key block visited (the last by key).
  if (n_block_max > 0) {
    load_tile<BM, D, NT>(sQ_addr, tl, gQ + q_lane, gQ, qs, len_q - m0);
    load_kv(n_block_max - 1, 0);
    cp_async_commit();
  }

  float acc[MT][DTILES][4];
  float row_max[MT][2], row_sum[MT][2];
  init_rows(acc, row_max, row_sum);
  const int warp_row0 = warp * MT * 16;
  const float sl2 = p.scale_log2;

  // ldmatrix addresses: the byte offset of (row r, 16-byte chunk c) is r * 2D + ((c ^ (r & 7)) << 4).
  // Every row a lane addresses has r & 7 == lane & 7, and the chunk is 2 * step + (a lane bit),
  // so the offset for step k is (per-lane base) ^ (32 k): one XOR per step, rows as immediates.
  const std::uint32_t x7 = lane & 7;
  // Q (A operand): rows lane&7 (+8 for lanes 8-15, 24-31), chunk bit lane>>4.
  const std::uint32_t q_off = (warp_row0 + x7 + ((lane >> 3) & 1) * 8) * D * 2 + ((((lane >> 4) & 1) ^ x7) << 4);
  // K (B operand of QK^T): rows lane&7 (+8 for lanes 16-31), chunk bit (lane>>3)&1.
  const std::uint32_t k_off = (x7 + ((lane >> 4) & 1) * 8) * D * 2 + ((((lane >> 3) & 1) ^ x7) << 4);
  // V (B operand of PV, transposed load): rows lane&7 (+8 for lanes 8-15, 24-31), chunk bit lane>>4.
  const std::uint32_t v_off = (x7 + ((lane >> 3) & 1) * 8) * D * 2 + ((((lane >> 4) & 1) ^ x7) << 4);

  int buf = 0;
  for (int nb = n_block_max - 1; nb >= 0; --nb) {
    cp_async_wait_all();
    __syncthreads();  // block nb has landed, and every warp is done with the other buffer
    if (nb > 0) {
      load_kv(nb - 1, buf ^ 1);
      cp_async_commit();
    }
    const std::uint32_t cK = k_stage(buf), cV = v_stage(buf);
    float s[MT][NTILES][4];
    std::uint32_t qa[MT][4];
    std::uint32_t kb[4];
    score<M, D, BN>(s, qa, kb, sQ_addr, q_off, cK, k_off);
    mask_block<BN, MT, NTILES, Causal>(s, nb, len_k, m0, diag, warp_row0, g, t);
    online_softmax(s, acc, row_max, row_sum, sl2);
    std::uint32_t pa[MT][BN / 16][4];
    pack_p<M, BN>(pa, s);
    std::uint32_t vb[4];
    accumulate_pv<M, D, BN>(acc, pa, vb, cV, v_off);
    buf ^= 1;
  }
  store_rows<M, T, D>(p, acc, row_max, row_sum, start_q, m0, len_q, h, b, warp_row0, g, t, qs);
}

}  // namespace detail

template <typename T, int D, int BM, int BN, int W, bool Causal>
void Kernel<T, D, BM, BN, W, Causal>::setup() {
  GENBENCH_CHECK_CUDA(cudaFuncSetAttribute(detail::fa2_forward<T, D, BM, BN, W, Causal>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
}

template <typename T, int D, int BM, int BN, int W, bool Causal>
void Kernel<T, D, BM, BN, W, Causal>::launch(const Params& p, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((p.seqlen_q + BM - 1) / BM), static_cast<unsigned>(p.heads),
                  static_cast<unsigned>(p.batch));
  detail::fa2_forward<T, D, BM, BN, W, Causal><<<grid, W * 32, kSmemBytes, stream>>>(p);
  GENBENCH_CHECK_LAUNCH();
}

}  // namespace genbench::fa2
