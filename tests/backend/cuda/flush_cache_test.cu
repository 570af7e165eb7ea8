// timing.cache: cold — the cuda backend's flush_cache() leaves a buffer that fits in L2 to be
// read from memory again, and its scratch buffer is not counted as a point's memory.
#include <gtest/gtest.h>

#include "support/test_env.h"

#ifdef GENBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "backend/cuda/cuda_backend.h"

namespace genbench {
namespace {

// Reads n float4 values (grid-stride) and writes one sum per block: a pure read of the buffer,
// whose time is its bytes over the bandwidth of wherever they come from (L2 or memory).
__global__ void read_all(const float4* __restrict__ in, std::size_t n, float* __restrict__ out) {
  float acc = 0.f;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 v = in[i];
    acc += v.x + v.y + v.z + v.w;
  }
  __shared__ float part[256];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

// Median seconds of read_all over `bytes` of src, each read preceded (outside the timed
// events) by a flush when `cold`.
double median_read(Backend& b, const void* src, std::size_t bytes, float* out, int blocks, bool cold) {
  auto& cb = cuda_backend_of(b);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> ms;
  for (int i = 0; i < 41; ++i) {
    if (cold) b.flush_cache();
    cudaEventRecord(e0, cb.stream());
    read_all<<<blocks, 256, 0, cb.stream()>>>(static_cast<const float4*>(src), bytes / sizeof(float4), out);
    cudaEventRecord(e1, cb.stream());
    cudaEventSynchronize(e1);
    float t = 0;
    cudaEventElapsedTime(&t, e0, e1);
    if (i > 0) ms.push_back(t);  // the first read loads the buffer into L2 (hot) and the kernel
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
  // half of L2: read back to back, it stays there (a copy is no probe: its writes and the copy
  // engine's path cost more than where its source comes from)
  const std::size_t bytes = static_cast<std::size_t>(prop.l2CacheSize) / 2 / 16 * 16;
  auto src = backend->allocate(bytes), sums = backend->allocate(4096 * sizeof(float));
  cudaMemset(src.get(), 0, bytes);
  const int blocks = 4 * prop.multiProcessorCount;
  float* out = static_cast<float*>(sums.get());
  const std::int64_t counted = backend->current_bytes();
  const double hot = median_read(*backend, src.get(), bytes, out, blocks, false);
  const double cold = median_read(*backend, src.get(), bytes, out, blocks, true);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(backend->current_bytes(), counted) << "the flush's scratch buffer is the backend's own";
  std::printf("read of %zu KiB: hot %.2f us (%.0f GB/s), after flush_cache %.2f us (%.0f GB/s), %.2fx\n", bytes >> 10,
              hot * 1e6, bytes / hot * 1e-9, cold * 1e6, bytes / cold * 1e-9, cold / hot);
  EXPECT_GT(cold, 1.15 * hot) << "a read after the flush should come from memory";
}

}  // namespace
}  // namespace genbench
#endif
