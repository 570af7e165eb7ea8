// Host tests of fa3's split tail arithmetic (kernels/attention/fa3_sm90/fa3_split.h): the slots'
// pieces cover every key block of every split tile exactly once, each tile's pieces know each
// other, and the default plan splits where the last round is short and tiles are long.
#include "kernels/attention/fa3_sm90/fa3_split.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace genbench::fa3 {
namespace {

// Every piece of every slot, checked against a direct count of which slot holds which unit.
void expect_exact_cover(const SplitSlots& sp) {
  ASSERT_GT(sp.slots, 0);
  const int tails = sp.units / sp.nb;
  std::vector<int> owner(static_cast<std::size_t>(sp.units), -1);  // the slot of each unit
  std::vector<int> seen(static_cast<std::size_t>(sp.units), 0);
  std::vector<std::set<int>> slots_of(static_cast<std::size_t>(tails)), entries_of(static_cast<std::size_t>(tails));
  for (int s = 0; s < sp.slots; ++s)
    for (int u = slot_begin(sp, s); u < slot_begin(sp, s + 1); ++u) owner[static_cast<std::size_t>(u)] = s;
  for (int s = 0; s < sp.slots; ++s) {
    ASSERT_LT(slot_begin(sp, s), slot_begin(sp, s + 1)) << "slot " << s << " is empty";
    const int pieces = slot_pieces(sp, s);
    ASSERT_GE(pieces, 1);
    ASSERT_LE(pieces, 2);
    for (int k = 0; k < pieces; ++k) {
      const Piece pc = piece_of(sp, s, k);
      ASSERT_GE(pc.tail, 0);
      ASSERT_LT(pc.tail, tails);
      ASSERT_GE(pc.n_blocks, 1);
      ASSERT_GE(pc.kb_lo, 0);
      ASSERT_LE(pc.kb_lo + pc.n_blocks, sp.nb);
      EXPECT_EQ(pc.entry, 2 * s + k);
      EXPECT_EQ(piece_entry(sp, pc.tail, s), pc.entry);
      for (int b = pc.kb_lo; b < pc.kb_lo + pc.n_blocks; ++b) {
        const int u = pc.tail * sp.nb + b;
        ++seen[static_cast<std::size_t>(u)];
        EXPECT_EQ(owner[static_cast<std::size_t>(u)], s) << "unit " << u;
      }
      slots_of[static_cast<std::size_t>(pc.tail)].insert(s);
      entries_of[static_cast<std::size_t>(pc.tail)].insert(pc.entry);
    }
  }
  for (int u = 0; u < sp.units; ++u) ASSERT_EQ(seen[static_cast<std::size_t>(u)], 1) << "unit " << u;
  // Each piece of a tile names the same first slot and count, and those are the slots that
  // really hold it (consecutive), with distinct entries.
  for (int s = 0; s < sp.slots; ++s)
    for (int k = 0; k < slot_pieces(sp, s); ++k) {
      const Piece pc = piece_of(sp, s, k);
      const auto& held = slots_of[static_cast<std::size_t>(pc.tail)];
      EXPECT_EQ(pc.first_slot, *held.begin());
      EXPECT_EQ(pc.pieces, static_cast<int>(held.size()));
      EXPECT_EQ(*held.rbegin() - *held.begin() + 1, pc.pieces);
      EXPECT_EQ(entries_of[static_cast<std::size_t>(pc.tail)].size(), held.size());
    }
}

TEST(Fa3SplitTail, PiecesCoverEveryKeyBlockOnce) {
  struct Case {
    int tiles, nb, ctas;
  };
  for (const Case c :
       {Case{2048, 16, 132}, Case{2048, 22, 132}, Case{48, 8, 132}, Case{160, 16, 132}, Case{1, 1000, 132},
        Case{7, 3, 5}, Case{131, 2, 132}, Case{133, 128, 132}, Case{3, 2, 132}, Case{1000, 97, 64}}) {
    SCOPED_TRACE(testing::Message() << c.tiles << " tiles of " << c.nb << " blocks on " << c.ctas);
    const SplitSlots sp = plan_split(c.tiles, c.nb, c.ctas, 1, 2.f);
    const int r = c.tiles % c.ctas;
    EXPECT_EQ(sp.tile0, c.tiles - r);
    EXPECT_EQ(sp.units, r * c.nb);
    EXPECT_LE(sp.slots, c.ctas);
    EXPECT_GE(sp.slots, r);  // no slot holds more than a tile's worth
    expect_exact_cover(sp);
  }
}

TEST(Fa3SplitTail, DefaultSplitsOnlyWhereTheLastRoundIsShortAndTilesLong) {
  // bf16 d=128 at 2K, 16K tokens: 2048 tiles of 16 blocks, 68 in the last round of 132 (piece
  // cost 5 blocks, the 16-bit kernel's).
  SplitSlots sp = plan_split(2048, 16, 132, -1, 5.f);
  EXPECT_EQ(sp.slots, 132);
  EXPECT_EQ(sp.tile0, 1980);
  // The same at 1K and 512 keys (8 and 4 blocks a tile): a piece would cost about a tile.
  EXPECT_EQ(plan_split(2048, 8, 132, -1, 5.f).slots, 0);
  EXPECT_EQ(plan_split(2048, 4, 132, -1, 5.f).slots, 0);
  // e4m3 d=128 (192-key blocks, piece cost 6): 4K splits, 2K (11 blocks) does not.
  EXPECT_EQ(plan_split(2048, 22, 132, -1, 6.f).slots, 132);
  EXPECT_EQ(plan_split(2048, 11, 132, -1, 6.f).slots, 0);
  // A last round of 120 of 132 tiles: little to gain.
  EXPECT_EQ(plan_split(120 + 132 * 3, 16, 132, -1, 2.f).slots, 0);
  // Whole rounds, one key block a tile, or splitting off: no split, whatever the mode.
  for (int mode : {-1, 1}) {
    EXPECT_EQ(plan_split(132 * 4, 64, 132, mode, 2.f).slots, 0);
    EXPECT_EQ(plan_split(100, 1, 132, mode, 2.f).slots, 0);
  }
  sp = plan_split(2048, 16, 132, 0, 2.f);
  EXPECT_EQ(sp.slots, 0);
  EXPECT_EQ(sp.tile0, 2048);                            // every tile whole
  EXPECT_EQ(plan_split(2048, 16, 0, 1, 2.f).slots, 0);  // not a persistent launch
  // Few long tiles (a small batch at long sequences): each cut over many slots.
  sp = plan_split(16, 512, 132, -1, 3.f);
  EXPECT_EQ(sp.slots, 132);
  EXPECT_EQ(sp.tile0, 0);
  // Beyond 32-bit slot arithmetic: refused.
  EXPECT_EQ(plan_split(100, 1 << 20, 132, 1, 2.f).slots, 0);
}

TEST(Fa3SplitTail, WorkspaceHoldsTwoEntriesASlotAfterTheCounters) {
  const SplitSlots sp = plan_split(2048, 16, 132, 1, 2.f);
  const std::size_t counts = split_count_bytes(sp, 2);
  EXPECT_GE(counts, static_cast<std::size_t>(68 * 2) * sizeof(int));
  EXPECT_EQ(counts % 256, 0u);  // the entries start 16-byte aligned (float4)
  EXPECT_EQ(split_entry_floats(128, 2), static_cast<std::size_t>(2 * 128 * 68));
  EXPECT_EQ(split_ws_bytes(sp, 128, 2), counts + 2 * 132 * split_entry_floats(128, 2) * sizeof(float));
  EXPECT_EQ(split_ws_bytes(plan_split(2048, 16, 132, 0, 2.f), 128, 2), 0u);
}

}  // namespace
}  // namespace genbench::fa3
