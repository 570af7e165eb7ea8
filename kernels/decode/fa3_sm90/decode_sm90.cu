// Decode attention (split-KV, paged) for sm_90a; the design is in decode_sm90.h and
// docs/decode.md. Fragments follow mma.sync.m16n8k16 (lane = 4 g + c, g = lane / 4, c = lane % 4).
//
// S = Q K^T: the head dimension is permuted consistently in Q and K (a dot product does not
// care about the order of its terms): in k-step st, lane c's A and B elements are head-dim
// positions c * D/4 + 4 st + {0, 1} (a0/a1, b0) and + {2, 3} (a2/a3, b1), so a lane reads one
// contiguous run of D/4 elements of each key row. O = P V: output column t * 8 + 2c + e of the
// accumulators is head-dim position (2c + e) * D/8 + t, so lane g reads one contiguous run of
// D/8 elements of each V row; two rows' elements are paired with byte permutes.
// Shared K/V rows are 16-byte chunks XOR-swizzled (swz_k / swz_v) so that the 8 lanes of each
// quarter-warp phase hit 8 distinct bank groups.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kernels/common/sm80_ptx.cuh"
#include "kernels/decode/fa3_sm90/decode_sm90.h"

namespace genbench::decode::fa3 {

namespace {

constexpr int kBN = 64;        // keys per block
constexpr int kThreads = 128;  // 4 warps

struct Params {
  const void* q;
  const char* k;
  const char* v;
  void* o;
  float* lse;
  float* o_part;    // [splits, rows_total, D] (splits > 1)
  float* lse_part;  // [splits, rows_total]
  int* counters;    // [batch, heads_kv, row_chunks] splits done (zero between launches)
  const int* table;
  const int* lens;
  int heads, heads_kv, new_tokens, group, rows;  // rows = group * new_tokens
  int paged, page_shift, pages_per_seq;
  long long cap;  // contiguous: rows per sequence
  int causal;
  float scale_log2;  // scale * k_descale * log2(e)
  float v_descale;
  int num_splits, split_keys, row_chunks;
  int rows_total;  // batch * new_tokens * heads
  int rotate;      // start each CTA's key loop at a CTA-dependent block (A/B switch)
};

using sm80::cp_async16;
using sm80::cp_async_commit;
using sm80::cp_async_wait;
using sm80::mma16816;

template <bool BF16>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  if constexpr (BF16) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t*>(&v);
  } else {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t*>(&v);
  }
}

// The four e4m3 values of x to two f16x2 (exact): lo = bytes 0-1, hi = bytes 2-3, each
// conversion reading its 16-bit half of x in place (no shift or mask first: 2-4% faster fp8
// decode on the H200 than converting x and x >> 16, docs/lab/decode.md).
// Before sm_89 (no e4m3 conversion instruction) the library's software conversion.
__device__ __forceinline__ void e4m3x4_to_f16x2x2(std::uint32_t x, std::uint32_t& lo, std::uint32_t& hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm("{\n .reg .b16 l, h;\n mov.b32 {l, h}, %2;\n cvt.rn.f16x2.e4m3x2 %0, l;\n cvt.rn.f16x2.e4m3x2 %1, h;\n}"
      : "=r"(lo), "=r"(hi)
      : "r"(x));
#else
  const __half2_raw l = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(x & 0xffffu), __NV_E4M3);
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(x >> 16), __NV_E4M3);
  lo = static_cast<std::uint32_t>(l.x) | (static_cast<std::uint32_t>(l.y) << 16);
  hi = static_cast<std::uint32_t>(h.x) | (static_cast<std::uint32_t>(h.y) << 16);
#endif
}

template <int D, int KV, int QT, int KS>
struct Cfg {
  static constexpr int EL = KV == 2 ? 1 : 2;  // bytes per K/V element
  static constexpr int ROWB = D * EL;         // bytes per K/V row in shared memory
  static constexpr int CPR = ROWB / 16;       // 16-byte chunks per row
  static constexpr int MT = 4 / KS;           // 16-row m-tiles per CTA
  static constexpr int ROWS = 16 * MT;
  static constexpr int KEYS_W = kBN / KS;  // keys per warp per block
  static constexpr int NT_S = KEYS_W / 8;  // S n-tiles per warp
  static constexpr int KSTEP_PV = KEYS_W / 16;
  static constexpr int STAGES = (D == 256 && EL == 2) ? 2 : 3;
  static constexpr int TILE_BYTES = kBN * ROWB;  // one of K, V
  static constexpr int STAGE_BYTES = 2 * TILE_BYTES;
  static constexpr int QROWB = D * 2 + 16;  // Q row stride (bytes, padded)
  static constexpr int Q_BYTES = ROWS * QROWB;
  static constexpr int OSTRIDE = D + 4;  // combine scratch row stride (floats)
  static constexpr int SCRATCH_BYTES = KS * ROWS * (OSTRIDE + 2) * 4;
  static constexpr int PIPE_BYTES = STAGES * STAGE_BYTES;
  static constexpr int SPACE = PIPE_BYTES > SCRATCH_BYTES ? PIPE_BYTES : SCRATCH_BYTES;  // before the Q tile
  static constexpr int SMEM = SPACE + Q_BYTES;
  static constexpr int CPT_K = D / 4 * EL / 16;  // K chunks a lane reads per row
  static constexpr int VB = D / 8 * EL;          // V bytes a lane reads per row
  static constexpr bool MMA_BF16 = KV == 0;
  static_assert(KS == 1 || KS == 2 || KS == 4, "key slices");
  static_assert(CPT_K >= 1, "K chunks");
};

template <class C>
__device__ __forceinline__ int swz_k(int r, int q) {
  if constexpr (C::CPR < 8) return q;
  else return q ^ ((((q >> 3) << 1) + (r & 1)) & 7);
}

template <class C>
__device__ __forceinline__ int swz_v(int r, int q) {
  if constexpr (C::CPR < 8 || C::VB < 16) {
    return q;
  } else {
    const int c = (r >> 1) & 3;
    if constexpr (C::VB == 16) return q ^ (c << 1);
    else if constexpr (C::VB == 32) return q ^ ((c & 1) | ((c >> 1) << 2));
    else return q ^ c;
  }
}

// The split path's end: this CTA's partial rows are written; the last CTA of a (sequence, KV
// head, row chunk) to finish (a counter in the workspace) combines every split's rows by their
// LSE, O = sum_s exp(lse_s - lse) O_s, writes O and LSE, and resets the counter for the next
// launch (graph replays included). No second kernel, so no launch gap.
//
// The combine runs while the other SMs may have nothing left to do (one sequence: 8 CTAs
// combine 33 splits each at the kernel's end), so it keeps as many L2 reads in flight as it can
// without registers (on the H200 about 3.5 µs of the 128K tail are not these reads' round trips:
// docs/lab/decode.md): each thread takes 4 floats of a row (IPI
// such pieces at a time where a thread has more than one) and reads NB splits' pieces at once
// by cp.async into its own slots of shared memory (the pipeline's space, idle by now), their
// LSEs beside them into registers, then folds the batch into a running maximum and sum (one
// pass over the splits). An empty split's rows are zeros, its LSE -inf, its weight 0.
template <int D, int QT, int NB, int IPI>
__device__ __forceinline__ void combine_items(const float* o_part, const float* lse_part, void* o, float* lse,
                                              int rows_total, int num_splits, int valid_rows, int row0, int group,
                                              int new_tokens, int heads, int b, int hk, std::uint32_t stage) {
  constexpr int PER_ROW = D / 4;
  constexpr int SB = NB / IPI;  // splits a batch
  const int items = valid_rows * PER_ROW;
  const std::uint32_t slot0 = stage + threadIdx.x * 16;
#pragma unroll 1
  for (int base = threadIdx.x; base < items; base += IPI * kThreads) {
    long long gr[IPI];
    int d0[IPI];
    bool live[IPI];
    float m[IPI], sum[IPI], acc[IPI][4];
#pragma unroll
    for (int k = 0; k < IPI; ++k) {
      const int idx = base + k * kThreads;
      live[k] = idx < items;
      const int r = live[k] ? idx / PER_ROW : 0;
      d0[k] = live[k] ? (idx % PER_ROW) * 4 : 0;
      const int row = row0 + r;
      const int tok = row / group, hg = row - tok * group;
      gr[k] = (static_cast<long long>(b) * new_tokens + tok) * heads + hk * group + hg;
      m[k] = -INFINITY;
      sum[k] = acc[k][0] = acc[k][1] = acc[k][2] = acc[k][3] = 0.f;
    }
#pragma unroll 1
    for (int s0 = 0; s0 < num_splits; s0 += SB) {
      float l[IPI][SB];
#pragma unroll
      for (int k = 0; k < IPI; ++k)
#pragma unroll
        for (int i = 0; i < SB; ++i) {
          const bool ok = live[k] && s0 + i < num_splits;
          const long long at = ok ? (s0 + i) * static_cast<long long>(rows_total) + gr[k] : 0;
          cp_async16(slot0 + (k * SB + i) * kThreads * 16, o_part + at * D + d0[k], ok);
        }
      cp_async_commit();
#pragma unroll
      for (int k = 0; k < IPI; ++k)
#pragma unroll
        for (int i = 0; i < SB; ++i)
          l[k][i] = live[k] && s0 + i < num_splits
                        ? __ldcg(lse_part + (s0 + i) * static_cast<long long>(rows_total) + gr[k])
                        : -INFINITY;
      cp_async_wait<0>();
#pragma unroll
      for (int k = 0; k < IPI; ++k) {
        float mb = m[k];
#pragma unroll
        for (int i = 0; i < SB; ++i) mb = fmaxf(mb, l[k][i]);
        if (mb == -INFINITY) continue;  // every split so far empty (or no item)
        const float keep = m[k] == -INFINITY ? 0.f : __expf(m[k] - mb);
        m[k] = mb;
        sum[k] *= keep;
#pragma unroll
        for (int x = 0; x < 4; ++x) acc[k][x] *= keep;
#pragma unroll
        for (int i = 0; i < SB; ++i) {
          const float w = l[k][i] == -INFINITY ? 0.f : __expf(l[k][i] - mb);
          float4 v;
          asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                       : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                       : "r"(slot0 + (k * SB + i) * kThreads * 16));
          sum[k] += w;
          acc[k][0] += w * v.x;
          acc[k][1] += w * v.y;
          acc[k][2] += w * v.z;
          acc[k][3] += w * v.w;
        }
      }
    }
#pragma unroll
    for (int k = 0; k < IPI; ++k) {
      if (!live[k]) continue;
      const float inv = sum[k] > 0.f ? 1.f / sum[k] : 0.f;
      *reinterpret_cast<uint2*>(static_cast<char*>(o) + (gr[k] * D + d0[k]) * 2) = make_uint2(
          pack2<QT == 0>(acc[k][0] * inv, acc[k][1] * inv), pack2<QT == 0>(acc[k][2] * inv, acc[k][3] * inv));
      if (d0[k] == 0) lse[gr[k]] = sum[k] > 0.f ? m[k] + __logf(sum[k]) : -INFINITY;
    }
  }
}

// Two pieces a thread at a time where the chunk's rows give a thread more than one and the
// splits fit half the slots (then every piece is done in one batch). A separate function, so it
// does not weigh on the main loop's register allocation.
template <int D, int QT, int NB>
__device__ __noinline__ void combine_splits(const float* o_part, const float* lse_part, void* o, float* lse,
                                            int rows_total, int num_splits, int valid_rows, int row0, int group,
                                            int new_tokens, int heads, int b, int hk, std::uint32_t stage) {
  if (valid_rows * (D / 4) > kThreads && 2 * num_splits <= NB)
    combine_items<D, QT, NB, 2>(o_part, lse_part, o, lse, rows_total, num_splits, valid_rows, row0, group, new_tokens,
                                heads, b, hk, stage);
  else
    combine_items<D, QT, NB, 1>(o_part, lse_part, o, lse, rows_total, num_splits, valid_rows, row0, group, new_tokens,
                                heads, b, hk, stage);
}

// `stage`: shared memory free for the combine (`space` bytes, the pipeline's or the scratch's).
template <int D, int QT, int ROWS, int SPACE>
__device__ __forceinline__ void finish_split(const Params& p, int b, int hk, int chunk, int* s_flag,
                                             unsigned char* stage) {
  constexpr int NB_MAX = 8;
  constexpr int NB = SPACE / (kThreads * 16) < NB_MAX ? SPACE / (kThreads * 16) : NB_MAX;
  static_assert(NB >= 1, "combine slots");
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    int* ctr = p.counters + (static_cast<long long>(b) * p.heads_kv + hk) * p.row_chunks + chunk;
    const int last = atomicAdd(ctr, 1) == p.num_splits - 1;
    if (last) *ctr = 0;
    *s_flag = last;
  }
  __syncthreads();
  if (!*s_flag) return;
  __threadfence();
  const int row0 = chunk * ROWS;
  combine_splits<D, QT, NB>(p.o_part, p.lse_part, p.o, p.lse, p.rows_total, p.num_splits, min(ROWS, p.rows - row0),
                            row0, p.group, p.new_tokens, p.heads, b, hk,
                            static_cast<std::uint32_t>(__cvta_generic_to_shared(stage)));
}

// An empty split (a shorter sequence): zero rows and -inf LSEs, nothing to add in the combine.
template <class C, int D, class GrowOf>
__device__ __forceinline__ void zero_empty_split(const Params& p, const GrowOf& grow_of, int split) {
  for (int idx = threadIdx.x; idx < C::ROWS * D; idx += kThreads) {
    const int gr = grow_of(idx / D);
    if (gr < 0) continue;
    p.o_part[(static_cast<long long>(split) * p.rows_total + gr) * D + idx % D] = 0.f;
    if (idx % D == 0) p.lse_part[static_cast<long long>(split) * p.rows_total + gr] = -INFINITY;
  }
}

// One block of K and V rows [key0, key0 + 64) into stage `st` (zero past key_stop).
template <class C>
__device__ __forceinline__ void load_kv(const Params& p, std::uint32_t smem_u32, int st, int key0, int key_stop, int b,
                                        long long hk_off, long long row_pitch, const int* table_b) {
  const std::uint32_t sk = smem_u32 + st * C::STAGE_BYTES, sv = sk + C::TILE_BYTES;
#pragma unroll
  for (int it = 0; it < kBN * C::CPR / kThreads; ++it) {
    const int idx = threadIdx.x + it * kThreads;
    const int r = idx / C::CPR, q = idx % C::CPR;
    const int key = key0 + r;
    const bool valid = key < key_stop;
    long long prow = 0;
    if (valid) {
      if (p.paged) {
        const int page = __ldg(table_b + (key >> p.page_shift));
        prow = (static_cast<long long>(page) << p.page_shift) | (key & ((1 << p.page_shift) - 1));
      } else {
        prow = b * p.cap + key;
      }
    }
    const long long off = prow * row_pitch + hk_off + q * 16;
    cp_async16(sk + r * C::ROWB + swz_k<C>(r, q) * 16, p.k + off, valid);
    cp_async16(sv + r * C::ROWB + swz_v<C>(r, q) * 16, p.v + off, valid);
  }
}

// Keys past each row's limit masked, the scores in log2 units, the rows' maxima over the quad.
template <class C>
__device__ __forceinline__ void mask_max(float (&s)[C::NT_S][4], float& mx_lo, float& mx_hi, int key0, int lim_lo,
                                         int lim_hi, float scale_log2, int c) {
#pragma unroll
  for (int u = 0; u < C::NT_S; ++u)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int key = key0 + 8 * u + 2 * c + e;
      s[u][e] = key < lim_lo ? s[u][e] * scale_log2 : -INFINITY;
      s[u][2 + e] = key < lim_hi ? s[u][2 + e] * scale_log2 : -INFINITY;
      mx_lo = fmaxf(mx_lo, s[u][e]);
      mx_hi = fmaxf(mx_hi, s[u][2 + e]);
    }
  mx_lo = fmaxf(mx_lo, __shfl_xor_sync(0xffffffffu, mx_lo, 1));
  mx_lo = fmaxf(mx_lo, __shfl_xor_sync(0xffffffffu, mx_lo, 2));
  mx_hi = fmaxf(mx_hi, __shfl_xor_sync(0xffffffffu, mx_hi, 1));
  mx_hi = fmaxf(mx_hi, __shfl_xor_sync(0xffffffffu, mx_hi, 2));
}

// The online softmax step: P = exp2(S - m) in place, the running maxima and sums updated and
// the accumulators rescaled.
template <class C, int D>
__device__ __forceinline__ void softmax_rescale(float (&s)[C::NT_S][4], float (&acc)[D / 8][4], float& m_lo,
                                                float& m_hi, float& l_lo, float& l_hi, float mx_lo, float mx_hi) {
  const float mn_lo = fmaxf(m_lo, mx_lo), mn_hi = fmaxf(m_hi, mx_hi);
  const float base_lo = mn_lo == -INFINITY ? 0.f : mn_lo, base_hi = mn_hi == -INFINITY ? 0.f : mn_hi;
  const float al_lo = exp2f(m_lo - base_lo), al_hi = exp2f(m_hi - base_hi);
  m_lo = mn_lo;
  m_hi = mn_hi;
  float sum_lo = 0.f, sum_hi = 0.f;
#pragma unroll
  for (int u = 0; u < C::NT_S; ++u)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      s[u][e] = exp2f(s[u][e] - base_lo);
      s[u][2 + e] = exp2f(s[u][2 + e] - base_hi);
      sum_lo += s[u][e];
      sum_hi += s[u][2 + e];
    }
  l_lo = l_lo * al_lo + sum_lo;
  l_hi = l_hi * al_hi + sum_hi;
#pragma unroll
  for (int t = 0; t < D / 8; ++t) {
    acc[t][0] *= al_lo;
    acc[t][1] *= al_lo;
    acc[t][2] *= al_hi;
    acc[t][3] *= al_hi;
  }
}

// The warp's key slice's (m, l, O) of its two rows into the combine scratch.
template <class C, int D>
__device__ __forceinline__ void stage_slice(float* s_o, float* s_m, float* s_l, const float (&acc)[D / 8][4],
                                            const float& l_lo, const float& l_hi, const float& m_lo, const float& m_hi,
                                            int ks, int r_lo, int r_hi, int c) {
  float* o_lo = s_o + (ks * C::ROWS + r_lo) * C::OSTRIDE;
  float* o_hi = s_o + (ks * C::ROWS + r_hi) * C::OSTRIDE;
#pragma unroll
  for (int t = 0; t < D / 8; ++t)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int d = (2 * c + e) * (D / 8) + t;
      o_lo[d] = acc[t][e];
      o_hi[d] = acc[t][2 + e];
    }
  if (c == 0) {
    s_m[ks * C::ROWS + r_lo] = m_lo;
    s_m[ks * C::ROWS + r_hi] = m_hi;
    s_l[ks * C::ROWS + r_lo] = l_lo;
    s_l[ks * C::ROWS + r_hi] = l_hi;
  }
}

template <int D, int KV, int QT, int KS>
__global__ void __launch_bounds__(kThreads) decode_kernel(const Params p) {
  using C = Cfg<D, KV, QT, KS>;
  extern __shared__ __align__(128) unsigned char smem[];
  unsigned char* s_q = smem + C::SPACE;
  const std::uint32_t smem_u32 = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));

  const int split = blockIdx.x;
  const int hk = blockIdx.y / p.row_chunks, chunk = blockIdx.y % p.row_chunks;
  const int b = blockIdx.z;
  const int L = p.lens[b];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
  const int mt = warp % C::MT, ks = warp / C::MT;
  const int key_begin = split * p.split_keys;
  const int key_stop = min(L, key_begin + p.split_keys);
  const int row0 = chunk * C::ROWS;  // first tile row of this CTA within the group's rows

  // Global index (into [batch, new, heads]) of tile row r, or -1 past the group's rows.
  auto grow_of = [&](int r) -> int {
    const int row = row0 + r;
    if (row >= p.rows) return -1;
    const int tok = row / p.group, hg = row - tok * p.group;
    return (b * p.new_tokens + tok) * p.heads + hk * p.group + hg;
  };

  if (key_begin >= L) {  // an empty split (a shorter sequence): nothing to add in the combine
    zero_empty_split<C, D>(p, grow_of, split);
    finish_split<D, QT, C::ROWS, C::SPACE>(p, b, hk, chunk, reinterpret_cast<int*>(s_q), smem);
    return;
  }

  // Q tile into shared memory, in the MMA's type (bf16 Q with fp8 K/V: widened to fp16).
  for (int idx = threadIdx.x; idx < C::ROWS * (D / 8); idx += kThreads) {
    const int r = idx / (D / 8), q8 = idx % (D / 8);
    const int gr = grow_of(r);
    uint4 val = make_uint4(0, 0, 0, 0);
    if (gr >= 0) {
      val = *reinterpret_cast<const uint4*>(static_cast<const char*>(p.q) +
                                            (static_cast<long long>(gr) * D + q8 * 8) * 2);
      if constexpr (KV == 2 && QT == 0) {
        std::uint32_t* w = reinterpret_cast<std::uint32_t*>(&val);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          __nv_bfloat162 x = *reinterpret_cast<__nv_bfloat162*>(&w[i]);
          const float2 f = __bfloat1622float2(x);
          w[i] = pack2<false>(f.x, f.y);
        }
      }
    }
    *reinterpret_cast<uint4*>(s_q + r * C::QROWB + q8 * 16) = val;
  }

  // One block of K and V rows [key0, key0 + 64) into stage `st` (zero past key_stop).
  const long long hk_off = static_cast<long long>(hk) * D * C::EL;
  const long long row_pitch = static_cast<long long>(p.heads_kv) * D * C::EL;
  const int* table_b = p.table + static_cast<long long>(b) * p.pages_per_seq;
  auto load_block = [&](int st, int key0) {
    load_kv<C>(p, smem_u32, st, key0, key_stop, b, hk_off, row_pitch, table_b);
  };

  const int nblocks = (key_stop - key_begin + kBN - 1) / kBN;
  // Block j of the loop is block (j + rot) mod nblocks of the range (rot = 0 unless rotate).
  const int rot = p.rotate ? static_cast<int>((hk * 7u + b * 13u + split * 5u) % static_cast<unsigned>(nblocks)) : 0;
  auto block_key = [&](int j) {
    const int jb = j + rot;
    return key_begin + (jb >= nblocks ? jb - nblocks : jb) * kBN;
  };
#pragma unroll
  for (int st = 0; st < C::STAGES - 1; ++st) {
    if (st < nblocks) load_block(st, block_key(st));
    cp_async_commit();
  }
  __syncthreads();  // Q tile written

  // This warp's rows: tile rows mt*16 + g and + 8; their key limits (causal, split end).
  const int r_lo = mt * 16 + g, r_hi = r_lo + 8;
  auto limit_of = [&](int r) {
    const int row = row0 + r;
    int lim = key_stop;
    if (p.causal && row < p.rows) lim = min(lim, L - p.new_tokens + row / p.group + 1);
    return lim;
  };
  const int lim_lo = limit_of(r_lo), lim_hi = limit_of(r_hi);

  // Q fragments (registers): k-step st, a0 = (row g, 4st+{0,1}), a1 = row g+8, a2/a3 = +{2,3}.
  // head_dim 256 reads them from shared memory at each use instead (registers: no spills).
  constexpr int KSTEPS = D / 16;
  constexpr bool QREG = D <= 128;
  const unsigned char* q_lo = s_q + r_lo * C::QROWB + c * (D / 4) * 2;
  const unsigned char* q_hi = s_q + r_hi * C::QROWB + c * (D / 4) * 2;
  auto q_frag = [&](int st, std::uint32_t(&a)[4]) {
    const uint2 lo = *reinterpret_cast<const uint2*>(q_lo + st * 8);
    const uint2 hi = *reinterpret_cast<const uint2*>(q_hi + st * 8);
    a[0] = lo.x;
    a[1] = hi.x;
    a[2] = lo.y;
    a[3] = hi.y;
  };
  std::uint32_t qa[QREG ? KSTEPS : 1][4];
  if constexpr (QREG) {
#pragma unroll
    for (int st = 0; st < KSTEPS; ++st) q_frag(st, qa[st]);
  }

  float acc[D / 8][4];
#pragma unroll
  for (int t = 0; t < D / 8; ++t) acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.f;
  float m_lo = -INFINITY, m_hi = -INFINITY, l_lo = 0.f, l_hi = 0.f;

  for (int j = 0; j < nblocks; ++j) {
    cp_async_wait<C::STAGES - 2>();
    __syncthreads();
    if (j + C::STAGES - 1 < nblocks) load_block((j + C::STAGES - 1) % C::STAGES, block_key(j + C::STAGES - 1));
    cp_async_commit();

    const unsigned char* sk = smem + (j % C::STAGES) * C::STAGE_BYTES;
    const unsigned char* sv = sk + C::TILE_BYTES;
    const int key0 = block_key(j) + ks * C::KEYS_W;  // this warp's first key

    // S = Q K^T for the warp's KEYS_W keys.
    float s[C::NT_S][4];
#pragma unroll
    for (int u = 0; u < C::NT_S; ++u) {
      s[u][0] = s[u][1] = s[u][2] = s[u][3] = 0.f;
      const int r = ks * C::KEYS_W + 8 * u + g;
      const unsigned char* krow = sk + r * C::ROWB;
      std::uint32_t kw[C::CPT_K * 4];
#pragma unroll
      for (int jj = 0; jj < C::CPT_K; ++jj) {
        const uint4 x = *reinterpret_cast<const uint4*>(krow + swz_k<C>(r, c * C::CPT_K + jj) * 16);
        kw[4 * jj] = x.x;
        kw[4 * jj + 1] = x.y;
        kw[4 * jj + 2] = x.z;
        kw[4 * jj + 3] = x.w;
      }
#pragma unroll
      for (int st = 0; st < KSTEPS; ++st) {
        std::uint32_t b0, b1;
        if constexpr (KV == 2) {
          e4m3x4_to_f16x2x2(kw[st], b0, b1);
        } else {
          b0 = kw[2 * st];
          b1 = kw[2 * st + 1];
        }
        if constexpr (QREG) {
          mma16816<C::MMA_BF16>(s[u], qa[st], b0, b1);
        } else {
          std::uint32_t a[4];
          q_frag(st, a);
          mma16816<C::MMA_BF16>(s[u], a, b0, b1);
        }
      }
    }

    float mx_lo = -INFINITY, mx_hi = -INFINITY;
    mask_max<C>(s, mx_lo, mx_hi, key0, lim_lo, lim_hi, p.scale_log2, c);
    softmax_rescale<C, D>(s, acc, m_lo, m_hi, l_lo, l_hi, mx_lo, mx_hi);

    // O += P V.
#pragma unroll
    for (int ps = 0; ps < C::KSTEP_PV; ++ps) {
      std::uint32_t pa[4];
      pa[0] = pack2<C::MMA_BF16>(s[2 * ps][0], s[2 * ps][1]);
      pa[1] = pack2<C::MMA_BF16>(s[2 * ps][2], s[2 * ps][3]);
      pa[2] = pack2<C::MMA_BF16>(s[2 * ps + 1][0], s[2 * ps + 1][1]);
      pa[3] = pack2<C::MMA_BF16>(s[2 * ps + 1][2], s[2 * ps + 1][3]);
      constexpr int VW = C::VB / 4 > 0 ? C::VB / 4 : 1;  // words per row
      std::uint32_t vw[4][VW];
#pragma unroll
      for (int rr = 0; rr < 4; ++rr) {
        const int r = ks * C::KEYS_W + 16 * ps + 2 * c + (rr & 1) + (rr >> 1) * 8;
        const unsigned char* vrow = sv + r * C::ROWB;
        if constexpr (C::VB == 8) {
          const uint2 x = *reinterpret_cast<const uint2*>(vrow + g * 8);
          vw[rr][0] = x.x;
          vw[rr][1] = x.y;
        } else {
#pragma unroll
          for (int jj = 0; jj < C::VB / 16; ++jj) {
            const uint4 x = *reinterpret_cast<const uint4*>(vrow + swz_v<C>(r, g * (C::VB / 16) + jj) * 16);
            vw[rr][4 * jj] = x.x;
            vw[rr][4 * jj + 1] = x.y;
            vw[rr][4 * jj + 2] = x.z;
            vw[rr][4 * jj + 3] = x.w;
          }
        }
      }
      if constexpr (KV == 2) {
#pragma unroll
        for (int t = 0; t < D / 8; t += 2) {
          const int w = t / 4;
          const std::uint32_t sel = (t % 4) == 0 ? 0x5140u : 0x7362u;
          const std::uint32_t x01 = __byte_perm(vw[0][w], vw[1][w], sel);
          const std::uint32_t x23 = __byte_perm(vw[2][w], vw[3][w], sel);
          std::uint32_t v01[2], v23[2];
          e4m3x4_to_f16x2x2(x01, v01[0], v01[1]);
          e4m3x4_to_f16x2x2(x23, v23[0], v23[1]);
          mma16816<false>(acc[t], pa, v01[0], v23[0]);
          mma16816<false>(acc[t + 1], pa, v01[1], v23[1]);
        }
      } else {
#pragma unroll
        for (int t = 0; t < D / 8; ++t) {
          const std::uint32_t sel = (t & 1) ? 0x7632u : 0x5410u;
          const std::uint32_t b0 = __byte_perm(vw[0][t / 2], vw[1][t / 2], sel);
          const std::uint32_t b1 = __byte_perm(vw[2][t / 2], vw[3][t / 2], sel);
          mma16816<C::MMA_BF16>(acc[t], pa, b0, b1);
        }
      }
    }
  }

  // Row sums over the quad.
  l_lo += __shfl_xor_sync(0xffffffffu, l_lo, 1);
  l_lo += __shfl_xor_sync(0xffffffffu, l_lo, 2);
  l_hi += __shfl_xor_sync(0xffffffffu, l_hi, 1);
  l_hi += __shfl_xor_sync(0xffffffffu, l_hi, 2);

  // Combine the key slices' (m, l, O) in shared memory (the pipeline's space, now idle).
  cp_async_wait<0>();
  __syncthreads();
  float* s_o = reinterpret_cast<float*>(smem);   // [KS][ROWS][OSTRIDE]
  float* s_m = s_o + KS * C::ROWS * C::OSTRIDE;  // [KS][ROWS]
  float* s_l = s_m + KS * C::ROWS;
  stage_slice<C, D>(s_o, s_m, s_l, acc, l_lo, l_hi, m_lo, m_hi, ks, r_lo, r_hi, c);
  __syncthreads();
  for (int idx = threadIdx.x; idx < C::ROWS * (D / 8); idx += kThreads) {
    const int r = idx / (D / 8), d0 = (idx % (D / 8)) * 8;
    const int gr = grow_of(r);
    if (gr < 0) continue;
    float mt_ = -INFINITY;
#pragma unroll
    for (int k = 0; k < KS; ++k) mt_ = fmaxf(mt_, s_m[k * C::ROWS + r]);
    float w[KS], lt = 0.f;
#pragma unroll
    for (int k = 0; k < KS; ++k) {
      w[k] = mt_ == -INFINITY ? 0.f : exp2f(s_m[k * C::ROWS + r] - mt_);
      lt += w[k] * s_l[k * C::ROWS + r];
    }
    const float inv = lt > 0.f ? p.v_descale / lt : 0.f;
    float out[8];
#pragma unroll
    for (int x = 0; x < 8; ++x) {
      float a = 0.f;
#pragma unroll
      for (int k = 0; k < KS; ++k) a += w[k] * s_o[(k * C::ROWS + r) * C::OSTRIDE + d0 + x];
      out[x] = a * inv;
    }
    const float lse = lt > 0.f ? (mt_ + __log2f(lt)) * 0.69314718055994531f : -INFINITY;
    if (p.num_splits == 1) {
      uint4 pk;
      std::uint32_t* pw = reinterpret_cast<std::uint32_t*>(&pk);
#pragma unroll
      for (int x = 0; x < 4; ++x) pw[x] = pack2<QT == 0>(out[2 * x], out[2 * x + 1]);
      *reinterpret_cast<uint4*>(static_cast<char*>(p.o) + (static_cast<long long>(gr) * D + d0) * 2) = pk;
      if (d0 == 0) p.lse[gr] = lse;
    } else {
      float* dst = p.o_part + (static_cast<long long>(split) * p.rows_total + gr) * D + d0;
      *reinterpret_cast<float4*>(dst) = make_float4(out[0], out[1], out[2], out[3]);
      *reinterpret_cast<float4*>(dst + 4) = make_float4(out[4], out[5], out[6], out[7]);
      if (d0 == 0) p.lse_part[static_cast<long long>(split) * p.rows_total + gr] = lse;
    }
  }
  if (p.num_splits > 1) finish_split<D, QT, C::ROWS, C::SPACE>(p, b, hk, chunk, reinterpret_cast<int*>(s_q), smem);
}

using KernelFn = void (*)(Params);

template <int D, int KV, int QT, int KS>
KernelFn prepared_kernel() {
  using C = Cfg<D, KV, QT, KS>;
  static bool done = false;
  if (!done) {
    cudaFuncSetAttribute(decode_kernel<D, KV, QT, KS>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM);
    done = true;
  }
  return decode_kernel<D, KV, QT, KS>;
}

struct Picked {
  KernelFn fn = nullptr;
  int smem = 0;
};

template <int D, int KV, int QT>
Picked pick_ks(int ks) {
  Picked k;
  if (ks == 4) {
    k.fn = prepared_kernel<D, KV, QT, 4>();
    k.smem = Cfg<D, KV, QT, 4>::SMEM;
  } else {
    k.fn = prepared_kernel<D, KV, QT, 1>();
    k.smem = Cfg<D, KV, QT, 1>::SMEM;
  }
  return k;
}

template <int D>
Picked pick_types(Elem q, Elem kv, int ks) {
  const int qt = q == Elem::bf16 ? 0 : 1;
  if (kv == Elem::bf16) return pick_ks<D, 0, 0>(ks);
  if (kv == Elem::fp16) return pick_ks<D, 1, 1>(ks);
  return qt == 0 ? pick_ks<D, 2, 0>(ks) : pick_ks<D, 2, 1>(ks);
}

Picked pick(const Arguments& a, int ks) {
  switch (a.head_dim) {
    case 64: return pick_types<64>(a.q_type, a.kv_type, ks);
    case 128: return pick_types<128>(a.q_type, a.kv_type, ks);
    default: return pick_types<256>(a.q_type, a.kv_type, ks);
  }
}

int log2_exact(int x) {
  int s = 0;
  while ((1 << s) < x) ++s;
  return s;
}

}  // namespace

std::string can_implement(const Arguments& a) {
  if (a.head_dim != 64 && a.head_dim != 128 && a.head_dim != 256)
    return "decode/fa3 supports head_dim 64, 128 and 256, not " + std::to_string(a.head_dim);
  if (a.q_type == Elem::fp8_e4m3) return "decode/fa3: Q and O are bf16 or fp16";
  if (a.kv_type == Elem::bf16 && a.q_type != Elem::bf16) return "decode/fa3: bf16 K/V need bf16 Q";
  if (a.kv_type == Elem::fp16 && a.q_type != Elem::fp16) return "decode/fa3: fp16 K/V need fp16 Q";
  if (a.heads_kv < 1 || a.heads % a.heads_kv != 0) return "decode/fa3: heads must be a multiple of heads_kv";
  if (a.batch > 65535) return "decode/fa3: batch over 65535 (grid z)";
  if (a.page_size != 0 && (a.page_size & (a.page_size - 1)) != 0) return "decode/fa3: page_size must be a power of two";
  if (a.max_cache < a.new_tokens) return "decode/fa3: the cache must hold the new tokens";
  const long long rows = static_cast<long long>(a.heads / a.heads_kv) * a.new_tokens;
  if (static_cast<long long>(a.heads_kv) * ((rows + 63) / 64) > 65535)
    return "decode/fa3: heads_kv x row chunks over 65535";
  return "";
}

Launcher::Launcher(const Arguments& a, int sm_count) : a_(a) {
  const std::string why = can_implement(a);
  if (!why.empty()) throw std::invalid_argument(why);
  const int rows = (a.heads / a.heads_kv) * a.new_tokens;
  key_slices_ = rows <= 16 ? 4 : 1;
  const int rows_per_cta = key_slices_ == 4 ? 16 : 64;
  row_chunks_ = (rows + rows_per_cta - 1) / rows_per_cta;
  const Picked k = pick(a, key_slices_);
  int occ = 1;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k.fn, kThreads, k.smem);
  occ = std::max(occ, 1);
  const long long base = static_cast<long long>(a.batch) * a.heads_kv * row_chunks_;
  const long long slots = static_cast<long long>(std::max(sm_count, 1)) * occ;
  // Splits: the fewest whose waves (ceil(CTAs / slots)) per split are within 3% of the best,
  // at least 256 keys each.
  const int max_splits = std::max(1, std::min(256, (a.max_cache + 255) / 256));
  // A partial last wave leaves SMs with fewer CTAs (less in flight) for its duration, so a
  // split can pay even when the CTAs outnumber the slots (fp8's 3 CTAs per SM at 512 CTAs).
  int best = 1;
  if (a.num_splits > 0) {
    best = std::min(a.num_splits, std::max(1, (a.max_cache + kBN - 1) / kBN));
  } else {
    double best_cost = 1e30;
    for (int s = 1; s <= max_splits; ++s) {
      const double waves = std::ceil(static_cast<double>(base * s) / static_cast<double>(slots));
      const double cost = waves / s * (1.0 + 0.002 * s);  // a small price per split (the combine)
      if (cost < best_cost * 0.97) {
        best_cost = cost;
        best = s;
      }
    }
  }
  split_keys_ = ((a.max_cache + best - 1) / best + kBN - 1) / kBN * kBN;
  splits_ = (a.max_cache + split_keys_ - 1) / split_keys_;
}

std::size_t Launcher::workspace_size() const {
  if (splits_ <= 1) return 0;
  const std::size_t rows = static_cast<std::size_t>(a_.batch) * a_.new_tokens * a_.heads;
  const std::size_t counters = static_cast<std::size_t>(a_.batch) * a_.heads_kv * row_chunks_;
  return static_cast<std::size_t>(splits_) * rows * (static_cast<std::size_t>(a_.head_dim) + 1) * sizeof(float) +
         counters * sizeof(int);
}

void Launcher::run(cudaStream_t stream) const {
  Params p{};
  p.q = a_.q;
  p.k = static_cast<const char*>(a_.k);
  p.v = static_cast<const char*>(a_.v);
  p.o = a_.o;
  p.lse = a_.lse;
  const std::size_t rows_total = static_cast<std::size_t>(a_.batch) * a_.new_tokens * a_.heads;
  if (splits_ > 1) {
    if (!ws_) throw std::runtime_error("decode/fa3: the split workspace is not set");
    p.o_part = static_cast<float*>(ws_);
    p.lse_part = p.o_part + static_cast<std::size_t>(splits_) * rows_total * a_.head_dim;
    p.counters = reinterpret_cast<int*>(p.lse_part + static_cast<std::size_t>(splits_) * rows_total);
  }
  p.rotate = a_.rotate;
  p.table = a_.block_table;
  p.lens = a_.cache_len;
  p.heads = a_.heads;
  p.heads_kv = a_.heads_kv;
  p.new_tokens = a_.new_tokens;
  p.group = a_.heads / a_.heads_kv;
  p.rows = p.group * a_.new_tokens;
  p.paged = a_.page_size > 0;
  p.page_shift = p.paged ? log2_exact(a_.page_size) : 0;
  p.pages_per_seq = a_.pages_per_seq;
  p.cap = a_.max_cache;
  p.causal = a_.causal;
  p.scale_log2 = a_.scale * a_.k_descale * 1.4426950408889634f;
  p.v_descale = a_.v_descale;
  p.num_splits = splits_;
  p.split_keys = split_keys_;
  p.row_chunks = row_chunks_;
  p.rows_total = static_cast<int>(rows_total);
  const Picked k = pick(a_, key_slices_);
  const dim3 grid(splits_, a_.heads_kv * row_chunks_, a_.batch);
  k.fn<<<grid, kThreads, k.smem, stream>>>(p);
}

namespace {

__global__ void gather_kernel(const uint4* pool, const int* table, int shift, int pages_per_seq, int cache,
                              int row_chunks, uint4* out) {
  const int b = blockIdx.y;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
       i < static_cast<long long>(cache) * row_chunks; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int j = static_cast<int>(i / row_chunks), q = static_cast<int>(i % row_chunks);
    const long long src_row =
        (static_cast<long long>(table[static_cast<long long>(b) * pages_per_seq + (j >> shift)]) << shift) |
        (j & ((1 << shift) - 1));
    out[(static_cast<long long>(b) * cache + j) * row_chunks + q] = pool[src_row * row_chunks + q];
  }
}

}  // namespace

void gather_contiguous(const void* pool, const int* block_table, int page_size, int pages_per_seq, int batch, int cache,
                       std::size_t row_bytes, void* out, cudaStream_t stream) {
  if (page_size <= 0 || (page_size & (page_size - 1)) != 0 || row_bytes % 16 != 0)
    throw std::invalid_argument("decode/fa3 gather_contiguous: a power-of-two page size and 16-byte rows needed");
  const int row_chunks = static_cast<int>(row_bytes / 16);
  const dim3 grid(
      static_cast<unsigned>(std::min<long long>(1024, (static_cast<long long>(cache) * row_chunks + 255) / 256)),
      static_cast<unsigned>(batch));
  gather_kernel<<<grid, 256, 0, stream>>>(static_cast<const uint4*>(pool), block_table, log2_exact(page_size),
                                          pages_per_seq, cache, row_chunks, static_cast<uint4*>(out));
}

std::string Launcher::variant() const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "split=%d keys=%d ks=%d rows=%dx%d", splits_, split_keys_, key_slices_,
                key_slices_ == 4 ? 16 : 64, row_chunks_);
  return buf;
}

}  // namespace genbench::decode::fa3
