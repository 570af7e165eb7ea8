// Runs under mpirun with 1, 2 and 4 ranks.
#include <gtest/gtest.h>

#include "support/test_env.h"

namespace genbench {
namespace {

TEST(Comm, RanksAndReductions) {
  const Comm& c = test::comm();
  EXPECT_GE(c.size(), 1);
  EXPECT_LT(c.rank(), c.size());
  EXPECT_LE(c.local_rank(), c.rank());
  EXPECT_DOUBLE_EQ(c.max(static_cast<double>(c.rank())), c.size() - 1);
  EXPECT_EQ(c.min(std::int64_t{c.rank() + 10}), 10);
  EXPECT_DOUBLE_EQ(c.sum(1.0), c.size());
  std::vector<double> v{static_cast<double>(c.rank()), -static_cast<double>(c.rank())};
  c.max_inplace(v);
  EXPECT_DOUBLE_EQ(v[0], c.size() - 1);
  EXPECT_DOUBLE_EQ(v[1], 0);
}

TEST(Comm, GatherAndBroadcast) {
  const Comm& c = test::comm();
  const auto all = c.gather(std::vector<double>{1.0 * c.rank(), 2.0 * c.rank()});
  const auto names = c.gather("rank" + std::to_string(c.rank()));
  if (c.is_root()) {
    ASSERT_EQ(all.size(), 2u * static_cast<std::size_t>(c.size()));
    ASSERT_EQ(names.size(), static_cast<std::size_t>(c.size()));
    for (int r = 0; r < c.size(); ++r) {
      EXPECT_DOUBLE_EQ(all[2 * static_cast<std::size_t>(r) + 1], 2.0 * r);
      EXPECT_EQ(names[static_cast<std::size_t>(r)], "rank" + std::to_string(r));
    }
  }
  std::string s = c.is_root() ? "from root" : "";
  c.broadcast(s);
  EXPECT_EQ(s, "from root");
}

}  // namespace
}  // namespace genbench
