// The device-side input fill of collective/nccl writes exactly collective_input()'s values.
#include <gtest/gtest.h>

#include "support/test_env.h"

#ifdef GENBENCH_HAVE_CUDA
#include <vector>

#include "backend/cuda/convert.h"
#include "backend/cuda/cuda_backend.h"
#include "kernels/collective/nccl/device_fill.h"
#include "ops/collective/collective_data.h"
#include "support/points.h"

namespace genbench {
namespace {

TEST(NcclDeviceFill, EqualsCollectiveInputInEveryType) {
  if (!test::have_gpu()) GTEST_SKIP() << "no GPU";
  auto backend = make_cuda_backend(BackendOptions{});
  auto& cb = cuda_backend_of(*backend);
  const std::int64_t n = 100003;
  auto buf = backend->allocate(static_cast<std::size_t>(n) * 4);
  std::vector<unsigned char> host(static_cast<std::size_t>(n) * 4);
  for (const char* dtype : {"fp32", "fp16", "bf16", "int32", "fp8_e4m3", "fp8_e5m2"})
    for (const char* redop : {"sum", "prod"}) {
      Point p = test::point_with(collective_op(), "");
      p.values[collective_axis::dtype] = std::string(dtype);
      p.values[collective_axis::redop] = std::string(redop);
      p.values[collective_axis::bytes] = std::int64_t{1} << 20;
      const auto s = CollectiveShape::from(p, 2);
      fill_collective_device(buf.get(), s, 4242, 1, n, cb.stream());
      GENBENCH_CHECK_CUDA(cudaStreamSynchronize(cb.stream()));
      GENBENCH_CHECK_CUDA(cudaMemcpy(host.data(), buf.get(), host.size(), cudaMemcpyDeviceToHost));
      std::int64_t wrong = 0;
      for (std::int64_t i = 0; i < n; ++i)
        if (convert::element(s.dtype, host.data(), static_cast<std::size_t>(i)) != collective_input(s, 4242, 1, i))
          ++wrong;
      EXPECT_EQ(wrong, 0) << dtype << " " << redop;
    }
}

}  // namespace
}  // namespace genbench
#endif
