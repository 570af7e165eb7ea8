// The unit-test binary initialises MPI once (as a single rank) so code that needs a Comm
// can run; GPU tests skip themselves when no device is visible.
#include <gtest/gtest.h>

#include "support/test_env.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  genbench::test::init_comm(&argc, &argv);
  const int rc = RUN_ALL_TESTS();
  genbench::test::finalize_comm();
  return rc;
}
