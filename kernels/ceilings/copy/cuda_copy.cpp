// The copy ceiling on the cuda backend (ceilings::copy(), registered in register.cpp), measured
// once per rank at the start of a run on the backend's stream: cudaMemcpyAsync device to device
// of kCopyBytes (halved until both buffers fit), 2 x bytes (read + write) over the best of
// kCopyReps event-timed copies.
#include <algorithm>

#include "backend/ceilings.h"
#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/graph.h"
#include "core/strings.h"

namespace genbench {

namespace {

constexpr std::size_t kCopyBytes = std::size_t{2} << 30;
constexpr int kCopyReps = 5;

}  // namespace

std::vector<Ceiling> measure_copy_ceiling(Backend& backend) {
  CudaBackend& be = cuda_backend_of(backend);
  const cudaStream_t st = be.stream();
  std::size_t bytes = kCopyBytes;
  DeviceBuffer src, dst;
  for (; bytes >= (std::size_t{64} << 20); bytes /= 2) {
    try {
      src = backend.allocate(bytes);
      dst = backend.allocate(bytes);
      break;
    } catch (const OutOfMemory&) {
      src = DeviceBuffer();
      dst = DeviceBuffer();
    }
  }
  if (!dst.get()) return {};
  GENBENCH_CHECK_CUDA(cudaMemsetAsync(src.get(), 1, bytes, st));
  const auto t = time_each_on_stream(st, kCopyReps, [&] {
    GENBENCH_CHECK_CUDA(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, st));
  });
  GENBENCH_CHECK_CUDA(cudaStreamSynchronize(st));
  const double best = *std::min_element(t.begin(), t.end());
  return {Ceiling::of(ceilings::copy(), 2.0 * static_cast<double>(bytes) / best / 1e9,
                      strprintf("cudaMemcpyAsync D2D %s, read+write bytes, best of %d",
                                format_bytes(static_cast<double>(bytes)).c_str(), kCopyReps))};
}

}  // namespace genbench
