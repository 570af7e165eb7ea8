#pragma once
// fa2 backward's tile configuration per head dim: the one list of them, read by the kernels
// (fa2_bwd_kernel.cuh), the dispatch (fa2_backward.cu) and the shared-memory check. Host and
// device code; no CUDA needed.
#include <cstddef>

namespace genbench::attention_backward::fa2 {

// Query rows are processed in blocks of kQueryBlock everywhere (main kernel's Br, dQ kernel's
// Bm), which is also the padding of the workspace's per-row D and LSE.
inline constexpr int kQueryBlock = 64;

struct BwdTile {
  int d;
  // main kernel: bc keys per block, br query rows per step, warps; wd = warps that share a
  // 16-key row group, splitting head_dim for dK/dV (2 at d256, where P and dS pass through
  // shared memory; 1 keeps P^T and dS^T in registers).
  int bc, br, warps, wd;
  // deterministic dQ kernel: bm query rows, bn keys per step, warps.
  int dq_bm, dq_bn, dq_warps;
};

inline constexpr BwdTile kBwdTiles[] = {
    {64, 128, kQueryBlock, 8, 1, kQueryBlock, 64, 4},
    {128, 128, kQueryBlock, 8, 1, kQueryBlock, 64, 4},
    {256, 64, kQueryBlock, 8, 2, kQueryBlock, 32, 4},
};

constexpr const BwdTile* bwd_tile(int d) {
  for (const BwdTile& t : kBwdTiles)
    if (t.d == d) return &t;
  return nullptr;
}

// Dynamic shared memory of the main kernel: K, V; Q, dO double buffered; LSE and D per stage;
// dS^T (and P^T when wd > 1).
constexpr std::size_t main_smem_bytes(const BwdTile& t) {
  return static_cast<std::size_t>(2 * t.bc * t.d * 2 + 2 * 2 * t.br * t.d * 2 + 2 * 2 * t.br * 4 +
                                  (t.wd > 1 ? 2 : 1) * t.bc * t.br * 2);
}
// Of the dQ kernel: Q, dO; K, V double buffered.
constexpr std::size_t dq_smem_bytes(const BwdTile& t) {
  return static_cast<std::size_t>(2 * t.dq_bm * t.d * 2 + 2 * 2 * t.dq_bn * t.d * 2);
}

}  // namespace genbench::attention_backward::fa2
