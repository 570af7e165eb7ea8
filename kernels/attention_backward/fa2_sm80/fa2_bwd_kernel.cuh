#pragma once
// The fa2 backward kernels, main and deterministic dQ (see fa2_backward.h for the steps; the pre
// and post kernels are kernels/attention_backward/common/backward_rows.cuh); their launches are in
// fa2_bwd_run.cuh, instantiated once per dtype and head dim by the fa2_bwd_d*_*.cu files.
//
// Fragments follow mma.sync.m16n8k16 (lane = 4 g + t; kernels/common/sm80_ptx.cuh):
//   A (16x16): a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..)
//   B (16x8):  b0 (k = 2t..2t+1, n = g), b1 (k = 2t+8.., n = g)
//   C (16x8):  c0,c1 (g, 2t..2t+1), c2,c3 (g+8, 2t..2t+1)
// so the C accumulators of two adjacent 8-column tiles are, once rounded, the A operand of a
// product over those 16 columns.
//
// Shared tiles are row-major, rows of RL 16-bit elements (RL >= 64), with the 16-byte chunks of
// a row XOR-swizzled by (row & 7). Every ldmatrix.x4 here uses one of two lane patterns:
//   LA: lane l addresses row (l & 7) + 8 ((l >> 3) & 1), chunk bit (l >> 4)
//       - A operand stored [m][k] (non-transposed), - B operand stored [k][n] (.trans)
//   LB: lane l addresses row (l & 7) + 8 (l >> 4), chunk bit ((l >> 3) & 1)
//       - B operand stored [n][k] (non-transposed), - A operand stored [k][m] (.trans)
// A 16-column step s (chunks 2s, 2s + 1) is then (lane base) ^ (s << 5), and whole 16-row steps
// add 16 RL 2 bytes.
//
// Main kernel, warp w of W: rows of 16 keys kr0 = 16 (w % WK), WK = W / WD, and (WD = 2) half of
// the query columns of S^T and half of head_dim of dK/dV (wc = w / WK). S^T = K Q^T and
// dP^T = V dO^T are computed with keys as the M dimension, so P^T and dS^T are directly the A
// operands of dV += P^T dO and dK += dS^T Q (WD = 1); with WD = 2 they go through shared
// memory. dQ = dS K reads dS^T from shared memory (A operand, .trans) with the warps as 2 x W/2
// over (query rows, head_dim).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/attention_backward/fa2_sm80/fa2_bwd_launch.h"
#include "kernels/attention_backward/fa2_sm80/fa2_bwd_ptx.cuh"
#include "kernels/attention_backward/fa2_sm80/fa2_bwd_tiles.h"

namespace genbench::attention_backward::fa2 {

namespace detail {

__device__ __forceinline__ float neg_inf() { return __int_as_float(static_cast<int>(0xff800000u)); }
__device__ __forceinline__ float pos_inf() { return __int_as_float(0x7f800000); }

template <typename T>
inline constexpr bool kBF16 = std::is_same_v<T, __nv_bfloat16>;

template <typename T>
__device__ __forceinline__ void mma(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  sm80::mma16816<kBF16<T>>(c, a, b0, b1);
}
template <typename T>
__device__ __forceinline__ std::uint32_t pack(float lo, float hi) {
  return pack2<kBF16<T>>(lo, hi);
}

// Byte offset of (row, 16-byte chunk) in a swizzled tile of RL elements a row.
template <int RL>
__device__ __forceinline__ std::uint32_t swz(int row, int chunk) {
  return static_cast<std::uint32_t>(row * RL * 2 + ((chunk ^ (row & 7)) << 4));
}
// The two ldmatrix lane patterns' base offsets (header comment).
template <int RL>
__device__ __forceinline__ std::uint32_t lane_a(int lane) {
  return swz<RL>((lane & 7) + ((lane >> 3) & 1) * 8, lane >> 4);
}
template <int RL>
__device__ __forceinline__ std::uint32_t lane_b(int lane) {
  return swz<RL>((lane & 7) + (lane >> 4) * 8, (lane >> 3) & 1);
}

// ROWS x RL tile from global (row stride `stride` elements) into a swizzled shared tile with NT
// threads; rows >= rows_valid are zero-filled (and not read).
template <int ROWS, int RL, int NT, typename T>
__device__ __forceinline__ void load_tile(std::uint32_t s_tile, const T* g, long long stride, int rows_valid, int tid) {
  constexpr int kChunks = RL / 8, kRowStep = NT / kChunks;
  static_assert(NT % kChunks == 0 && ROWS % kRowStep == 0, "threads must cover whole rows");
  const int c = tid % kChunks, r0 = tid / kChunks;
#pragma unroll
  for (int it = 0; it < ROWS / kRowStep; ++it) {
    const int r = r0 + it * kRowStep;
    const bool valid = r < rows_valid;
    cp_async16(s_tile + swz<RL>(r, c), valid ? g + static_cast<long long>(r) * stride + c * 8 : g, valid);
  }
}

// ---------------------------------------------------------------------------------------------
// The kernels' parts, in their order there. A part returns nothing; the scalars it only reads go
// by value, the arrays and what it changes by reference. The kernel keeps its locals in its own
// scope; a part declares at most the fragments of its own loops (dq_products: none).

// Both accumulators of N 8-column tiles set to 0.
template <int N>
__device__ __forceinline__ void zero2(float (&x)[N][4], float (&y)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) x[i][e] = y[i][e] = 0.f;
}

// Main: C^T = X Y^T over head_dim with keys as the M dimension, rows kr0.. of the key-side tile
// sX (K or V) against query columns qc0.. of the query-side tile sY (Q or dO).
template <typename T, int D, int NTS>
__device__ __forceinline__ void key_products(float (&c)[NTS][4], std::uint32_t sX, std::uint32_t sY, std::uint32_t la_d,
                                             std::uint32_t lb_d, int kr0, int qc0) {
#pragma unroll
  for (int i = 0; i < NTS; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) c[i][e] = 0.f;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t xa[4];
    ldsm_x4(xa, sX + (la_d ^ (kk << 5)) + kr0 * D * 2);
#pragma unroll
    for (int np = 0; np < NTS / 2; ++np) {
      std::uint32_t yb[4];
      ldsm_x4(yb, sY + (lb_d ^ (kk << 5)) + (qc0 + np * 16) * D * 2);
      mma<T>(c[2 * np], xa, yb[0], yb[1]);
      mma<T>(c[2 * np + 1], xa, yb[2], yb[3]);
    }
  }
}

// Main: S^T of keys past the sequence's end and, causal, of keys past a query's diagonal to
// -inf (only in blocks that have such keys).
template <int BC, int NTS>
__device__ __forceinline__ void mask_keys(float (&s)[NTS][4], bool causal, int n0, int kr0, int qc0, int m0, int len_k,
                                          int diag, int g, int t) {
  const bool need_mask = n0 + BC > len_k || (causal && n0 + BC - 1 > m0 + diag);
  if (need_mask) {
#pragma unroll
    for (int nt = 0; nt < NTS; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = n0 + kr0 + g + (e >> 1) * 8;
        const int q = m0 + qc0 + nt * 8 + 2 * t + (e & 1);
        if (key >= len_k || (causal && key > q + diag)) s[nt][e] = neg_inf();
      }
  }
}

// Main: P^T = exp2(S^T scale log2e - LSE2), LSE2 of the stage's query columns at sL.
template <int NTS>
__device__ __forceinline__ void probs(float (&s)[NTS][4], std::uint32_t sL, int qc0, int t, float sl2) {
#pragma unroll
  for (int nt = 0; nt < NTS; ++nt) {
    const float2 l = ld_shared_f2(sL + (qc0 + nt * 8 + 2 * t) * 4);
    s[nt][0] = ex2(fmaf(s[nt][0], sl2, -l.x));
    s[nt][1] = ex2(fmaf(s[nt][1], sl2, -l.y));
    s[nt][2] = ex2(fmaf(s[nt][2], sl2, -l.x));
    s[nt][3] = ex2(fmaf(s[nt][3], sl2, -l.y));
  }
}

// C accumulators of K / 8 8-column tiles rounded to A fragments of a product over K columns.
template <typename T, int K>
__device__ __forceinline__ void pack_a(std::uint32_t (&x)[K / 16][4], const float (&c)[K / 8][4]) {
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    x[kk][0] = pack<T>(c[2 * kk][0], c[2 * kk][1]);
    x[kk][1] = pack<T>(c[2 * kk][2], c[2 * kk][3]);
    x[kk][2] = pack<T>(c[2 * kk + 1][0], c[2 * kk + 1][1]);
    x[kk][3] = pack<T>(c[2 * kk + 1][2], c[2 * kk + 1][3]);
  }
}

// acc (16 rows x D) += X Y, X the A fragments of K columns in registers, Y the K x D tile at sY
// read transposed (dV += P^T dO, dK += dS^T Q, dQ += dS K).
template <typename T, int D, int K>
__device__ __forceinline__ void accumulate_rows(float (&acc)[D / 8][4], const std::uint32_t (&x)[K / 16][4],
                                                std::uint32_t sY, std::uint32_t la_d) {
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk)
#pragma unroll
    for (int dq = 0; dq < D / 16; ++dq) {
      std::uint32_t yb[4];
      ldsm_x4_t(yb, sY + (la_d ^ (dq << 5)) + kk * 16 * D * 2);
      mma<T>(acc[2 * dq], x[kk], yb[0], yb[1]);
      mma<T>(acc[2 * dq + 1], x[kk], yb[2], yb[3]);
    }
}

// Main: dS^T = P^T o (dP^T - D), D of the stage's query columns at sD (dS^T in dp's registers).
template <int NTS>
__device__ __forceinline__ void grad_scores(float (&dp)[NTS][4], const float (&s)[NTS][4], std::uint32_t sD, int qc0,
                                            int t) {
#pragma unroll
  for (int nt = 0; nt < NTS; ++nt) {
    const float2 dd = ld_shared_f2(sD + (qc0 + nt * 8 + 2 * t) * 4);
    dp[nt][0] = s[nt][0] * (dp[nt][0] - dd.x);
    dp[nt][1] = s[nt][1] * (dp[nt][1] - dd.y);
    dp[nt][2] = s[nt][2] * (dp[nt][2] - dd.x);
    dp[nt][3] = s[nt][3] * (dp[nt][3] - dd.y);
  }
}

// Main, WD = 1: the warp's dS^T fragments into shared memory for dQ: rows kr0 + g (+8),
// 16-column chunk kk (two 8-column halves).
template <int BR>
__device__ __forceinline__ void store_ds(std::uint32_t sdS, const std::uint32_t (&da)[BR / 16][4], int kr0, int g,
                                         int t) {
#pragma unroll
  for (int kk = 0; kk < BR / 16; ++kk) {
    const int r = kr0 + g;
    st_shared_b32(sdS + swz<BR>(r, 2 * kk) + 4 * t, da[kk][0]);
    st_shared_b32(sdS + swz<BR>(r + 8, 2 * kk) + 4 * t, da[kk][1]);
    st_shared_b32(sdS + swz<BR>(r, 2 * kk + 1) + 4 * t, da[kk][2]);
    st_shared_b32(sdS + swz<BR>(r + 8, 2 * kk + 1) + 4 * t, da[kk][3]);
  }
}

// Main, WD = 2: P^T and dS^T of this warp's (keys, queries) into shared memory.
template <typename T, int BR, int NTS>
__device__ __forceinline__ void store_p_ds(std::uint32_t sP, std::uint32_t sdS, const float (&s)[NTS][4],
                                           const float (&dp)[NTS][4], int kr0, int qc0, int g, int t) {
#pragma unroll
  for (int nt = 0; nt < NTS; ++nt) {
    const int r = kr0 + g, c = (qc0 >> 3) + nt;
    st_shared_b32(sP + swz<BR>(r, c) + 4 * t, pack<T>(s[nt][0], s[nt][1]));
    st_shared_b32(sP + swz<BR>(r + 8, c) + 4 * t, pack<T>(s[nt][2], s[nt][3]));
    st_shared_b32(sdS + swz<BR>(r, c) + 4 * t, pack<T>(dp[nt][0], dp[nt][1]));
    st_shared_b32(sdS + swz<BR>(r + 8, c) + 4 * t, pack<T>(dp[nt][2], dp[nt][3]));
  }
}

// Main, WD = 2: dV += P^T dO and dK += dS^T Q over every query row, P^T and dS^T of the warp's
// keys from shared memory, for this warp's DW columns of head_dim from dc0.
template <typename T, int D, int BR, int DW, int NTD>
__device__ __forceinline__ void accumulate_shared(float (&dv)[NTD][4], float (&dk)[NTD][4], std::uint32_t sP,
                                                  std::uint32_t sdS, std::uint32_t sdO, std::uint32_t sQ,
                                                  std::uint32_t la_s, std::uint32_t la_d, int kr0, int dc0) {
#pragma unroll
  for (int kk = 0; kk < BR / 16; ++kk) {
    std::uint32_t pa[4], da[4];
    ldsm_x4(pa, sP + (la_s ^ (kk << 5)) + kr0 * BR * 2);
    ldsm_x4(da, sdS + (la_s ^ (kk << 5)) + kr0 * BR * 2);
#pragma unroll
    for (int j = 0; j < DW / 16; ++j) {
      const int dstep = (dc0 >> 4) + j;
      std::uint32_t vb[4], qb[4];
      ldsm_x4_t(vb, sdO + (la_d ^ (dstep << 5)) + kk * 16 * D * 2);
      mma<T>(dv[2 * j], pa, vb[0], vb[1]);
      mma<T>(dv[2 * j + 1], pa, vb[2], vb[3]);
      ldsm_x4_t(qb, sQ + (la_d ^ (dstep << 5)) + kk * 16 * D * 2);
      mma<T>(dk[2 * j], da, qb[0], qb[1]);
      mma<T>(dk[2 * j + 1], da, qb[2], qb[3]);
    }
  }
}

// Main, dQ: acc = dS K for query rows qr0.. (two 16-row tiles) and head_dim columns dq0.., dS^T
// read transposed from sdS into qa, K into kb.
template <typename T, int D, int BC, int BR, int NTQ>
__device__ __forceinline__ void dq_products(float (&acc)[2][NTQ][4], std::uint32_t (&qa)[2][4], std::uint32_t (&kb)[4],
                                            std::uint32_t sdS, std::uint32_t sK, std::uint32_t lb_s, std::uint32_t la_d,
                                            int qr0, int dq0) {
#pragma unroll
  for (int mq = 0; mq < 2; ++mq)
#pragma unroll
    for (int i = 0; i < NTQ; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mq][i][e] = 0.f;
#pragma unroll
  for (int kk = 0; kk < BC / 16; ++kk) {
#pragma unroll
    for (int mq = 0; mq < 2; ++mq) ldsm_x4_t(qa[mq], sdS + (lb_s ^ (((qr0 >> 4) + mq) << 5)) + kk * 16 * BR * 2);
#pragma unroll
    for (int np = 0; np < NTQ / 2; ++np) {
      ldsm_x4_t(kb, sK + (la_d ^ (((dq0 >> 4) + np) << 5)) + kk * 16 * D * 2);
#pragma unroll
      for (int mq = 0; mq < 2; ++mq) {
        mma<T>(acc[mq][2 * np], qa[mq], kb[0], kb[1]);
        mma<T>(acc[mq][2 * np + 1], qa[mq], kb[2], kb[3]);
      }
    }
  }
}

// Main, dQ: acc added to the fp32 accumulator (rows of this sequence only).
template <int D, int NTQ>
__device__ __forceinline__ void dq_add(const Args& a, const float (&acc)[2][NTQ][4], int m0, int qr0, int dq0,
                                       int start_q, int len_q, int h, int g, int t) {
#pragma unroll
  for (int mq = 0; mq < 2; ++mq)
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int r = m0 + qr0 + mq * 16 + g + hf * 8;
      if (r < len_q) {
        float* dst = a.dq_acc + (static_cast<long long>(start_q + r) * a.heads + h) * D + dq0 + 2 * t;
#pragma unroll
        for (int nt = 0; nt < NTQ; ++nt) red_add2(dst + nt * 8, acc[mq][nt][2 * hf], acc[mq][nt][2 * hf + 1]);
      }
    }
}

// Main: dK = scale dS^T Q and dV, rows of this sequence only.
template <typename T, int D, int NTD>
__device__ __forceinline__ void store_dk_dv(const Args& a, const float (&dk)[NTD][4], const float (&dv)[NTD][4], int n0,
                                            int kr0, int dc0, int start_k, int len_k, long long kv_stride, int hk,
                                            int g, int t) {
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int key = n0 + kr0 + g + hf * 8;
    if (key < len_k) {
      const long long off = static_cast<long long>(start_k + key) * kv_stride + hk * D + dc0 + 2 * t;
      T* gdk = static_cast<T*>(a.dk) + off;
      T* gdv = static_cast<T*>(a.dv) + off;
#pragma unroll
      for (int nt = 0; nt < NTD; ++nt) {
        *reinterpret_cast<std::uint32_t*>(gdk + nt * 8) =
            pack<T>(dk[nt][2 * hf] * a.scale, dk[nt][2 * hf + 1] * a.scale);
        *reinterpret_cast<std::uint32_t*>(gdv + nt * 8) = pack<T>(dv[nt][2 * hf], dv[nt][2 * hf + 1]);
      }
    }
  }
}
// ---------------------------------------------------------------------------------------------
// Main: dK, dV of one key block (and dQ's atomic part).
template <typename T, int D, int BC, int BR, int W, int WD>
__global__ void __launch_bounds__(W * 32, 1) bwd_main(const Args a) {
  constexpr int NT = W * 32, WK = W / WD, QW = BR / WD, NTS = QW / 8, DW = D / WD, NTD = DW / 8;
  // dQ: warps 2 (rows) x W/2 (head_dim), each warp's columns in QS passes of NTQ 8-column tiles.
  constexpr int WNQ = W / 2, DQW = D / WNQ, QS = WD, NTQ = DQW / QS / 8;
  static_assert(BC == 16 * WK && BR == 64 && NTS % 2 == 0 && DW % 16 == 0 && NTQ % 2 == 0, "tile shape");
  constexpr int kTileQ = BR * D * 2, kTileK = BC * D * 2, kTileS = BC * BR * 2;

  extern __shared__ __align__(128) unsigned char smem[];
  const std::uint32_t sK = smem_addr(smem), sV = sK + kTileK;
  const std::uint32_t sQ0 = sV + kTileK;       // [2 stages][Q, dO]
  const std::uint32_t sL0 = sQ0 + 4 * kTileQ;  // [2 stages][LSE2, D] floats
  const std::uint32_t sdS = sL0 + 2 * 2 * BR * 4;
  const std::uint32_t sP = sdS + kTileS;  // WD == 2 only

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int nb = blockIdx.x, hk = blockIdx.y, b = blockIdx.z;
  const int start_q = a.cu_q[b], len_q = a.cu_q[b + 1] - start_q;
  const int start_k = a.cu_k[b], len_k = a.cu_k[b + 1] - start_k;
  const int n0 = nb * BC;
  if (n0 >= len_k) return;  // past this sequence's keys

  const int diag = len_k - len_q;
  const int m_begin = a.causal ? max(0, n0 - diag) / BR : 0;
  const int m_end = (len_q + BR - 1) / BR;
  const int n_m = max(0, m_end - m_begin);
  const int n_iter = a.group * n_m;
  const int rot = n_m > 0 ? nb % n_m : 0;  // key blocks start at different query blocks (atomics)

  const long long q_stride = static_cast<long long>(a.heads) * D, kv_stride = static_cast<long long>(a.heads_kv) * D;
  const T* gK = static_cast<const T*>(a.k) + static_cast<long long>(start_k + n0) * kv_stride + hk * D;
  const T* gV = static_cast<const T*>(a.v) + static_cast<long long>(start_k + n0) * kv_stride + hk * D;

  // Iteration it: query head hk * group + it / n_m, query block m_begin + (it % n_m + rot) % n_m.
  auto head_of = [&](int it) { return hk * a.group + it / n_m; };
  auto block_of = [&](int it) {
    int mi = it % n_m + rot;
    if (mi >= n_m) mi -= n_m;
    return m_begin + mi;
  };
  auto load_q = [&](int it, int stage) {
    const int h = head_of(it), m0 = block_of(it) * BR;
    const long long off = static_cast<long long>(start_q + m0) * q_stride + h * D;
    const std::uint32_t sQ = sQ0 + stage * 2 * kTileQ;
    load_tile<BR, D, NT>(sQ, static_cast<const T*>(a.q) + off, q_stride, len_q - m0, tid);
    load_tile<BR, D, NT>(sQ + kTileQ, static_cast<const T*>(a.dout) + off, q_stride, len_q - m0, tid);
    if (tid < BR / 2) {  // BR / 4 chunks of LSE2, then BR / 4 of D
      const long long w = (static_cast<long long>(b) * a.heads + h) * a.lpad + m0;
      const int half = tid / (BR / 4), c = tid % (BR / 4);
      const float* src = (half ? a.dsum : a.lse2) + w + c * 4;
      cp_async16(sL0 + stage * 2 * BR * 4 + half * BR * 4 + c * 16, src, true);
    }
  };

  if (n_iter > 0) {
    load_tile<BC, D, NT>(sK, gK, kv_stride, len_k - n0, tid);
    load_tile<BC, D, NT>(sV, gV, kv_stride, len_k - n0, tid);
    load_q(0, 0);
    cp_async_commit();
  }

  float dv[NTD][4], dk[NTD][4];
  zero2(dv, dk);

  const int wr = warp % WK, wc = warp / WK;
  const int kr0 = 16 * wr, qc0 = QW * wc, dc0 = DW * wc;
  const std::uint32_t la_d = lane_a<D>(lane), lb_d = lane_b<D>(lane);
  const std::uint32_t la_s = lane_a<BR>(lane), lb_s = lane_b<BR>(lane);
  const float sl2 = a.scale_log2;
  const bool do_dq = a.dq_acc != nullptr;

  for (int it = 0; it < n_iter; ++it) {
    const int stage = it & 1;
    cp_async_wait<0>();
    __syncthreads();  // this stage has landed; every warp is done with the other stage and dS
    if (it + 1 < n_iter) {
      load_q(it + 1, stage ^ 1);
      cp_async_commit();
    }
    const int h = head_of(it), m0 = block_of(it) * BR;
    const std::uint32_t sQ = sQ0 + stage * 2 * kTileQ, sdO = sQ + kTileQ;
    const std::uint32_t sL = sL0 + stage * 2 * BR * 4, sD = sL + BR * 4;

    // S^T = K Q^T: keys kr0.. x queries qc0..; the key tail and, causal, keys past a query's
    // diagonal masked; P^T = exp2(S^T scale log2e - LSE2).
    float s[NTS][4];
    key_products<T, D>(s, sK, sQ, la_d, lb_d, kr0, qc0);
    mask_keys<BC>(s, a.causal, n0, kr0, qc0, m0, len_k, diag, g, t);
    probs(s, sL, qc0, t, sl2);

    if constexpr (WD == 1) {
      // dV += P^T dO, P^T straight from the registers.
      std::uint32_t pa[BR / 16][4];
      pack_a<T, BR>(pa, s);
      accumulate_rows<T, D, BR>(dv, pa, sdO, la_d);
    }

    // dP^T = V dO^T, then dS^T = P^T o (dP^T - D).
    float dp[NTS][4];
    key_products<T, D>(dp, sV, sdO, la_d, lb_d, kr0, qc0);
    grad_scores(dp, s, sD, qc0, t);

    if constexpr (WD == 1) {
      std::uint32_t da[BR / 16][4];
      pack_a<T, BR>(da, dp);
      if (do_dq) store_ds<BR>(sdS, da, kr0, g, t);
      // dK += dS^T Q.
      accumulate_rows<T, D, BR>(dk, da, sQ, la_d);
      if (do_dq) __syncthreads();  // dS^T of every warp written
    } else {
      // P^T and dS^T of this warp's (keys, queries) into shared memory, then both products over
      // every query row for this warp's half of head_dim.
      store_p_ds<T, BR>(sP, sdS, s, dp, kr0, qc0, g, t);
      __syncthreads();
      accumulate_shared<T, D, BR, DW>(dv, dk, sP, sdS, sdO, sQ, la_s, la_d, kr0, dc0);
    }

    if (do_dq) {
      // dQ (rows qr0.., head_dim dq0..) = dS K, added to the fp32 accumulator; in QS passes over
      // head_dim where dK and dV already hold many registers (d256).
      const int qr0 = 32 * (warp / WNQ);
#pragma unroll
      for (int part = 0; part < QS; ++part) {
        const int dq0 = DQW * (warp % WNQ) + part * (DQW / QS);
        float acc[2][NTQ][4];
        std::uint32_t qa[2][4], kb[4];
        dq_products<T, D, BC, BR>(acc, qa, kb, sdS, sK, lb_s, la_d, qr0, dq0);
        dq_add<D>(a, acc, m0, qr0, dq0, start_q, len_q, h, g, t);
      }
    }
  }

  // dK = scale dS^T Q, dV: rows of this sequence only.
  store_dk_dv<T, D>(a, dk, dv, n0, kr0, dc0, start_k, len_k, kv_stride, hk, g, t);
}

// dQ: LSE2 and D of the lane's two query rows (r0 + g, + 8 of the block at m0).
__device__ __forceinline__ void load_row_stats(const Args& a, float (&lse2)[2], float (&dsum)[2], int b, int h, int m0,
                                               int r0, int g) {
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const long long w = (static_cast<long long>(b) * a.heads + h) * a.lpad + m0 + r0 + g + hf * 8;
    lse2[hf] = a.lse2[w];
    dsum[hf] = a.dsum[w];
  }
}

// An accumulator of N 8-column tiles set to 0.
template <int N>
__device__ __forceinline__ void zero1(float (&x)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) x[i][e] = 0.f;
}

// dQ: S = Q K^T and dP = dO V^T for the warp's query rows r0.. and the stage's BN keys.
template <typename T, int D, int BN, int NTN>
__device__ __forceinline__ void row_products(float (&s)[NTN][4], float (&dp)[NTN][4], std::uint32_t sQ,
                                             std::uint32_t sdO, std::uint32_t sK, std::uint32_t sV, std::uint32_t la_d,
                                             std::uint32_t lb_d, int r0) {
  zero2(s, dp);
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t qa[4], oa[4];
    ldsm_x4(qa, sQ + (la_d ^ (kk << 5)) + r0 * D * 2);
    ldsm_x4(oa, sdO + (la_d ^ (kk << 5)) + r0 * D * 2);
#pragma unroll
    for (int np = 0; np < BN / 16; ++np) {
      std::uint32_t kb[4], vb[4];
      ldsm_x4(kb, sK + (lb_d ^ (kk << 5)) + np * 16 * D * 2);
      mma<T>(s[2 * np], qa, kb[0], kb[1]);
      mma<T>(s[2 * np + 1], qa, kb[2], kb[3]);
      ldsm_x4(vb, sV + (lb_d ^ (kk << 5)) + np * 16 * D * 2);
      mma<T>(dp[2 * np], oa, vb[0], vb[1]);
      mma<T>(dp[2 * np + 1], oa, vb[2], vb[3]);
    }
  }
}

// dQ: dS = P o (dP - D), P = exp2(S scale log2e - LSE2), into s.
template <int NTN>
__device__ __forceinline__ void grad_rows(float (&s)[NTN][4], const float (&dp)[NTN][4], const float (&lse2)[2],
                                          const float (&dsum)[2], float sl2) {
#pragma unroll
  for (int nt = 0; nt < NTN; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int hf = e >> 1;
      const float pv = ex2(fmaf(s[nt][e], sl2, -lse2[hf]));
      s[nt][e] = pv * (dp[nt][e] - dsum[hf]);
    }
}

// dQ = scale dS K in the input type, rows of this sequence only.
template <typename T, int DT>
__device__ __forceinline__ void store_dq(const Args& a, const float (&acc)[DT][4], long long q_off, long long q_stride,
                                         int m0, int r0, int len_q, int g, int t) {
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int r = r0 + g + hf * 8;
    if (m0 + r < len_q) {
      T* dst = static_cast<T*>(a.dq) + q_off + static_cast<long long>(r) * q_stride + 2 * t;
#pragma unroll
      for (int i = 0; i < DT; ++i)
        *reinterpret_cast<std::uint32_t*>(dst + i * 8) =
            pack<T>(acc[i][2 * hf] * a.scale, acc[i][2 * hf + 1] * a.scale);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Deterministic dQ: one block per (query block, head, sequence); warp w owns query rows 16 w.
template <typename T, int D, int BM, int BN, int W>
__global__ void __launch_bounds__(W * 32) bwd_dq(const Args a) {
  constexpr int NT = W * 32, NTN = BN / 8, DT = D / 8;
  static_assert(BM == 16 * W && BN % 16 == 0, "tile shape");
  constexpr int kTileQ = BM * D * 2, kTileK = BN * D * 2;

  extern __shared__ __align__(128) unsigned char smem[];
  const std::uint32_t sQ = smem_addr(smem), sdO = sQ + kTileQ, sK0 = sdO + kTileQ;  // [2 stages][K, V]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int mb = static_cast<int>(gridDim.x - 1 - blockIdx.x), h = blockIdx.y, b = blockIdx.z;
  const int hk = h / a.group;
  const int start_q = a.cu_q[b], len_q = a.cu_q[b + 1] - start_q;
  const int start_k = a.cu_k[b], len_k = a.cu_k[b + 1] - start_k;
  const int m0 = mb * BM;
  if (m0 >= len_q) return;
  const int diag = len_k - len_q;
  const int n_end = a.causal ? min(len_k, max(0, m0 + BM + diag)) : len_k;
  const int n_blocks = (n_end + BN - 1) / BN;

  const long long q_stride = static_cast<long long>(a.heads) * D, kv_stride = static_cast<long long>(a.heads_kv) * D;
  const long long q_off = static_cast<long long>(start_q + m0) * q_stride + h * D;
  const T* gK = static_cast<const T*>(a.k) + static_cast<long long>(start_k) * kv_stride + hk * D;
  const T* gV = static_cast<const T*>(a.v) + static_cast<long long>(start_k) * kv_stride + hk * D;
  auto load_kv = [&](int j, int stage) {
    const long long off = static_cast<long long>(j) * BN * kv_stride;
    const std::uint32_t s = sK0 + stage * 2 * kTileK;
    load_tile<BN, D, NT>(s, gK + off, kv_stride, len_k - j * BN, tid);
    load_tile<BN, D, NT>(s + kTileK, gV + off, kv_stride, len_k - j * BN, tid);
  };
  if (n_blocks > 0) {
    load_tile<BM, D, NT>(sQ, static_cast<const T*>(a.q) + q_off, q_stride, len_q - m0, tid);
    load_tile<BM, D, NT>(sdO, static_cast<const T*>(a.dout) + q_off, q_stride, len_q - m0, tid);
    load_kv(0, 0);
    cp_async_commit();
  }

  const int r0 = 16 * warp;
  float lse2[2], dsum[2];
  load_row_stats(a, lse2, dsum, b, h, m0, r0, g);
  float acc[DT][4];
  zero1(acc);

  const std::uint32_t la_d = lane_a<D>(lane), lb_d = lane_b<D>(lane);
  const float sl2 = a.scale_log2;
  for (int j = 0; j < n_blocks; ++j) {
    const int stage = j & 1;
    cp_async_wait<0>();
    __syncthreads();
    if (j + 1 < n_blocks) {
      load_kv(j + 1, stage ^ 1);
      cp_async_commit();
    }
    const std::uint32_t sK = sK0 + stage * 2 * kTileK, sV = sK + kTileK;
    float s[NTN][4], dp[NTN][4];
    row_products<T, D, BN>(s, dp, sQ, sdO, sK, sV, la_d, lb_d, r0);
    // Keys past the sequence's end and, causal, past a row's diagonal to -inf.
    const int n0 = j * BN;
    if (n0 + BN > len_k || (a.causal && n0 + BN - 1 > m0 + diag)) {
#pragma unroll
      for (int nt = 0; nt < NTN; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = n0 + nt * 8 + 2 * t + (e & 1);
          const int row = m0 + r0 + g + (e >> 1) * 8;
          if (key >= len_k || (a.causal && key > row + diag)) s[nt][e] = neg_inf();
        }
    }
    std::uint32_t da[BN / 16][4];
    grad_rows(s, dp, lse2, dsum, sl2);
    pack_a<T, BN>(da, s);
    // dQ += dS K.
    accumulate_rows<T, D, BN>(acc, da, sK, la_d);
  }

  store_dq<T>(a, acc, q_off, q_stride, m0, r0, len_q, g, t);
}

}  // namespace detail

}  // namespace genbench::attention_backward::fa2
