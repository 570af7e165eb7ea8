#include "kernels/w4a16/common/cuda_w4a16_operands.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cuda/check.h"
#include "core/strings.h"
#include "kernels/common/device_fill.h"
#include "kernels/w4a16/common/w4a16_layout.h"

namespace genbench {

namespace {

std::size_t pad(std::size_t b) { return (std::max<std::size_t>(b, 1) + 255) / 256 * 256; }

std::uint16_t bits16(float x, DType t) {
  if (t == DType::bf16) return static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(x)).x;
  return static_cast<__half_raw>(__float2half_rn(x)).x;
}

float value16(std::uint16_t b, DType t) {
  if (t == DType::bf16) {
    __nv_bfloat16_raw r;
    r.x = b;
    return __bfloat162float(__nv_bfloat16(r));
  }
  __half_raw r;
  r.x = b;
  return __half2float(__half(r));
}

}  // namespace

W4a16Operands::W4a16Operands(const W4a16Shape& shape, Context& ctx, cudaStream_t stream, std::size_t l2_bytes)
    : s(shape) {
  const auto m = static_cast<std::size_t>(s.m), n = static_cast<std::size_t>(s.n), k = static_cast<std::size_t>(s.k);
  const auto rows = static_cast<std::size_t>(s.groups());
  w_bytes = k * n / 2;
  s_bytes = rows * n * 2;
  z_bytes = s.zero_points ? rows * (n / 64) * 32 : 0;
  w_pitch = pad(w_bytes);
  s_pitch = pad(s_bytes);
  z_pitch = pad(z_bytes);
  if (s.cold) {
    const double set = static_cast<double>(w_pitch + s_pitch + z_pitch);
    copies = static_cast<std::size_t>(std::max(2.0, std::ceil(2.0 * static_cast<double>(l2_bytes) / set)));
  }
  a = ctx.backend.allocate(pad(m * k * 2));
  w = ctx.backend.allocate(w_pitch * copies);
  scales = ctx.backend.allocate(s_pitch * copies);
  if (s.zero_points) zeros = ctx.backend.allocate(z_pitch * copies);
  d = ctx.backend.allocate(pad(m * n * 2));
  fill_normal_device(a.get(), static_cast<std::int64_t>(m * k), ctx.seed + 11, s.dtype, 1.0f, stream);
  // Codes: the int8 draw of 64 x normal(0, 1) gives bytes whose nibbles cover 0..15; the layout
  // does not matter for random codes, and validation reads back what is there.
  fill_normal_device(w.get(), static_cast<std::int64_t>(w_bytes), ctx.seed + 12, DType::int8, 64.0f, stream);
  std::vector<std::uint16_t> sc(rows * n);
  for (std::size_t i = 0; i < sc.size(); ++i) sc[i] = bits16(w4a16::random_scale(ctx.seed + 13, i), s.dtype);
  const auto ps = w4a16::permute_scales(sc, static_cast<std::int64_t>(rows), s.n);
  GENBENCH_CHECK_CUDA(cudaMemcpyAsync(scales.get(), ps.data(), s_bytes, cudaMemcpyHostToDevice, stream));
  std::vector<std::uint32_t> pz;
  if (s.zero_points) {
    std::vector<std::uint8_t> z(rows * n);
    for (std::size_t i = 0; i < z.size(); ++i) z[i] = w4a16::random_code(ctx.seed + 14, i);
    pz = w4a16::pack_zeros(z, static_cast<std::int64_t>(rows), s.n);
    GENBENCH_CHECK_CUDA(cudaMemcpyAsync(zeros.get(), pz.data(), z_bytes, cudaMemcpyHostToDevice, stream));
  }
  for (std::size_t c = 1; c < copies; ++c) {
    GENBENCH_CHECK_CUDA(
        cudaMemcpyAsync(w.as<unsigned char>() + c * w_pitch, w.get(), w_bytes, cudaMemcpyDeviceToDevice, stream));
    GENBENCH_CHECK_CUDA(cudaMemcpyAsync(scales.as<unsigned char>() + c * s_pitch, scales.get(), s_bytes,
                                        cudaMemcpyDeviceToDevice, stream));
    if (s.zero_points)
      GENBENCH_CHECK_CUDA(cudaMemcpyAsync(zeros.as<unsigned char>() + c * z_pitch, zeros.get(), z_bytes,
                                          cudaMemcpyDeviceToDevice, stream));
  }
  GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream));  // the host vectors above go out of scope
}

Validation W4a16Operands::check(cudaStream_t stream) const {
  const std::int64_t m = s.m, n = s.n, k = s.k, g = s.group_k(), rows = s.groups();
  std::vector<std::uint16_t> ha(static_cast<std::size_t>(m * k)), hs(static_cast<std::size_t>(rows * n)),
      hd(static_cast<std::size_t>(m * n));
  std::vector<std::uint8_t> hw(w_bytes);
  std::vector<std::uint32_t> hz(z_bytes / 4);
  GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream));
  GENBENCH_CHECK_CUDA(cudaMemcpy(ha.data(), a.get(), ha.size() * 2, cudaMemcpyDeviceToHost));
  GENBENCH_CHECK_CUDA(cudaMemcpy(hs.data(), scales.get(), hs.size() * 2, cudaMemcpyDeviceToHost));
  GENBENCH_CHECK_CUDA(cudaMemcpy(hd.data(), d.get(), hd.size() * 2, cudaMemcpyDeviceToHost));
  GENBENCH_CHECK_CUDA(cudaMemcpy(hw.data(), w.get(), hw.size(), cudaMemcpyDeviceToHost));
  if (s.zero_points) GENBENCH_CHECK_CUDA(cudaMemcpy(hz.data(), zeros.get(), z_bytes, cudaMemcpyDeviceToHost));
  Validation v;
  v.tolerance = s.dtype == DType::bf16 ? 1e-2 : 2e-3;
  const std::int64_t total = m * n, step = std::max<std::int64_t>(1, total / 255);
  std::vector<std::int64_t> picks;
  for (std::int64_t e = 0; e < total; e += step) picks.push_back(e);
  picks.push_back(total - 1);
  double worst = 0;
  std::int64_t unwritten = 0;
  for (const std::int64_t e : picks) {
    const std::int64_t i = e / n, j = e % n;
    double ref = 0, mag = 0;
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const auto ti = w4a16::tiled_index(n, kk, j);
      const auto code = static_cast<std::uint8_t>((hw[ti.byte] >> ti.shift) & 0xF);
      const std::int64_t gr = kk / g;
      const float sc = value16(hs[static_cast<std::size_t>(gr * n + w4a16::scale_position(j))], s.dtype);
      std::uint8_t z = w4a16::kSymmetricZero;
      if (s.zero_points)
        z = static_cast<std::uint8_t>(
            (hz[static_cast<std::size_t>((gr * (n / 64) + j / 64) * 8 + j % 8)] >> (4 * ((j % 64) / 8))) & 0xF);
      const double p = static_cast<double>(value16(ha[static_cast<std::size_t>(i * k + kk)], s.dtype)) *
                       w4a16::dequantize(code, z, sc);
      ref += p;
      mag += std::fabs(p);
    }
    const float got = value16(hd[static_cast<std::size_t>(e)], s.dtype);
    if (std::isnan(got)) ++unwritten;
    worst = std::max(worst, std::isnan(got) ? INFINITY : std::fabs(got - ref) / std::max(mag, 1e-30));
  }
  v.error = worst;
  v.ok = worst <= v.tolerance;
  v.detail = strprintf(
      "max error %.3g on %zu sampled elements against a double sum of the dequantised weights copied "
      "back, relative to sum |a w| (tolerance %.0g)%s",
      worst, picks.size(), v.tolerance,
      unwritten ? strprintf("; %lld still poisoned", static_cast<long long>(unwritten)).c_str() : "");
  return v;
}

}  // namespace genbench
