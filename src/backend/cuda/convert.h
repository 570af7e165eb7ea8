#pragma once
// Host-side decoding of the element types device buffers hold, for checking results copied
// back from the GPU. Plain bit manipulation, no CUDA headers needed.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ops/dtype.h"

namespace genbench::convert {

inline double from_fp16(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 31) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (e == 0) v = std::ldexp(static_cast<double>(m), -24);
  else v = std::ldexp(1.0 + m / 1024.0, e - 15);
  return s ? -v : v;
}

inline double from_bf16(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline double from_e4m3(std::uint8_t b) {
  const int s = b >> 7, e = (b >> 3) & 0xf, m = b & 7;
  double v;
  if (e == 15 && m == 7) v = std::numeric_limits<double>::quiet_NaN();
  else if (e == 0) v = std::ldexp(static_cast<double>(m), -9);
  else v = std::ldexp(1.0 + m / 8.0, e - 7);
  return s ? -v : v;
}

// e5m2 is the upper byte of an fp16.
inline double from_e5m2(std::uint8_t b) { return from_fp16(static_cast<std::uint16_t>(b << 8)); }

// Element i of a buffer of type t, as double (fp32 and tf32 both stored as float).
inline double element(DType t, const void* base, std::size_t i) {
  const auto* p = static_cast<const unsigned char*>(base);
  switch (t) {
    case DType::fp32:
    case DType::tf32: {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      return f;
    }
    case DType::int32: {
      std::int32_t x;
      std::memcpy(&x, p + 4 * i, 4);
      return x;
    }
    case DType::fp16:
    case DType::bf16: {
      std::uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      return t == DType::fp16 ? from_fp16(h) : from_bf16(h);
    }
    case DType::fp8_e4m3: return from_e4m3(p[i]);
    case DType::fp8_e5m2: return from_e5m2(p[i]);
    case DType::int8: return static_cast<std::int8_t>(p[i]);
    case DType::int4:
    case DType::fp4_e2m1: break;  // no device buffers of these types exist
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace genbench::convert
