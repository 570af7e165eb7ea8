// The decoding of device element types on the host (backend/cuda/convert.h: fp16, bf16, fp8
// bit patterns and raw buffer elements), which collective/nccl's sampled checks read device
// buffers with. Header-only host code: no GPU needed.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cuda/convert.h"

namespace genbench {
namespace {

TEST(DeviceTypeDecoding, KnownBitPatterns) {
  using namespace convert;
  EXPECT_EQ(from_fp16(0x3c00), 1.0);
  EXPECT_EQ(from_fp16(0xc000), -2.0);
  EXPECT_EQ(from_fp16(0x7bff), 65504.0);
  EXPECT_EQ(from_fp16(0x0001), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isnan(from_fp16(0xffff)));
  EXPECT_EQ(from_bf16(0x3f80), 1.0);
  EXPECT_EQ(from_bf16(0x4100), 8.0);
  EXPECT_TRUE(std::isnan(from_bf16(0xffff)));
  EXPECT_EQ(from_e4m3(0x38), 1.0);
  EXPECT_EQ(from_e4m3(0x7e), 448.0);
  EXPECT_EQ(from_e4m3(0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(from_e4m3(0xc0), -2.0);
  EXPECT_TRUE(std::isnan(from_e4m3(0x7f)));
  EXPECT_EQ(from_e5m2(0x3c), 1.0);
  EXPECT_EQ(from_e5m2(0x7b), 57344.0);
  const unsigned char bytes[4] = {0x00, 0x00, 0x80, 0x3f};  // 1.0f little-endian
  EXPECT_EQ(element(DType::fp32, bytes, 0), 1.0);
  const signed char i8[2] = {-128, 127};
  EXPECT_EQ(element(DType::int8, i8, 0), -128.0);
  EXPECT_EQ(element(DType::int8, i8, 1), 127.0);
}

}  // namespace
}  // namespace genbench
