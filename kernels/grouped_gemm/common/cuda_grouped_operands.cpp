#include "kernels/grouped_gemm/common/cuda_grouped_operands.h"

#include <algorithm>
#include <cmath>

#include "backend/cuda/check.h"
#include "backend/cuda/convert.h"
#include "core/strings.h"
#include "kernels/common/device_fill.h"

namespace genbench {

GroupedOperands::GroupedOperands(const GroupedShape& shape, Context& ctx, cudaStream_t stream)
    : s(shape), sizes(shape.sizes()) {
  for (const auto m : sizes) {
    offsets.push_back(rows);
    rows += m;
  }
  const auto pad = [](std::size_t b) { return (std::max<std::size_t>(b, 1) + 255) / 256 * 256; };
  x = ctx.backend.allocate(pad(static_cast<std::size_t>(rows * s.k) * 2));
  w = ctx.backend.allocate(pad(static_cast<std::size_t>(s.groups * s.n * s.k) * 2));
  d = ctx.backend.allocate(pad(static_cast<std::size_t>(rows * s.n) * 2));
  fill_normal_device(x.get(), rows * s.k, ctx.seed + 21, s.dtype, 1.0f, stream);
  fill_normal_device(w.get(), s.groups * s.n * s.k, ctx.seed + 22, s.dtype, 0.05f, stream);
}

void GroupedOperands::poison(cudaStream_t stream) const {
  GENBENCH_CHECK_CUDA(cudaMemsetAsync(d.get(), 0xff, static_cast<std::size_t>(rows * s.n) * 2, stream));
}

Validation GroupedOperands::check(cudaStream_t stream) const {
  GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream));
  Validation v;
  v.tolerance = s.dtype == DType::bf16 ? 1e-2 : 2e-3;
  std::vector<unsigned char> xr(static_cast<std::size_t>(s.k) * 2), wr(xr.size()), out(2);
  double worst = 0;
  std::int64_t checked = 0, groups_seen = 0;
  const std::int64_t every = std::max<std::int64_t>(1, s.groups / 64);
  for (std::int64_t g = 0; g < s.groups; g += every) {
    if (sizes[g] == 0) continue;
    ++groups_seen;
    for (const std::int64_t row : {offsets[g], offsets[g] + sizes[g] - 1}) {
      GENBENCH_CHECK_CUDA(
          cudaMemcpy(xr.data(), x.as<unsigned char>() + row * s.k * 2, xr.size(), cudaMemcpyDeviceToHost));
      for (const std::int64_t col : {std::int64_t{0}, (g * 7919 + 13) % s.n, s.n - 1}) {
        GENBENCH_CHECK_CUDA(cudaMemcpy(wr.data(), w_of(g) + col * s.k * 2, wr.size(), cudaMemcpyDeviceToHost));
        GENBENCH_CHECK_CUDA(
            cudaMemcpy(out.data(), d.as<unsigned char>() + (row * s.n + col) * 2, 2, cudaMemcpyDeviceToHost));
        double ref = 0, mag = 0;
        for (std::int64_t i = 0; i < s.k; ++i) {
          const double p = convert::element(s.dtype, xr.data(), static_cast<std::size_t>(i)) *
                           convert::element(s.dtype, wr.data(), static_cast<std::size_t>(i));
          ref += p;
          mag += std::fabs(p);
        }
        const double got = convert::element(s.dtype, out.data(), 0);
        worst = std::max(worst, std::isnan(got) ? INFINITY : std::fabs(got - ref) / std::max(mag, 1e-30));
        ++checked;
      }
    }
  }
  v.error = worst;
  v.ok = worst <= v.tolerance;
  v.detail = strprintf(
      "max error %.3g on %lld elements (first and last row of %lld groups, 3 columns each) against "
      "double sums of the copied-back rows (tolerance %.0g)",
      worst, static_cast<long long>(checked), static_cast<long long>(groups_seen), v.tolerance);
  return v;
}

}  // namespace genbench
