// Host-side pieces of collective/nccl that need no GPU: the per-element expectation used for
// sampled checks of large buffers (the decoding of device element types it reads them with:
// tests/backend/cuda/convert_test.cpp).
#include <gtest/gtest.h>

#include <cstdint>

#include "ops/collective/collective.h"
#include "ops/collective/collective_data.h"
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
  for (const char* kind :
       {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv"})
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

}  // namespace
}  // namespace genbench
