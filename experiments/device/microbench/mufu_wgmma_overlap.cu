// Can one warpgroup's MUFU.EX2 stream run while another warpgroup's wgmma runs on the same SM?
// One CTA of two warpgroups per SM. WG0: e4m3 wgmma m64n128k32 (A from shared memory or from
// registers) in commit groups of 4 with two accumulators in flight. WG1: 16 independent
// ex2.approx chains per thread. Each alone, then both together; cycles from clock64 (so clock
// changes do not matter), per wgmma group and per MUFU step. Built and run by
// experiments/device/microbench.sh (docs/lab/fa3-v04-v06.md, fa3 v4).
#include <cstdint>
#include <cstdio>
#include "kernels/common/sm90_ptx.cuh"
using namespace genbench;

template <bool kRS>
__global__ void __launch_bounds__(256, 1) k(float* out, long long* clk, int mode, int g_iters, int m_iters) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const long long c0 = clock64();
  const int wg = threadIdx.x / 128;
  for (int i = threadIdx.x; i < 65536 / 4; i += 256)
    reinterpret_cast<unsigned*>(smem)[i] = 0x38383838u;  // 0.5-ish e4m3
  __syncthreads();
  float r = 0.f;
  if (wg == 0 && (mode & 1)) {
    const std::uint32_t base = sm90::smem_addr(smem);
    const std::uint64_t da = sm90::make_desc_sw128(base, 16, 1024), db = sm90::make_desc_sw128(base + 16384, 16, 1024);
    float a0[64], a1[64];
    std::uint32_t af[4] = {0x38383838u, 0x38383838u, 0x38383838u, 0x38383838u};
    for (int i = 0; i < 64; ++i) a0[i] = a1[i] = 0.f;
    auto group = [&](float(&a)[64]) {
      sm90::wgmma_fence();
      if constexpr (kRS) {
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) sm90::wgmma_rs_m64n128k32_e4m3(a, af, sm90::desc_advance(db, kk * 32), 1);
      } else {
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
          sm90::wgmma_ss_m64n128k32_e4m3(a, sm90::desc_advance(da, kk * 32), sm90::desc_advance(db, kk * 32), 1);
      }
      sm90::wgmma_commit();
      sm90::wgmma_wait<1>();
    };
    for (int it = 0; it < g_iters; it += 2) {
      group(a0);
      group(a1);
    }
    sm90::wgmma_wait<0>();
    for (int i = 0; i < 64; ++i) r += a0[i] + a1[i];
  }
  if (wg == 1 && (mode & 2)) {
    float x[16];
    for (int i = 0; i < 16; ++i) x[i] = -1e-3f * (threadIdx.x + i);
    for (int it = 0; it < m_iters; ++it)
#pragma unroll
      for (int i = 0; i < 16; ++i) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x[i]));
    for (int i = 0; i < 16; ++i) r += x[i];
  }
  out[blockIdx.x * 256 + threadIdx.x] = r;
  __syncthreads();
  if (threadIdx.x == 0) clk[blockIdx.x] = clock64() - c0;
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* out;
  cudaMalloc(&out, sms * 256 * 4);
  long long* clk_d;
  cudaMalloc(&clk_d, sms * 8);
  long long* clk_h = new long long[sms];
  cudaFuncSetAttribute(k<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
  cudaFuncSetAttribute(k<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
  // wgmma: 4 x m64n128k32 per group = 2.1 MFLOP per WG per iteration; ~256 cycles at the fp8 peak.
  // MUFU: 16 ex2 per thread per iteration = 128 threads x 16 / 16 per clk = 128 cycles.
  const int g_iters = 8192, m_iters = 16384;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  const char* names[] = {"", "wgmma ss", "mufu", "wgmma ss + mufu", "", "wgmma rs", "", "wgmma rs + mufu"};
  for (int rep = 0; rep < 2; ++rep)
    for (int mode : {1, 2, 3, 5, 7}) {
      auto kern = (mode & 4) ? k<true> : k<false>;
      kern<<<sms, 256, 65536>>>(out, clk_d, mode, g_iters, m_iters);
      cudaEventRecord(a);
      kern<<<sms, 256, 65536>>>(out, clk_d, mode, g_iters, m_iters);
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      cudaMemcpy(clk_h, clk_d, sms * 8, cudaMemcpyDeviceToHost);
      double cyc = 0;
      for (int i = 0; i < sms; ++i) cyc += clk_h[i];
      cyc /= sms;
      printf("%-18s %.3f ms  %.0f SM cycles per CTA; wgmma %.1f cycles per group, mufu %.1f cycles per step\n",
             names[mode], ms, cyc, (mode & 1) ? cyc / g_iters : 0.0, (mode & 2) ? cyc / m_iters : 0.0);
    }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
