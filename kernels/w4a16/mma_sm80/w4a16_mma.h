#pragma once
// W4A16 GEMM on tensor cores (mma.sync m16n8k16, sm_80 and newer, sm_90a included): the host
// contract of the kernel in w4a16_mma.cu. Layout of the operands: kernels/w4a16/common/
// w4a16_layout.h (tiled codes, permuted scales, packed zeros).
//
//   MmaGemm::can_implement(args)   "" or why not (shape, group, alignment)
//   MmaGemm plan(args, device)     tile height, kernel and split-k chosen for this device
//   plan.workspace_size()          fp32 split-k accumulators + per-tile counters (0 if no split)
//   plan.initialize(ws, stream)    zeroes the workspace once; the kernel leaves it zeroed
//   plan.run(stream)               one launch
//
// Three kernels, all ending alike (a CTA's tile meets in shared memory; with split-k > 1 each CTA
// adds its tile to an fp32 workspace and the last CTA of a tile, found by a counter, writes D and
// zeroes the workspace, so one launch does the whole GEMM; the streaming kernel on sm_90 and
// newer runs a tile's two splits as one cluster instead, its CTAs adding each other's tiles from
// shared memory, with no workspace):
//   16-row tiles (m <= 16)  the streaming kernel: each warp fills its own shared-memory ring
//     with cp.async (its lanes' weight bytes, A rows, scale rows, zero words), the weights are
//     the mma's A operand (D^T = W^T A^T), exact q - z into the tensor cores, fp32 scales once
//     per group row; with Arguments::wgmma, the wide kernel's wgmma form at 16 rows instead;
//   32- and 64-row tiles    the wide kernel: 256-column CTAs, CTA-wide cp.async stages of 128 k
//     (A in XOR-swizzled rows for ldmatrix as the B operand, weight tiles as the A operand,
//     (q - z) * s); with Arguments::wgmma on sm_90, its products on wgmma (register A, the tokens
//     read from shared memory through descriptors); with Arguments::staged, the staged kernel
//     (kept for comparison): 128-column CTAs, 4 warps along k, weights as the B operand.
// docs/int4-gemm.md describes them.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace genbench::w4a16 {

struct Arguments {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t group = 128;              // k for one group per column
  bool bf16 = false;                     // activations, scales and D in bf16 (else fp16)
  bool zero_points = false;              // uint4 codes with zero points (else int4: z = 8)
  const void* a = nullptr;               // m x k row-major
  const void* w = nullptr;               // tiled codes, k * n / 2 bytes
  const void* scales = nullptr;          // [k/group][n], permuted
  const std::uint32_t* zeros = nullptr;  // [k/group][n/64][8] (zero_points only)
  void* d = nullptr;                     // m x n row-major
  int split_k = 0;                       // 0: chosen from the device's SM count
  int tile_m = 0;                        // rows per CTA: 16, 32, 64; 0: the smallest that holds m (64 beyond)
  bool staged = false;                   // 32- and 64-row tiles on the staged kernel (else the wide one)
  bool wgmma = false;                    // the wide kernel's products on wgmma (sm_90 devices, sm_90a builds);
                                         // 16-row tiles then run on it too, not on the streaming kernel
};

class MmaGemm {
 public:
  static std::string can_implement(const Arguments& args);
  // "" when the wide kernel's wgmma form runs on `device` (compute capability 9.0, and sm_90a
  // code for it in this build), else why not.
  static std::string wgmma_support(int device);
  MmaGemm(const Arguments& args, int device);
  std::size_t workspace_size() const;
  void initialize(void* workspace, cudaStream_t stream);
  void run(cudaStream_t stream) const;
  int splits() const { return splits_; }
  int tile_m() const { return tile_m_; }
  bool streaming() const;        // the streaming kernel runs (else the wide or the staged one)
  std::string describe() const;  // "mma_sm80 stream tile=16x128x64 splitk=8 ctas=256/132x2 ring=4"

 private:
  void plan_splits();   // ctas_per_sm_ and splits_ for tile_m_
  void plan_cluster();  // cluster_ for the plan
  void cluster_config(cudaLaunchConfig_t& cfg, cudaLaunchAttribute& attr, unsigned grid, int smem,
                      cudaStream_t stream) const;
  long long ctas() const;  // CTAs of one launch
  Arguments args_;
  int tile_m_ = 16, splits_ = 1, ctas_per_sm_ = 0, sms_ = 0, cc_major_ = 0;
  bool cluster_ = false;  // streaming kernel: a tile's two splits run as one cluster (no workspace)
  float* ws_ = nullptr;
  int* counters_ = nullptr;
};

// The dequantise-then-GEMM path: writes the dequantised weights transposed, W^T (n x k
// row-major, A's type), for a 16-bit GEMM with trans_b = t. Needs the tiled layout's shapes.
// k_fast: the CTAs launched together take neighbouring k of the same rows (false: neighbouring n;
// kept for same-call A/B, docs/lab/w4a16.md).
void dequantize_transposed(const Arguments& args, void* wt, cudaStream_t stream, bool k_fast = true);

}  // namespace genbench::w4a16
