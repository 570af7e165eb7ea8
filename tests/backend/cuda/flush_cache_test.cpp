// timing.cache: cold — the cuda backend's flush_cache() leaves a buffer that fits in L2 to be
// read from memory again, and its scratch buffer is not counted as a point's memory.
#include <gtest/gtest.h>

#include "support/test_env.h"

#ifdef GENBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "backend/cuda/cuda_backend.h"

namespace genbench {
namespace {

// Median seconds of a device-to-device copy of `bytes` from src to dst, each preceded (outside
// the timed events) by a flush when `cold`.
double median_copy(Backend& b, void* dst, const void* src, std::size_t bytes, bool cold) {
  auto& cb = cuda_backend_of(b);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> ms;
  for (int i = 0; i < 41; ++i) {
    if (cold) b.flush_cache();
    cudaEventRecord(e0, cb.stream());
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cb.stream());
    cudaEventRecord(e1, cb.stream());
    cudaEventSynchronize(e1);
    float t = 0;
    cudaEventElapsedTime(&t, e0, e1);
    if (i > 0) ms.push_back(t);  // the first copy warms the copy path
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1e-3;
}

TEST(CudaFlushCache, AnOperandThatFitsInL2IsReadFromMemoryAfterIt) {
  if (!test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  auto backend = make_cuda_backend(BackendOptions{});
  const auto& prop = cuda_backend_of(*backend).properties();
  // source and destination together take a quarter of L2: hot, both stay there
  const std::size_t bytes = static_cast<std::size_t>(prop.l2CacheSize) / 8;
  auto src = backend->allocate(bytes), dst = backend->allocate(bytes);
  cudaMemset(src.get(), 1, bytes);
  const std::int64_t counted = backend->current_bytes();
  const double hot = median_copy(*backend, dst.get(), src.get(), bytes, false);
  const double cold = median_copy(*backend, dst.get(), src.get(), bytes, true);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(backend->current_bytes(), counted) << "the flush's scratch buffer is the backend's own";
  std::printf("copy of %zu KiB: hot %.2f us, after flush_cache %.2f us (%.2fx)\n", bytes >> 10, hot * 1e6, cold * 1e6,
              cold / hot);
  EXPECT_GT(cold, 1.15 * hot) << "a copy after the flush should read its source from memory";
}

}  // namespace
}  // namespace genbench
#endif
