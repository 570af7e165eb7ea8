#pragma once
// Encoding of TMA tensor maps (cuTensorMapEncodeTiled, reached through the runtime's driver
// entry point so the binary does not link libcuda directly). Host code; CUDA builds only.
#include <cuda.h>

#include <cstdint>
#include <initializer_list>

namespace genbench {

// A tiled map over a tensor of `dims` (innermost first) with byte strides for every dimension
// but the innermost, a box of `box` elements per dimension, `swizzle_bytes`-byte swizzle (128,
// 64 or 32; the box's inner extent in bytes must not exceed it), out-of-bounds elements read as
// zero. Throws genbench::Error naming `who` when the driver refuses it.
CUtensorMap make_tma_map(const char* who, CUtensorMapDataType type, const void* base,
                         std::initializer_list<std::uint64_t> dims, std::initializer_list<std::uint64_t> byte_strides,
                         std::initializer_list<std::uint32_t> box, int swizzle_bytes = 128);

// A [batch, seq, heads, d] tensor of `elem_bytes`-byte elements as a 4-D map (d innermost),
// box of one 128-byte swizzle row (128 / elem_bytes elements) x 1 x rows x 1, 128-byte swizzle,
// zero fill past the ends: the layout of the attention kernels' Q, K, V and O tiles (fa3's
// forward and backward). Varlen tensors are mapped as one packed sequence (batch 1, seq = all
// rows; seq is 64-bit for that product).
inline CUtensorMap make_bshd_map(const char* who, CUtensorMapDataType type, int elem_bytes, const void* base, int batch,
                                 long long seq, int heads, int d, int box_rows) {
  const auto eb = static_cast<std::uint64_t>(elem_bytes), row = static_cast<std::uint64_t>(heads) * d * eb;
  return make_tma_map(who, type, base,
                      {static_cast<std::uint64_t>(d), static_cast<std::uint64_t>(heads),
                       static_cast<std::uint64_t>(seq), static_cast<std::uint64_t>(batch)},
                      {static_cast<std::uint64_t>(d) * eb, row, static_cast<std::uint64_t>(seq) * row},
                      {static_cast<std::uint32_t>(128 / elem_bytes), 1, static_cast<std::uint32_t>(box_rows), 1});
}

// The same for a 16-bit tensor (bf16 or fp16).
inline CUtensorMap make_map16(const char* who, const void* base, bool bf16, int batch, long long seq, int heads, int d,
                              int box_rows) {
  return make_bshd_map(who, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, base, batch,
                       seq, heads, d, box_rows);
}

}  // namespace genbench
