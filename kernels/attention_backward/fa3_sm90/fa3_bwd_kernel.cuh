#pragma once
// The fa3 backward's main kernel (fa3_backward.h gives the steps) and its arguments. Included by
// the fa3_bwd_d*.cu files, which instantiate it, and by fa3_backward.cu for Args and Layout.
//
// Register layouts are wgmma's (kernels/common/sm90_ptx.cuh): in a consumer warpgroup, thread
// (warp w, lane l) holds accumulator rows ra = 16 w + l / 4 and ra + 8, columns 8 i + 2 (l % 4)
// + {0, 1}. S^T and dP^T have the warpgroup's 64 keys as rows and the 64 query rows of the step
// as columns, so P^T and dS^T, packed in pairs, are the register A operands of dV += P^T dO and
// dK += dS^T Q. Shared tiles are 128-byte swizzled column chunks of 64 elements (as TMA writes
// them): K and V [D / 64][128 keys][128 B], Q and dO per stage [D / 64][64 rows][128 B], dS^T
// per buffer [128 keys][128 B] (64 query rows: one chunk). dQ's part of a step is staged in fp32
// 128-byte swizzled column chunks of 32 [D / 32][64 rows][128 B] and added to the accumulator
// by a writer thread with one TMA reduction per chunk.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/fast_math.cuh"
#include "kernels/common/sm90_ptx.cuh"

namespace genbench::attention_backward::fa3 {

struct Args {
  const void *o, *dout;  // for the pre kernel
  const float* lse;
  void *dq, *dk, *dv;
  const int *cu_q, *cu_k;
  // Workspace: LSE x log2(e) (+inf where P = 0) and D, both [batch][heads][lpad]; the fp32 dQ
  // accumulator [rows_q][heads][head_dim].
  float *lse2, *dsum, *dq_acc;
  int batch, heads, heads_kv, group, seqlen_q, seqlen_k;
  int lpad;  // seqlen_q rounded up to whole query blocks
  long long rows_q, rows_k, lse_head_stride;
  bool varlen, causal;
  float scale, scale_log2;
};

inline constexpr int kBlockN = 128;  // keys per CTA: two consumer warpgroups of 64
inline constexpr int kBlockM = 64;   // query rows per step
inline constexpr int kStages = 2;    // Q / dO ring
inline constexpr int kThreads = 384;

// Shared memory of the head dim's kernel (byte offsets from a 1024-aligned base).
template <int D>
struct Layout {
  // dQ: each consumer takes half of head_dim over all 128 keys (true: one staged buffer), or all
  // of it over its own 64 keys (false: d64, one buffer per consumer).
  static constexpr bool kSplitCols = D >= 128;
  static constexpr int kDqBufs = kSplitCols ? 1 : 2;
  static constexpr int kDqBytes = kBlockM * D * 4;
  static constexpr int kKVBytes = kBlockN * D * 2;
  static constexpr int kQBytes = kBlockM * D * 2;
  static constexpr int kDSBytes = kBlockN * kBlockM * 2;
  static constexpr int kOffK = 0;
  static constexpr int kOffV = kKVBytes;
  static constexpr int kOffQ = 2 * kKVBytes;
  static constexpr int kOffDO = kOffQ + kStages * kQBytes;
  static constexpr int kOffDS = kOffDO + kStages * kQBytes;            // two buffers
  static constexpr int kOffRows = kOffDS + 2 * kDSBytes;               // lse2 [S][64], then dsum [S][64]
  static constexpr int kOffDQ = kOffRows + 2 * kStages * kBlockM * 4;  // kDqBufs staged dQ parts
  static_assert(kOffDQ % 1024 == 0, "a swizzled TMA source must be 1024-aligned");
  static constexpr int kOffBar = kOffDQ + kDqBufs * kDqBytes;                // see Bars
  static constexpr int kBytes = kOffBar + 8 * (1 + 2 * kStages + 4) + 1024;  // + alignment slack
  static_assert(D % 64 == 0 && D <= 128, "fa3 backward: head_dim 64 or 128");
  static_assert(kBytes <= 227 * 1024, "shared memory over the sm_90 limit");
};

#ifdef GENBENCH_SM90A_ENABLED

namespace detail {

// One step's work item: query head h (the g-th of the group) and query block m.
struct Item {
  int h, m;
};

// The CTA's sequence, key block and the query blocks that see it.
struct Block {
  int b, hk, kv0, start_q, len_q, start_k, len_k, diag, m_first, n_m, n_items, tma_b, row_q0, row_k0;
  __device__ __forceinline__ Item item(const Args& a, int it) const {
    return {hk * a.group + it / n_m, m_first + it % n_m};
  }
};

__device__ __forceinline__ Block block_of(const Args& a) {
  Block k;
  k.b = blockIdx.z;
  k.hk = blockIdx.y;
  k.kv0 = blockIdx.x * kBlockN;
  k.start_q = a.cu_q[k.b];
  k.len_q = a.cu_q[k.b + 1] - k.start_q;
  k.start_k = a.cu_k[k.b];
  k.len_k = a.cu_k[k.b + 1] - k.start_k;
  k.diag = k.len_k - k.len_q;  // causal: query row i sees keys j <= i + diag
  k.m_first = 0;
  if (a.causal && k.kv0 - k.diag > 0) k.m_first = (k.kv0 - k.diag) / kBlockM;
  const int m_end = (k.len_q + kBlockM - 1) / kBlockM;
  k.n_m = m_end > k.m_first ? m_end - k.m_first : 0;
  k.n_items = k.n_m * a.group;
  // Without varlen the maps are [batch][seq]; with varlen one packed sequence.
  k.tma_b = a.varlen ? 0 : k.b;
  k.row_q0 = a.varlen ? k.start_q : 0;
  k.row_k0 = a.varlen ? k.start_k : 0;
  return k;
}

struct Bars {
  std::uint32_t base;
  __device__ __forceinline__ std::uint32_t kv_full() const { return base; }
  __device__ __forceinline__ std::uint32_t q_full(int s) const { return base + 8 + 8 * s; }
  __device__ __forceinline__ std::uint32_t q_empty(int s) const { return base + 8 + 8 * kStages + 8 * s; }
  // Staged dQ buffer b written (every warp that writes it arrives) and read by the reductions.
  __device__ __forceinline__ std::uint32_t dq_full(int b) const { return base + 8 + 16 * kStages + 8 * b; }
  __device__ __forceinline__ std::uint32_t dq_empty(int b) const { return base + 24 + 16 * kStages + 8 * b; }
};

// The producer thread: K and V of the block, then Q, dO, LSE x log2(e) and D of every item
// through the ring.
template <int D>
__device__ __forceinline__ void produce(const CUtensorMap& tm_q, const CUtensorMap& tm_k, const CUtensorMap& tm_v,
                                        const CUtensorMap& tm_do, const Args& a, const Block& k, std::uint32_t base,
                                        const Bars& bars) {
  using L = Layout<D>;
  sm90::prefetch_tensormap(&tm_q);
  sm90::prefetch_tensormap(&tm_k);
  sm90::prefetch_tensormap(&tm_v);
  sm90::prefetch_tensormap(&tm_do);
  sm90::mbar_arrive_expect_tx(bars.kv_full(), 2 * L::kKVBytes);
#pragma unroll
  for (int c = 0; c < D / 64; ++c) {
    sm90::tma_load_4d(base + L::kOffK + c * (kBlockN * 128), &tm_k, bars.kv_full(), c * 64, k.hk, k.row_k0 + k.kv0,
                      k.tma_b);
    sm90::tma_load_4d(base + L::kOffV + c * (kBlockN * 128), &tm_v, bars.kv_full(), c * 64, k.hk, k.row_k0 + k.kv0,
                      k.tma_b);
  }
  for (int it = 0; it < k.n_items; ++it) {
    const int s = it % kStages;
    sm90::mbar_wait(bars.q_empty(s), ((it / kStages) & 1) ^ 1);
    const Item x = k.item(a, it);
    sm90::mbar_arrive_expect_tx(bars.q_full(s), 2 * L::kQBytes + 2 * kBlockM * 4);
#pragma unroll
    for (int c = 0; c < D / 64; ++c) {
      sm90::tma_load_4d(base + L::kOffQ + s * L::kQBytes + c * (kBlockM * 128), &tm_q, bars.q_full(s), c * 64, x.h,
                        k.row_q0 + x.m * kBlockM, k.tma_b);
      sm90::tma_load_4d(base + L::kOffDO + s * L::kQBytes + c * (kBlockM * 128), &tm_do, bars.q_full(s), c * 64, x.h,
                        k.row_q0 + x.m * kBlockM, k.tma_b);
    }
    const long long r = (static_cast<long long>(k.b) * a.heads + x.h) * a.lpad + static_cast<long long>(x.m) * kBlockM;
    sm90::bulk_load(base + L::kOffRows + s * (kBlockM * 4), a.lse2 + r, kBlockM * 4, bars.q_full(s));
    sm90::bulk_load(base + L::kOffRows + (kStages + s) * (kBlockM * 4), a.dsum + r, kBlockM * 4, bars.q_full(s));
  }
}

// S^T[64 keys x 64 rows] = A[64 keys x D] B[64 rows x D]^T, both K-major tiles (A's chunks
// a_rows rows apart, B's 64), one commit group.
template <int D, bool kBF16>
__device__ __forceinline__ void issue_scores(float (&acc)[32], std::uint32_t a_base, int a_rows, std::uint32_t b_base) {
  const std::uint64_t da = sm90::make_desc_sw128(a_base, 16, 1024), db = sm90::make_desc_sw128(b_base, 16, 1024);
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    sm90::wgmma_ss<64, kBF16>(acc, sm90::desc_advance(da, (kk / 4) * (a_rows * 128) + (kk % 4) * 32),
                              sm90::desc_advance(db, (kk / 4) * (kBlockM * 128) + (kk % 4) * 32), kk > 0 ? 1 : 0);
}

// acc[64 keys x D] += F[64 keys x 64 rows] (register fragments) X[64 rows x D] (a Q or dO stage,
// read N-major).
template <int D, bool kBF16>
__device__ __forceinline__ void issue_accumulate(float (&acc)[D / 2], const std::uint32_t (&f)[4][4],
                                                 std::uint32_t x_base) {
  const std::uint64_t dx = sm90::make_desc_sw128(x_base, kBlockM * 128, 1024);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) sm90::wgmma_rs_tb<D, kBF16>(acc, f[kk], sm90::desc_advance(dx, kk * 2048), 1);
}

// P^T of one step in place of S^T: P = 2^(S scale log2(e) - LSE log2(e)), 0 where masked (keys
// past the sequence, causal). The thread's keys are key_a and key_a + 8; its query rows q0 + 8 i +
// 2 (l % 4) + {0, 1}.
__device__ __forceinline__ void probabilities(float (&st)[32], std::uint32_t lse2, float sl2, bool mask, bool causal,
                                              int key_a, int len_k, int q0, int diag, int tq) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int c = 8 * i + 2 * tq;
    const float2 l = sm90::ld_shared_f2(lse2 + 4 * c);
    st[4 * i] = ex2(fmaf(st[4 * i], sl2, -l.x));
    st[4 * i + 1] = ex2(fmaf(st[4 * i + 1], sl2, -l.y));
    st[4 * i + 2] = ex2(fmaf(st[4 * i + 2], sl2, -l.x));
    st[4 * i + 3] = ex2(fmaf(st[4 * i + 3], sl2, -l.y));
    if (mask) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = key_a + (e >= 2 ? 8 : 0), q = q0 + c + (e & 1);
        if (key >= len_k || (causal && key > q + diag)) st[4 * i + e] = 0.f;
      }
    }
  }
}

// dS^T = P^T o (dP^T - D) in place of dP^T (D per query row, the columns).
__device__ __forceinline__ void score_grads(float (&dpt)[32], const float (&pt)[32], std::uint32_t dsum, int tq) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const float2 dd = sm90::ld_shared_f2(dsum + 4 * (8 * i + 2 * tq));
    dpt[4 * i] = pt[4 * i] * (dpt[4 * i] - dd.x);
    dpt[4 * i + 1] = pt[4 * i + 1] * (dpt[4 * i + 1] - dd.y);
    dpt[4 * i + 2] = pt[4 * i + 2] * (dpt[4 * i + 2] - dd.x);
    dpt[4 * i + 3] = pt[4 * i + 3] * (dpt[4 * i + 3] - dd.y);
  }
}

// Accumulator columns [16 k, 16 k + 16) packed in pairs: the A fragments of k step k.
template <bool kBF16>
__device__ __forceinline__ void to_fragments(const float (&x)[32], std::uint32_t (&f)[4][4]) {
#pragma unroll
  for (int k = 0; k < 4; ++k)
#pragma unroll
    for (int r = 0; r < 4; ++r) f[k][r] = pack2<kBF16>(x[8 * k + 2 * r], x[8 * k + 2 * r + 1]);
}

// dS^T of the thread's rows (warpgroup-local row ra and ra + 8 of consumer cw) into a dS buffer.
__device__ __forceinline__ void stage_ds(std::uint32_t ds, const std::uint32_t (&f)[4][4], int cw, int ra, int tq) {
  const int row = cw * 64 + ra;
#pragma unroll
  for (int k = 0; k < 4; ++k)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      // f[k][0]: row, columns 16 k + 2 tq; [1]: row + 8; [2], [3]: the same 8 columns further.
      const int unit = 2 * k + half;
      const int off_a = row * 128 + ((unit ^ (row & 7)) << 4) + 4 * tq;
      sm90::st_shared_b32(ds + off_a, f[k][2 * half]);
      sm90::st_shared_b32(ds + off_a + 8 * 128, f[k][2 * half + 1]);
    }
}

// dQ's partial [64 rows x 64 columns] = dS[64 rows x keys] K[keys x 64 columns] over `steps` x 16
// keys from row key_row of the dS buffer and the K tile (column chunk `chunk`): both operands
// transposed (dS^T is stored keys-major, K keys-major).
template <bool kBF16>
__device__ __forceinline__ void issue_dq(float (&acc)[32], std::uint32_t ds_base, std::uint32_t k_base, int chunk,
                                         int key_row, int steps) {
  const std::uint64_t da = sm90::make_desc_sw128(ds_base + key_row * 128, kBlockN * 128, 1024);
  const std::uint64_t db = sm90::make_desc_sw128(k_base + chunk * (kBlockN * 128) + key_row * 128, kBlockN * 128, 1024);
  for (int kk = 0; kk < steps; ++kk)
    sm90::wgmma_ss_tt<64, kBF16>(acc, sm90::desc_advance(da, kk * 2048), sm90::desc_advance(db, kk * 2048),
                                 kk > 0 ? 1 : 0);
}

// The partial dQ (rows ra, ra + 8 of the step's query block, columns col0 + 8 i + 2 tq) into a
// staged dQ buffer; rows past the sequence as zeros (the reduction's box covers them).
template <int D>
__device__ __forceinline__ void stage_dq(const float (&acc)[32], std::uint32_t buf, int col0, int ra, int tq,
                                         int rows) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = ra + 8 * half;
    const bool in = row < rows;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int chunk = col0 / 32 + i / 4, unit = 2 * (i % 4) + tq / 2;
      const std::uint32_t at = buf + chunk * (kBlockM * 128) + row * 128 + ((unit ^ (row & 7)) << 4) + 8 * (tq % 2);
      sm90::st_shared_f2(at, in ? acc[4 * i + 2 * half] : 0.f, in ? acc[4 * i + 2 * half + 1] : 0.f);
    }
  }
}

// A writer thread (one per staged dQ buffer b): every item's buffer added to the fp32
// accumulator, one TMA reduction per 32-column chunk, and the buffer released once read.
template <int D>
__device__ __forceinline__ void write_dq(const CUtensorMap& tm_dq, const Args& a, const Block& k, std::uint32_t base,
                                         const Bars& bars, int b) {
  using L = Layout<D>;
  constexpr int kChunks = (L::kSplitCols ? D : 64) / 32;
  const std::uint32_t buf = base + L::kOffDQ + b * L::kDqBytes;
  sm90::prefetch_tensormap(&tm_dq);
  for (int it = 0; it < k.n_items; ++it) {
    const Item x = k.item(a, it);
    sm90::mbar_wait(bars.dq_full(b), it & 1);
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
      sm90::tma_reduce_add_3d(&tm_dq, buf + c * (kBlockM * 128), 32 * c, x.h, k.start_q + x.m * kBlockM);
    sm90::bulk_commit();
    sm90::bulk_wait_read<0>();
    sm90::mbar_arrive(bars.dq_empty(b));
  }
  sm90::bulk_wait<0>();
}

// dK (x scale) and dV of the thread's keys into the outputs, keys past the sequence skipped.
template <typename T, int D>
__device__ __forceinline__ void store_dkdv(const float (&dk)[D / 2], const float (&dv)[D / 2], const Args& a,
                                           const Block& k, int key_a, int tq) {
  constexpr bool kBF16 = std::is_same_v<T, __nv_bfloat16>;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int key = key_a + 8 * half;
    if (key >= k.len_k) continue;
    const long long off = (static_cast<long long>(k.start_k + key) * a.heads_kv + k.hk) * D + 2 * tq;
    T* gk = static_cast<T*>(a.dk) + off;
    T* gv = static_cast<T*>(a.dv) + off;
#pragma unroll
    for (int i = 0; i < D / 8; ++i) {
      *reinterpret_cast<std::uint32_t*>(gk + 8 * i) =
          pack2<kBF16>(dk[4 * i + 2 * half] * a.scale, dk[4 * i + 2 * half + 1] * a.scale);
      *reinterpret_cast<std::uint32_t*>(gv + 8 * i) = pack2<kBF16>(dv[4 * i + 2 * half], dv[4 * i + 2 * half + 1]);
    }
  }
}

template <int N>
__device__ __forceinline__ void fence(float (&x)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) sm90::reg_fence(x[i]);
}

__device__ __forceinline__ void fence_frag(std::uint32_t (&f)[4][4]) {
#pragma unroll
  for (int k = 0; k < 4; ++k)
#pragma unroll
    for (int r = 0; r < 4; ++r) sm90::reg_fence(f[k][r]);
}

// A consumer warpgroup (cw 0 or 1, thread t of 128): its 64 keys' dK and dV over every item,
// and the items' dQ parts.
template <typename T, int D>
__device__ __forceinline__ void consume(const Args& a, const Block& k, std::uint32_t base, const Bars& bars, int cw,
                                        int t) {
  using L = Layout<D>;
  constexpr bool kBF16 = std::is_same_v<T, __nv_bfloat16>;
  const int warp = t / 32, lane = t % 32, tq = lane % 4;
  const int ra = 16 * warp + lane / 4;
  const int key_a = k.kv0 + cw * 64 + ra;  // and key_a + 8
  float dk[D / 2], dv[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) dk[i] = dv[i] = 0.f;
  sm90::mbar_wait(bars.kv_full(), 0);
  const std::uint32_t k_wg = base + L::kOffK + cw * 64 * 128, v_wg = base + L::kOffV + cw * 64 * 128;
  // Blocks that need the mask: the key block runs past the sequence, or (causal) a query row of
  // the step does not see the block's last key.
  const bool tail = k.kv0 + kBlockN > k.len_k;
  for (int it = 0; it < k.n_items; ++it) {
    const int s = it % kStages;
    const Item x = k.item(a, it);
    sm90::mbar_wait(bars.q_full(s), (it / kStages) & 1);
    const std::uint32_t q_s = base + L::kOffQ + s * L::kQBytes, do_s = base + L::kOffDO + s * L::kQBytes;
    float st[32], dpt[32];
    // S^T and dP^T as two commit groups: P is computed, and dV += P^T dO issued, while dP^T is
    // still on the tensor cores.
    sm90::wgmma_fence();
    issue_scores<D, kBF16>(st, k_wg, kBlockN, q_s);
    sm90::wgmma_commit();
    issue_scores<D, kBF16>(dpt, v_wg, kBlockN, do_s);
    sm90::wgmma_commit();
    sm90::wgmma_wait<1>();
    fence(st);
    const bool mask = tail || (a.causal && x.m * kBlockM + k.diag < k.kv0 + kBlockN - 1);
    const std::uint32_t rows = base + L::kOffRows;
    probabilities(st, rows + s * (kBlockM * 4), a.scale_log2, mask, a.causal, key_a, k.len_k, x.m * kBlockM, k.diag,
                  tq);
    std::uint32_t pf[4][4], sf[4][4];
    to_fragments<kBF16>(st, pf);
    sm90::wgmma_fence();
    issue_accumulate<D, kBF16>(dv, pf, do_s);
    sm90::wgmma_commit();
    sm90::wgmma_wait<1>();  // dP^T (the older group) is complete; dV may still run
    fence(dpt);
    score_grads(dpt, st, rows + (kStages + s) * (kBlockM * 4), tq);
    to_fragments<kBF16>(dpt, sf);
    sm90::wgmma_fence();
    issue_accumulate<D, kBF16>(dk, sf, q_s);
    sm90::wgmma_commit();
    // dS^T to this step's buffer, visible to wgmma (the async proxy) once every writer is past
    // the barrier: both consumers (split columns) or this one.
    const std::uint32_t ds_addr = base + L::kOffDS + (it & 1) * L::kDSBytes;
    stage_ds(ds_addr, sf, cw, ra, tq);
    sm90::fence_proxy_async_shared();
    if constexpr (L::kSplitCols) sm90::named_barrier_sync(1, 256);
    else sm90::named_barrier_sync(2 + cw, 128);
    // dV and dK complete before dQ is issued: their register operands are free for dQ's
    // accumulator (both live at once need more than 240 registers at d128).
    sm90::wgmma_wait<0>();
    fence(dk);
    fence(dv);
    fence_frag(pf);
    fence_frag(sf);
    float dq[32];
    sm90::wgmma_fence();
    if constexpr (L::kSplitCols) issue_dq<kBF16>(dq, ds_addr, base + L::kOffK, cw, 0, kBlockN / 16);
    else issue_dq<kBF16>(dq, ds_addr, base + L::kOffK, 0, cw * 64, 4);
    sm90::wgmma_commit();
    sm90::wgmma_wait<0>();
    fence(dq);
    // Every read of the stage is complete: release it, then hand dQ's part to the writer once
    // its buffer is free (the previous item's reductions have read it).
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(bars.q_empty(s));
    const int b = L::kSplitCols ? 0 : cw;
    const std::uint32_t dq_buf = base + L::kOffDQ + b * L::kDqBytes;
    sm90::mbar_wait(bars.dq_empty(b), (it & 1) ^ 1);
    stage_dq<D>(dq, dq_buf, L::kSplitCols ? cw * 64 : 0, ra, tq, k.len_q - x.m * kBlockM);
    sm90::fence_proxy_async_shared();
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(bars.dq_full(b));
  }
  store_dkdv<T, D>(dk, dv, a, k, key_a, tq);
}

}  // namespace detail

#endif  // GENBENCH_SM90A_ENABLED

// Main: dK, dV of one key block and its part of dQ (grid: key blocks, kv heads, sequences).
template <typename T, int D>
__global__ void __launch_bounds__(kThreads, 1)
    bwd_main(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
             const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_do,
             const __grid_constant__ CUtensorMap tm_dq, const Args a) {
#ifdef GENBENCH_SM90A_ENABLED
  using L = Layout<D>;
  extern __shared__ unsigned char smem_raw[];
  const std::uint32_t raw = sm90::smem_addr(smem_raw);
  const std::uint32_t pad = (1024u - (raw & 1023u)) & 1023u;
  const std::uint32_t base = raw + pad;
  const detail::Block k = detail::block_of(a);
  if (k.kv0 >= k.len_k) return;  // a shorter sequence of a varlen batch: no keys here
  const detail::Bars bars{base + L::kOffBar};
  const int tid = threadIdx.x, wg = tid / 128;
  if (tid == 0) {
    sm90::mbar_init(bars.kv_full(), 1);
    for (int s = 0; s < kStages; ++s) {
      sm90::mbar_init(bars.q_full(s), 1);
      sm90::mbar_init(bars.q_empty(s), 8);  // every consumer warp
    }
    for (int b = 0; b < L::kDqBufs; ++b) {
      sm90::mbar_init(bars.dq_full(b), L::kSplitCols ? 8 : 4);  // every warp that writes it
      sm90::mbar_init(bars.dq_empty(b), 1);
    }
    sm90::fence_barrier_init();
  }
  __syncthreads();
  if (wg == 0) {
    sm90::setmaxnreg_dec<24>();  // 128 x 24 + 256 x 240: the 384 x 168 the launch holds
    if (tid == 0) detail::produce<D>(tm_q, tm_k, tm_v, tm_do, a, k, base, bars);
    if (tid % 32 == 0 && tid / 32 >= 1 && tid / 32 <= L::kDqBufs)
      detail::write_dq<D>(tm_dq, a, k, base, bars, tid / 32 - 1);
    return;
  }
  sm90::setmaxnreg_inc<240>();
  detail::consume<T, D>(a, k, base, bars, wg - 1, tid % 128);
#endif  // GENBENCH_SM90A_ENABLED
}

}  // namespace genbench::attention_backward::fa3
