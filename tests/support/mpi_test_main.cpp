// Multi-rank tests: every rank runs every test; only rank 0 prints GoogleTest's output, and
// a failure on any rank fails the test on rank 0 (tests compare across ranks themselves).
#include <gtest/gtest.h>

#include "support/test_env.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  genbench::test::init_comm(&argc, &argv);
  if (genbench::test::comm().rank() != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  // Every rank must agree: the job fails if any rank failed.
  const std::int64_t worst = genbench::test::comm().max(std::int64_t{rc});
  genbench::test::finalize_comm();
  return static_cast<int>(worst);
}
