// fa3, 16-bit: the fp16 and bf16 instantiations of the kernel in fa3_kernel.cuh (its header
// describes the design) and their launcher.
#include "kernels/attention/fa3_sm90/fa3_sm90.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "backend/cuda/check.h"
#include "core/error.h"
#include "core/strings.h"
#include "kernels/attention/fa3_sm90/fa3_kernel.cuh"
#include "kernels/common/sm90_ptx.cuh"
#include "kernels/common/sm90_support.h"
#include "kernels/common/tma_map.h"

// Other architectures' passes compile the kernel without its body (sm90_ptx.cuh), which leaves
// the element traits' members unreferenced there: warning 177 says nothing about this file.
#ifndef GENBENCH_SM90A_ENABLED
#pragma nv_diag_suppress 177
#endif

namespace genbench::fa3 {

namespace {

// fp16 / bf16 elements: k16 wgmma steps; V [BN keys][D] in 64-element column chunks, read
// N-major (transposed) by the PV wgmma; P packed in pairs is the A fragment as it stands.
// kSplit: the split tail compiled in (fa3_split.h; d=128 only, kSplitTail in fa3_kernel.cuh).
// d=128 has both kernels, and a launch takes the one with the split only where its plan splits
// (docs/attention.md, design decisions).
template <bool kBF16, bool kSplit>
struct Elem16 {
  static constexpr int kElemBytes = 2, kK = 16;
  static constexpr bool kOutBF16 = kBF16, kDescaleV = false;
  static constexpr float kPOffsetLog2 = 0.f;
  // What a piece of a split tile costs beyond its key blocks, in blocks (fa3_split.h).
  static constexpr bool kSplitTail = kSplit;
  static constexpr float kPieceCostBlocks = 5.f;
  // Lazy rescaling at d=256 only (P <= 2^8).
  template <int D>
  static constexpr float kRescaleSlackLog2 = D == 256 ? 8.f : 0.f;
  template <int D>
  static constexpr bool kTmaStoreO = true;
  template <int D>
  static constexpr bool kMaxFreeBlocks = false;
#ifdef GENBENCH_SM90A_ENABLED
  template <int BN>
  __device__ static __forceinline__ void wgmma_qk(float (&s)[BN / 2], std::uint64_t da, std::uint64_t db, int scale_d) {
    sm90::wgmma_ss<BN, kBF16>(s, da, db, scale_d);
  }
  // O[64 x D] += P[64 x BN] (registers) * V_stage[BN x D] (N-major), one commit group.
  template <int D, int BN>
  __device__ static __forceinline__ void issue_pv(float (&o)[D / 2], const std::uint32_t (&p)[BN / 16][4],
                                                  std::uint32_t v_base) {
    const std::uint64_t dv = sm90::make_desc_sw128(v_base, BN * 128, 1024);
    sm90::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) sm90::wgmma_rs_tb<D, kBF16>(o, p[kk], sm90::desc_advance(dv, kk * 2048), 1);
    sm90::wgmma_commit();
  }
  template <int BN>
  __device__ static __forceinline__ void convert_p(const float (&s)[BN / 2], std::uint32_t (&p)[BN / 16][4]) {
#pragma unroll
    for (int k = 0; k < BN / 16; ++k) {
      p[k][0] = pack2<kBF16>(s[8 * k], s[8 * k + 1]);
      p[k][1] = pack2<kBF16>(s[8 * k + 2], s[8 * k + 3]);
      p[k][2] = pack2<kBF16>(s[8 * k + 4], s[8 * k + 5]);
      p[k][3] = pack2<kBF16>(s[8 * k + 6], s[8 * k + 7]);
    }
  }
  template <int D, int BN>
  __device__ static __forceinline__ void load_v(std::uint32_t dst, const CUtensorMap* tm, std::uint32_t bar, int hk,
                                                int key0, int b) {
#pragma unroll
    for (int c = 0; c < D / 64; ++c) sm90::tma_load_4d(dst + c * (BN * 128), tm, bar, c * 64, hk, key0, b);
  }
#endif  // GENBENCH_SM90A_ENABLED
};

// The compiled configurations (head dim, key tile, consumer warpgroups, K/V ring stages): the
// only template instantiations of the kernel, each in bf16 and fp16, d=128 with and without the
// split tail (dispatch). d=256 takes 80 keys to fit shared memory and registers, d=192 112 (128
// would need 240 KB for Q and two stages); d=64 has the shared memory for a third stage. The
// measured choices: docs/attention.md, design decisions.
struct Config {
  int d, bn, consumers, stages;
};
constexpr Config kConfigs[] = {{64, 128, 3, 3}, {64, 128, 2, 3}, {128, 128, 2, 2}, {192, 112, 2, 2}, {256, 80, 2, 2}};

// Calls f.template operator()<D, BN, C, S, E>() for configuration c, E = Elem16<bf16, split>
// (split: the kernel with the split tail, which only d=128 has).
template <typename F>
void dispatch(const Config& c, bool bf16, bool split, F&& f) {
#define GENBENCH_FA3_CASE(D, BN, C, S)                                           \
  if (c.d == D && c.bn == BN && c.consumers == C && c.stages == S) {             \
    if constexpr (kSplitTail<D, Elem16<true, true>>)                             \
      if (split)                                                                 \
        return bf16 ? f.template operator()<D, BN, C, S, Elem16<true, true>>()   \
                    : f.template operator()<D, BN, C, S, Elem16<false, true>>(); \
    return bf16 ? f.template operator()<D, BN, C, S, Elem16<true, false>>()      \
                : f.template operator()<D, BN, C, S, Elem16<false, false>>();    \
  }
  GENBENCH_FA3_CASE(64, 128, 3, 3)
  GENBENCH_FA3_CASE(64, 128, 2, 3)
  GENBENCH_FA3_CASE(128, 128, 2, 2)
  GENBENCH_FA3_CASE(192, 112, 2, 2)
  GENBENCH_FA3_CASE(256, 80, 2, 2)
#undef GENBENCH_FA3_CASE
  throw Error(strprintf("fa3: no kernel for head_dim %d, block_n %d, %d consumer warpgroups, %d stages", c.d, c.bn,
                        c.consumers, c.stages));
}

struct SetSmem {
  template <int D, int BN, int C, int S, class E>
  void operator()() const {
    set_smem_limit<D, BN, C, S, E>();
  }
};

// The split tail's plan (none without the split's kernel).
struct MakeSplit {
  const Problem& p;
  int ctas;
  SplitTail& out;
  template <int D, int BN, int C, int S, class E>
  void operator()() const {
    const int tiles = kernel_params<64 * C>(p, p.cu_q, p.cu_k, p.scale, 1.f).num_tiles;
    out = make_split_tail<D, BN, C, E>(p, p.cu_q != nullptr, tiles, ctas, E::kPieceCostBlocks);
  }
};

struct Launch {
  const Problem& p;
  const CUtensorMap &tq, &tk, &tv, &to;
  int ctas;
  const SplitTail& split;
  cudaStream_t stream;
  template <int D, int BN, int C, int S, class E>
  void operator()() const {
    launch_kernel<D, BN, C, S, E>(kernel_params<64 * C>(p, p.cu_q, p.cu_k, p.scale, 1.f), p, tq, tk, tv, to, ctas,
                                  split, stream);
  }
};

// The configuration for a problem: the first listed for its head dim, except causal d=64 at
// short query lengths, where two consumer warpgroups (128-row tiles: one diagonal key block per
// tile instead of two or three, and no 192-row padding of 512 or 1024 rows) were 7-8% faster than
// three (docs/perf-notes.md, fa3 v4; non-causal lost 5% there, so it keeps three). With
// p.consumers = N (the fa3_consumers axis) the one with N consumer warpgroups. A head dim
// without a kernel of its own runs on the next one (kernel_dim).
Config choose(const Problem& p) {
  const int d = kernel_dim(p.head_dim, p.head_dim_v);
  if (d == 0) throw Error(strprintf("fa3: head_dim %d / %d not supported", p.head_dim, p.head_dim_v));
  int want = p.consumers;
  if (want == 0 && d == 64 && p.causal && p.seqlen_q <= 1024) want = 2;
  for (const Config& c : kConfigs)
    if (c.d == d && (want == 0 || c.consumers == want)) return c;
  for (const Config& c : kConfigs)
    if (c.d == d) return c;
  throw Error(strprintf("fa3: head_dim %d not supported", d));
}

}  // namespace

int kernel_dim(int head_dim, int head_dim_v) {
  const int need = std::max(head_dim, head_dim_v > 0 ? head_dim_v : head_dim);
  if (head_dim < 1 || head_dim % 8 != 0 || (head_dim_v > 0 && head_dim_v % 8 != 0)) return 0;
  for (const int d : {64, 128, 192, 256})
    if (need <= d) return d;
  return 0;
}

std::string build_support() {
  return sm90a_support("fa3", reinterpret_cast<const void*>(fa3_fwd_kernel<128, 128, 2, 2, Elem16<true, false>>));
}

Launcher::Launcher(const Problem& p) : p_(p) {
  const Config c = choose(p);
  bn_ = c.bn;
  kernel_dim_ = c.d;
  consumers_ = c.consumers;
  stages_ = c.stages;
  // Persistent unless asked otherwise: with tiles claimed from the counter it was as fast as
  // or faster than one CTA per tile at every measured shape (docs/perf-notes.md, fa3 v2;
  // seqlen 512 causal +18%).
  persistent_ctas_ = persistent_ctas(p);
  if ((p.cu_q == nullptr) != (p.cu_k == nullptr)) throw Error("fa3: varlen needs both cu_seqlens arrays");
  dispatch(c, p.bf16, true, MakeSplit{p, persistent_ctas_, split_});
  dispatch(c, p.bf16, split(), SetSmem{});
  const bool packed = p.cu_q != nullptr;
  const int map_b = packed ? 1 : p.batch, rows_q = packed ? p.batch * p.seqlen_q : p.seqlen_q,
            rows_k = packed ? p.batch * p.seqlen_k : p.seqlen_k;
  tq_ = make_map16("fa3", p.q, p.bf16, map_b, rows_q, p.heads, p.head_dim, 64 * consumers_);
  tk_ = make_map16("fa3", p.k, p.bf16, map_b, rows_k, p.heads_kv, p.head_dim, bn_);
  const int dv = p.head_dim_v > 0 ? p.head_dim_v : p.head_dim;
  tv_ = make_map16("fa3", p.v, p.bf16, map_b, rows_k, p.heads_kv, dv, bn_);
  to_ = make_map16("fa3", p.o, p.bf16, map_b, rows_q, p.heads, dv, 64);
}

void Launcher::launch(cudaStream_t stream) const {
  dispatch({kernel_dim_, bn_, consumers_, stages_}, p_.bf16, split(),
           Launch{p_, tq_, tk_, tv_, to_, persistent_ctas_, split_, stream});
}

std::string Launcher::variant() const {
  // "m128n128d128-ws3-kv2-pp-ps-st varlen": tile, warpgroups, ring stages, ping-pong,
  // persistent, split tail, varlen (short: the variant column also carries graph replay
  // statistics). A padded head dim reads "d96@128", "d192/128@192".
  const int dv = p_.head_dim_v > 0 ? p_.head_dim_v : p_.head_dim;
  std::string d = std::to_string(p_.head_dim) + (dv != p_.head_dim ? "/" + std::to_string(dv) : "");
  if (p_.head_dim != kernel_dim_ || dv != kernel_dim_) d += "@" + std::to_string(kernel_dim_);
  return strprintf("m%dn%dd%s-ws%d-kv%d%s%s%s%s", 64 * consumers_, bn_, d.c_str(), consumers_ + 1, stages_,
                   p_.pingpong ? "-pp" : "", persistent_ctas_ > 0 ? "-ps" : "", split() ? "-st" : "",
                   p_.cu_q ? " varlen" : "");
}

}  // namespace genbench::fa3
