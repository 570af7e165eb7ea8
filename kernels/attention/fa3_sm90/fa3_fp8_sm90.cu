// fa3 fp8: the e4m3 forward of attention/fa3 for Hopper (sm_90a).
//
// Same structure as the 16-bit kernel (fa3_sm90.cu): one CTA = 128 query rows of one
// (batch, head); warpgroup 0 is the producer (one thread issues TMA loads of Q once and of K and
// V^T tiles into a ring of stages with full/empty mbarriers), warpgroups 1 and 2 consume 64 rows
// each with 240 registers. Per key block (192 keys at d=128, 128 at d=256: block_n_for): S = Q K^T
// with wgmma m64nBNk32 e4m3 (both operands K-major from swizzled shared memory, fp32
// accumulators), the online softmax in fp32
// with exp2 and descale_q * descale_k * softmax_scale * log2(e) folded into one FFMA, P (offset
// by 2^8, see kPOffsetLog2) rounded to e4m3 in registers and used as the A operand of
// O += P V^T (wgmma m64nDk32, B = the V^T tile, K-major). QK^T of block j issued with PV of
// block j-1 (in the machine code the softmax follows both: see the 16-bit kernel's header) and
// ping-pong of the two consumer warpgroups (named barriers 3 and 4) as in the 16-bit kernel. Key blocks are visited last to first; causal
// skips blocks above the diagonal and masks only tail/diagonal blocks; rows past seqlen_q run
// on TMA's zero fill and are not stored.
// Epilogue: O x descale_v / rowsum, rounded to bf16 and stored from registers; LSE in fp32.
//
// Why V^T, and its key permutation. 8-bit wgmma takes B only K-major, so the PV product
// needs V with the keys contiguous: a pre-pass kernel (transpose_v_kernel, same stream, part of
// every launch) writes V^T. The fp32 accumulator of S gives thread t = lane % 4 of a quad, for
// each 32-key step and for each of its two rows, the columns
//     {2t, 2t+1, 8+2t, 9+2t}  and  {16+2t, 17+2t, 24+2t, 25+2t}
// (accumulator registers 16c + {0,1,4,5} and 16c + {8,9,12,13} for row r0, 16c + {2,3,6,7}
// and 16c + {10,11,14,15} for row r0 + 8), while the A fragment of an m64nNk32 step wants in
// its registers the k positions {4t .. 4t+3} (a[0] row r0, a[1] row r0 + 8) and
// {16+4t .. 16+4t+3} (a[2], a[3]) (PTX ISA, wgmma register fragments, m64nNk32 A; see
// sm90_ptx.cuh). Packing the thread's own four columns in that order into each register
// puts, at k position 4t + j of a 16-wide half, the key 2t + (j & 1) + 8 (j >> 1). The PV
// product is then right if B's k position p holds V of that same key: V^T stores, at position
// p of every group of 16 keys, key vt_key_at(p) = 2 (p / 4) + (p % 2) + 8 ((p % 4) / 2) of the
// group (p: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 -> key 0 1 8 9 2 3 10 11 4 5 12 13 6 7 14 15).
// No shuffle is needed in the softmax loop.
#include "kernels/attention/fa3_sm90/fa3_fp8_sm90.h"

#include <cuda_bf16.h>

#include <cstdint>

#include "backend/cuda/check.h"
#include "core/error.h"
#include "core/strings.h"
#include "kernels/attention/fa3_sm90/fa3_device.cuh"
#include "kernels/common/sm90_ptx.cuh"
#include "kernels/common/sm90_support.h"
#include "kernels/common/tma_map.h"

namespace genbench::fa3::fp8 {

namespace {

constexpr int kThreads = 384;  // 3 warpgroups
constexpr int kBlockM = 128;   // query rows per CTA (64 per consumer warpgroup)

// Keys per block by head dim. At d=128 a wider block spreads the per-block work that does not
// grow with the keys (row max reduction, O rescale, barriers, wgmma waits) over more keys; 192
// keys keep S (96), O (64) and P (24 registers) inside the consumers' 240. d=256 has O of 128
// registers and keeps 128 keys.
template <int D>
constexpr int block_n_for() {
  return D == 128 ? 192 : 128;
}

// V^T tiles are stored as column chunks of W keys (W bytes, W-byte swizzle), W the widest of
// 128, 64, 32 that divides the block: one TMA box and one wgmma swizzle row per chunk.
constexpr int vt_chunk(int bn) { return bn % 128 == 0 ? 128 : (bn % 64 == 0 ? 64 : 32); }

struct KernelParams {
  __nv_bfloat16* o;
  float* lse;
  int heads, group, seqlen_q, seqlen_k;
  float scale_qk;    // softmax scale x descale_q x descale_k: score of stored values -> true score
  float scale_log2;  // scale_qk x log2(e)
  float descale_v;
  int causal, pingpong;
};

// Shared memory (1 byte per element; Q and K in column chunks of 128 elements = one 128-byte
// swizzle row, V^T in chunks of W = vt_chunk(BN) keys with W-byte swizzle): Q [D/128][128 rows][128],
// then per stage K [D/128][BN rows][128] and V^T [BN/W][D rows][W], then the mbarriers (bar_q,
// full_k[S], empty_k[S], full_v[S], empty_v[S]).
template <int D, int BN, int S>
struct Layout {
  static constexpr int kChunks = D / 128;
  static constexpr int kQBytes = kBlockM * D;
  static constexpr int kVChunk = vt_chunk(BN);
  static constexpr int kKBytes = BN * D;
  static constexpr int kVBytes = D * BN;
  static constexpr int kOffK = kQBytes;
  static constexpr int kOffV = kQBytes + S * kKBytes;
  static constexpr int kOffBar = kOffV + S * kVBytes;
  static constexpr int kBytes = kOffBar + 128 + 1024;  // + barriers + alignment slack
  static_assert(kChunks * 128 == D, "head_dim must be a multiple of 128 for fp8");
  static_assert(BN % 32 == 0 && BN <= 256, "key block must be a multiple of 32 up to 256 (TMA box, wgmma N)");
  static_assert(8 * (1 + 4 * S) <= 128, "barrier area too small");
  static_assert(kKBytes % 1024 == 0 && kVBytes % 1024 == 0 && kQBytes % 1024 == 0, "tiles must keep 1024-byte alignment");
  static_assert(kBytes <= 227 * 1024, "shared memory over the sm_90 limit");
};

// Ring depth: d=128 tiles are 16 KB, so three stages fit easily; d=256 (32 KB tiles) keeps two.
template <int D>
constexpr int stages_for() {
  return D == 128 ? 3 : 2;
}

// V [b, sk, hk, D] -> V^T [b, hk, D, sk_pad] with the keys of every 16-group permuted
// (vt_key_at) and zeros past seqlen_k. CTA: 128 keys x 64 dims of one (b, hk), 256 threads.
__global__ void __launch_bounds__(256) transpose_v_kernel(const std::uint8_t* __restrict__ v, std::uint8_t* __restrict__ vt,
                                                          int seqlen_k, int sk_pad, int heads_kv, int d) {
  constexpr int kPitch = 64 + 16;  // keeps 16-byte alignment of the rows
  __shared__ __align__(16) std::uint8_t tile[kVtKeyPad * kPitch];
  const int k0 = static_cast<int>(blockIdx.x) * kVtKeyPad, d0 = static_cast<int>(blockIdx.y) * 64;
  const int bh = static_cast<int>(blockIdx.z), b = bh / heads_kv, hk = bh % heads_kv;
  for (int u = static_cast<int>(threadIdx.x); u < kVtKeyPad * 4; u += 256) {
    const int key = u / 4, part = u % 4;
    uint4 val = make_uint4(0u, 0u, 0u, 0u);
    if (k0 + key < seqlen_k)
      val = *reinterpret_cast<const uint4*>(
          v + ((static_cast<std::int64_t>(b) * seqlen_k + k0 + key) * heads_kv + hk) * d + d0 + part * 16);
    *reinterpret_cast<uint4*>(tile + key * kPitch + part * 16) = val;
  }
  __syncthreads();
  // Output row n (one head dim) of this block: 128 positions = 8 units of 16; 8 threads write
  // one row's 128 contiguous bytes.
  for (int u = static_cast<int>(threadIdx.x); u < 64 * 8; u += 256) {
    const int n = u / 8, g = u % 8;
    std::uint32_t w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      std::uint32_t x = 0;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        x |= static_cast<std::uint32_t>(tile[(16 * g + vt_key_at(4 * q + j)) * kPitch + n]) << (8 * j);
      w[q] = x;
    }
    *reinterpret_cast<uint4*>(vt + (static_cast<std::int64_t>(bh) * d + d0 + n) * sk_pad + k0 + 16 * g) =
        make_uint4(w[0], w[1], w[2], w[3]);
  }
}

#ifdef GENBENCH_SM90A_ENABLED

constexpr int kProducerRegs = 24;  // after setmaxnreg: 128 x 24 + 256 x 240 <= 64K registers
constexpr int kConsumerRegs = 240;

// S[64 x BN] = Q_wg[64 x D] * K_stage[BN x D]^T (e4m3, k32 steps), one commit group.
template <int D, int BN>
__device__ __forceinline__ void issue_qk(float (&s)[BN / 2], std::uint32_t q_base, std::uint32_t k_base) {
  const std::uint64_t da = sm90::make_desc_sw128(q_base, 16, 1024), db = sm90::make_desc_sw128(k_base, 16, 1024);
  sm90::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < D / 32; ++kk)
    sm90::wgmma_ss_e4m3<BN>(s, sm90::desc_advance(da, (kk / 4) * (kBlockM * 128) + (kk % 4) * 32),
                            sm90::desc_advance(db, (kk / 4) * (BN * 128) + (kk % 4) * 32), kk > 0 ? 1 : 0);
  sm90::wgmma_commit();
}

// O[64 x D] += P[64 x BN] (registers, e4m3) * V^T_stage[D x BN]^T (K-major, chunks of W keys),
// one commit group.
template <int D, int BN>
__device__ __forceinline__ void issue_pv(float (&o)[D / 2], const std::uint32_t (&p)[BN / 32][4],
                                         std::uint32_t v_base) {
  constexpr int W = vt_chunk(BN);
  const std::uint64_t dv = sm90::make_desc_kmajor<W>(v_base);
  sm90::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < BN / 32; ++kk)
    sm90::wgmma_rs_e4m3<D>(o, p[kk], sm90::desc_advance(dv, (32 * kk / W) * (D * W) + (32 * kk) % W), 1);
  sm90::wgmma_commit();
}

__device__ __forceinline__ std::uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<std::uint32_t*>(&v);
}

#endif  // GENBENCH_SM90A_ENABLED

template <int D, int BN, int S>
__global__ void __launch_bounds__(kThreads, 1)
    fa3_fp8_fwd_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                       const __grid_constant__ CUtensorMap tm_vt, const KernelParams p) {
#ifdef GENBENCH_SM90A_ENABLED
  using L = Layout<D, BN, S>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const std::uint32_t raw = sm90::smem_addr(smem_raw);
  const std::uint32_t pad = (1024u - (raw & 1023u)) & 1023u;
  const std::uint32_t s_q = raw + pad, s_k = s_q + L::kOffK, s_v = s_q + L::kOffV;
  const std::uint32_t bar_q = s_q + L::kOffBar;
  const std::uint32_t full_k = bar_q + 8, empty_k = full_k + 8 * S, full_v = empty_k + 8 * S, empty_v = full_v + 8 * S;

  const int h = blockIdx.y, b = blockIdx.z, hk = h / p.group;
  const int seqlen_q = p.seqlen_q, seqlen_k = p.seqlen_k;
  const int m_blocks = (seqlen_q + kBlockM - 1) / kBlockM;
  const int m_block = m_blocks - 1 - static_cast<int>(blockIdx.x);  // longest causal rows first
  const int row0 = m_block * kBlockM;
  const int row_last = min(seqlen_q, row0 + kBlockM) - 1;
  const int diag = seqlen_k - seqlen_q;  // causal: row i sees keys j <= i + diag
  const int key_end = p.causal ? min(seqlen_k, max(0, row_last + diag + 1)) : seqlen_k;
  const int n_blocks = (key_end + BN - 1) / BN;

  if (threadIdx.x == 0) {
    sm90::mbar_init(bar_q, 1);
#pragma unroll
    for (int s = 0; s < S; ++s) {
      sm90::mbar_init(full_k + 8 * s, 1);
      sm90::mbar_init(full_v + 8 * s, 1);
      sm90::mbar_init(empty_k + 8 * s, 8);  // one arrival per consumer warp
      sm90::mbar_init(empty_v + 8 * s, 8);
    }
    sm90::fence_barrier_init();
  }
  __syncthreads();

  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);
  if (wg == 0) {
    // ---------------------------------------------------------------- producer
    sm90::setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x == 0 && n_blocks > 0) {
      sm90::prefetch_tensormap(&tm_q);
      sm90::prefetch_tensormap(&tm_k);
      sm90::prefetch_tensormap(&tm_vt);
      sm90::mbar_arrive_expect_tx(bar_q, L::kQBytes);
#pragma unroll
      for (int c = 0; c < L::kChunks; ++c) sm90::tma_load_4d(s_q + c * (kBlockM * 128), &tm_q, bar_q, c * 128, h, row0, b);
      for (int it = 0; it < n_blocks; ++it) {
        const int n = n_blocks - 1 - it, s = it % S;
        const std::uint32_t phase = (it / S) & 1;
        sm90::mbar_wait(empty_k + 8 * s, phase ^ 1);
        sm90::mbar_arrive_expect_tx(full_k + 8 * s, L::kKBytes);
#pragma unroll
        for (int c = 0; c < L::kChunks; ++c)
          sm90::tma_load_4d(s_k + s * L::kKBytes + c * (BN * 128), &tm_k, full_k + 8 * s, c * 128, hk, n * BN, b);
        sm90::mbar_wait(empty_v + 8 * s, phase ^ 1);
        sm90::mbar_arrive_expect_tx(full_v + 8 * s, L::kVBytes);
#pragma unroll
        for (int c = 0; c < BN / L::kVChunk; ++c)
          sm90::tma_load_4d(s_v + s * L::kVBytes + c * (D * L::kVChunk), &tm_vt, full_v + 8 * s, n * BN + c * L::kVChunk,
                            0, hk, b);
      }
    }
    return;
  }

  // ------------------------------------------------------------------ consumers
  sm90::setmaxnreg_inc<kConsumerRegs>();
  const int cw = wg - 1;  // consumer warpgroup 0 or 1
  const int tid = static_cast<int>(threadIdx.x) % 128, warp = tid / 32, lane = tid % 32;
  const int rl_a = warp * 16 + lane / 4;  // this thread's rows within the warpgroup: rl_a, rl_a + 8
  const int row_a = row0 + cw * 64 + rl_a, row_b = row_a + 8;
  const int lim_a = p.causal ? min(seqlen_k, row_a + diag + 1) : seqlen_k;  // keys [0, lim) visible
  const int lim_b = p.causal ? min(seqlen_k, row_b + diag + 1) : seqlen_k;
  const int mask_from = p.causal ? min(seqlen_k, row0 + diag + 1) : seqlen_k;  // blocks ending past it need the mask
  const std::uint32_t q_base = s_q + cw * 64 * 128;
  const float sl2 = p.scale_log2;
  const float kNegInf = -INFINITY;
  // P is computed as 2^8 x exp(s - max), in [0, 256]: e4m3 then keeps 3 mantissa bits down to
  // P = 2^-14 instead of 2^-6 (fewer small probabilities lost to underflow). O and the row sum
  // carry the same factor, so it cancels in O; LSE subtracts 8 ln 2.
  constexpr float kPOffsetLog2 = 8.f;

  float o[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
  float s_acc[BN / 2];
  std::uint32_t pf[BN / 32][4];
  OnlineSoftmax<BN> sm;

  const bool pingpong = p.pingpong != 0;
  auto turn_wait = [&]() {
    if (pingpong) sm90::named_barrier_sync(3 + cw, 256);
  };
  auto turn_pass = [&](bool last) {
    if (pingpong && !(last && cw == 1)) sm90::named_barrier_arrive(3 + (1 - cw), 256);
  };
  auto release = [&](std::uint32_t bar) {
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(bar);
  };

  // Online softmax of one block, S -> P in fp32 in place (scores in stored units; the scale
  // with both descales is folded into the exp2 argument), P offset by 2^kPOffsetLog2.
  auto softmax = [&](int n) {
    if ((n + 1) * BN > mask_from) sm.mask(s_acc, n, lim_a, lim_b, lane);
    sm.update(s_acc, sl2, kPOffsetLog2);
  };
  // P (fp32 accumulator layout) -> e4m3 A fragments, one per 32-key step c; the byte order is
  // the key permutation described at the top of the file.
  auto convert_p = [&]() {
#pragma unroll
    for (int c = 0; c < BN / 32; ++c) {
      const float* x = s_acc + 16 * c;
#pragma unroll
      for (int r = 0; r < 4; ++r)  // {0,1,4,5}, {2,3,6,7}, {8,9,12,13}, {10,11,14,15}
        pf[c][r] = sm90::cvt_e4m3x4(x[p_pack_source(r, 0)], x[p_pack_source(r, 1)], x[p_pack_source(r, 2)],
                                    x[p_pack_source(r, 3)]);
    }
  };

  if (n_blocks > 0) {
    sm90::mbar_wait(bar_q, 0);
    if (pingpong && cw == 0) sm90::named_barrier_arrive(3, 256);  // the first turn is consumer 0's

    // Block n_blocks - 1 (iteration 0): QK^T and softmax only.
    sm90::mbar_wait(full_k, 0);
    turn_wait();
    issue_qk<D, BN>(s_acc, q_base, s_k);
    turn_pass(false);
    sm90::wgmma_wait<0>();
    fence_acc(s_acc);
    release(empty_k);
    softmax(n_blocks - 1);
    convert_p();

    for (int it = 1; it < n_blocks; ++it) {
      const int n = n_blocks - 1 - it;
      const int sk = it % S, sv = (it - 1) % S;
      const std::uint32_t phk = (it / S) & 1, phv = ((it - 1) / S) & 1;
      sm90::mbar_wait(full_k + 8 * sk, phk);
      turn_wait();
      issue_qk<D, BN>(s_acc, q_base, s_k + sk * L::kKBytes);
      sm.rescale<D>(o);
      sm90::mbar_wait(full_v + 8 * sv, phv);
      issue_pv<D, BN>(o, pf, s_v + sv * L::kVBytes);
      turn_pass(false);
      sm90::wgmma_wait<1>();  // S of block n is ready (PV of block n + 1: see the header)
      fence_acc(s_acc);
      release(empty_k + 8 * sk);
      softmax(n);
      sm90::wgmma_wait<0>();
      fence_acc(o);
      fence_frag(pf);
      release(empty_v + 8 * sv);
      convert_p();
    }

    // PV of block 0.
    {
      const int it = n_blocks, sv = (it - 1) % S;
      const std::uint32_t phv = ((it - 1) / S) & 1;
      sm.rescale<D>(o);
      sm90::mbar_wait(full_v + 8 * sv, phv);
      turn_wait();
      issue_pv<D, BN>(o, pf, s_v + sv * L::kVBytes);
      turn_pass(true);
      sm90::wgmma_wait<0>();
      fence_acc(o);
      fence_frag(pf);
      release(empty_v + 8 * sv);
    }
  }

  // ------------------------------------------------------------------ epilogue
  sm.reduce_sums();
  const float inv_a = sm.l_a > 0.f ? p.descale_v / sm.l_a : 0.f;
  const float inv_b = sm.l_b > 0.f ? p.descale_v / sm.l_b : 0.f;
  // O in bf16 straight from the accumulators: a quad writes 16 contiguous bytes of a row.
  const std::int64_t o_row = (static_cast<std::int64_t>(b) * seqlen_q + row_a) * p.heads + h;
  std::uint32_t* o_a = reinterpret_cast<std::uint32_t*>(p.o + o_row * D) + (lane % 4);
  std::uint32_t* o_b = reinterpret_cast<std::uint32_t*>(p.o + (o_row + 8 * static_cast<std::int64_t>(p.heads)) * D) + (lane % 4);
  if (row_a < seqlen_q) {
#pragma unroll
    for (int i = 0; i < D / 8; ++i) o_a[4 * i] = pack_bf16(o[4 * i] * inv_a, o[4 * i + 1] * inv_a);
  }
  if (row_b < seqlen_q) {
#pragma unroll
    for (int i = 0; i < D / 8; ++i) o_b[4 * i] = pack_bf16(o[4 * i + 2] * inv_b, o[4 * i + 3] * inv_b);
  }
  if (lane % 4 == 0) {
    const std::int64_t lse_row = (static_cast<std::int64_t>(b) * p.heads + h) * seqlen_q;
    constexpr float kPOffsetLn = kPOffsetLog2 * 0.6931471805599453f;
    if (row_a < seqlen_q)
      p.lse[lse_row + row_a] = sm.l_a > 0.f ? sm.m_a * p.scale_qk + logf(sm.l_a) - kPOffsetLn : kNegInf;
    if (row_b < seqlen_q)
      p.lse[lse_row + row_b] = sm.l_b > 0.f ? sm.m_b * p.scale_qk + logf(sm.l_b) - kPOffsetLn : kNegInf;
  }
#endif  // GENBENCH_SM90A_ENABLED
}

int sk_padded(int seqlen_k) { return (seqlen_k + kVtKeyPad - 1) / kVtKeyPad * kVtKeyPad; }

// [batch, seq, heads, d] e4m3 as a 4-D map (d innermost), box 128 x 1 x rows x 1 (one 128-byte
// swizzle row per tile row), 128-byte swizzle, zero fill past the ends.
CUtensorMap make_qk_map(const void* base, int batch, int seq, int heads, int d, int box_rows) {
  const auto row = static_cast<std::uint64_t>(heads) * d;
  return make_tma_map("fa3 fp8", CU_TENSOR_MAP_DATA_TYPE_UINT8, base,
                      {static_cast<std::uint64_t>(d), static_cast<std::uint64_t>(heads),
                       static_cast<std::uint64_t>(seq), static_cast<std::uint64_t>(batch)},
                      {static_cast<std::uint64_t>(d), row, static_cast<std::uint64_t>(seq) * row},
                      {128, 1, static_cast<std::uint32_t>(box_rows), 1});
}

// V^T [batch, heads_kv, d, sk_pad] e4m3, box = one chunk of `chunk` keys of all d rows, `chunk`-byte
// swizzle; a key block past sk_pad reads zeros.
CUtensorMap make_vt_map(const void* base, int batch, int heads_kv, int d, int sk_pad, int chunk) {
  const auto row = static_cast<std::uint64_t>(sk_pad);
  return make_tma_map("fa3 fp8", CU_TENSOR_MAP_DATA_TYPE_UINT8, base,
                      {row, static_cast<std::uint64_t>(d), static_cast<std::uint64_t>(heads_kv),
                       static_cast<std::uint64_t>(batch)},
                      {row, row * d, row * d * heads_kv},
                      {static_cast<std::uint32_t>(chunk), static_cast<std::uint32_t>(d), 1, 1}, chunk);
}

template <int D>
void set_smem_limit() {
  constexpr int S = stages_for<D>(), BN = block_n_for<D>();
  GENBENCH_CHECK_CUDA(cudaFuncSetAttribute(fa3_fp8_fwd_kernel<D, BN, S>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           Layout<D, BN, S>::kBytes));
}

template <int D>
void launch_typed(const Problem& pr, const CUtensorMap& tq, const CUtensorMap& tk, const CUtensorMap& tvt,
                  cudaStream_t stream) {
  constexpr int S = stages_for<D>(), BN = block_n_for<D>();
  KernelParams kp{};
  kp.o = static_cast<__nv_bfloat16*>(pr.o);
  kp.lse = pr.lse;
  kp.heads = pr.heads;
  kp.group = pr.heads / pr.heads_kv;
  kp.seqlen_q = pr.seqlen_q;
  kp.seqlen_k = pr.seqlen_k;
  kp.scale_qk = pr.scale * pr.descale_q * pr.descale_k;
  kp.scale_log2 = kp.scale_qk * 1.4426950408889634f;
  kp.descale_v = pr.descale_v;
  kp.causal = pr.causal ? 1 : 0;
  kp.pingpong = pr.pingpong ? 1 : 0;
  const dim3 grid(static_cast<unsigned>((pr.seqlen_q + kBlockM - 1) / kBlockM), static_cast<unsigned>(pr.heads),
                  static_cast<unsigned>(pr.batch));
  fa3_fp8_fwd_kernel<D, BN, S><<<grid, kThreads, Layout<D, BN, S>::kBytes, stream>>>(tq, tk, tvt, kp);
  GENBENCH_CHECK_LAUNCH();
}

}  // namespace

std::size_t vt_bytes(int batch, int heads_kv, int head_dim, int seqlen_k) {
  return static_cast<std::size_t>(batch) * heads_kv * head_dim * static_cast<std::size_t>(sk_padded(seqlen_k));
}

std::string build_support() {
  return sm90a_support("fa3 fp8", reinterpret_cast<const void*>(fa3_fp8_fwd_kernel<128, block_n_for<128>(), stages_for<128>()>));
}

Launcher::Launcher(const Problem& p) : p_(p) {
  if (p.head_dim != 128 && p.head_dim != 256)
    throw Error(strprintf("fa3 fp8: head_dim %d not supported (128, 256)", p.head_dim));
  if (!p.vt) throw Error("fa3 fp8: no V^T scratch buffer");
  bn_ = p.head_dim == 128 ? block_n_for<128>() : block_n_for<256>();
  if (p.head_dim == 128) {
    set_smem_limit<128>();
    stages_ = stages_for<128>();
  } else {
    set_smem_limit<256>();
    stages_ = stages_for<256>();
  }
  tq_ = make_qk_map(p.q, p.batch, p.seqlen_q, p.heads, p.head_dim, kBlockM);
  tk_ = make_qk_map(p.k, p.batch, p.seqlen_k, p.heads_kv, p.head_dim, bn_);
  tvt_ = make_vt_map(p.vt, p.batch, p.heads_kv, p.head_dim, sk_padded(p.seqlen_k), vt_chunk(bn_));
}

void Launcher::launch(cudaStream_t stream) const {
  const int sk_pad = sk_padded(p_.seqlen_k);
  const dim3 tgrid(static_cast<unsigned>(sk_pad / kVtKeyPad), static_cast<unsigned>(p_.head_dim / 64),
                   static_cast<unsigned>(p_.batch * p_.heads_kv));
  transpose_v_kernel<<<tgrid, 256, 0, stream>>>(static_cast<const std::uint8_t*>(p_.v), static_cast<std::uint8_t*>(p_.vt),
                                                p_.seqlen_k, sk_pad, p_.heads_kv, p_.head_dim);
  GENBENCH_CHECK_LAUNCH();
  if (p_.head_dim == 128) launch_typed<128>(p_, tq_, tk_, tvt_, stream);
  else launch_typed<256>(p_, tq_, tk_, tvt_, stream);
}

std::string Launcher::variant() const {
  return strprintf("fp8 m%dn%dd%d-ws3-kv%d%s +vt", kBlockM, bn_, p_.head_dim, stages_, p_.pingpong ? "-pingpong" : "");
}

}  // namespace genbench::fa3::fp8
