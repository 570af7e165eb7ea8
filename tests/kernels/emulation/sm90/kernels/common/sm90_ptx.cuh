#pragma once
// CPU emulation of kernels/common/sm90_ptx.cuh (found first on the emulation's include path):
// mbarriers with phases, arrival counts and transaction bytes; TMA 4-D loads with the 128-byte
// swizzle and zero fill past the tensor; 1-D bulk loads; named barriers; setmaxnreg and the
// fences as no-ops; wgmma m64nNk16 (16-bit) computed when issued, by the warpgroup's thread 0,
// in double from the shared-memory descriptors (K-major or MN-major, 128-byte swizzle) and the
// warpgroup's gathered register fragments, into every thread's accumulator registers; shared
// accesses by address and TMA reductions (done when issued). A tensor map is the emulation's own TmaMap stored
// in the CUtensorMap's bytes. Covers what the fa3 backward uses; anything else fails loudly.
#include <cuda.h>

#include <map>

#include "emulation_threads.h"

#define GENBENCH_SM90A_ENABLED 1
#undef __grid_constant__
#define __grid_constant__

namespace emu {

struct TmaMap {  // stored in the CUtensorMap's bytes
  const unsigned char* base;
  std::uint64_t dims[4];
  std::uint64_t strides[3];  // bytes, dims 1..3
  std::uint32_t box[4];
  int elem;
};
static_assert(sizeof(TmaMap) <= sizeof(CUtensorMap), "map too big");

struct MBar {
  int count = 0, pending = 0;
  long long tx = 0;
  int phase = 0;
  bool init = false;
};
inline std::map<std::uint32_t, MBar> g_bars;
inline long long g_tma_bytes = 0, g_wgmma = 0, g_reds = 0;

inline MBar& bar_at(std::uint32_t a) {
  auto it = g_bars.find(a);
  if (it == g_bars.end() || !it->second.init) fail("mbarrier used before init");
  return it->second;
}
inline void bar_maybe_complete(MBar& b) {
  if (b.pending == 0 && b.tx == 0) {
    ++b.phase;
    b.pending = b.count;
    ++g_events;
  }
}

// Named barriers: id -> (arrivals, generation).
inline int g_nb_arrive[16], g_nb_gen[16], g_nb_count[16];
// Warpgroup exchange for wgmma: per warpgroup, the threads' operand pointers.
struct WgSlot {
  float* d;
  const std::uint32_t* a;
};
inline WgSlot g_wg[4][128];
inline int g_wg_arrive[4], g_wg_gen[4];

inline void wg_barrier() {
  const int w = tid() / 128, gen = g_wg_gen[w];
  ++g_events;
  if (++g_wg_arrive[w] == 128) {
    g_wg_arrive[w] = 0;
    ++g_wg_gen[w];
  } else {
    while (g_wg_gen[w] == gen) yield();
  }
}

inline void reset_block_state() {
  g_bars.clear();
  for (int i = 0; i < 16; ++i) g_nb_arrive[i] = g_nb_gen[i] = g_nb_count[i] = 0;
  for (int i = 0; i < 4; ++i) g_wg_arrive[i] = g_wg_gen[i] = 0;
}

inline std::uint32_t swz(std::uint32_t logical) { return logical ^ (((logical >> 7) & 7u) << 4); }

inline float elem(std::uint32_t logical, bool bf16) {
  const std::uint32_t a = swz(logical);
  check_smem(a & ~1u, 2);
  std::uint16_t u;
  std::memcpy(&u, g_smem + a, 2);
  return bits_to_float(bf16, u);
}

struct Desc {
  std::uint32_t start, lbo, sbo;
  int mode;
};
inline Desc decode(std::uint64_t d) {
  Desc r;
  r.start = static_cast<std::uint32_t>(d & 0x3FFF) << 4;
  r.lbo = static_cast<std::uint32_t>((d >> 16) & 0x3FFF) << 4;
  r.sbo = static_cast<std::uint32_t>((d >> 32) & 0x3FFF) << 4;
  r.mode = static_cast<int>(d >> 62);
  if (r.mode != 1) fail("emulator knows only the 128-byte swizzle");
  return r;
}
// Element (row, k) of a K-major operand (row = M or N index), or of an MN-major one.
inline float kmajor(const Desc& d, int row, int k, bool bf16) {
  return elem(d.start + (row / 8) * d.sbo + (row % 8) * 128 + k * 2, bf16);
}
inline float mnmajor(const Desc& d, int mn, int k, bool bf16) {
  return elem(d.start + (mn / 64) * d.lbo + (k / 8) * d.sbo + (k % 8) * 128 + (mn % 64) * 2, bf16);
}

// D[64 x N] (+)= A[64 x 16] B[16 x N]. A: registers (a_regs) or descriptor (transposed or
// not); B: descriptor (transposed or not).
template <int N>
inline void wgmma(float* d, const std::uint32_t* a_regs, std::uint64_t da, bool ta, std::uint64_t db, bool tb,
                  int scale_d, bool bf16) {
  ++g_wgmma;
  const int t = tid() % 128;
  g_wg[tid() / 128][t] = {d, a_regs};
  wg_barrier();
  if (t == 0) {
    const Desc A = a_regs ? Desc{} : decode(da), B = decode(db);
    static float av[64][16], bv[16][256];
    for (int m = 0; m < 64; ++m)
      for (int k = 0; k < 16; ++k) {
        if (a_regs) {
          const int w = m / 16, r = m % 16, lane = (r % 8) * 4 + (k % 8) / 2;
          const std::uint32_t* f = g_wg[tid() / 128][w * 32 + lane].a;
          const std::uint32_t word = f[(r >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0)];
          av[m][k] = bits_to_float(bf16, static_cast<std::uint16_t>(k % 2 ? word >> 16 : word & 0xffff));
        } else {
          av[m][k] = ta ? mnmajor(A, m, k, bf16) : kmajor(A, m, k, bf16);
        }
      }
    for (int k = 0; k < 16; ++k)
      for (int n = 0; n < N; ++n) bv[k][n] = tb ? mnmajor(B, n, k, bf16) : kmajor(B, n, k, bf16);
    for (int th = 0; th < 128; ++th) {
      float* dd = g_wg[tid() / 128][th].d;
      const int w = th / 32, l = th % 32, r0 = 16 * w + l / 4, tq = l % 4;
      for (int i = 0; i < N / 8; ++i)
        for (int e = 0; e < 4; ++e) {
          const int m = r0 + (e >= 2 ? 8 : 0), n = 8 * i + 2 * tq + (e & 1);
          double acc = scale_d ? dd[4 * i + e] : 0.0;
          for (int k = 0; k < 16; ++k) acc += static_cast<double>(av[m][k]) * bv[k][n];
          dd[4 * i + e] = static_cast<float>(acc);
        }
    }
  }
  wg_barrier();
}

}  // namespace emu

namespace genbench::sm90 {

inline std::uint32_t smem_addr(const void* p) {
  const auto* c = static_cast<const unsigned char*>(p);
  if (c < emu::g_smem || c >= emu::g_smem + emu::kSmem) emu::fail("smem_addr of a non-shared pointer");
  return static_cast<std::uint32_t>(c - emu::g_smem);
}
inline void mbar_init(std::uint32_t bar, std::uint32_t count) {
  emu::MBar& b = emu::g_bars[bar];
  b = emu::MBar{};
  b.count = b.pending = static_cast<int>(count);
  b.init = true;
}
inline void fence_barrier_init() {}
inline void mbar_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  emu::MBar& b = emu::bar_at(bar);
  b.tx += bytes;
  if (--b.pending < 0) emu::fail("mbarrier: more arrivals than its count");
  emu::bar_maybe_complete(b);
}
inline void mbar_arrive(std::uint32_t bar) {
  emu::MBar& b = emu::bar_at(bar);
  if (--b.pending < 0) emu::fail("mbarrier: more arrivals than its count");
  emu::bar_maybe_complete(b);
}
inline void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  for (;;) {
    emu::MBar& b = emu::bar_at(bar);
    if (static_cast<std::uint32_t>(b.phase & 1) != parity) return;
    emu::yield();
  }
}
inline void complete_tx(std::uint32_t bar, long long bytes) {
  emu::MBar& b = emu::bar_at(bar);
  b.tx -= bytes;
  emu::bar_maybe_complete(b);
}
inline void prefetch_tensormap(const void*) {}
inline void tma_load_4d(std::uint32_t dst, const void* tmap, std::uint32_t bar, int c0, int c1, int c2, int c3) {
  emu::TmaMap m;
  std::memcpy(&m, tmap, sizeof m);
  if (dst % 1024) emu::fail("TMA destination not 1024-aligned");
  if (m.box[1] != 1 || m.box[3] != 1 || m.box[0] * m.elem != 128) emu::fail("emulator: unexpected box");
  const std::uint32_t rows = m.box[2];
  emu::check_smem(dst, 16);
  emu::check_smem(dst + rows * 128 - 16, 16);
  for (std::uint32_t r = 0; r < rows; ++r)
    for (int e = 0; e < 64; ++e) {
      const long long x0 = c0 + e, x2 = c2 + static_cast<long long>(r);
      std::uint16_t v = 0;
      if (x0 >= 0 && x0 < static_cast<long long>(m.dims[0]) && c1 >= 0 && c1 < static_cast<long long>(m.dims[1]) &&
          x2 >= 0 && x2 < static_cast<long long>(m.dims[2]) && c3 >= 0 && c3 < static_cast<long long>(m.dims[3]))
        std::memcpy(&v, m.base + x0 * 2 + c1 * m.strides[0] + x2 * m.strides[1] + c3 * m.strides[2], 2);
      const std::uint32_t a = emu::swz(dst + r * 128 + e * 2);
      std::memcpy(emu::g_smem + a, &v, 2);
    }
  emu::g_tma_bytes += rows * 128;
  complete_tx(bar, rows * 128);
}
inline void bulk_load(std::uint32_t dst, const void* src, std::uint32_t bytes, std::uint32_t bar) {
  if (dst % 16 || bytes % 16 || reinterpret_cast<std::uintptr_t>(src) % 16) emu::fail("bulk copy misaligned");
  emu::check_smem(dst, 16);
  emu::check_smem(dst + bytes - 16, 16);
  std::memcpy(emu::g_smem + dst, src, bytes);
  complete_tx(bar, bytes);
}
inline void fence_proxy_async_shared() {}
inline void named_barrier_sync(int id, int threads) {
  if (id <= 0 || id > 15) emu::fail("named barrier id");
  if (emu::g_nb_count[id] == 0) emu::g_nb_count[id] = threads;
  if (emu::g_nb_count[id] != threads) emu::fail("named barrier used with two thread counts");
  const int gen = emu::g_nb_gen[id];
  ++emu::g_events;
  if (++emu::g_nb_arrive[id] == threads) {
    emu::g_nb_arrive[id] = 0;
    ++emu::g_nb_gen[id];
  } else {
    while (emu::g_nb_gen[id] == gen) emu::yield();
  }
}
template <int kRegs>
inline void setmaxnreg_inc() {}
template <int kRegs>
inline void setmaxnreg_dec() {}
inline void st_shared_b32(std::uint32_t addr, std::uint32_t v) {
  emu::check_smem(addr, 4);
  std::memcpy(emu::g_smem + addr, &v, 4);
}
inline float2 ld_shared_f2(std::uint32_t addr) {
  emu::check_smem(addr, 8);
  float2 v;
  std::memcpy(&v, emu::g_smem + addr, 8);
  return v;
}
inline void st_shared_f2(std::uint32_t addr, float x, float y) {
  emu::check_smem(addr, 8);
  const float v[2] = {x, y};
  std::memcpy(emu::g_smem + addr, v, 8);
}
// fp32 elements, a box of one 128-byte swizzle row (32 elements) x 1 x rows; bulk groups
// complete at issue, so the reduction is done when it is issued.
inline void tma_reduce_add_3d(const void* tmap, std::uint32_t src, int c0, int c1, int c2) {
  emu::TmaMap m;
  std::memcpy(&m, tmap, sizeof m);
  if (src % 1024) emu::fail("TMA source not 1024-aligned");
  if (m.elem != 4 || m.box[0] != 32 || m.box[1] != 1 || m.dims[3] != 1) emu::fail("emulator: unexpected reduce box");
  const std::uint32_t rows = m.box[2];
  emu::check_smem(src, 16);
  emu::check_smem(src + rows * 128 - 16, 16);
  ++emu::g_reds;
  for (std::uint32_t r = 0; r < rows; ++r)
    for (int e = 0; e < 32; ++e) {
      const long long x0 = c0 + e, x2 = c2 + static_cast<long long>(r);
      if (x0 < 0 || x0 >= static_cast<long long>(m.dims[0]) || c1 < 0 || c1 >= static_cast<long long>(m.dims[1]) ||
          x2 < 0 || x2 >= static_cast<long long>(m.dims[2]))
        continue;
      float v, g;
      std::memcpy(&v, emu::g_smem + emu::swz(src + r * 128 + e * 4), 4);
      unsigned char* at = const_cast<unsigned char*>(m.base) + x0 * 4 + c1 * m.strides[0] + x2 * m.strides[1];
      std::memcpy(&g, at, 4);
      g += v;
      std::memcpy(at, &g, 4);
    }
}
inline void bulk_commit() {}
template <int N>
inline void bulk_wait_read() {}
template <int N>
inline void bulk_wait() {}
inline std::uint64_t make_desc(std::uint32_t a, std::uint32_t lbo, std::uint32_t sbo, std::uint64_t sw) {
  std::uint64_t d = 0;
  d |= static_cast<std::uint64_t>((a & 0x3FFFF) >> 4);
  d |= static_cast<std::uint64_t>((lbo & 0x3FFFF) >> 4) << 16;
  d |= static_cast<std::uint64_t>((sbo & 0x3FFFF) >> 4) << 32;
  d |= sw << 62;
  return d;
}
inline std::uint64_t make_desc_sw128(std::uint32_t a, std::uint32_t lbo, std::uint32_t sbo) {
  return make_desc(a, lbo, sbo, 1);
}
inline std::uint64_t desc_advance(std::uint64_t desc, std::uint32_t bytes) {
  const std::uint32_t lo = static_cast<std::uint32_t>(desc) + (bytes >> 4);
  return (desc & 0xFFFFFFFF00000000ull) | lo;
}
inline void wgmma_fence() {}
inline void wgmma_commit() {}
template <int N>
inline void wgmma_wait() {}
inline void reg_fence(float&) {}
inline void reg_fence(std::uint32_t&) {}
template <int N, bool kBF16>
inline void wgmma_ss(float (&d)[N / 2], std::uint64_t da, std::uint64_t db, int scale_d) {
  emu::wgmma<N>(d, nullptr, da, false, db, false, scale_d, kBF16);
}
template <int N, bool kBF16>
inline void wgmma_ss_tt(float (&d)[N / 2], std::uint64_t da, std::uint64_t db, int scale_d) {
  emu::wgmma<N>(d, nullptr, da, true, db, true, scale_d, kBF16);
}
template <int N, bool kBF16>
inline void wgmma_rs_tb(float (&d)[N / 2], const std::uint32_t (&a)[4], std::uint64_t db, int scale_d) {
  emu::wgmma<N>(d, a, 0, false, db, true, scale_d, kBF16);
}

}  // namespace genbench::sm90

inline void __syncwarp() { emu::warp_barrier(); }
