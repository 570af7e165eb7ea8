#pragma once
// fa2's tile configurations (head dim, query rows, key rows, warps): the one list of them. Their
// names ("d64 128x128 w4") are the values of the fa2_tile tuning axis (register.cpp) and name the
// configurations the dispatch table chooses from (fa2_attention.cu's configs(), whose kernels
// fa2_d*.cu instantiate). Host code; no CUDA needed.
#include <cstddef>
#include <string>
#include <vector>

namespace genbench::fa2 {

struct TileShape {
  int d, bm, bn, warps;
};

inline constexpr TileShape kTileShapes[] = {
    {64, 128, 128, 4}, {128, 128, 64, 4}, {128, 64, 64, 4}, {256, 128, 64, 8},  // 192 KB: sm90 and later
    {256, 64, 32, 4},                                                           // 96 KB: fits sm80, two blocks per SM
};
inline constexpr std::size_t kNumTileShapes = sizeof(kTileShapes) / sizeof(kTileShapes[0]);

// "d<D> <BM>x<BN> w<W>"
inline std::string tile_name(const TileShape& t) {
  return "d" + std::to_string(t.d) + " " + std::to_string(t.bm) + "x" + std::to_string(t.bn) + " w" +
         std::to_string(t.warps);
}

// The names of every configuration, in kTileShapes' order.
inline std::vector<std::string> tile_names() {
  std::vector<std::string> names;
  for (const TileShape& t : kTileShapes) names.push_back(tile_name(t));
  return names;
}

}  // namespace genbench::fa2
