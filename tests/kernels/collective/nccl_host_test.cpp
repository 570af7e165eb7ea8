// Host-side pieces of collective/nccl that need no GPU: the per-element expectation used for
// sampled checks of large buffers, and the decoding of device element types.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "backend/cuda/convert.h"
#include "ops/collective.h"
#include "ops/collective_data.h"
#include "support/points.h"

namespace genbench {
namespace {

Point coll_point(const char* kind, std::int64_t bytes, const char* dtype, const char* redop, int root) {
  Point p = test::point_with(collective_op(), "");
  namespace c = collective_axis;
  p.values[c::collective] = std::string(kind);
  p.values[c::bytes] = bytes;
  p.values[c::dtype] = std::string(dtype);
  p.values[c::redop] = std::string(redop);
  p.values[c::root] = std::int64_t{root};
  return p;
}

TEST(NcclExpectedAt, MatchesCollectiveExpectedEveryElement) {
  int cases = 0;
  for (const char* kind : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv"})
    for (const char* dtype : {"fp32", "bf16", "fp8_e4m3"})
      for (const char* redop : {"sum", "prod", "max", "min", "avg"})
        for (int world : {1, 2, 3, 4}) {
          const auto s = CollectiveShape::from(coll_point(kind, 1000, dtype, redop, world - 1), world);
          for (int rank = 0; rank < world; ++rank) {
            const auto all = collective_expected(s, 77, rank);
            ASSERT_EQ(static_cast<std::int64_t>(all.size()), s.recv_count);
            for (std::int64_t i = 0; i < s.recv_count; ++i)
              ASSERT_EQ(collective_expected_at(s, 77, rank, i), all[static_cast<std::size_t>(i)])
                  << kind << " " << dtype << " " << redop << " world " << world << " rank " << rank << " i " << i;
            ++cases;
          }
        }
  EXPECT_EQ(cases, 7 * 3 * 5 * 10);
}

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
