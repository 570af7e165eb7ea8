// Throughput of ex2.approx on one GPU: f32 against the packed f16x2 and bf16x2 forms (instructions
// and results per clock per SM, at the device's maximum clock attribute, so a lower real clock
// reads low for all three alike). Built and run by experiments/device/microbench.sh, which also
// prints the MUFU instructions each form compiles to (docs/lab/fa3-v04-v06.md, fa3 v4).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdio>
// The three forms: eight independent chains per thread, `iters` exp2 instructions each.
struct F32 {
  using T = float;
  static __device__ T init(float x, float) { return x; }
  static __device__ void ex2(T& x) { asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x)); }
  static __device__ float low(T x) { return x; }
};
struct F16x2 {
  using T = unsigned;
  static __device__ T init(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&h);
  }
  static __device__ void ex2(T& x) { asm volatile("ex2.approx.f16x2 %0, %0;" : "+r"(x)); }
  static __device__ float low(T x) { return __low2float(*reinterpret_cast<__half2*>(&x)); }
};
struct BF16x2 {
  using T = unsigned;
  static __device__ T init(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&h);
  }
  static __device__ void ex2(T& x) { asm volatile("ex2.approx.ftz.bf16x2 %0, %0;" : "+r"(x)); }
  static __device__ float low(T x) { return __low2float(*reinterpret_cast<__nv_bfloat162*>(&x)); }
};
template <class Form>
__global__ void k(float* out, int iters, float seed) {
  typename Form::T x[8];
  for (int i = 0; i < 8; ++i) x[i] = Form::init(seed * (threadIdx.x + i) * 1e-6f, -seed);
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int i = 0; i < 8; ++i) Form::ex2(x[i]);
  float s = 0;
  for (int i = 0; i < 8; ++i) s += Form::low(x[i]);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
int main() {
  int sms = 0, clk = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  float* out;
  cudaMalloc(&out, 1 << 24);
  const int blocks = sms * 4, threads = 512, iters = 4096;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  auto run = [&](const char* name, void (*k)(float*, int, float), double per_inst) {
    k<<<blocks, threads>>>(out, iters, 1.f);
    cudaEventRecord(a);
    k<<<blocks, threads>>>(out, iters, 1.f);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    const double insts = double(blocks) * threads * iters * 8;  // per-thread ex2 instructions
    const double clocks = ms * 1e-3 * clk * 1e3;                // at the max clock attribute
    printf("%-8s %.3f ms  %.2f instr/clk/SM  %.2f elements/clk/SM (at %d MHz attr)\n", name, ms, insts / clocks / sms,
           insts * per_inst / clocks / sms, clk / 1000);
  };
  run("f32", k<F32>, 1);
  run("f16x2", k<F16x2>, 2);
  run("bf16x2", k<BF16x2>, 2);
  run("f32", k<F32>, 1);
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
