#pragma once
// fa3: the FlashAttention-3-style forward kernel for Hopper (sm_90a), shared by the 16-bit
// (fa3_sm90.cu) and the e4m3 (fa3_fp8_sm90.cu) instantiations, which differ only in an
// element-type traits class E (see "Element traits" below). Include only from .cu files.
// docs/attention.md describes the design and gives the measured reason for each choice (its
// "design decisions" table); the comments here say what the code does.
//
// A work tile is 64 C query rows of one (batch, head) against all visible keys, or a piece of
// that key range (the split tail, fa3_split.h). One CTA holds two roles:
//   Producer (warpgroup 0, one thread; producer): claims work items (one CTA per tile, or a
//     persistent CTA per SM claiming from a global counter), hands them to the consumers
//     through the tile ring (hand_out), and issues the TMA loads of each tile's Q and of its
//     K/V blocks into the K and V rings, which run on across tiles (load_tile).
//   Consumer (warpgroups 1 .. C, 64 query rows each): per work item its start (start_tile),
//     then the main loop (mainloop): per key block, from the last to the first, S = Q K_j^T
//     (wgmma from shared memory), the online softmax on S, P converted in registers to the A
//     operand of O += P V_j; QK^T of block j is issued together with PV of block j + 1. Then,
//     for a piece of a split tile, the combine of the pieces (combine_pieces); then the
//     epilogue (epilogue): O normalised, staged in shared memory and stored (TMA or 16-byte
//     stores), and LSE. With ping-pong the consumers take turns issuing their GEMMs (Turns).
// The variants a configuration compiles in are named in Traits: split tail, narrow first
// block, idle warpgroups (three consumers), separate O staging, TMA O stores, lazy rescaling,
// max-free blocks. Rows past seqlen_q are computed on TMA's zero fill (or, varlen, on the next
// packed sequence's rows) and not stored; LSE = max * scale + log(sum), -inf (and O = 0) for
// rows that see no key.
//
// Parts, in the order of this file: KernelParams / SplitParams (the launch's arguments),
// Barriers / SharedStorage / Traits (shared memory, sizes, registers, variants), Smem (its
// addresses), RingState / Ring / Turns / Rings (the barrier protocols), Tile / tile_of / work_of
// (work items), idle_blocks and combine_pieces (an idle warpgroup's protocol, the split
// combine), the kernel's parts (producer: hand_out, load_tile, producer; consumer: start_tile,
// mainloop, epilogue; the state they share stays in the kernel), fa3_fwd_kernel (the roles
// calling them), host side.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "backend/cuda/check.h"
#include "core/error.h"
#include "kernels/attention/fa3_sm90/fa3_device.cuh"
#include "kernels/attention/fa3_sm90/fa3_sm90.h"
#include "kernels/attention/fa3_sm90/fa3_split.h"
#include "kernels/common/fast_math.cuh"
#include "kernels/common/sm90_ptx.cuh"
#include "kernels/common/tma_map.h"

namespace genbench::fa3 {

// Element traits, what a kernel instantiation's element type E provides:
//   kElemBytes (Q and K bytes per element), kK (elements per 32-byte wgmma k step),
//   kOutBF16 (O stored as bf16, else fp16), kDescaleV (O is scaled by descale_v),
//   kPOffsetLog2 (P computed as 2^offset x exp(s - base), base the row max or, with lazy
//     rescaling, a little below it; LSE takes the offset off);
//   kRescaleSlackLog2<D> (> 0: lazy rescaling, OnlineSoftmax: the exponent base moves, and O is
//     rescaled, only when a row's max grows past it by more than this; 0: every block);
//   kTmaStoreO<D> (O leaves the shared staging by TMA stores, else by 16-byte stores);
//   kSplitTail, kPieceCostBlocks (the split tail, fa3_split.h: on, and what a piece costs);
//   kMaxFreeBlocks<D> (lazy rescaling without the row max where it is safe, see max_free_ok in
//     the consumer; needs q_abs_sum<D> and convert_p_checked<BN>);
//   wgmma_qk<BN>(s, da, db, scale_d): one k step of S = Q K^T from 128-byte-swizzled tiles;
//   issue_pv<D, BN>(o, p, v_base): O += P V for one key block as one wgmma commit group;
//   convert_p<BN>(s, p): P (fp32 accumulator layout) to the A fragments of issue_pv;
//   load_v<D, BN>(dst, tm, bar, hk, key0, b): the TMA loads of one V block into a stage.

struct KernelParams {
  void* o;
  float* lse;
  const int* cu_q;  // varlen: cumulative lengths (batch + 1) in device memory, else nullptr
  const int* cu_k;
  long long lse_head_stride;                    // varlen: LSE is [heads, lse_head_stride] by packed row
  int heads, group, batch, seqlen_q, seqlen_k;  // varlen: seqlen_* are the maxima
  int o_dim;                                    // O's row length in elements (D, or less where D is padded)
  int num_m_blocks;                             // query blocks of the longest sequence
  int num_tiles;                                // num_m_blocks x heads x batch
  int* sched;               // persistent launches: [next tile counter, finished CTAs], zero between launches
  float scale, scale_log2;  // score of stored values -> true score (x descales for e4m3); x log2(e)
  int causal, pingpong;
  float descale_v;            // E::kDescaleV: true V = stored V x descale_v
  std::uint32_t p_limit_add;  // E::kMaxFreeBlocks<D>: (0x80 - the limit's e4m3 code) in every byte; 0: off
  int* counts;                // E::kMaxFreeBlocks<D>, tests: nullptr, or [max-free blocks, rebases] counted per warp
};

// The split tail of a persistent launch (fa3_split.h), a parameter of its own (KernelParams is
// the same with and without the split): claims [0, slots.tile0) are whole tiles, [slots.tile0, num_claims) the split
// slots; without a split num_claims = slots.tile0 = num_tiles.
struct SplitParams {
  SplitSlots slots;
  int num_claims;
  float4* ws;  // partial results: 2 entries a slot, each C x (D / 8 + 1) x 128 float4
  int* count;  // pieces finished, per split tile and consumer warpgroup; zero between launches
};

// ------------------------------------------------------------------------------ shared memory

// The mbarriers and handout slots of one CTA (8-byte mbarriers first, then ints).
template <int S, int C>
struct alignas(128) Barriers {
  std::uint64_t q_full;                       // the Q tile has landed
  std::uint64_t k_full[S], k_empty[S];        // K ring: loaded / released by every consumer warp
  std::uint64_t v_full[S], v_empty[S];        // V ring
  std::uint64_t q_empty;                      // every consumer warp is done with the Q tile
  std::uint64_t tile_full[2], tile_empty[2];  // tile handout ring of a persistent launch
  int tile_slot[2];                           // the work codes handed out (shared-memory atomics)
  int last_piece[C];                          // split tail: this warpgroup finishes its tile
};

// The CTA's shared memory, 1024-aligned tiles (128-byte swizzle) then the barriers:
//   q [D / chunk][64 C rows][128 bytes], k and v [S stages][BN x D elements] (K in 128-byte
//   column chunks like Q, V as E lays it out), o [D / 64][64 C rows][128 bytes] when O has a
//   staging buffer of its own (OB > 0; else it is staged in q).
template <int QB, int KVB, int S, int OB, class Bar>
struct SharedStorage {
  alignas(1024) unsigned char q[QB];
  alignas(1024) unsigned char k[S][KVB];
  alignas(1024) unsigned char v[S][KVB];
  alignas(1024) unsigned char o[OB];
  Bar bar;
};
template <int QB, int KVB, int S, class Bar>
struct SharedStorage<QB, KVB, S, 0, Bar> {
  alignas(1024) unsigned char q[QB];
  alignas(1024) unsigned char k[S][KVB];
  alignas(1024) unsigned char v[S][KVB];
  Bar bar;
};

// One configuration: head dim D, key tile BN, C consumer warpgroups of 64 query rows each
// beside the producer warpgroup, S stages in the K/V rings, element traits E; its sizes,
// registers, shared storage and the variants it compiles in.
template <int D, int BN, int C, int S, class E>
struct Traits {
  static constexpr int kD = D, kBN = BN, kC = C, kS = S;
  using Elem = E;
  static constexpr int kBlockM = 64 * C;
  static constexpr int kThreads = 128 * (C + 1);
  // Registers after setmaxnreg: 128 x producer + 128 C x consumer <= 64K.
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = C == 2 ? 240 : 160;
  static_assert(128 * kProducerRegs + 128 * C * kConsumerRegs <= 65536, "register file over budget");
  static constexpr int kChunkElems = 128 / E::kElemBytes;  // elements per 128-byte swizzle row
  static constexpr int kChunks = D / kChunkElems;
  static constexpr int kQBytes = kBlockM * D * E::kElemBytes;
  static constexpr int kKVBytes = BN * D * E::kElemBytes;
  static constexpr int kOBytes = kBlockM * D * 2;  // O is 16-bit
  using Bar = Barriers<S, C>;
  static constexpr int kBarBytes = static_cast<int>(sizeof(Bar));

  // ---- variants
  // O staged in a buffer of its own (where it fits beside Q and the rings), else in the Q tile.
  static constexpr bool kSeparateO = kQBytes + 2 * S * kKVBytes + kOBytes + kBarBytes + 1024 <= 227 * 1024;
  static constexpr bool kTmaStoreO = E::template kTmaStoreO<D>;  // O by TMA stores, else 16-byte stores
  static constexpr bool kSplit = D == 128 && E::kSplitTail;      // the split tail (fa3_split.h)
  // The narrow first block (the consumer's first key block half wide): 16-bit d=64 on two consumers.
  static constexpr bool kNarrowFirst = D == 64 && C == 2 && E::kElemBytes == 2;
  // Warpgroups whose 64 rows all lie past seqlen_q keep only the barrier protocol (idle warpgroups).
  static constexpr bool kIdleWarpgroups = C >= 3;
  static constexpr float kSlack = E::template kRescaleSlackLog2<D>;
  static constexpr bool kLazy = kSlack > 0.f;                      // lazy rescaling
  static constexpr bool kMaxFree = E::template kMaxFreeBlocks<D>;  // max-free blocks

  using Storage = SharedStorage<kQBytes, kKVBytes, S, kSeparateO ? kOBytes : 0, Bar>;
  static constexpr int kOffK = static_cast<int>(offsetof(Storage, k));
  static constexpr int kOffV = static_cast<int>(offsetof(Storage, v));
  static constexpr int kOffBar = static_cast<int>(offsetof(Storage, bar));
  static constexpr int kBytes = kOffBar + kBarBytes + 1024;  // + alignment slack
  static_assert(kSeparateO || E::kElemBytes == 2, "O staging needs its own buffer with 8-bit inputs");
  static_assert(kKVBytes % 1024 == 0, "K/V tiles must keep 1024-byte alignment");
  static_assert(kChunks * kChunkElems == D, "head_dim must fill whole 128-byte swizzle rows");
  static_assert(kOffK == kQBytes && kOffV == kQBytes + S * kKVBytes &&
                    kOffBar == kQBytes + 2 * S * kKVBytes + (kSeparateO ? kOBytes : 0),
                "tiles must be packed");
  static_assert(kBytes <= 227 * 1024, "shared memory over the sm_90 limit");
};

// The split tail where E::kSplitTail has it (head dim 128 only; off, its code is compiled out).
template <int D, class E>
constexpr bool kSplitTail = D == 128 && E::kSplitTail;

#ifdef GENBENCH_SM90A_ENABLED

// The CTA's shared storage: a generic pointer and its shared-window address (what TMA, wgmma
// and mbarrier instructions take), aligned up to 1024 bytes.
template <class T>
struct Smem {
  using Storage = typename T::Storage;
  using Bar = typename T::Bar;
  Storage* ptr;
  std::uint32_t addr;

  __device__ __forceinline__ static Smem aligned(unsigned char* raw_ptr) {
    const std::uint32_t raw = sm90::smem_addr(raw_ptr);
    const std::uint32_t pad = (1024u - (raw & 1023u)) & 1023u;
    return {reinterpret_cast<Storage*>(raw_ptr + pad), raw + pad};
  }
  __device__ __forceinline__ std::uint32_t q() const { return addr; }
  __device__ __forceinline__ std::uint32_t k(int s) const { return addr + T::kOffK + s * T::kKVBytes; }
  __device__ __forceinline__ std::uint32_t v(int s) const { return addr + T::kOffV + s * T::kKVBytes; }
  // The address of barrier field `off` (offsetof(Bar, ...)).
  __device__ __forceinline__ std::uint32_t bar(std::size_t off) const {
    return addr + T::kOffBar + static_cast<std::uint32_t>(off);
  }
  // Where O is staged: its own buffer, or the Q tile.
  __device__ __forceinline__ unsigned char* o_stage() const {
    if constexpr (T::kSeparateO) return ptr->o;
    else return ptr->q;
  }
};

// ------------------------------------------------------------------------------ barrier protocols

// A position in a ring of S stages, counted from 0 across tiles (never negative): its stage
// and the parity of the stage's mbarrier phase.
template <int S>
struct RingState {
  int count;
  __device__ __forceinline__ int stage() const { return static_cast<int>(static_cast<unsigned>(count) % S); }
  __device__ __forceinline__ std::uint32_t phase() const { return (static_cast<unsigned>(count) / S) & 1u; }
  __device__ __forceinline__ RingState operator+(int n) const { return {count + n}; }
  __device__ __forceinline__ RingState prev() const { return {count - 1}; }
  __device__ __forceinline__ void advance(int n) { count += n; }
};

// A ring of S stages, each with a "full" mbarrier (the producer's arrival, with TMA
// transactions) and an "empty" one (one arrival per consumer warp); stage s's barriers at
// full + 8 s and empty + 8 s.
template <int S>
struct Ring {
  std::uint32_t full, empty;

  __device__ __forceinline__ std::uint32_t full_bar(RingState<S> r) const { return full + 8 * r.stage(); }
  __device__ __forceinline__ std::uint32_t empty_bar(RingState<S> r) const { return empty + 8 * r.stage(); }
  // Producer: wait until the consumers have released the stage's previous use.
  __device__ __forceinline__ void acquire(RingState<S> r) const {
    const int s = r.stage();
    const std::uint32_t phase = r.phase();
    sm90::mbar_wait(empty + 8 * s, phase ^ 1);
  }
  // Producer, for a ring whose first S positions need no wait: the same as acquire(), from the
  // phase of the stage's previous use, S positions back.
  __device__ __forceinline__ void acquire_reused(RingState<S> r) const {
    sm90::mbar_wait(empty + 8 * r.stage(), (r + (-S)).phase());
  }
  // Producer: arrive on the stage's full barrier, expecting `bytes` of TMA transactions on it.
  __device__ __forceinline__ void expect(RingState<S> r, std::uint32_t bytes) const {
    sm90::mbar_arrive_expect_tx(full_bar(r), bytes);
  }
  // Producer: arrive on the stage's full barrier (data written by this thread).
  __device__ __forceinline__ void commit(RingState<S> r) const { sm90::mbar_arrive(full_bar(r)); }
  // Consumer: wait until the stage is full.
  __device__ __forceinline__ void wait(RingState<S> r) const { sm90::mbar_wait(full_bar(r), r.phase()); }
  // Consumer warp: done with the stage (every consumer warp arrives once).
  __device__ __forceinline__ void release(RingState<S> r, int lane) const {
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(empty_bar(r));
  }
};

// Ping-pong: the consumer warpgroups take turns issuing their GEMMs in a ring of named
// barriers: consumer cw waits on barrier kFirst + cw, then signals the next consumer's. The ring
// runs on across tiles; consumer 0 gives itself the first turn (start) and takes back the one
// arrival left pending at the end (finish). Barriers 1 .. C are the consumers' own.
template <int C>
struct Turns {
  static constexpr int kFirst = 1 + C;
  const bool& on;
  const int& cw;
  __device__ __forceinline__ void start() const {
    if (on && cw == 0) sm90::named_barrier_arrive(kFirst, 256);
  }
  __device__ __forceinline__ void wait() const {
    if (on) sm90::named_barrier_sync(kFirst + cw, 256);
  }
  __device__ __forceinline__ void pass() const {
    if (on) sm90::named_barrier_arrive(kFirst + (cw + 1) % C, 256);
  }
  __device__ __forceinline__ void finish() const {
    if (on && cw == 0) sm90::named_barrier_sync(kFirst, 256);
  }
};

// The rings of one CTA.
template <class T, int S>
struct Rings {
  Ring<1> q;      // the Q tile (full: loaded; empty: every consumer warp done with it)
  Ring<S> k, v;   // K and V blocks, positions counted across tiles
  Ring<2> tiles;  // work codes handed from the producer to the consumers (persistent launches)

  __device__ __forceinline__ static Rings of(const Smem<T>& m) {
    using Bar = typename T::Bar;
    return {{m.bar(offsetof(Bar, q_full)), m.bar(offsetof(Bar, q_empty))},
            {m.bar(offsetof(Bar, k_full)), m.bar(offsetof(Bar, k_empty))},
            {m.bar(offsetof(Bar, v_full)), m.bar(offsetof(Bar, v_empty))},
            {m.bar(offsetof(Bar, tile_full)), m.bar(offsetof(Bar, tile_empty))}};
  }
  // One thread, before the CTA barrier.
  __device__ __forceinline__ void init(int consumer_warps) const {
    sm90::mbar_init(q.full, 1);
    sm90::mbar_init(q.empty, consumer_warps);
    sm90::mbar_init(tiles.full, 1);
    sm90::mbar_init(tiles.full + 8, 1);
    sm90::mbar_init(tiles.empty, consumer_warps);
    sm90::mbar_init(tiles.empty + 8, consumer_warps);
#pragma unroll
    for (int s = 0; s < S; ++s) {
      sm90::mbar_init(k.full + 8 * s, 1);
      sm90::mbar_init(v.full + 8 * s, 1);
      sm90::mbar_init(k.empty + 8 * s, consumer_warps);
      sm90::mbar_init(v.empty + 8 * s, consumer_warps);
    }
    sm90::fence_barrier_init();
  }
};

// S[64 x BN] = Q_wg[64 x D] * K_stage[BN x D]^T, one commit group (Q chunks hold BM rows; each
// k step covers 32 bytes of a 128-byte chunk row).
// The stage holds KN keys; N = KN, or fewer for the stage's first N keys (a narrow block).
template <class E, int D, int N, int BM, int KN = N>
__device__ __forceinline__ void issue_qk(float (&s)[N / 2], std::uint32_t q_base, std::uint32_t k_base) {
  const std::uint64_t da = sm90::make_desc_sw128(q_base, 16, 1024), db = sm90::make_desc_sw128(k_base, 16, 1024);
  sm90::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < D / E::kK; ++kk)
    E::template wgmma_qk<N>(s, sm90::desc_advance(da, (kk / 4) * (BM * 128) + (kk % 4) * 32),
                            sm90::desc_advance(db, (kk / 4) * (KN * 128) + (kk % 4) * 32), kk > 0 ? 1 : 0);
  sm90::wgmma_commit();
}

// One work tile: a block of query rows of one (sequence, head), or a piece of one: key blocks
// [split.kb_lo, split.kb_lo + n_blocks) of it (a split tile, fa3_split.h).
struct Tile {
  bool valid;  // false: past the end of a shorter sequence of a varlen batch
  int b, h, row0, seqlen_q, seqlen_k, start_q, start_k, tma_b, n_blocks;
  Piece split;  // its key blocks and place among the tile's pieces (kb_lo 0, pieces 1: whole)
};

// Tile t of the launch. Tiles are numbered by (sequence, head) and within it by query block,
// longest causal rows first (block index from the end), so CTAs running at the same time work
// on few heads. Varlen reads the sequence's start and length from device memory (so one
// captured launch serves any set of lengths up to the maxima that sized the launch) and
// addresses the packed tensors as one sequence (TMA batch 0).
template <int BM, int BN>
__device__ __forceinline__ Tile tile_of(const KernelParams& p, int t) {
  Tile ti;
  const int hb = t / p.num_m_blocks, m_idx = t - hb * p.num_m_blocks;
  ti.b = hb / p.heads;
  ti.h = hb - ti.b * p.heads;
  ti.seqlen_q = p.seqlen_q;
  ti.seqlen_k = p.seqlen_k;
  ti.start_q = ti.start_k = 0;
  ti.tma_b = ti.b;
  if (p.cu_q) {
    ti.start_q = p.cu_q[ti.b];
    ti.seqlen_q = p.cu_q[ti.b + 1] - ti.start_q;
    ti.start_k = p.cu_k[ti.b];
    ti.seqlen_k = p.cu_k[ti.b + 1] - ti.start_k;
    ti.tma_b = 0;
  }
  const int m_blocks = (ti.seqlen_q + BM - 1) / BM;
  ti.valid = m_idx < m_blocks;
  ti.row0 = (m_blocks - 1 - m_idx) * BM;
  const int row_last = min(ti.seqlen_q, ti.row0 + BM) - 1;
  const int diag = ti.seqlen_k - ti.seqlen_q;  // causal: row i sees keys j <= i + diag
  const int key_end = p.causal ? min(ti.seqlen_k, max(0, row_last + diag + 1)) : ti.seqlen_k;
  ti.n_blocks = ti.valid ? (key_end + BN - 1) / BN : 0;
  ti.split = Piece{0, 0, ti.n_blocks, 0, 1, 0};
  return ti;
}

// Work item codes handed from the producer to the consumers: whole tile t (t < tile0), piece k
// of split slot s (tile0 + 2 s + k), or the end (this, or without a split num_tiles).
constexpr int kEndCode = 0x7fffffff;

// The work of code c: a whole tile, or a piece of a split tile with its place among the tile's
// pieces (slots first_slot .. first_slot + pieces - 1, in key order).
template <int BM, int BN, bool kSplit>
__device__ __forceinline__ Tile work_of(const KernelParams& p, const SplitParams& sp, int c) {
  if (!kSplit || c < sp.slots.tile0) return tile_of<BM, BN>(p, c);
  const Piece pc = piece_of(sp.slots, (c - sp.slots.tile0) >> 1, (c - sp.slots.tile0) & 1);
  Tile ti = tile_of<BM, BN>(p, sp.slots.tile0 + pc.tail);
  ti.n_blocks = pc.n_blocks;
  ti.split = pc;
  return ti;
}

// An idle warpgroup's share of a tile's n_blocks key blocks from ring position kv: the main
// loop's ring and turn protocol, step for step, without its GEMMs and softmax.
template <class T, int S, int C>
__device__ __forceinline__ void idle_blocks(const Rings<T, S>& rings, const Turns<C>& turns, RingState<S> kv,
                                            int n_blocks, int lane) {
  for (int it = 0; n_blocks > 0 && it <= n_blocks; ++it) {
    const RingState<S> at_k = kv + it, at_v = at_k.prev();
    if (it < n_blocks) rings.k.wait(at_k);
    turns.wait();
    if (it > 0) rings.v.wait(at_v);
    turns.pass();
    if (it < n_blocks) rings.k.release(at_k, lane);
    if (it > 0) rings.v.release(at_v, lane);
  }
}

// The split combine: a piece of a split tile leaves its unnormalised O and each row's (base,
// sum) in its workspace entry (thread-major: a thread of any piece holds the same rows and
// columns) and counts itself; the tile's last piece to finish (true) takes the others' entries
// into its own O and softmax state, to the larger base of each row; the others are done with
// the tile (false).
template <int D, int C, int BN>
__device__ __forceinline__ bool combine_pieces(float (&o)[D / 2], OnlineSoftmax<BN>& sm, const SplitParams& sp,
                                               const Tile& te, int cw, int tid, volatile int* last_flag, float sl2) {
  constexpr float kNegInf = -INFINITY;
  constexpr int kQuads = D / 8 + 1;
  float4* mine = sp.ws + (static_cast<std::size_t>(te.split.entry) * C + cw) * (kQuads * 128) + tid;
#pragma unroll
  for (int q = 0; q < D / 8; ++q) mine[q * 128] = make_float4(o[4 * q], o[4 * q + 1], o[4 * q + 2], o[4 * q + 3]);
  mine[(D / 8) * 128] = make_float4(sm.m_a, sm.m_b, sm.l_a, sm.l_b);
  __threadfence();
  sm90::named_barrier_sync(1 + cw, 128);
  if (tid == 0) {
    int* count = sp.count + te.split.tail * C + cw;
    const bool last = atomicAdd(count, 1) == te.split.pieces - 1;
    if (last) atomicExch(count, 0);  // every piece has counted: zero for the next launch
    *last_flag = last ? 1 : 0;
  }
  sm90::named_barrier_sync(1 + cw, 128);
  if (*last_flag == 0) return false;
  __threadfence();
#pragma unroll 1
  for (int sl = te.split.first_slot; sl < te.split.first_slot + te.split.pieces; ++sl) {
    const int e = piece_entry(sp.slots, te.split.tail, sl);
    if (e == te.split.entry) continue;
    const float4* other = sp.ws + (static_cast<std::size_t>(e) * C + cw) * (kQuads * 128) + tid;
    const float4 ml = __ldcg(other + (D / 8) * 128);
    // Both to the larger base (2^((base - max) x sl2); 0 for a row without keys, base -inf).
    const float mx_a = fmaxf(sm.m_a, ml.x), mx_b = fmaxf(sm.m_b, ml.y);
    const float ca = sm.m_a == kNegInf ? 0.f : ex2((sm.m_a - mx_a) * sl2);
    const float cb = sm.m_b == kNegInf ? 0.f : ex2((sm.m_b - mx_b) * sl2);
    const float xa = ml.x == kNegInf ? 0.f : ex2((ml.x - mx_a) * sl2);
    const float xb = ml.y == kNegInf ? 0.f : ex2((ml.y - mx_b) * sl2);
#pragma unroll
    for (int q = 0; q < D / 8; ++q) {
      const float4 v = __ldcg(other + q * 128);
      o[4 * q] = o[4 * q] * ca + v.x * xa;
      o[4 * q + 1] = o[4 * q + 1] * ca + v.y * xa;
      o[4 * q + 2] = o[4 * q + 2] * cb + v.z * xb;
      o[4 * q + 3] = o[4 * q + 3] * cb + v.w * xb;
    }
    sm.l_a = sm.l_a * ca + ml.z * xa;
    sm.l_b = sm.l_b * cb + ml.w * xb;
    sm.m_a = mx_a;
    sm.m_b = mx_b;
  }
  return true;
}

// ------------------------------------------------------------------------------ the kernel's parts
// The producer's and the consumers' parts of fa3_fwd_kernel. The kernel's state stays in the
// kernel (its locals, and the lambdas that capture them): a part takes that state by reference
// and the lambdas as arguments. Declared this way, the kernel compiles to the same machine code
// as with the parts written in its body (scripts/sass-diff.py); state moved into a part, or
// captured differently, changes the order in which the compiler promotes it to registers, and
// with it the register numbering; so can the order of the kernel's declarations (the
// consumers' qn before g, the producer's kv before qn).

// Producer: hands work item `code` to the consumers, the j-th through tile-ring slot j & 1 (a
// persistent launch; a plain one has nothing to hand: its consumers take blockIdx.x), and
// counts it.
template <class L>
__device__ __forceinline__ void hand_out(const bool& dynamic, int& j, const Rings<L, L::kS>& rings,
                                         int* const& tile_slot, int code) {
  if (dynamic) {
    const RingState<2> slot{j};
    const int s = slot.stage();
    if (j >= 2) rings.tiles.acquire_reused(slot);
    atomicExch(tile_slot + s, code);
    rings.tiles.commit(slot);
  }
  ++j;
}

// Producer: the TMA loads of work item ti's Q tile (at Q ring position qn), then of its key
// blocks from the last to the first into the K and V rings (positions from kv on); both
// positions advance.
template <class L>
__device__ __forceinline__ void load_tile(const KernelParams& p, RingState<1>& qn, const Rings<L, L::kS>& rings,
                                          const std::uint32_t& s_q, const CUtensorMap& tm_q, RingState<L::kS>& kv,
                                          const std::uint32_t& s_k, const CUtensorMap& tm_k, const std::uint32_t& s_v,
                                          const CUtensorMap& tm_v, const Tile& ti) {
  constexpr int D = L::kD, BN = L::kBN, kBlockM = L::kBlockM;
  using E = typename L::Elem;
  if (!ti.valid) return;
  const int hk = ti.h / p.group;
  const RingState<1> at_q = qn;
  if (at_q.count > 0) rings.q.acquire(at_q);
  qn.advance(1);
  rings.q.expect(at_q, L::kQBytes);
#pragma unroll
  for (int c = 0; c < L::kChunks; ++c)
    sm90::tma_load_4d(s_q + c * (kBlockM * 128), &tm_q, rings.q.full_bar(at_q), c * L::kChunkElems, ti.h,
                      ti.start_q + ti.row0, ti.tma_b);
  for (int it = 0; it < ti.n_blocks; ++it, kv.advance(1)) {
    const int n = ti.split.kb_lo + ti.n_blocks - 1 - it, s = kv.stage();
    // Stage s of the K ring, then of the V ring: wait until the consumers freed it, then
    // load key block n (K in 128-byte column chunks; V as the element type lays it out).
    rings.k.acquire(kv);
    rings.k.expect(kv, L::kKVBytes);
#pragma unroll
    for (int c = 0; c < L::kChunks; ++c)
      sm90::tma_load_4d(s_k + s * L::kKVBytes + c * (BN * 128), &tm_k, rings.k.full_bar(kv), c * L::kChunkElems, hk,
                        ti.start_k + n * BN, ti.tma_b);
    rings.v.acquire(kv);
    rings.v.expect(kv, L::kKVBytes);
    E::template load_v<D, BN>(s_v + s * L::kKVBytes, &tm_v, rings.v.full_bar(kv), hk, ti.start_k + n * BN, ti.tma_b);
  }
}

// The producer (one thread): prefetches the tensor maps, claims work items in order, the first
// blockIdx.x, the others (a persistent launch) from the global counter, hands each to the
// consumers (hand: hand_out, j items so far) and loads its tiles (produce: load_tile), up to
// end_code; then, in a persistent launch, the last CTA to finish resets the counters.
template <class L, class Hand, class Produce>
__device__ __forceinline__ void producer(const CUtensorMap& tm_q, const CUtensorMap& tm_k, const CUtensorMap& tm_v,
                                         const CUtensorMap& tm_o, const KernelParams& p, const SplitParams& sp,
                                         const int& j, const bool& dynamic, int end_code, const Hand& hand,
                                         const Produce& produce) {
  constexpr int BN = L::kBN, kBlockM = L::kBlockM;
  constexpr bool kSplit = L::kSplit;
  sm90::prefetch_tensormap(&tm_q);
  sm90::prefetch_tensormap(&tm_k);
  sm90::prefetch_tensormap(&tm_v);
  if (L::kTmaStoreO) sm90::prefetch_tensormap(&tm_o);
  // Claims in order: a whole tile, or a split slot, whose second piece (if any) follows
  // its first.
  const int num_claims = kSplit ? sp.num_claims : p.num_tiles;
  int pending = end_code;
  for (;;) {
    int code = pending;
    if (kSplit && code != end_code) {
      pending = end_code;
    } else {
      const int t = j == 0 ? static_cast<int>(blockIdx.x)
                           : (dynamic ? static_cast<int>(gridDim.x) + atomicAdd(p.sched, 1) : num_claims);
      code = t >= num_claims ? end_code : t;
      if (kSplit && code < end_code && t >= sp.slots.tile0) {
        const int sl = t - sp.slots.tile0;
        code = sp.slots.tile0 + 2 * sl;
        if (slot_pieces(sp.slots, sl) > 1) pending = code + 1;
      }
    }
    hand(code);
    if (code >= end_code) break;
    produce(work_of<kBlockM, BN, kSplit>(p, sp, code));
  }
  if (p.sched) {
    // The last CTA to finish resets the counters for the next launch (every CTA has taken
    // its last tile number before it counts itself finished).
    __threadfence();
    if (atomicAdd(p.sched + 1, 1) == static_cast<int>(gridDim.x) - 1) {
      p.sched[0] = 0;
      p.sched[1] = 0;
    }
  }
}

// Consumer: the code of its j-th work item: with one CTA per tile blockIdx.x, then end_code;
// in a persistent launch the one the producer handed out through tile slot j & 1.
template <class L>
__device__ __forceinline__ int next_code(bool dynamic, int j, int end_code, const Rings<L, L::kS>& rings,
                                         int* tile_slot, int lane) {
  if (!dynamic) return j == 0 ? static_cast<int>(blockIdx.x) : end_code;
  const RingState<2> slot{j};
  rings.tiles.wait(slot);
  int t = 0;
  if (lane == 0) t = atomicAdd(tile_slot + slot.stage(), 0);  // one read per warp
  t = __shfl_sync(0xffffffffu, t, 0);
  rings.tiles.release(slot, lane);
  return t;
}

// Consumer: the start of work item ti: its key limits (keys [0, lim_a) and [0, lim_b) visible to
// the thread's rows a and b; blocks ending past mask_from need the mask), O and the softmax
// state reset, its Q tile (ring position qn, which advances) waited for, and for max-free
// blocks the rows' score bounds from it.
template <class L>
__device__ __forceinline__ void start_tile(const KernelParams& p, const Rings<L, L::kS>& rings, const Tile& ti,
                                           int diag, int cw, int rl_a, int lane, float sl2, int& qn, int& lim_a,
                                           int& lim_b, int& mask_from, float (&o)[L::kD / 2], OnlineSoftmax<L::kBN>& sm,
                                           float& bound_a, float& bound_b, unsigned char* smem) {
  constexpr int D = L::kD, BN = L::kBN, kBlockM = L::kBlockM;
  using E = typename L::Elem;
  const int row_a = ti.row0 + cw * 64 + rl_a;                           // and row_a + 8
  lim_a = p.causal ? min(ti.seqlen_k, row_a + diag + 1) : ti.seqlen_k;  // keys [0, lim) visible
  lim_b = p.causal ? min(ti.seqlen_k, row_a + 8 + diag + 1) : ti.seqlen_k;
  // Smallest limit of the tile: blocks ending beyond it need the mask (this also masks the
  // keys of the next packed sequence that a varlen tail block loads).
  mask_from = p.causal ? min(ti.seqlen_k, ti.row0 + diag + 1) : ti.seqlen_k;
#pragma unroll
  for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
  sm = OnlineSoftmax<BN>();

  rings.q.wait(RingState<1>{qn});
  ++qn;
  if constexpr (L::kMaxFree) {  // |K elements| <= 448; 5% over the fp16 sums of |q|
    const float f = 448.f * 1.05f * fabsf(sl2);
    const unsigned char* q_row = smem + (cw * 64 + rl_a) * 128;
    bound_a = f * E::template q_abs_sum<D>(q_row, kBlockM * 128, lane % 4);
    bound_b = f * E::template q_abs_sum<D>(q_row + 8 * 128, kBlockM * 128, lane % 4);
  }
}

// Consumer: the first key block kb_end - 1 narrow (L::kNarrowFirst, the warpgroup's rows see
// none of its second half): QK^T and softmax BN / 2 wide in s_n, sn (taken into sm), P in p_n,
// then in pf with zeros beyond.
template <class L>
__device__ __forceinline__ void narrow_first(const Rings<L, L::kS>& rings, const Turns<L::kC>& turns,
                                             RingState<L::kS> kv, int kb_end, int lane, float sl2, std::uint32_t q_base,
                                             std::uint32_t s_k, const int& lim_a, const int& lim_b,
                                             const int& mask_from, float (&s_n)[L::kBN / 4],
                                             OnlineSoftmax<L::kBN / 2>& sn, OnlineSoftmax<L::kBN>& sm,
                                             std::uint32_t (&p_n)[L::kBN / 2 / L::Elem::kK][4],
                                             std::uint32_t (&pf)[L::kBN / L::Elem::kK][4]) {
  constexpr int D = L::kD, BN = L::kBN, kBlockM = L::kBlockM;
  using E = typename L::Elem;
  constexpr float kSlack = L::kSlack;
  constexpr bool kLazy = L::kLazy;
  constexpr int kHalf = BN / 2;
  // The full block's protocol below, with the narrow arrays (written apart from it).
  const int s = kv.stage();
  rings.k.wait(kv);
  turns.wait();
  issue_qk<E, D, kHalf, kBlockM, BN>(s_n, q_base, s_k + s * L::kKVBytes);
  turns.pass();
  sm90::wgmma_wait<0>();
  fence_acc(s_n);
  rings.k.release(kv, lane);
  if ((kb_end - 1) * BN + kHalf > mask_from) sn.mask(s_n, 2 * (kb_end - 1), lim_a, lim_b, lane);
  sn.template update<kLazy>(s_n, sl2, E::kPOffsetLog2, kSlack);
  sm.take(sn);
  E::template convert_p<kHalf>(s_n, p_n);
#pragma unroll
  for (int k = 0; k < kHalf / E::kK; ++k)
#pragma unroll
    for (int r = 0; r < 4; ++r) pf[k][r] = p_n[k][r];
#pragma unroll
  for (int k = kHalf / E::kK; k < BN / E::kK; ++k)
#pragma unroll
    for (int r = 0; r < 4; ++r) pf[k][r] = 0u;
}

// Consumer: the PV of a work item's first key block kb_lo (the last the main loop reaches), at
// K/V ring position kv + n_blocks - 1, into o.
template <class L>
__device__ __forceinline__ void last_pv(const Rings<L, L::kS>& rings, const Turns<L::kC>& turns, RingState<L::kS> kv,
                                        int n_blocks, int lane, std::uint32_t s_v, float (&o)[L::kD / 2],
                                        std::uint32_t (&pf)[L::kBN / L::Elem::kK][4], OnlineSoftmax<L::kBN>& sm) {
  constexpr int D = L::kD, BN = L::kBN, S = L::kS;
  using E = typename L::Elem;
  const RingState<S> at_v = (kv + n_blocks).prev();
  const int sv = at_v.stage();
  if constexpr (!L::kLazy) sm.rescale<D>(o);
  rings.v.wait(at_v);
  turns.wait();
  E::template issue_pv<D, BN>(o, pf, s_v + sv * L::kKVBytes);
  turns.pass();
  sm90::wgmma_wait<0>();
  fence_acc(o);
  fence_frag(pf);
  rings.v.release(at_v, lane);
}

// Consumer: the main loop over work item ti's n_blocks key blocks [kb_end - n_blocks, kb_end),
// last first, from K/V ring position kv: block kb_end - 1's QK^T and softmax (narrow where
// L::kNarrowFirst allows, in s_n, sn and p_n); then per block its QK^T issued with the previous
// block's PV, the softmax, P converted; then the PV of the first key block. O accumulates in o,
// the softmax state in sm; s_acc holds S, then P in fp32, pf P as the PV's A fragments.
// softmax, convert_p, max_free_ok and convert_p_checked are the kernel's per-block steps.
// Releases the Q tile (position qn) where O has its own staging; g counts the K/V blocks
// consumed.
// Lazy rescaling (L::kLazy): O takes a block's correction right after that block's softmax,
// once the previous PV is complete, and only when the softmax moved a base (a warp-uniform
// branch outside the GEMM issue); otherwise between the QK^T and PV issues, every block.
// Max-free blocks (L::kMaxFree). From a tile's third block on, a block may skip the row max:
// P = 2^(s * sl2 - base) with the bases as they are, checked as it is rounded to e4m3; a row
// whose P reached p.p_limit_add's code is rebased (OnlineSoftmax::rebase: base up by a power
// of two, P, sum and O scaled exactly) and P converted again. A warp takes the path only while
// every row's base keeps P finite: bound_* (upper bounds on s * sl2 from sum |q| x 448, per
// tile) - base < 126; otherwise the block takes the row max. The second block takes the max
// without lazy slack, so max-free blocks start from the exact row maxima (P <= 2^offset).
template <class L, class Softmax, class ConvertP, class MaxFreeOk, class ConvertPChecked>
__device__ __forceinline__ void mainloop(const KernelParams& p, const Rings<L, L::kS>& rings, const Turns<L::kC>& turns,
                                         const Tile& ti, RingState<L::kS> kv, int n_blocks, int kb_end, int diag,
                                         int cw, int lane, float sl2, std::uint32_t q_base, std::uint32_t s_k,
                                         std::uint32_t s_v, int qn, int& g, float (&o)[L::kD / 2],
                                         float (&s_acc)[L::kBN / 2], std::uint32_t (&pf)[L::kBN / L::Elem::kK][4],
                                         OnlineSoftmax<L::kBN>& sm, const int& lim_a, const int& lim_b,
                                         const int& mask_from, const Softmax& softmax, const ConvertP& convert_p,
                                         const MaxFreeOk& max_free_ok, const ConvertPChecked& convert_p_checked,
                                         float (&s_n)[L::kBN / 4], OnlineSoftmax<L::kBN / 2>& sn,
                                         std::uint32_t (&p_n)[L::kBN / 2 / L::Elem::kK][4]) {
  constexpr int D = L::kD, BN = L::kBN, S = L::kS, kBlockM = L::kBlockM;
  using E = typename L::Elem;
  constexpr float kSlack = L::kSlack;
  constexpr bool kLazy = L::kLazy;
  constexpr bool kMaxFree = L::kMaxFree;
  if (n_blocks > 0) {
    // Block kb_end - 1: QK^T and softmax only (its PV goes with the next block's QK^T).
    // Narrow (L::kNarrowFirst) where this warpgroup's rows see none of its second half: QK^T
    // and softmax BN / 2 wide, P zero beyond; the PV stays the loop's, full width.
    bool narrow = false;
    if constexpr (L::kNarrowFirst) {
      const int lim_wg = p.causal ? min(ti.seqlen_k, ti.row0 + cw * 64 + 64 + diag) : ti.seqlen_k;
      narrow = lim_wg <= (kb_end - 1) * BN + BN / 2;
      if (narrow) {
        narrow_first<L>(rings, turns, kv, kb_end, lane, sl2, q_base, s_k, lim_a, lim_b, mask_from, s_n, sn, sm, p_n,
                        pf);
      }
    }
    if (!narrow) {
      const int s = kv.stage();
      rings.k.wait(kv);
      turns.wait();
      issue_qk<E, D, BN, kBlockM>(s_acc, q_base, s_k + s * L::kKVBytes);
      turns.pass();
      sm90::wgmma_wait<0>();
      fence_acc(s_acc);
      rings.k.release(kv, lane);
      softmax(kb_end - 1, false, kSlack);
      convert_p();
    }
    for (int it = 1; it < n_blocks; ++it) {
      const int n = kb_end - 1 - it;
      const RingState<S> at_k = kv + it, at_v = at_k.prev();
      const int sk = at_k.stage(), sv = at_v.stage();
      rings.k.wait(at_k);
      turns.wait();
      issue_qk<E, D, BN, kBlockM>(s_acc, q_base, s_k + sk * L::kKVBytes);
      if constexpr (!kLazy) sm.rescale<D>(o);
      rings.v.wait(at_v);
      E::template issue_pv<D, BN>(o, pf, s_v + sv * L::kKVBytes);
      turns.pass();
      sm90::wgmma_wait<1>();  // S of block n is ready; PV of block n + 1 is waited for after the softmax
      fence_acc(s_acc);
      rings.k.release(at_k, lane);
      // Max-free blocks start after two with the max, the second without slack, so that they
      // start from the exact row max (P <= 2^offset).
      const bool max_free = it >= 2 && max_free_ok();
      softmax(n, max_free, kMaxFree && it < 2 ? 0.f : kSlack);
      sm90::wgmma_wait<0>();
      fence_acc(o);
      fence_frag(pf);
      rings.v.release(at_v, lane);
      if constexpr (kLazy)
        if (sm.rescale_o) sm.rescale<D>(o);
      if (max_free) convert_p_checked();  // a rebase rescales O itself
      else convert_p();
    }
    if constexpr (L::kSeparateO) rings.q.release(RingState<1>{qn}, lane);  // every QK^T of the tile is complete
    last_pv<L>(rings, turns, kv, n_blocks, lane, s_v, o, pf, sm);          // PV of block kb_lo
    g += n_blocks;
  } else if constexpr (L::kSeparateO) {
    rings.q.release(RingState<1>{qn}, lane);
  }
}

// Consumer: the epilogue of work item te (a whole tile, or the last piece of a split tile after
// the combine): O normalised by the row sums (o, and sm after reduce_sums), staged in shared
// memory in the Q tile's swizzled layout and stored by TMA or 16-byte stores; the Q tile (ring
// position qn) released where O was staged in it; then LSE. Shared memory is addressed from
// smem_raw as in the kernel (the kernel's pointer passed in changes the stores' addressing).
template <class L>
__device__ __forceinline__ void epilogue(const CUtensorMap& tm_o, const KernelParams& p, const Rings<L, L::kS>& rings,
                                         const Tile& te, const float (&o)[L::kD / 2], const OnlineSoftmax<L::kBN>& sm,
                                         int cw, int tid, int lane, int rl_a, int qn) {
  constexpr int D = L::kD, kBlockM = L::kBlockM;
  using E = typename L::Elem;
  const float kNegInf = -INFINITY;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const std::uint32_t raw = sm90::smem_addr(smem_raw);
  const std::uint32_t pad = (1024u - (raw & 1023u)) & 1023u;
  unsigned char* smem = smem_raw + pad;
  float inv_a = 0.f, inv_b = 0.f;
  if constexpr (E::kDescaleV) {  // O x descale_v / rowsum (the 2^offset of P cancels)
    inv_a = sm.l_a > 0.f ? p.descale_v / sm.l_a : 0.f;
    inv_b = sm.l_b > 0.f ? p.descale_v / sm.l_b : 0.f;
  } else {
    inv_a = sm.l_a > 0.f ? 1.f / sm.l_a : 0.f;
    inv_b = sm.l_b > 0.f ? 1.f / sm.l_b : 0.f;
  }

  // Stage O (same swizzled layout as the Q tile) in this warpgroup's rows of the O buffer,
  // or of its Q tile, whose wgmma reads are complete. The barrier first: every thread of
  // the warpgroup, and the previous tile's TMA store, are done reading the previous staging.
  if (L::kTmaStoreO && tid == 0) sm90::bulk_wait_read<0>();
  sm90::named_barrier_sync(1 + cw, 128);
  unsigned char* stage = smem + (L::kSeparateO ? L::kOffBar - L::kOBytes : 0) + cw * 64 * 128;
  const int sw = rl_a & 7;  // rl_a + 8 has the same swizzle phase
#pragma unroll
  for (int i = 0; i < D / 8; ++i) {
    const int chunk = i / 8, unit = i % 8;
    const int off = chunk * (kBlockM * 128) + ((unit ^ sw) << 4) + (lane % 4) * 4;
    *reinterpret_cast<std::uint32_t*>(stage + off + rl_a * 128) =
        pack2<E::kOutBF16>(o[4 * i] * inv_a, o[4 * i + 1] * inv_a);
    *reinterpret_cast<std::uint32_t*>(stage + off + (rl_a + 8) * 128) =
        pack2<E::kOutBF16>(o[4 * i + 2] * inv_b, o[4 * i + 3] * inv_b);
  }
  // One TMA store per 64-column chunk, issued by one thread (rows past the tensor's end are
  // not written), except where a varlen tile's rows run into the next packed sequence (and
  // where L::kTmaStoreO is off): those rows go out as 16-byte stores, up to seqlen_q.
  const int wg_row0 = te.row0 + cw * 64;
  const bool tma_store = L::kTmaStoreO && (!p.cu_q || wg_row0 + 64 <= te.seqlen_q);
  if (tma_store) sm90::fence_proxy_async_shared();
  sm90::named_barrier_sync(1 + cw, 128);
  if (tma_store) {
    if (tid == 0) {
#pragma unroll
      for (int c = 0; c < D / 64; ++c)
        sm90::tma_store_4d(&tm_o, sm90::smem_addr(stage) + c * (kBlockM * 128), c * 64, te.h, te.start_q + wg_row0,
                           te.tma_b);
      sm90::bulk_commit();
      if constexpr (!L::kSeparateO) sm90::bulk_wait_read<0>();  // the staging in the Q tile is read
    }
  } else {
    constexpr int kUnitsPerRow = D / 8;
    // O's row length: D, or less where a 16-bit kernel runs a padded head dim (the 8-bit kernels
    // take none, and keep D a constant here).
    const int o_dim = E::kElemBytes == 2 ? p.o_dim : D;
    unsigned char* o_base = static_cast<unsigned char*>(p.o);
    const std::int64_t o_row0 = p.cu_q ? te.start_q : static_cast<std::int64_t>(te.b) * p.seqlen_q;
#pragma unroll 4
    for (int u = tid; u < 64 * kUnitsPerRow; u += 128) {
      const int r = u / kUnitsPerRow, cu = u % kUnitsPerRow;
      const int row = te.row0 + cw * 64 + r;
      const uint4 val =
          *reinterpret_cast<const uint4*>(stage + (cu / 8) * (kBlockM * 128) + r * 128 + (((cu % 8) ^ (r & 7)) << 4));
      if (row < te.seqlen_q && cu * 8 < o_dim) {  // a padded D's columns past O's are not written
        const std::int64_t idx = ((o_row0 + row) * p.heads + te.h) * o_dim + cu * 8;
        *reinterpret_cast<uint4*>(o_base + idx * 2) = val;
      }
    }
  }
  if constexpr (!L::kSeparateO) rings.q.release(RingState<1>{qn}, lane);  // the staging in the Q tile is read
  if (lane % 4 == 0) {
    const std::int64_t lse_row = p.cu_q ? te.h * p.lse_head_stride + te.start_q
                                        : (static_cast<std::int64_t>(te.b) * p.heads + te.h) * p.seqlen_q;
    const int ra = te.row0 + cw * 64 + rl_a, rb = ra + 8;
    // P carried 2^kPOffsetLog2, and so does the row sum: LSE takes it off.
    constexpr float kOffsetLn = E::kPOffsetLog2 * 0.6931471805599453f;
    if (ra < te.seqlen_q) p.lse[lse_row + ra] = sm.l_a > 0.f ? sm.m_a * p.scale + logf(sm.l_a) - kOffsetLn : kNegInf;
    if (rb < te.seqlen_q) p.lse[lse_row + rb] = sm.l_b > 0.f ? sm.m_b * p.scale + logf(sm.l_b) - kOffsetLn : kNegInf;
  }
}

#endif  // GENBENCH_SM90A_ENABLED

// ------------------------------------------------------------------------------ the kernel

// One CTA: the producer warpgroup (producer: hand_out, load_tile), then C consumer warpgroups,
// each taking the work items handed out: per item its start (start_tile: key limits, Q tile),
// the main loop (mainloop; idle_blocks for an idle warpgroup), the split combine for a piece of a split tile
// (combine_pieces), the epilogue (epilogue).
template <int D, int BN, int C, int S, class E>
__global__ void __launch_bounds__(Traits<D, BN, C, S, E>::kThreads, 1)
    fa3_fwd_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                   const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_o,
                   const KernelParams p, const SplitParams sp) {
#ifdef GENBENCH_SM90A_ENABLED
  using L = Traits<D, BN, C, S, E>;
  constexpr int kBlockM = L::kBlockM;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const std::uint32_t raw = sm90::smem_addr(smem_raw);
  const std::uint32_t pad = (1024u - (raw & 1023u)) & 1023u;
  unsigned char* smem = smem_raw + pad;
  const std::uint32_t s_q = raw + pad, s_k = s_q + L::kOffK, s_v = s_q + L::kOffV;
  using Bar = typename L::Bar;
  // The slots are written and read with shared-memory atomics (ordered by the mbarriers like
  // any access; atomics also tell compute-sanitizer's racecheck that the handoff is intended).
  int* tile_slot = reinterpret_cast<int*>(smem + L::kOffBar + offsetof(Bar, tile_slot));

  const Smem<L> mem{reinterpret_cast<typename L::Storage*>(smem), s_q};
  const Rings<L, S> rings = Rings<L, S>::of(mem);
  if (threadIdx.x == 0) rings.init(4 * C);  // one arrival per consumer warp
  __syncthreads();

  // Tiles: a plain launch has one CTA per tile (tile blockIdx.x, then none). A persistent launch
  // (p.sched set) has one CTA per SM: each starts with tile blockIdx.x, and its producer claims
  // every further tile from the global counter, in order, so the SMs stay balanced however the
  // tiles differ in length, and CTAs running at once work on neighbouring tiles (shared K/V in
  // L2). The producer hands each tile number (num_tiles = the end) to the consumers through
  // the two slots. Ring positions (K/V block g, Q tile qn) count across tiles, so the
  // producer runs ahead into the next tile.
  const bool dynamic = p.sched != nullptr;
  // Work item codes (work_of): tiles, then with a split the pieces of its slots; end_code ends.
  constexpr bool kSplit = kSplitTail<D, E>;
  const int end_code = kSplit ? kEndCode : p.num_tiles;
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);
  if (wg == 0) {
    // ---------------------------------------------------------------- producer
    sm90::setmaxnreg_dec<L::kProducerRegs>();
    if (threadIdx.x == 0) {
      // Work items handed to the consumers (through slot j & 1 for the j-th), in claim order.
      int j = 0;
      // The producer's two steps, on its state (j, then the Q and K/V ring positions).
      auto hand = [&](int code) { hand_out<L>(dynamic, j, rings, tile_slot, code); };
      RingState<S> kv{0};
      RingState<1> qn{0};
      auto produce = [&](const Tile& ti) { load_tile<L>(p, qn, rings, s_q, tm_q, kv, s_k, tm_k, s_v, tm_v, ti); };
      producer<L>(tm_q, tm_k, tm_v, tm_o, p, sp, j, dynamic, end_code, hand, produce);
    }
    return;
  }

  // ------------------------------------------------------------------ consumers
  sm90::setmaxnreg_inc<L::kConsumerRegs>();
  const int cw = wg - 1;  // consumer warpgroup 0 .. C - 1
  const int tid = static_cast<int>(threadIdx.x) % 128, warp = tid / 32, lane = tid % 32;
  const int rl_a = warp * 16 + lane / 4;  // this thread's rows within the warpgroup: rl_a, rl_a + 8
  const std::uint32_t q_base = s_q + cw * 64 * 128;
  const float sl2 = p.scale_log2;

  const bool pingpong = p.pingpong != 0;
  const Turns<C> turns{pingpong, cw};
  turns.start();

  float o[D / 2];
  float s_acc[BN / 2];
  std::uint32_t pf[BN / E::kK][4];
  OnlineSoftmax<BN> sm;
  constexpr bool kLazy = L::kLazy;
  constexpr bool kMaxFree = L::kMaxFree;
  int lim_a, lim_b, mask_from;  // this tile's key limits (see below)
  // bound_a, bound_b: the max-free blocks' score bounds (mainloop)
  float bound_a = 0.f, bound_b = 0.f;

  auto next_tile = [&](int j) { return next_code<L>(dynamic, j, end_code, rings, tile_slot, lane); };

  // Softmax of block n in S (in place: S becomes P in fp32, times 2^E::kPOffsetLog2); masking
  // only where a block reaches past the tile's smallest key limit.
  auto softmax = [&](int n, bool max_free, float slack) {
    if ((n + 1) * BN > mask_from) sm.mask(s_acc, n, lim_a, lim_b, lane);
    if (max_free) sm.update_max_free(s_acc, sl2, E::kPOffsetLog2);
    else sm.template update<kLazy>(s_acc, sl2, E::kPOffsetLog2, slack);
  };
  auto convert_p = [&]() { E::template convert_p<BN>(s_acc, pf); };
  auto max_free_ok = [&]() {
    if constexpr (kMaxFree) return p.p_limit_add != 0 && sm.max_free_ok(bound_a, bound_b, sl2, E::kPOffsetLog2);
    else return false;
  };
  // P of a max-free block to e4m3, rebasing the rows that reached the limit (and O with them).
  auto convert_p_checked = [&]() {
    if constexpr (kMaxFree) {
      std::uint32_t hit_a, hit_b;
      E::template convert_p_checked<BN>(s_acc, pf, p.p_limit_add, hit_a, hit_b);
      const bool over_a = (hit_a & 0x80808080u) != 0, over_b = (hit_b & 0x80808080u) != 0;
      if (p.counts && lane == 0) atomicAdd(p.counts, 1);
      if (__any_sync(0xffffffffu, over_a || over_b)) {
        sm.rebase(s_acc, over_a, over_b, sl2, static_cast<int>(E::kPOffsetLog2));
        convert_p();
        sm.template rescale<D>(o);
        if (p.counts && lane == 0) atomicAdd(p.counts + 1, 1);
      }
    }
  };

  int qn = 0, g = 0;  // Q tiles and K/V blocks consumed so far (ring positions)
  for (int j = 0;; ++j) {
    const int code = next_tile(j);
    if (code >= end_code) break;
    const Tile ti = work_of<kBlockM, BN, kSplit>(p, sp, code);
    if (!ti.valid) continue;
    const RingState<S> kv{g};                                              // the tile's first K/V block
    const int n_blocks = ti.n_blocks, kb_end = ti.split.kb_lo + n_blocks;  // key blocks [kb_lo, kb_end)
    const int diag = ti.seqlen_k - ti.seqlen_q;
    start_tile<L>(p, rings, ti, diag, cw, rl_a, lane, sl2, qn, lim_a, lim_b, mask_from, o, sm, bound_a, bound_b, smem);
    // An idle warpgroup (L::kIdleWarpgroups): all its 64 rows lie past seqlen_q (the last query
    // block of a length that is not a tile multiple), nothing to compute or store. It keeps the
    // ring and turn protocol of the loop below, step for step: each K/V stage waited for (so its
    // release counts in that load's phase) and released, and its ping-pong turns taken.
    if (L::kIdleWarpgroups && ti.row0 + cw * 64 >= ti.seqlen_q) {
      rings.q.release(RingState<1>{qn}, lane);
      idle_blocks(rings, turns, kv, n_blocks, lane);
      g += n_blocks;
      continue;
    }
    // The narrow first block's scores, softmax and P (L::kNarrowFirst): arrays of their own,
    // not aliased onto s_acc and pf.
    float s_n[BN / 4];
    OnlineSoftmax<BN / 2> sn;
    std::uint32_t p_n[BN / 2 / E::kK][4];
    mainloop<L>(p, rings, turns, ti, kv, n_blocks, kb_end, diag, cw, lane, sl2, q_base, s_k, s_v, qn, g, o, s_acc, pf,
                sm, lim_a, lim_b, mask_from, softmax, convert_p, max_free_ok, convert_p_checked, s_n, sn, p_n);

    // ---------------------------------------------------------------- combine, epilogue
    // The tile's coordinates again (cheaper than holding them in registers through the loop).
    const Tile te = work_of<kBlockM, BN, kSplit>(p, sp, code);
    sm.reduce_sums();
    if (kSplit && te.split.pieces > 1) {
      volatile int* last_flag = reinterpret_cast<volatile int*>(smem + L::kOffBar + offsetof(Bar, last_piece)) + cw;
      if (!combine_pieces<D, C>(o, sm, sp, te, cw, tid, last_flag, sl2)) {
        if constexpr (!L::kSeparateO) rings.q.release(RingState<1>{qn}, lane);
        continue;
      }
    }
    epilogue<L>(tm_o, p, rings, te, o, sm, cw, tid, lane, rl_a, qn);
  }
  turns.finish();
  if (L::kTmaStoreO && tid == 0) sm90::bulk_wait<0>();  // this warpgroup's last O stores are complete
#endif                                                  // GENBENCH_SM90A_ENABLED
}

// Raises the kernel's dynamic shared-memory limit (once per process and device; outside any
// stream capture, so it is called when the Launcher is built).
template <int D, int BN, int C, int S, class E>
void set_smem_limit() {
  GENBENCH_CHECK_CUDA(cudaFuncSetAttribute(fa3_fwd_kernel<D, BN, C, S, E>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           Traits<D, BN, C, S, E>::kBytes));
}

// The parameters every instantiation takes, from the problem's tensors (cu_q/cu_k: varlen or
// nullptr; scale: stored score -> true score).
template <int BM>
KernelParams kernel_params(const Tensors& pr, const int* cu_q, const int* cu_k, float scale, float descale_v) {
  KernelParams kp{};
  kp.o = pr.o;
  kp.lse = pr.lse;
  kp.cu_q = cu_q;
  kp.cu_k = cu_k;
  kp.lse_head_stride = static_cast<long long>(pr.batch) * pr.seqlen_q;
  kp.heads = pr.heads;
  kp.batch = pr.batch;
  kp.group = pr.heads / pr.heads_kv;
  kp.seqlen_q = pr.seqlen_q;
  kp.seqlen_k = pr.seqlen_k;
  kp.o_dim = pr.head_dim_v > 0 ? pr.head_dim_v : pr.head_dim;
  kp.num_m_blocks = (pr.seqlen_q + BM - 1) / BM;
  const long long tiles = static_cast<long long>(kp.num_m_blocks) * pr.heads * pr.batch;
  if (tiles > 0x7fffffffLL) throw Error("fa3: more than 2^31 tiles");
  kp.num_tiles = static_cast<int>(tiles);
  kp.scale = scale;
  kp.scale_log2 = scale * 1.4426950408889634f;
  kp.causal = pr.causal ? 1 : 0;
  kp.pingpong = pr.pingpong ? 1 : 0;
  kp.descale_v = descale_v;
  return kp;
}

// The split tail's plan for a launch (fa3_split.h) and the size of its workspace, which the
// Launcher's owner allocates (SplitTail).
template <int D, int BN, int C, class E>
SplitTail make_split_tail(const Tensors& pr, bool varlen, int num_tiles, int ctas, float piece_cost_blocks) {
  SplitTail st;
  if (!kSplitTail<D, E> || varlen || pr.causal || pr.seqlen_k <= 0) return st;
  st.plan = plan_split(num_tiles, (pr.seqlen_k + BN - 1) / BN, ctas, pr.split_tail, piece_cost_blocks);
  if (st.plan.slots == 0) return st;
  st.count_bytes = split_count_bytes(st.plan, C);
  st.ws_bytes = split_ws_bytes(st.plan, D, C);
  return st;
}

// The kernel's view of a split (none: whole tiles only) for a launch of `tiles` tiles.
inline SplitParams split_params(const SplitTail& st, int tiles) {
  SplitParams sp{};
  sp.slots.tile0 = sp.num_claims = tiles;
  if (st.plan.slots == 0) return sp;
  sp.slots = st.plan;
  sp.num_claims = st.plan.tile0 + st.plan.slots;
  if (!st.ws) throw Error("fa3: the split tail's workspace is not set (Launcher::set_split_workspace)");
  sp.count = static_cast<int*>(st.ws);
  sp.ws = reinterpret_cast<float4*>(static_cast<unsigned char*>(st.ws) + st.count_bytes);
  return sp;
}

// Launches one CTA per SM (`ctas` > 0, persistent, claiming tiles from pr.sched; with the split
// tail where `split` has one) or one per tile (`ctas` = 0).
template <int D, int BN, int C, int S, class E>
void launch_kernel(KernelParams kp, const Tensors& pr, const CUtensorMap& tq, const CUtensorMap& tk,
                   const CUtensorMap& tv, const CUtensorMap& to, int ctas, const SplitTail& split,
                   cudaStream_t stream) {
  using L = Traits<D, BN, C, S, E>;
  const SplitParams sp = split_params(ctas > 0 ? split : SplitTail{}, kp.num_tiles);
  const int grid = ctas > 0 ? std::min(sp.num_claims, ctas) : kp.num_tiles;
  kp.sched = ctas > 0 ? pr.sched : nullptr;
  fa3_fwd_kernel<D, BN, C, S, E><<<grid, L::kThreads, L::kBytes, stream>>>(tq, tk, tv, to, kp, sp);
  GENBENCH_CHECK_LAUNCH();
}

// CTAs of a persistent launch (the SM count), or 0 (one CTA per tile) when pr.persistent is 0.
inline int persistent_ctas(const Tensors& pr) {
  if (pr.persistent == 0) return 0;
  if (!pr.sched) throw Error("fa3: a persistent launch needs the scheduler counters (Tensors::sched)");
  int dev = 0, sms = 0;
  GENBENCH_CHECK_CUDA(cudaGetDevice(&dev));
  GENBENCH_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

}  // namespace genbench::fa3
