// fa3 fp8: the e4m3 instantiations of the kernel in fa3_kernel.cuh (its header describes the
// design: producer warpgroup with TMA into K/V rings, two consumer warpgroups of 64 query rows
// with ping-pong, persistent tile scheduler, O staged through shared memory) and their launcher.
// What e4m3 changes (the traits class E4m3 below): S = Q K^T with wgmma m64nBNk32 e4m3 (both
// operands K-major from 128-byte-swizzled tiles; 192 keys per block at d=128, 128 at d=256:
// block_n_for), the scale with both descales folded into the exp2 FFMA, P offset by 2^4
// (kPOffsetLog2; up to 2^8.5 with lazy rescaling) and rounded to e4m3 in registers as the A
// operand of O += P V^T (wgmma m64nDk32, B = a V^T tile in chunks of vt_chunk(BN) keys,
// K-major), O x descale_v / rowsum stored as bf16, LSE in fp32.
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
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "backend/cuda/check.h"
#include "core/error.h"
#include "core/strings.h"
#include "kernels/attention/common/attention_validate.h"
#include "kernels/attention/fa3_sm90/fa3_kernel.cuh"
#include "kernels/common/sm90_ptx.cuh"
#include "kernels/common/sm90_support.h"
#include "kernels/common/tma_map.h"

// Other architectures' passes compile the kernel without its body (sm90_ptx.cuh), which leaves
// the element traits' members unreferenced there: warning 177 says nothing about this file.
#ifndef GENBENCH_SM90A_ENABLED
#pragma nv_diag_suppress 177
#endif

namespace genbench::fa3::fp8 {

namespace {

// Keys per block by head dim: 192 at d=128 (S 96, O 64 and P 24 registers inside the consumers'
// 240), 128 at d=256 (O is 128 registers).
template <int D>
constexpr int block_n_for() {
  return D == 128 ? 192 : 128;
}

// V^T tiles are stored as column chunks of W keys (W bytes, W-byte swizzle), W the widest of
// 128, 64, 32 that divides the block: one TMA box and one wgmma swizzle row per chunk.
constexpr int vt_chunk(int bn) { return bn % 128 == 0 ? 128 : (bn % 64 == 0 ? 64 : 32); }

// Ring depth: d=128 tiles are 24 KB, so three stages fit beside Q and the O staging; d=256
// (32 KB tiles) keeps two.
template <int D>
constexpr int stages_for() {
  return D == 128 ? 3 : 2;
}

// V [b, sk, hk, D] -> V^T [b, hk, D, sk_pad] with the keys of every 16-group permuted
// (vt_key_at) and zeros past seqlen_k. CTA: 128 keys x 64 dims of one (b, hk), 128 threads;
// a thread takes one group of 16 keys x 4 dims: 16 four-byte loads (16 lanes read a key's 64
// contiguous bytes, so every 32-byte sector is used whole), four 4 x 4 byte transposes by byte
// permutes, and four 16-byte stores (lane pairs fill each 32-byte sector); no shared memory.
// Blocks: x = (b, hk) x key block, y = 64-dim slice.
__global__ void __launch_bounds__(128)
    transpose_v_kernel(const std::uint8_t* __restrict__ v, std::uint8_t* __restrict__ vt, int seqlen_k, int sk_pad,
                       int heads_kv, int d) {
  const int key_blocks = sk_pad / kVtKeyPad;
  const int bh = static_cast<int>(blockIdx.x) / key_blocks, kb = static_cast<int>(blockIdx.x) % key_blocks;
  const int b = bh / heads_kv, hk = bh % heads_kv;
  const int lane = static_cast<int>(threadIdx.x) % 32, grp = static_cast<int>(threadIdx.x) / 16;
  const int k0 = kb * kVtKeyPad + 16 * grp, d0 = static_cast<int>(blockIdx.y) * 64 + 4 * (lane % 16);
  const std::int64_t key_stride = static_cast<std::int64_t>(heads_kv) * d;
  const std::uint8_t* src = v + (static_cast<std::int64_t>(b) * seqlen_k + k0) * key_stride + hk * d + d0;
  std::uint32_t w[16];  // w[k]: dims d0 .. d0 + 3 of key k0 + k
#pragma unroll
  for (int k = 0; k < 16; ++k)
    w[k] = k0 + k < seqlen_k ? __ldg(reinterpret_cast<const unsigned int*>(src + k * key_stride)) : 0u;
  // Positions 4q .. 4q + 3 of the group hold keys 2q, 2q + 1, 2q + 8, 2q + 9 (vt_key_at): out[i][q]
  // gathers byte i (dim d0 + i) of those four words.
  std::uint32_t out[4][4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const std::uint32_t x0 = w[2 * q], x1 = w[2 * q + 1], x2 = w[2 * q + 8], x3 = w[2 * q + 9];
    // lo01: bytes 0 and 1 of x0 and x1 interleaved, hi01: bytes 2 and 3; lo23, hi23 likewise.
    const std::uint32_t lo01 = __byte_perm(x0, x1, 0x5140), hi01 = __byte_perm(x0, x1, 0x7362);
    const std::uint32_t lo23 = __byte_perm(x2, x3, 0x5140), hi23 = __byte_perm(x2, x3, 0x7362);
    out[0][q] = __byte_perm(lo01, lo23, 0x5410);
    out[1][q] = __byte_perm(lo01, lo23, 0x7632);
    out[2][q] = __byte_perm(hi01, hi23, 0x5410);
    out[3][q] = __byte_perm(hi01, hi23, 0x7632);
  }
  std::uint8_t* dst = vt + (static_cast<std::int64_t>(bh) * d + d0) * sk_pad + k0;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    *reinterpret_cast<uint4*>(dst + i * static_cast<std::int64_t>(sk_pad)) =
        make_uint4(out[i][0], out[i][1], out[i][2], out[i][3]);
}

// e4m3 elements: k32 wgmma steps; V as V^T [D][BN] in chunks of vt_chunk(BN) keys (K-major);
// P rounded to e4m3 four at a time in register order, which with the V^T key permutation is
// the A fragment (see the top of this file).
struct E4m3 {
  static constexpr int kElemBytes = 1, kK = 32;
  static constexpr bool kOutBF16 = true, kDescaleV = true;
  // P is computed as 2^4 x exp(s - base): e4m3 then keeps 3 mantissa bits down to
  // exp(s - base) = 2^-10 instead of 2^-6 (fewer small probabilities lost to underflow; e4m3's
  // rounding of the larger ones is the same at any power-of-two offset). O and the row sum carry
  // the same factor, so it cancels in O; LSE subtracts 4 ln 2. Max-free blocks then start 4.8
  // log2 below the 448 limit. Lazy rescaling with 4.5 of slack: P <= 2^8.5 = 362, below e4m3's
  // largest finite value, 448.
  static constexpr float kPOffsetLog2 = 4.f;
  // The split tail (fa3_split.h) is off. Were it on: a piece costs ~6 192-key blocks beyond its
  // keys (three times a tile's fixed cost of ~3, as for the 16-bit kernel), which keeps 2K (11
  // blocks a tile) whole.
  static constexpr bool kSplitTail = false;
  static constexpr float kPieceCostBlocks = 6.f;
  template <int D>
  static constexpr float kRescaleSlackLog2 = 4.5f;
  // O by TMA stores except at d=128 (16-byte stores).
  template <int D>
  static constexpr bool kTmaStoreO = D != 128;
  // Max-free softmax blocks (fa3_kernel.cuh): P is checked against e4m3's range as it is
  // rounded, instead of taking each block's row max first. d=128 only.
  template <int D>
  static constexpr bool kMaxFreeBlocks = D == 128;
#ifdef GENBENCH_SM90A_ENABLED
  // sum |q| over a row of the Q tile (its D / 128 128-byte swizzle rows, `chunk_stride` bytes
  // apart; the swizzle permutes bytes within each), the quad's four threads a quarter each,
  // summed in fp16 (at most D / 4 x 448 per thread) and reduced across the quad. Low by less
  // than 1% at d=128 (16 additions per fp16 half, each rounding by at most 2^-11); callers add
  // a margin.
  template <int D>
  __device__ static __forceinline__ float q_abs_sum(const unsigned char* row, int chunk_stride, int part) {
    __half2 acc = __float2half2_rn(0.f);
#pragma unroll
    for (int c = 0; c < D / 128; ++c) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint4 w = *reinterpret_cast<const uint4*>(row + c * chunk_stride + 32 * part + 16 * h);
        for (const std::uint32_t x : {w.x, w.y, w.z, w.w}) {
          acc = __hadd2(
              acc,
              __habs2(__half2(__nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(x & 0xffffu), __NV_E4M3))));
          acc = __hadd2(
              acc, __habs2(__half2(__nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(x >> 16), __NV_E4M3))));
        }
      }
    }
    float v = __low2float(acc) + __high2float(acc);
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    v += __shfl_xor_sync(0xffffffffu, v, 2);
    return v;
  }
  template <int BN>
  __device__ static __forceinline__ void wgmma_qk(float (&s)[BN / 2], std::uint64_t da, std::uint64_t db, int scale_d) {
    sm90::wgmma_ss_e4m3<BN>(s, da, db, scale_d);
  }
  // O[64 x D] += P[64 x BN] (registers, e4m3) * V^T_stage[D x BN]^T (K-major, chunks of W keys),
  // one commit group.
  template <int D, int BN>
  __device__ static __forceinline__ void issue_pv(float (&o)[D / 2], const std::uint32_t (&p)[BN / 32][4],
                                                  std::uint32_t v_base) {
    constexpr int W = vt_chunk(BN);
    const std::uint64_t dv = sm90::make_desc_kmajor<W>(v_base);
    sm90::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 32; ++kk)
      sm90::wgmma_rs_e4m3<D>(o, p[kk], sm90::desc_advance(dv, (32 * kk / W) * (D * W) + (32 * kk) % W), 1);
    sm90::wgmma_commit();
  }
  // One A register per 4 keys: {0,1,4,5}, {2,3,6,7}, {8,9,12,13}, {10,11,14,15} of each 32-key
  // step's 16 accumulator registers (p_pack_source).
  template <int BN>
  __device__ static __forceinline__ void convert_p(const float (&s)[BN / 2], std::uint32_t (&p)[BN / 32][4]) {
#pragma unroll
    for (int c = 0; c < BN / 32; ++c) {
      const float* x = s + 16 * c;
#pragma unroll
      for (int r = 0; r < 4; ++r)
        p[c][r] = sm90::cvt_e4m3x4(x[p_pack_source(r, 0)], x[p_pack_source(r, 1)], x[p_pack_source(r, 2)],
                                   x[p_pack_source(r, 3)]);
    }
  }
  // convert_p, and for each row (a: registers 0 and 2, b: 1 and 3) the OR of (word + add):
  // with add = (0x80 - c) per byte, bit 7 of a byte is set where a P reached the e4m3 code c
  // (P >= 0, codes <= 0x7e, so no byte carries into the next).
  template <int BN>
  __device__ static __forceinline__ void convert_p_checked(const float (&s)[BN / 2], std::uint32_t (&p)[BN / 32][4],
                                                           std::uint32_t add, std::uint32_t& hit_a,
                                                           std::uint32_t& hit_b) {
    convert_p<BN>(s, p);
    hit_a = hit_b = 0;
#pragma unroll
    for (int c = 0; c < BN / 32; ++c) {
      hit_a |= (p[c][0] + add) | (p[c][2] + add);
      hit_b |= (p[c][1] + add) | (p[c][3] + add);
    }
  }
  // V^T block: one TMA box of W keys x D rows per chunk (key coordinates past sk_pad read zero).
  template <int D, int BN>
  __device__ static __forceinline__ void load_v(std::uint32_t dst, const CUtensorMap* tm, std::uint32_t bar, int hk,
                                                int key0, int b) {
    constexpr int W = vt_chunk(BN);
#pragma unroll
    for (int c = 0; c < BN / W; ++c) sm90::tma_load_4d(dst + c * (D * W), tm, bar, key0 + c * W, 0, hk, b);
  }
#endif  // GENBENCH_SM90A_ENABLED
};

// The validation's input-precision model rounds P with the kernel's offset (the coarsest case).
static_assert(attention::kFp8POffset == static_cast<float>(1 << static_cast<int>(E4m3::kPOffsetLog2)),
              "attention::kFp8POffset must be 2^E4m3::kPOffsetLog2");

int sk_padded(int seqlen_k) { return (seqlen_k + kVtKeyPad - 1) / kVtKeyPad * kVtKeyPad; }

// [batch, seq, heads, d] e4m3 (one 128-byte swizzle row = 128 elements per tile row).
CUtensorMap make_qk_map(const void* base, int batch, int seq, int heads, int d, int box_rows) {
  return make_bshd_map("fa3 fp8", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, base, batch, seq, heads, d, box_rows);
}

// V^T [batch, heads_kv, d, sk_pad] e4m3, box = one chunk of `chunk` keys of all d rows, `chunk`-byte
// swizzle; a key block past sk_pad reads zeros.
CUtensorMap make_vt_map(const void* base, int batch, int heads_kv, int d, int sk_pad, int chunk) {
  const auto row = static_cast<std::uint64_t>(sk_pad);
  return make_tma_map(
      "fa3 fp8", CU_TENSOR_MAP_DATA_TYPE_UINT8, base,
      {row, static_cast<std::uint64_t>(d), static_cast<std::uint64_t>(heads_kv), static_cast<std::uint64_t>(batch)},
      {row, row * d, row * d * heads_kv}, {static_cast<std::uint32_t>(chunk), static_cast<std::uint32_t>(d), 1, 1},
      chunk);
}

// The e4m3 code of P's limit (1 to 448; OnlineSoftmax::rebase).
std::uint32_t p_limit_code(float limit) {
  if (!(limit >= 1.f && limit <= 448.f))
    throw Error(strprintf("fa3 fp8: P limit %g outside [1, 448] (0: max-free blocks off)", limit));
  return __nv_cvt_float_to_fp8(limit, __NV_SATFINITE, __NV_E4M3);
}

template <int D>
SplitTail split_for(const Problem& p, int ctas) {
  const int tiles = kernel_params<64 * kConsumers>(p, nullptr, nullptr, 1.f, 1.f).num_tiles;
  return make_split_tail<D, block_n_for<D>(), kConsumers, E4m3>(p, false, tiles, ctas, E4m3::kPieceCostBlocks);
}

template <int D>
void set_smem_limit_for() {
  set_smem_limit<D, block_n_for<D>(), kConsumers, stages_for<D>(), E4m3>();
}

template <int D>
void launch_typed(const Problem& pr, std::uint32_t p_limit_add, const CUtensorMap& tq, const CUtensorMap& tk,
                  const CUtensorMap& tvt, const CUtensorMap& to, int ctas, const SplitTail& split,
                  cudaStream_t stream) {
  KernelParams kp =
      kernel_params<64 * kConsumers>(pr, nullptr, nullptr, pr.scale * pr.descale_q * pr.descale_k, pr.descale_v);
  kp.p_limit_add = p_limit_add;
  kp.counts = pr.counts;
  launch_kernel<D, block_n_for<D>(), kConsumers, stages_for<D>(), E4m3>(kp, pr, tq, tk, tvt, to, ctas, split, stream);
}

}  // namespace

std::size_t vt_bytes(int batch, int heads_kv, int head_dim, int seqlen_k) {
  return static_cast<std::size_t>(batch) * heads_kv * head_dim * static_cast<std::size_t>(sk_padded(seqlen_k));
}

std::string build_support() {
  return sm90a_support("fa3 fp8", reinterpret_cast<const void*>(
                                      fa3_fwd_kernel<128, block_n_for<128>(), kConsumers, stages_for<128>(), E4m3>));
}

Launcher::Launcher(const Problem& p) : p_(p) {
  if (p.head_dim != 128 && p.head_dim != 256)
    throw Error(strprintf("fa3 fp8: head_dim %d not supported (128, 256)", p.head_dim));
  if (!p.vt) throw Error("fa3 fp8: no V^T scratch buffer");
  bn_ = p.head_dim == 128 ? block_n_for<128>() : block_n_for<256>();
  if (p.head_dim == 128) {
    set_smem_limit_for<128>();
    stages_ = stages_for<128>();
  } else {
    set_smem_limit_for<256>();
    stages_ = stages_for<256>();
  }
  persistent_ctas_ = persistent_ctas(p);
  split_ = p.head_dim == 128 ? split_for<128>(p, persistent_ctas_) : split_for<256>(p, persistent_ctas_);
  p_limit_add_ = p.p_limit == 0.f ? 0u : 0x01010101u * (0x80u - p_limit_code(p.p_limit));
  tq_ = make_qk_map(p.q, p.batch, p.seqlen_q, p.heads, p.head_dim, 64 * kConsumers);
  tk_ = make_qk_map(p.k, p.batch, p.seqlen_k, p.heads_kv, p.head_dim, bn_);
  to_ = make_map16("fa3 fp8", p.o, true, p.batch, p.seqlen_q, p.heads, p.head_dim, 64);
  tvt_ = make_vt_map(p.vt, p.batch, p.heads_kv, p.head_dim, sk_padded(p.seqlen_k), vt_chunk(bn_));
}

void transpose_v(const void* v, void* vt, int batch, int seqlen_k, int heads_kv, int head_dim, cudaStream_t stream) {
  if (head_dim % 64 != 0) throw Error(strprintf("fa3 fp8: V^T pass needs head_dim a multiple of 64, not %d", head_dim));
  const int sk_pad = sk_padded(seqlen_k);
  const long long blocks = static_cast<long long>(batch) * heads_kv * (sk_pad / kVtKeyPad);
  if (blocks > 0x7fffffffLL) throw Error("fa3 fp8: V^T pass over 2^31 blocks");
  if (blocks == 0) return;
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(head_dim / 64));
  transpose_v_kernel<<<grid, 128, 0, stream>>>(static_cast<const std::uint8_t*>(v), static_cast<std::uint8_t*>(vt),
                                               seqlen_k, sk_pad, heads_kv, head_dim);
  GENBENCH_CHECK_LAUNCH();
}

void Launcher::launch(cudaStream_t stream) const {
  transpose_v(p_.v, p_.vt, p_.batch, p_.seqlen_k, p_.heads_kv, p_.head_dim, stream);
  if (p_.head_dim == 128) launch_typed<128>(p_, p_limit_add_, tq_, tk_, tvt_, to_, persistent_ctas_, split_, stream);
  else launch_typed<256>(p_, p_limit_add_, tq_, tk_, tvt_, to_, persistent_ctas_, split_, stream);
}

std::string Launcher::variant() const {
  // "fp8 m128n192d128-ws3-kv3-pp-ps-st +vt": tile, warpgroups, ring stages, ping-pong,
  // persistent, split tail, V^T pre-pass.
  // A P limit other than 448 (a test setting; 0: max-free blocks off) shows as "-plimX".
  return strprintf("fp8 m%dn%dd%d-ws%d-kv%d%s%s%s%s +vt", 64 * kConsumers, bn_, p_.head_dim, kConsumers + 1, stages_,
                   p_.pingpong ? "-pp" : "", persistent_ctas_ > 0 ? "-ps" : "", split_.plan.slots > 0 ? "-st" : "",
                   p_.p_limit == 448.f ? "" : strprintf("-plim%g", p_.p_limit).c_str());
}

}  // namespace genbench::fa3::fp8
