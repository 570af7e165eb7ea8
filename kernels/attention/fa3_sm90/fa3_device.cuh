#pragma once
// Device helpers shared by the fa3 kernels (16-bit and fp8; exp2 and packing come from
// kernels/common/fast_math.cuh): register fences that keep the compiler from moving
// accumulator reads across a wgmma wait, and the online softmax on the wgmma accumulator
// layout. Include only from .cu files; call only from sm_90a code.
#include <cmath>
#include <cstdint>

#include "kernels/common/fast_math.cuh"
#include "kernels/common/sm90_ptx.cuh"

namespace genbench::fa3 {

#ifdef GENBENCH_SM90A_ENABLED

template <int N>
__device__ __forceinline__ void fence_acc(float (&x)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) sm90::reg_fence(x[i]);
}

template <int N>
__device__ __forceinline__ void fence_frag(std::uint32_t (&x)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) sm90::reg_fence(x[i][j]);
}

// Online softmax of the two rows a consumer thread holds (rows a = r0 and b = r0 + 8 of the
// wgmma accumulator layout, sm90_ptx.cuh) over blocks of BN keys: running max (in score
// units), running sum (per-thread partial: reduce_sums() adds the quad's) and the factor the
// accumulated O must take before the current block's PV is added.
//
// Lazy rescaling (update<true>): m_a / m_b are then the exponent bases rather than the exact
// running maxima. A block moves them to the new maxima (and O needs rescaling: rescale_o) only
// when a row of the warp has grown past its base by more than slack_log2 in log2 units;
// otherwise bases, sums and O stay as they are (corr = 1), P reaches at most
// 2^(offset_log2 + slack_log2), and the caller skips the O rescale (the decision is
// warp-uniform). O / sum and LSE = base * scale + log(sum) are exact for any base.
template <int BN>
struct OnlineSoftmax {
  float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.f, l_b = 0.f, corr_a = 1.f, corr_b = 1.f;
  bool rescale_o = true;  // update<true>: this block moved a base of the warp

  // Scores of block n at keys >= lim_a (row a) or >= lim_b (row b) become -inf.
  __device__ __forceinline__ static void mask(float (&s)[BN / 2], int n, int lim_a, int lim_b, int lane) {
#pragma unroll
    for (int i = 0; i < BN / 8; ++i) {
      const int col = n * BN + 8 * i + 2 * (lane % 4);
      if (col >= lim_a) s[4 * i] = -INFINITY;
      if (col + 1 >= lim_a) s[4 * i + 1] = -INFINITY;
      if (col >= lim_b) s[4 * i + 2] = -INFINITY;
      if (col + 1 >= lim_b) s[4 * i + 3] = -INFINITY;
    }
  }

  // S -> P in place: P = 2^(s * sl2 - max * sl2 + offset_log2), with sl2 the scale times
  // log2(e) folded into one FFMA; updates max (the base, lazily), sum and corr.
  template <bool kLazy>
  __device__ __forceinline__ void update(float (&s)[BN / 2], float sl2, float offset_log2, float slack_log2) {
    float mx_a = m_a, mx_b = m_b;
#pragma unroll
    for (int i = 0; i < BN / 8; ++i) {
      mx_a = fmaxf(mx_a, fmaxf(s[4 * i], s[4 * i + 1]));
      mx_b = fmaxf(mx_b, fmaxf(s[4 * i + 2], s[4 * i + 3]));
    }
    mx_a = fmaxf(mx_a, __shfl_xor_sync(0xffffffffu, mx_a, 1));
    mx_a = fmaxf(mx_a, __shfl_xor_sync(0xffffffffu, mx_a, 2));
    mx_b = fmaxf(mx_b, __shfl_xor_sync(0xffffffffu, mx_b, 1));
    mx_b = fmaxf(mx_b, __shfl_xor_sync(0xffffffffu, mx_b, 2));
    if constexpr (kLazy) {
      // Growth past the base (NaN, i.e. no growth, while a row has seen no key: -inf - -inf).
      const bool grow = (mx_a - m_a) * sl2 > slack_log2 || (mx_b - m_b) * sl2 > slack_log2;
      rescale_o = __any_sync(0xffffffffu, grow);
      if (!rescale_o) {
        mx_a = m_a;
        mx_b = m_b;
      }
    }
    // A row with no visible key so far keeps max -inf: subtract 0 instead, so exp2 gives 0.
    const float ms_a = mx_a == -INFINITY ? 0.f : mx_a * sl2;
    const float ms_b = mx_b == -INFINITY ? 0.f : mx_b * sl2;
    corr_a = ex2(m_a * sl2 - ms_a);
    corr_b = ex2(m_b * sl2 - ms_b);
    const float base_a = ms_a - offset_log2, base_b = ms_b - offset_log2;
    m_a = mx_a;
    m_b = mx_b;
    float sum_a = 0.f, sum_b = 0.f;
#pragma unroll
    for (int i = 0; i < BN / 8; ++i) {
      s[4 * i] = ex2(fmaf(s[4 * i], sl2, -base_a));
      s[4 * i + 1] = ex2(fmaf(s[4 * i + 1], sl2, -base_a));
      s[4 * i + 2] = ex2(fmaf(s[4 * i + 2], sl2, -base_b));
      s[4 * i + 3] = ex2(fmaf(s[4 * i + 3], sl2, -base_b));
      sum_a += s[4 * i] + s[4 * i + 1];
      sum_b += s[4 * i + 2] + s[4 * i + 3];
    }
    l_a = l_a * corr_a + sum_a;
    l_b = l_b * corr_b + sum_b;
  }

  // O (accumulator layout, N = D columns) times this block's correction.
  template <int D>
  __device__ __forceinline__ void rescale(float (&o)[D / 2]) const {
#pragma unroll
    for (int i = 0; i < D / 8; ++i) {
      o[4 * i] *= corr_a;
      o[4 * i + 1] *= corr_a;
      o[4 * i + 2] *= corr_b;
      o[4 * i + 3] *= corr_b;
    }
  }

  // The rows' full sums (every thread of the quad ends with them).
  __device__ __forceinline__ void reduce_sums() {
    l_a += __shfl_xor_sync(0xffffffffu, l_a, 1);
    l_a += __shfl_xor_sync(0xffffffffu, l_a, 2);
    l_b += __shfl_xor_sync(0xffffffffu, l_b, 1);
    l_b += __shfl_xor_sync(0xffffffffu, l_b, 2);
  }
};

#endif  // GENBENCH_SM90A_ENABLED

}  // namespace genbench::fa3
