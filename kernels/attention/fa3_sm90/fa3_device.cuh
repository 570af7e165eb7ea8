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
    row_max(s, mx_a, mx_b);
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
    float sum_a, sum_b;
    exp2_rows(s, sl2, base_a, base_b, sum_a, sum_b);
    l_a = l_a * corr_a + sum_a;
    l_b = l_b * corr_b + sum_b;
  }

  // Max-free blocks (e4m3, fa3_kernel.cuh): P = 2^(s * sl2 - base) with the bases as they are,
  // no row max, no correction; the caller checks P against e4m3's range as it converts P and
  // calls rebase() where it reached the limit. Only for warps whose rows all have a finite base
  // that keeps 2^(s * sl2 - base) finite (max_free_ok), so P is never inf.
  __device__ __forceinline__ bool max_free_ok(float bound_a, float bound_b, float sl2, float offset_log2) const {
    // bound_*: upper bounds on the rows' s * sl2; a base of -inf (no key seen) fails.
    const bool ok = bound_a - (m_a * sl2 - offset_log2) < 126.f && bound_b - (m_b * sl2 - offset_log2) < 126.f;
    return __all_sync(0xffffffffu, ok);
  }
  __device__ __forceinline__ void update_max_free(float (&s)[BN / 2], float sl2, float offset_log2) {
    const float base_a = m_a * sl2 - offset_log2, base_b = m_b * sl2 - offset_log2;
    corr_a = corr_b = 1.f;
    rescale_o = false;
    float sum_a, sum_b;
    exp2_rows(s, sl2, base_a, base_b, sum_a, sum_b);
    l_a += sum_a;
    l_b += sum_b;
  }
  // After a max-free block whose P reached the limit in a row of the quad (over_*: this
  // thread's part): that row's base moves up by k = floor(log2(max P)) - offset_log2, so its
  // largest P lands in [2^offset, 2^(offset + 1)); P and the row sum are multiplied by 2^-k,
  // exactly, and corr is set to 2^-k: the caller converts P again and rescales O (rescale()).
  __device__ __forceinline__ void rebase(float (&s)[BN / 2], bool over_a, bool over_b, float sl2, int offset_log2) {
    float pa = 0.f, pb = 0.f;
    row_max(s, pa, pb);
    const unsigned quad = 0xfu << (threadIdx.x & 28u);
    over_a = (__ballot_sync(0xffffffffu, over_a) & quad) != 0;
    over_b = (__ballot_sync(0xffffffffu, over_b) & quad) != 0;
    // A row over the limit has a normal, finite largest P, so its exponent field is exact.
    const int ka = over_a ? ((__float_as_int(pa) >> 23) & 0xff) - 127 - offset_log2 : 0;
    const int kb = over_b ? ((__float_as_int(pb) >> 23) & 0xff) - 127 - offset_log2 : 0;
    corr_a = __int_as_float((127 - ka) << 23);  // 2^-k
    corr_b = __int_as_float((127 - kb) << 23);
    scale_rows(s, corr_a, corr_b);
    l_a *= corr_a;
    l_b *= corr_b;
    m_a += static_cast<float>(ka) / sl2;
    m_b += static_cast<float>(kb) / sl2;
  }

  // The state of another width's softmax (a narrow block, fa3_kernel.cuh, as a tile's first).
  template <int N>
  __device__ __forceinline__ void take(const OnlineSoftmax<N>& o) {
    m_a = o.m_a, m_b = o.m_b, l_a = o.l_a, l_b = o.l_b, corr_a = o.corr_a, corr_b = o.corr_b;
    rescale_o = o.rescale_o;
  }

  // O (accumulator layout, N = D columns) times this block's correction.
  template <int D>
  __device__ __forceinline__ void rescale(float (&o)[D / 2]) const {
    scale_rows(o, corr_a, corr_b);
  }

  // The rows' full sums (every thread of the quad ends with them).
  __device__ __forceinline__ void reduce_sums() {
    l_a += __shfl_xor_sync(0xffffffffu, l_a, 1);
    l_a += __shfl_xor_sync(0xffffffffu, l_a, 2);
    l_b += __shfl_xor_sync(0xffffffffu, l_b, 1);
    l_b += __shfl_xor_sync(0xffffffffu, l_b, 2);
  }

 private:
  // The rows' maxima of x (accumulator layout) into mx_a / mx_b (taking their values as a
  // start), across the quad.
  __device__ __forceinline__ static void row_max(const float (&x)[BN / 2], float& mx_a, float& mx_b) {
#pragma unroll
    for (int i = 0; i < BN / 8; ++i) {
      mx_a = fmaxf(mx_a, fmaxf(x[4 * i], x[4 * i + 1]));
      mx_b = fmaxf(mx_b, fmaxf(x[4 * i + 2], x[4 * i + 3]));
    }
    mx_a = fmaxf(mx_a, __shfl_xor_sync(0xffffffffu, mx_a, 1));
    mx_a = fmaxf(mx_a, __shfl_xor_sync(0xffffffffu, mx_a, 2));
    mx_b = fmaxf(mx_b, __shfl_xor_sync(0xffffffffu, mx_b, 1));
    mx_b = fmaxf(mx_b, __shfl_xor_sync(0xffffffffu, mx_b, 2));
  }
  // S -> P = 2^(s * sl2 - base) in place; this thread's part of the rows' sums.
  __device__ __forceinline__ static void exp2_rows(float (&s)[BN / 2], float sl2, float base_a, float base_b,
                                                   float& sum_a, float& sum_b) {
    sum_a = sum_b = 0.f;
#pragma unroll
    for (int i = 0; i < BN / 8; ++i) {
      s[4 * i] = ex2(fmaf(s[4 * i], sl2, -base_a));
      s[4 * i + 1] = ex2(fmaf(s[4 * i + 1], sl2, -base_a));
      s[4 * i + 2] = ex2(fmaf(s[4 * i + 2], sl2, -base_b));
      s[4 * i + 3] = ex2(fmaf(s[4 * i + 3], sl2, -base_b));
      sum_a += s[4 * i] + s[4 * i + 1];
      sum_b += s[4 * i + 2] + s[4 * i + 3];
    }
  }
  // Row a's values (accumulator layout, N / 4 groups of a, a, b, b) times ca, row b's times cb.
  template <int N>
  __device__ __forceinline__ static void scale_rows(float (&x)[N], float ca, float cb) {
#pragma unroll
    for (int i = 0; i < N / 4; ++i) {
      x[4 * i] *= ca;
      x[4 * i + 1] *= ca;
      x[4 * i + 2] *= cb;
      x[4 * i + 3] *= cb;
    }
  }
};

#endif  // GENBENCH_SM90A_ENABLED

}  // namespace genbench::fa3
