// The GEMM ceilings on the cuda backend (ceilings::gemm(dtype), registered in register.cpp),
// measured once per rank at the start of a run on the backend's stream: the gemm/cublaslt problem
// 8192^3 (A row-major m x k, B stored n x k: the layout every type has), the fastest of the
// heuristic's candidates (lt_matmul.h), then the best of kGemmReps event-timed calls; precisions
// the device or cuBLASLt lack are left out.
#include <algorithm>
#include <cmath>

#include "backend/ceilings.h"
#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/graph.h"
#include "core/strings.h"
#include "kernels/common/device_fill.h"
#include "kernels/gemm/cublaslt/lt_matmul.h"

namespace genbench {

namespace {

constexpr std::int64_t kGemmSize = 8192;
constexpr int kGemmReps = 10;
constexpr int kGemmCandidates = 4;

}  // namespace

std::vector<Ceiling> measure_gemm_ceilings(Backend& backend) {
  CudaBackend& be = cuda_backend_of(backend);
  const cudaStream_t st = be.stream();
  std::vector<Ceiling> out;

  // GEMM rate per precision: one set of buffers sized for the widest type.
  const std::int64_t n = kGemmSize;
  const std::size_t elems = static_cast<std::size_t>(n * n);
  DeviceBuffer a = backend.allocate(elems * 4), b = backend.allocate(elems * 4), d = backend.allocate(elems * 4);
  const std::size_t ws_bytes = lt_workspace_bytes();
  DeviceBuffer ws;
  if (ws_bytes) ws = backend.allocate(ws_bytes);
  DeviceBuffer scales = backend.allocate(256);
  const float one = 1.0f;
  GENBENCH_CHECK_CUDA(cudaMemcpyAsync(scales.get(), &one, sizeof(float), cudaMemcpyHostToDevice, st));
  const int cc = be.properties().major * 10 + be.properties().minor;
  for (DType t : {DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2, DType::int8}) {
    if (lt_is_fp8(t) && cc < 89) continue;
    GemmShape s{};
    s.m = s.n = s.k = n;
    s.batch = 1;
    s.trans_a = false;
    s.trans_b = true;
    s.dtype = t;
    const float* sp = lt_is_fp8(t) ? scales.as<float>() : nullptr;
    {
      LtProblem probe;
      probe.build(s, ws_bytes, sp, sp);
      if (probe.candidates(1, nullptr).empty()) continue;  // cuBLASLt has none for this type here
    }
    const float scale = t == DType::int8 ? 8.0f : 1.0f;
    fill_normal_device(a.get(), n * n, 11, t, scale, st);
    fill_normal_device(b.get(), n * n, 12, t, scale, st);
    LtGemm gemm(s, ws_bytes ? ws.get() : nullptr, ws_bytes, sp, sp);
    try {
      gemm.tune(a.get(), b.get(), d.get(), st, kGemmCandidates);
    } catch (const Error&) {
      cudaGetLastError();
      continue;  // no candidate runs: no ceiling for this type
    }
    const auto times = time_each_on_stream(st, kGemmReps, [&] { gemm.run(a.get(), b.get(), d.get(), st); });
    const double best = *std::min_element(times.begin(), times.end());
    out.push_back(
        Ceiling::of(ceilings::gemm(t), s.flops() / best / 1e12,
                    strprintf("cuBLASLt %lld^3 TN, best of %d after choosing among %d candidates (%s)",
                              static_cast<long long>(n), kGemmReps, kGemmCandidates, gemm.variant().c_str())));
  }
  GENBENCH_CHECK_CUDA(cudaStreamSynchronize(st));
  return out;
}

}  // namespace genbench
