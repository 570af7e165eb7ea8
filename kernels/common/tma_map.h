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

}  // namespace genbench
