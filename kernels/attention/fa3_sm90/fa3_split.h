#pragma once
// fa3's split tail: the arithmetic shared by the host plan, the kernel (fa3_kernel.cuh) and the
// host tests. Plain C++ that the CUDA compiler also builds for the device.
//
// A persistent launch of T tiles on W CTAs runs floor(T / W) full rounds and a last one with
// r = T mod W tiles, where W - r SMs idle (2048 tiles on 132 SMs: 68 busy, ~3% of the launch,
// fa3 v10). The split tail spreads the last r tiles' key blocks ("units",
// unit = tile x nb + block, nb blocks a tile) evenly over `slots` claims, W at most: slot s holds
// units [s U / slots, (s + 1) U / slots) of U = r nb, never more than one tile's worth, so the
// end of one tile and the start of the next at most (two "pieces"). Each piece leaves its
// unnormalised O and the rows' (base, sum) in a workspace entry (2 s + its piece of the slot);
// the last piece of a tile to finish combines the others' with its own and stores the tile.
// Each piece pays a tile's fixed cost (its first block alone, its last PV alone, the epilogue)
// and the partial results' trip through L2, so by default the tail is split only where r nb / W
// plus that cost is below a tile's nb blocks; non-causal fixed-length launches only (causal
// tiles run longest first, so their last round is short already; varlen tiles differ in
// length).
#include <algorithm>
#include <cstddef>

#if defined(__CUDACC__)
#define GENBENCH_FA3_HD __host__ __device__ __forceinline__
#else
#define GENBENCH_FA3_HD inline
#endif

namespace genbench::fa3 {

// What the kernel needs of a split (in SplitParams, fa3_kernel.cuh). slots = 0: no split, and tile0 is the
// tile count. 32-bit arithmetic: plan_split keeps units x slots below 2^31.
struct SplitSlots {
  int tile0 = 0;  // first split tile (tiles before it run whole)
  int slots = 0;  // claims [tile0, tile0 + slots) are the split slots
  int nb = 0;     // key blocks a tile
  int units = 0;  // (tiles - tile0) x nb
};

// The first unit of slot s (s = slots: the end).
GENBENCH_FA3_HD int slot_begin(const SplitSlots& sp, int s) {
  return static_cast<int>(static_cast<unsigned>(s * sp.units) / static_cast<unsigned>(sp.slots));
}
// The slot holding unit u.
GENBENCH_FA3_HD int slot_of_unit(const SplitSlots& sp, int u) {
  return static_cast<int>(static_cast<unsigned>((u + 1) * sp.slots - 1) / static_cast<unsigned>(sp.units));
}
// Pieces of slot s: 1 or 2.
GENBENCH_FA3_HD int slot_pieces(const SplitSlots& sp, int s) {
  const unsigned nb = static_cast<unsigned>(sp.nb);
  return static_cast<int>(static_cast<unsigned>(slot_begin(sp, s + 1) - 1) / nb -
                          static_cast<unsigned>(slot_begin(sp, s)) / nb) +
         1;
}

// Piece k of slot s: key blocks [kb_lo, kb_lo + n_blocks) of split tile `tail` (tile tile0 +
// tail), which is cut into `pieces` pieces held by slots first_slot, first_slot + 1, ...
struct Piece {
  int tail, kb_lo, n_blocks, first_slot, pieces, entry;
};
GENBENCH_FA3_HD Piece piece_of(const SplitSlots& sp, int s, int k) {
  const int nb = sp.nb, u0 = slot_begin(sp, s), u1 = slot_begin(sp, s + 1);
  Piece pc;
  pc.tail = static_cast<int>(static_cast<unsigned>(u0) / static_cast<unsigned>(nb)) + k;
  const int lo = u0 > pc.tail * nb ? u0 : pc.tail * nb, hi = u1 < (pc.tail + 1) * nb ? u1 : (pc.tail + 1) * nb;
  pc.kb_lo = lo - pc.tail * nb;
  pc.n_blocks = hi - lo;
  pc.first_slot = slot_of_unit(sp, pc.tail * nb);
  pc.pieces = slot_of_unit(sp, (pc.tail + 1) * nb - 1) - pc.first_slot + 1;
  pc.entry = 2 * s + k;
  return pc;
}
// The workspace entry of split tile i's piece in slot s (its second piece where the slot starts
// inside the tile before).
GENBENCH_FA3_HD int piece_entry(const SplitSlots& sp, int i, int s) {
  return 2 * s + (slot_begin(sp, s) < i * sp.nb ? 1 : 0);
}

// The plan for `tiles` tiles of nb key blocks on `ctas` CTAs. mode: 1 split whenever the last
// round is partial, 0 never, -1 where it should pay: r nb / ctas + piece_cost < nb, piece_cost
// what a piece costs beyond its key blocks, in blocks. Each slot gets at least two blocks where
// there are enough.
inline SplitSlots plan_split(int tiles, int nb, int ctas, int mode, float piece_cost) {
  SplitSlots sp;
  sp.tile0 = tiles;
  if (mode == 0 || ctas <= 0 || tiles <= 0 || nb < 2) return sp;
  const long long r = tiles % ctas;
  if (r == 0 || r * nb * ctas >= (1LL << 31)) return sp;
  if (mode < 0 && static_cast<double>(r) * nb / ctas + piece_cost >= static_cast<double>(nb)) return sp;
  sp.tile0 = tiles - static_cast<int>(r);
  sp.nb = nb;
  sp.units = static_cast<int>(r * nb);
  sp.slots = static_cast<int>(std::min<long long>(ctas, std::max<long long>(r, sp.units / 2)));
  return sp;
}

// Bytes of a split's device memory: the piece counters (one int per split tile and consumer
// warpgroup, zero between launches), then 2 partial-result entries a slot, each C consumer
// warpgroups x 128 threads x (D / 2 O values + base and sum of two rows).
inline std::size_t split_count_bytes(const SplitSlots& sp, int consumers) {
  const std::size_t tails = sp.slots > 0 ? static_cast<std::size_t>(sp.units / sp.nb) : 0;
  return (tails * consumers * sizeof(int) + 255) / 256 * 256;
}
inline std::size_t split_entry_floats(int head_dim, int consumers) {
  return static_cast<std::size_t>(consumers) * 128 * (head_dim / 2 + 4);
}
inline std::size_t split_ws_bytes(const SplitSlots& sp, int head_dim, int consumers) {
  if (sp.slots == 0) return 0;
  return split_count_bytes(sp, consumers) +
         2 * static_cast<std::size_t>(sp.slots) * split_entry_floats(head_dim, consumers) * sizeof(float);
}

}  // namespace genbench::fa3
