#pragma once
// The thread engine of the CPU emulation of CUDA kernels (tests/kernels/emulation/): each CUDA
// thread of a block is a fiber (ucontext) with its own stack; blocks run one after another; a
// thread that waits (a barrier, an mbarrier phase) yields until another makes progress, and a
// round in which no thread makes progress is reported as a deadlock. Warp collectives exchange
// values through per-lane slots between two warp barriers. Shared memory is one host array with
// bounds and alignment checks. The CUDA qualifiers are defined away and threadIdx, blockIdx,
// gridDim, blockDim, min, max, __syncthreads, __shfl_xor_sync and __int_as_float are provided.
#include <ucontext.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector_functions.h>
#include <vector_types.h>

#undef __global__
#undef __device__
#undef __forceinline__
#undef __launch_bounds__
#undef __shared__
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__

// The kernels' `extern __shared__ unsigned char smem[]` (one block runs at a time).

namespace emu {

struct Fiber {
  uint3 tid;
  ucontext_t ctx;
  bool done = false;
  std::vector<char> stack;
};

inline constexpr std::size_t kSmem = 256 * 1024;
inline unsigned char* g_smem = nullptr;  // the kernel's dynamic shared memory (set by the driver), kSmem bytes
inline std::size_t g_smem_limit = 0;
inline uint3 g_block, g_grid, g_bdim;
inline Fiber* g_cur = nullptr;
inline ucontext_t g_sched;
inline int g_nthreads = 0;
inline long long g_events = 0;
inline std::vector<int> g_warp_arrive, g_warp_gen;
inline int g_blk_arrive = 0, g_blk_gen = 0;
inline std::function<void()> g_body;
inline long long g_collectives = 0;
inline void (*g_block_reset)() = nullptr;

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "EMU FAIL: %s (block %u %u %u thread %u)\n", what, g_block.x, g_block.y, g_block.z,
               g_cur ? g_cur->tid.x : 0u);
  std::abort();
}

inline void yield() { swapcontext(&g_cur->ctx, &g_sched); }
inline int tid() { return static_cast<int>(g_cur->tid.x); }

inline void warp_barrier() {
  const int w = tid() / 32;
  const int gen = g_warp_gen[w];
  ++g_events;
  const int lanes = std::min(32, g_nthreads - w * 32);
  if (++g_warp_arrive[w] == lanes) {
    g_warp_arrive[w] = 0;
    ++g_warp_gen[w];
  } else {
    while (g_warp_gen[w] == gen) yield();
  }
}
inline void block_barrier() {
  const int gen = g_blk_gen;
  ++g_events;
  if (++g_blk_arrive == g_nthreads) {
    g_blk_arrive = 0;
    ++g_blk_gen;
  } else {
    while (g_blk_gen == gen) yield();
  }
}

inline void entry() {
  g_body();
  g_cur->done = true;
  ++g_events;
  swapcontext(&g_cur->ctx, &g_sched);
}

inline void run_block(int nthreads) {
  static std::vector<Fiber> fibers;
  fibers.resize(static_cast<std::size_t>(nthreads));
  g_nthreads = nthreads;
  g_warp_arrive.assign(static_cast<std::size_t>((nthreads + 31) / 32), 0);
  g_warp_gen.assign(g_warp_arrive.size(), 0);
  g_blk_arrive = 0;
  for (int i = 0; i < nthreads; ++i) {
    Fiber& f = fibers[static_cast<std::size_t>(i)];
    f.tid = make_uint3(static_cast<unsigned>(i), 0, 0);
    f.done = false;
    f.stack.resize(256 * 1024);
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack.data();
    f.ctx.uc_stack.ss_size = f.stack.size();
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, entry, 0);
  }
  for (;;) {
    bool all_done = true;
    const long long ev = g_events;
    for (Fiber& f : fibers) {
      if (f.done) continue;
      all_done = false;
      g_cur = &f;
      swapcontext(&g_sched, &f.ctx);
    }
    g_cur = nullptr;
    if (all_done) break;
    if (g_events == ev) fail("deadlock (threads wait at barriers nobody else reaches)");
  }
}

template <typename K, typename... A>
void launch(dim3 grid, dim3 block, std::size_t smem, K kernel, const A&... args) {
  if (smem > kSmem) fail("dynamic shared memory too large");
  g_smem_limit = smem;
  g_grid = make_uint3(grid.x, grid.y, grid.z);
  g_bdim = make_uint3(block.x, block.y, block.z);
  g_body = [&] { kernel(args...); };
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        g_block = make_uint3(x, y, z);
        std::memset(g_smem, 0xcd, kSmem);  // garbage shared memory
        if (g_block_reset) g_block_reset();
        run_block(static_cast<int>(block.x));
      }
}

// Per-warp exchange slots.
struct Slot {
  std::uint32_t u[8];
  float f[4];
};
inline Slot g_slots[32][32];  // [warp][lane]
inline Slot& my_slot() { return g_slots[tid() / 32][tid() % 32]; }
inline Slot& slot(int lane) { return g_slots[tid() / 32][lane]; }

inline void check_smem(std::uint32_t addr, std::uint32_t bytes) {
  if (addr + bytes > g_smem_limit) fail("shared memory access out of the dynamic allocation");
  if (addr % bytes != 0 && bytes <= 16) fail("misaligned shared memory access");
}

inline float bits_to_float(bool bf16, std::uint16_t u) {
  if (bf16) {
    std::uint32_t x = static_cast<std::uint32_t>(u) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
  __half h;
  std::memcpy(&h, &u, 2);
  return __half2float(h);
}

}  // namespace emu

#define threadIdx (::emu::g_cur->tid)
#define blockIdx (::emu::g_block)
#define gridDim (::emu::g_grid)
#define blockDim (::emu::g_bdim)

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline void __syncthreads() { emu::block_barrier(); }
inline float emu_shfl_xor(unsigned, float v, int off) {
  emu::my_slot().f[0] = v;
  emu::warp_barrier();
  const float r = emu::slot((emu::tid() % 32) ^ off).f[0];
  emu::warp_barrier();
  return r;
}
#define __shfl_xor_sync emu_shfl_xor
inline float emu_int_as_float(int x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
#define __int_as_float emu_int_as_float
