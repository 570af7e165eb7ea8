#pragma once
// A GoogleTest suite whose tests share one CUDA backend, created once per suite; every test
// skips where no CUDA device is visible. Derive a fixture from it and use backend_.
#include <gtest/gtest.h>

#include "backend/backend.h"
#include "support/test_env.h"

namespace genbench::test {

class GpuSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (have_gpu()) backend_ = make_cuda_backend(BackendOptions{}).release();
  }
  static void TearDownTestSuite() {
    delete backend_;
    backend_ = nullptr;
  }
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  }

  static inline Backend* backend_ = nullptr;
};

}  // namespace genbench::test
