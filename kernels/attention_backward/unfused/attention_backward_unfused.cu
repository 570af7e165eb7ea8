// attention_backward/unfused on the cuda backend: the backward a user gets without fusion.
// Every matmul is a cuBLAS batched GEMM (cublasGemmBatchedEx, fp32 accumulation) and the
// softmax pieces are small kernels, with the O(len_q x len_k) matrices of a head in memory:
//   D  = rowsum(dO o O)                 one kernel, every (row, head), fp32, laid out as LSE
// then per chunk of (sequence, head) units of the same lengths:
//   S  = scale Q K^T                    GEMM -> fp32 scratch F
//   P  = exp(S - LSE), causal mask      kernel F -> P (the input dtype)
//   dV = P^T dO                         GEMM (per GQA group member, beta = 1 over the group)
//   dP = dO V^T                         GEMM -> fp32 scratch F (reused)
//   dS = P o (dP - D)                   kernel F, P -> dS (the input dtype, in place of P)
//   dQ = scale dS K                     GEMM
//   dK = scale dS^T Q                   GEMM (per GQA group member, beta = 1 over the group)
// P and dS are stored in the input dtype, as a framework's autograd would, with fp32 math.
// With GQA (group > 1) dK and dV accumulate in fp32 buffers (C = fp32 GEMMs, beta = 0 for
// the group's first head, 1 for the others) and one kernel converts them at the end; without
// GQA the GEMMs write dK and dV directly. A chunk never holds two heads of one group in the
// same dK/dV GEMM (its units are ordered group member first), so no two batch entries write
// the same output; everything runs in order on one stream without atomics, so the result is
// the same bits on every run (cuBLAS is deterministic on one stream): `deterministic` holds.
//
// Memory: the scratch of a chunk (fp32 F + dtype P/dS per unit) is capped at kScratchCap; a
// head whose matrices alone exceed it is refused in can_implement with the sizes. Varlen runs
// each run of consecutive sequences of equal lengths as its own set of chunks (the host
// knows the lengths when the case is prepared; the backward case has no set_lengths).
// Everything is planned and every pointer table written in the constructor, so launch() only
// enqueues kernels, GEMMs and memsets (graph-capturable, no host sync or allocation).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/strings.h"
#include "kernels/attention_backward/common/backward_case.h"
#include "ops/attention_backward/attention_backward.h"
#include "ops/implementation.h"

#define GENBENCH_BWD_UNFUSED_CHECK_CUBLAS(call)                                                            \
  do {                                                                                                     \
    const cublasStatus_t genbench_cublas_rc_ = (call);                                                     \
    if (genbench_cublas_rc_ != CUBLAS_STATUS_SUCCESS)                                                      \
      ::genbench::throw_call_error(#call, cublasGetStatusString(genbench_cublas_rc_), __FILE__, __LINE__); \
  } while (0)

namespace genbench::attention_backward {

namespace {

// Scratch of one chunk's S/dP (fp32) and P/dS (dtype) matrices together.
constexpr std::size_t kScratchCap = std::size_t{2} << 30;
constexpr std::size_t kCublasWorkspace = std::size_t{32} << 20;
constexpr int kRowThreads = 128;  // P and dS kernels: one block per (row, unit)
constexpr int kDThreads = 256;    // D kernel: one warp per (row, head)
constexpr int kConvertThreads = 256;
constexpr int kMaxUnitsPerCall = 65535;  // gridDim.y of the row kernels

// Pointer table roles, each an array of one entry per unit (see UnfusedBackwardCase::plan()).
enum Role : int { kQ, kK, kV, kDO, kDQ, kDK, kDV, kF, kP, kRoles };

std::size_t round_up(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }
// Leading dimension of a chunk's F/P matrices: keys padded to 8 (16-byte rows for cuBLAS).
std::int64_t padded_keys(std::int64_t lk) {
  return static_cast<std::int64_t>(round_up(static_cast<std::size_t>(lk), 8));
}
// Elements of one unit's matrix slot (rows x padded keys, slots 256-byte aligned in fp32).
std::size_t slot_elems(std::int64_t lq, std::int64_t lk) {
  return round_up(static_cast<std::size_t>(lq) * static_cast<std::size_t>(padded_keys(lk)), 64);
}

template <typename T>
__device__ __forceinline__ float to_float(T x);
template <>
__device__ __forceinline__ float to_float<__half>(__half x) {
  return __half2float(x);
}
template <>
__device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

template <typename T>
struct alignas(4 * sizeof(T)) Quad {
  T v[4];
};

// Keys row i of a (lq x lk) sequence sees: [0, end), bottom-right aligned when causal; none
// when its LSE is not finite (a row that sees no key).
__device__ __forceinline__ int visible_end(int i, int lq, int lk, int causal, float lse) {
  if (!isfinite(lse)) return 0;
  return causal ? min(lk, max(0, i + lk - lq + 1)) : lk;
}

// D[lse index] = dO . O of every packed query row and head (one warp each; 16-byte loads,
// head_dim a multiple of 8).
template <typename T>
__global__ void __launch_bounds__(kDThreads)
    rowsum_do_o(const T* dout, const T* o, float* d_out, long long items, int heads, int head_dim, int seqlen_q,
                long long lse_head_stride, int varlen) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const long long warps = static_cast<long long>(gridDim.x) * (kDThreads / 32);
  const int vecs = head_dim / 8;
  for (long long w = static_cast<long long>(blockIdx.x) * (kDThreads / 32) + threadIdx.x / 32; w < items; w += warps) {
    const long long row = w / heads;
    const int h = static_cast<int>(w % heads);
    const uint4* a = reinterpret_cast<const uint4*>(dout + w * head_dim);
    const uint4* b = reinterpret_cast<const uint4*>(o + w * head_dim);
    float acc = 0.f;
    for (int c = lane; c < vecs; c += 32) {
      const uint4 ra = a[c], rb = b[c];
      const T* xa = reinterpret_cast<const T*>(&ra);
      const T* xb = reinterpret_cast<const T*>(&rb);
#pragma unroll
      for (int e = 0; e < 8; ++e) acc += to_float(xa[e]) * to_float(xb[e]);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) {
      const long long idx = varlen ? h * lse_head_stride + row
                                   : ((row / seqlen_q) * heads + h) * static_cast<long long>(seqlen_q) + row % seqlen_q;
      d_out[idx] = acc;
    }
  }
}

// P = exp(S - LSE) on the visible keys, 0 elsewhere: one block per (query row, unit); F holds
// the scaled scores in fp32, P is written in the dtype (columns up to lk rounded to 4; ld is a
// multiple of 8, so the padding columns written are the slot's own).
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    probabilities(void* const* f_ptrs, void* const* p_ptrs, const long long* row0, const float* lse, int lq, int lk,
                  int ld, int causal) {
  const int i = static_cast<int>(blockIdx.x), u = static_cast<int>(blockIdx.y);
  const float l = lse[row0[u] + i];
  const int end = visible_end(i, lq, lk, causal, l);
  const float4* f =
      reinterpret_cast<const float4*>(static_cast<const float*>(f_ptrs[u]) + static_cast<long long>(i) * ld);
  Quad<T>* p = reinterpret_cast<Quad<T>*>(static_cast<T*>(p_ptrs[u]) + static_cast<long long>(i) * ld);
  const int quads = (lk + 3) / 4;
  for (int c = static_cast<int>(threadIdx.x); c < quads; c += kRowThreads) {
    const int j = 4 * c;
    Quad<T> out;
    if (j + 4 <= end) {
      const float4 s = f[c];
      out.v[0] = from_float<T>(expf(s.x - l));
      out.v[1] = from_float<T>(expf(s.y - l));
      out.v[2] = from_float<T>(expf(s.z - l));
      out.v[3] = from_float<T>(expf(s.w - l));
    } else if (j < end) {
      const float4 s = f[c];
      const float x[4] = {s.x, s.y, s.z, s.w};
#pragma unroll
      for (int e = 0; e < 4; ++e) out.v[e] = from_float<T>(j + e < end ? expf(x[e] - l) : 0.f);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) out.v[e] = from_float<T>(0.f);
    }
    p[c] = out;
  }
}

// dS = P o (dP - D) on the visible keys, 0 elsewhere, written over P: F holds dP in fp32.
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    score_gradients(void* const* f_ptrs, void* const* p_ptrs, const long long* row0, const float* lse,
                    const float* dsum, int lq, int lk, int ld, int causal) {
  const int i = static_cast<int>(blockIdx.x), u = static_cast<int>(blockIdx.y);
  const long long idx = row0[u] + i;
  const int end = visible_end(i, lq, lk, causal, lse[idx]);
  const float di = dsum[idx];
  const float4* f =
      reinterpret_cast<const float4*>(static_cast<const float*>(f_ptrs[u]) + static_cast<long long>(i) * ld);
  Quad<T>* p = reinterpret_cast<Quad<T>*>(static_cast<T*>(p_ptrs[u]) + static_cast<long long>(i) * ld);
  const int quads = (lk + 3) / 4;
  for (int c = static_cast<int>(threadIdx.x); c < quads; c += kRowThreads) {
    const int j = 4 * c;
    Quad<T> out;
    if (j < end) {
      const float4 dp = f[c];
      const Quad<T> pin = p[c];
      const float x[4] = {dp.x, dp.y, dp.z, dp.w};
#pragma unroll
      for (int e = 0; e < 4; ++e) out.v[e] = from_float<T>(j + e < end ? to_float(pin.v[e]) * (x[e] - di) : 0.f);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) out.v[e] = from_float<T>(0.f);
    }
    p[c] = out;
  }
}

// dK and dV from their fp32 group accumulators (n a multiple of 8).
template <typename T>
__global__ void __launch_bounds__(kConvertThreads)
    convert_accumulators(const float* acc_k, const float* acc_v, T* dk, T* dv, long long n4) {
  const long long stride = static_cast<long long>(gridDim.x) * kConvertThreads;
  for (long long c = static_cast<long long>(blockIdx.x) * kConvertThreads + threadIdx.x; c < n4; c += stride) {
    const float4 a = reinterpret_cast<const float4*>(acc_k)[c];
    const float4 b = reinterpret_cast<const float4*>(acc_v)[c];
    Quad<T> ok, ov;
    ok.v[0] = from_float<T>(a.x), ok.v[1] = from_float<T>(a.y), ok.v[2] = from_float<T>(a.z),
    ok.v[3] = from_float<T>(a.w);
    ov.v[0] = from_float<T>(b.x), ov.v[1] = from_float<T>(b.y), ov.v[2] = from_float<T>(b.z),
    ov.v[3] = from_float<T>(b.w);
    reinterpret_cast<Quad<T>*>(dk)[c] = ok;
    reinterpret_cast<Quad<T>*>(dv)[c] = ov;
  }
}

cudaDataType_t cuda_type(DType t) { return t == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F; }

// Bytes of one head's scratch (fp32 S/dP + dtype P/dS) at the shape's (maximum) lengths.
std::size_t head_scratch_bytes(const AttentionShape& s) {
  return slot_elems(s.seqlen_q, s.seqlen_k) * (sizeof(float) + dtype_size(s.dtype));
}

class UnfusedBackwardCase final : public DeviceBackwardCase {
 public:
  UnfusedBackwardCase(const AttentionShape& s, Context& ctx) : DeviceBackwardCase(s, ctx) {
    plan();
    GENBENCH_BWD_UNFUSED_CHECK_CUBLAS(cublasCreate(&handle_));
    GENBENCH_BWD_UNFUSED_CHECK_CUBLAS(cublasSetStream(handle_, stream()));
    GENBENCH_BWD_UNFUSED_CHECK_CUBLAS(cublasSetWorkspace(handle_, cublas_ws_, kCublasWorkspace));
  }
  ~UnfusedBackwardCase() override {
    if (handle_) cublasDestroy(handle_);
  }

 protected:
  void launch(cudaStream_t st) override {
    const BackwardParams p = params();
    for (const Zero& z : zeros_) GENBENCH_CHECK_CUDA(cudaMemsetAsync(z.ptr, 0, z.bytes, st));
    // D = rowsum(dO o O) for every row of the sequences and every head.
    if (total_q_ > 0) {
      const long long items = total_q_ * p.heads;
      const long long blocks = std::min<long long>((items + kDThreads / 32 - 1) / (kDThreads / 32), 1 << 20);
      if (p.dtype == DType::bf16)
        rowsum_do_o<<<static_cast<unsigned>(blocks), kDThreads, 0, st>>>(
            static_cast<const __nv_bfloat16*>(p.dout), static_cast<const __nv_bfloat16*>(p.o), dsum_, items, p.heads,
            p.head_dim, p.seqlen_q, p.lse_head_stride, p.varlen ? 1 : 0);
      else
        rowsum_do_o<<<static_cast<unsigned>(blocks), kDThreads, 0, st>>>(
            static_cast<const __half*>(p.dout), static_cast<const __half*>(p.o), dsum_, items, p.heads, p.head_dim,
            p.seqlen_q, p.lse_head_stride, p.varlen ? 1 : 0);
      GENBENCH_CHECK_LAUNCH();
    }
    for (const Chunk& c : chunks_) run_chunk(p, c, st);
    if (group_ > 1 && acc_elems_ > 0) {
      const long long n4 = acc_elems_ / 4;
      const long long blocks = std::min<long long>((n4 + kConvertThreads - 1) / kConvertThreads, 1 << 16);
      if (p.dtype == DType::bf16)
        convert_accumulators<<<static_cast<unsigned>(blocks), kConvertThreads, 0, st>>>(
            acc_k_, acc_v_, static_cast<__nv_bfloat16*>(p.dk), static_cast<__nv_bfloat16*>(p.dv), n4);
      else
        convert_accumulators<<<static_cast<unsigned>(blocks), kConvertThreads, 0, st>>>(
            acc_k_, acc_v_, static_cast<__half*>(p.dk), static_cast<__half*>(p.dv), n4);
      GENBENCH_CHECK_LAUNCH();
    }
  }

  std::string config_name() const override {
    return strprintf("cublasGemmBatchedEx x5 (fp32 acc), P/dS %s; %zu chunks of <= %d heads in %.3g GiB scratch%s",
                     dtype_name(s_.dtype), chunks_.size(), max_units_, static_cast<double>(scratch_bytes_) / (1 << 30),
                     group_ > 1 ? "; GQA dK/dV fp32 beta=1" : "");
  }

 private:
  // One batched call's worth of units [first, first + count) of the same lengths; `groups`
  // splits it where the GQA group member changes (the dK/dV GEMMs' batches).
  struct Range {
    int first, count;
    bool accumulate;  // beta = 1 (a group member after the first)
  };
  struct Chunk {
    int lq, lk, ld, first, count;
    std::vector<Range> groups;
  };
  struct Zero {
    void* ptr;
    std::size_t bytes;
  };

  // The work list, the workspace and the pointer table. Units of a set of equal-length
  // sequences [b0, b1) are ordered (group member g, sequence b, key head hk): query head
  // h = hk x group + g.
  void plan() {
    const BackwardParams p = params();
    const std::int64_t B = p.batch, H = p.heads, HK = p.heads_kv, D = p.head_dim;
    group_ = static_cast<int>(H / HK);
    const std::size_t el = dtype_size(p.dtype);
    std::vector<std::int64_t> lq(static_cast<std::size_t>(B), p.seqlen_q), lk(static_cast<std::size_t>(B), p.seqlen_k);
    if (p.varlen) {
      if (static_cast<std::int64_t>(len_q_.size()) != B || static_cast<std::int64_t>(len_k_.size()) != B)
        throw Error("attention_backward/unfused: one length per sequence expected");
      lq = len_q_;
      lk = len_k_;
    }
    std::vector<std::int64_t> oq(static_cast<std::size_t>(B)), ok(static_cast<std::size_t>(B));
    std::int64_t tq = 0, tk = 0;
    for (std::size_t b = 0; b < static_cast<std::size_t>(B); ++b) {
      oq[b] = p.varlen ? tq : static_cast<std::int64_t>(b) * p.seqlen_q;
      ok[b] = p.varlen ? tk : static_cast<std::int64_t>(b) * p.seqlen_k;
      tq += lq[b];
      tk += lk[b];
    }
    total_q_ = tq;
    acc_elems_ = group_ > 1 ? tk * HK * D : 0;

    // Units and chunks, with the largest chunk's scratch.
    struct Unit {
      std::int64_t b, h;
    };
    std::vector<Unit> units;
    struct ZeroRows {  // rows of a sequence with no work whose outputs are zero
      int which;       // 0: dQ, 1: dK and dV
      std::int64_t row, rows;
    };
    std::vector<ZeroRows> empty;
    std::size_t max_chunk_elems = 0;
    for (std::int64_t b0 = 0; b0 < B;) {
      std::int64_t b1 = b0 + 1;
      while (b1 < B && lq[static_cast<std::size_t>(b1)] == lq[static_cast<std::size_t>(b0)] &&
             lk[static_cast<std::size_t>(b1)] == lk[static_cast<std::size_t>(b0)])
        ++b1;
      const std::int64_t Lq = lq[static_cast<std::size_t>(b0)], Lk = lk[static_cast<std::size_t>(b0)];
      if (Lq == 0 || Lk == 0) {  // nothing to compute: the sequences' outputs are zero
        for (std::int64_t b = b0; b < b1; ++b) {
          if (Lq > 0) empty.push_back({0, oq[static_cast<std::size_t>(b)], Lq});
          if (Lk > 0) empty.push_back({1, ok[static_cast<std::size_t>(b)], Lk});
        }
        b0 = b1;
        continue;
      }
      const std::size_t slot = slot_elems(Lq, Lk);
      const std::size_t fit = kScratchCap / (slot * (sizeof(float) + el));
      if (fit == 0)
        throw Error(strprintf("attention_backward/unfused: one head's scratch (%lld x %lld) exceeds the %.3g GiB cap",
                              static_cast<long long>(Lq), static_cast<long long>(Lk),
                              static_cast<double>(kScratchCap) / (1 << 30)));
      const std::int64_t set_units = (b1 - b0) * H, per_member = (b1 - b0) * HK;
      const auto cap = static_cast<std::int64_t>(std::min<std::size_t>(fit, kMaxUnitsPerCall));
      const auto first_unit = static_cast<std::int64_t>(units.size());
      for (std::int64_t g = 0; g < group_; ++g)
        for (std::int64_t b = b0; b < b1; ++b)
          for (std::int64_t hk = 0; hk < HK; ++hk) units.push_back({b, hk * group_ + g});
      for (std::int64_t c0 = 0; c0 < set_units; c0 += cap) {
        const std::int64_t c1 = std::min(set_units, c0 + cap);
        Chunk c{static_cast<int>(Lq),
                static_cast<int>(Lk),
                static_cast<int>(padded_keys(Lk)),
                static_cast<int>(first_unit + c0),
                static_cast<int>(c1 - c0),
                {}};
        for (std::int64_t r0 = c0; r0 < c1;) {
          const std::int64_t g = r0 / per_member, r1 = std::min(c1, (g + 1) * per_member);
          c.groups.push_back({static_cast<int>(first_unit + r0), static_cast<int>(r1 - r0), group_ > 1 && g > 0});
          r0 = r1;
        }
        max_chunk_elems = std::max(max_chunk_elems, static_cast<std::size_t>(c1 - c0) * slot);
        max_units_ = std::max(max_units_, static_cast<int>(c1 - c0));
        chunks_.push_back(std::move(c));
      }
      b0 = b1;
    }

    // Workspace: F (fp32) | P/dS (dtype) | D (fp32, LSE's layout) | dK, dV accumulators | cuBLAS.
    const std::size_t f_bytes = round_up(max_chunk_elems * sizeof(float), 256);
    const std::size_t p_bytes = round_up(max_chunk_elems * el, 256);
    const std::size_t d_elems =
        static_cast<std::size_t>(H) * static_cast<std::size_t>(p.varlen ? p.lse_head_stride : B * p.seqlen_q);
    const std::size_t d_bytes = round_up(d_elems * sizeof(float), 256);
    const std::size_t acc_bytes = round_up(static_cast<std::size_t>(acc_elems_) * sizeof(float), 256);
    scratch_bytes_ = f_bytes + p_bytes;
    char* ws = static_cast<char*>(workspace(f_bytes + p_bytes + d_bytes + 2 * acc_bytes + kCublasWorkspace));
    char* f_base = ws;
    char* p_base = f_base + f_bytes;
    dsum_ = reinterpret_cast<float*>(p_base + p_bytes);
    acc_k_ = reinterpret_cast<float*>(p_base + p_bytes + d_bytes);
    acc_v_ = reinterpret_cast<float*>(p_base + p_bytes + d_bytes + acc_bytes);
    cublas_ws_ = p_base + p_bytes + d_bytes + 2 * acc_bytes;

    for (const ZeroRows& z : empty) {
      if (z.which == 0) {
        zeros_.push_back({static_cast<char*>(p.dq) + static_cast<std::size_t>(z.row * H * D) * el,
                          static_cast<std::size_t>(z.rows * H * D) * el});
      } else if (group_ > 1) {
        const auto off = static_cast<std::size_t>(z.row * HK * D), n = static_cast<std::size_t>(z.rows * HK * D);
        zeros_.push_back({acc_k_ + off, n * sizeof(float)});
        zeros_.push_back({acc_v_ + off, n * sizeof(float)});
      } else {
        const auto off = static_cast<std::size_t>(z.row * HK * D) * el,
                   n = static_cast<std::size_t>(z.rows * HK * D) * el;
        zeros_.push_back({static_cast<char*>(p.dk) + off, n});
        zeros_.push_back({static_cast<char*>(p.dv) + off, n});
      }
    }

    // Pointer table: kRoles arrays of one pointer per unit, then each unit's LSE index of row 0.
    const std::size_t n = units.size();
    std::vector<void*> ptrs(kRoles * n);
    std::vector<long long> row0(n);
    auto at = [&](const void* base, std::int64_t row, std::int64_t heads, std::int64_t head, std::size_t elem) {
      return static_cast<void*>(const_cast<char*>(static_cast<const char*>(base)) +
                                static_cast<std::size_t>((row * heads + head) * D) * elem);
    };
    for (const Chunk& c : chunks_) {
      const std::size_t slot = slot_elems(c.lq, c.lk);
      for (int s = 0; s < c.count; ++s) {
        const Unit& un = units[static_cast<std::size_t>(c.first + s)];
        const std::int64_t b = un.b, h = un.h, hk = h / group_;
        const std::int64_t rq = oq[static_cast<std::size_t>(b)], rk = ok[static_cast<std::size_t>(b)];
        const std::size_t i = static_cast<std::size_t>(c.first + s);
        ptrs[kQ * n + i] = at(p.q, rq, H, h, el);
        ptrs[kK * n + i] = at(p.k, rk, HK, hk, el);
        ptrs[kV * n + i] = at(p.v, rk, HK, hk, el);
        ptrs[kDO * n + i] = at(p.dout, rq, H, h, el);
        ptrs[kDQ * n + i] = at(p.dq, rq, H, h, el);
        ptrs[kDK * n + i] = group_ > 1 ? at(acc_k_, rk, HK, hk, sizeof(float)) : at(p.dk, rk, HK, hk, el);
        ptrs[kDV * n + i] = group_ > 1 ? at(acc_v_, rk, HK, hk, sizeof(float)) : at(p.dv, rk, HK, hk, el);
        ptrs[kF * n + i] = f_base + static_cast<std::size_t>(s) * slot * sizeof(float);
        ptrs[kP * n + i] = p_base + static_cast<std::size_t>(s) * slot * el;
        row0[i] = lse_index(p, static_cast<int>(b), static_cast<int>(h), 0, rq);
      }
    }
    units_ = n;
    if (n == 0) return;
    table_ = be_.allocate(kRoles * n * sizeof(void*) + n * sizeof(long long));
    GENBENCH_CHECK_CUDA(cudaMemcpy(table_.get(), ptrs.data(), ptrs.size() * sizeof(void*), cudaMemcpyHostToDevice));
    GENBENCH_CHECK_CUDA(cudaMemcpy(static_cast<char*>(table_.get()) + ptrs.size() * sizeof(void*), row0.data(),
                                   n * sizeof(long long), cudaMemcpyHostToDevice));
  }

  void* const* role(Role r, int first) const {
    return static_cast<void* const*>(table_.get()) + static_cast<std::size_t>(r) * units_ + first;
  }
  const long long* row0(int first) const {
    return reinterpret_cast<const long long*>(static_cast<void* const*>(table_.get()) + kRoles * units_) + first;
  }

  void run_chunk(const BackwardParams& p, const Chunk& c, cudaStream_t st) {
    const cudaDataType_t t = cuda_type(p.dtype), tkv = group_ > 1 ? CUDA_R_32F : t;
    const int d = p.head_dim, ldq = p.heads * p.head_dim, ldk = p.heads_kv * p.head_dim;
    const float scale = p.scale, one = 1.f, zero = 0.f;
    auto in = [&](Role r, int first) -> const void* const* { return role(r, first); };
    // S^T = K Q^T (column-major: row-major S is lq x lk, ld c.ld), scaled.
    GENBENCH_BWD_UNFUSED_CHECK_CUBLAS(cublasGemmBatchedEx(
        handle_, CUBLAS_OP_T, CUBLAS_OP_N, c.lk, c.lq, d, &scale, in(kK, c.first), t, ldk, in(kQ, c.first), t, ldq,
        &zero, role(kF, c.first), CUDA_R_32F, c.ld, c.count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    const dim3 grid(static_cast<unsigned>(c.lq), static_cast<unsigned>(c.count));
    if (p.dtype == DType::bf16)
      probabilities<__nv_bfloat16><<<grid, kRowThreads, 0, st>>>(role(kF, c.first), role(kP, c.first), row0(c.first),
                                                                 p.lse, c.lq, c.lk, c.ld, p.causal ? 1 : 0);
    else
      probabilities<__half><<<grid, kRowThreads, 0, st>>>(role(kF, c.first), role(kP, c.first), row0(c.first), p.lse,
                                                          c.lq, c.lk, c.ld, p.causal ? 1 : 0);
    GENBENCH_CHECK_LAUNCH();
    // dV^T = dO^T P per group member (row-major dV is lk x d).
    for (const Range& r : c.groups)
      GENBENCH_BWD_UNFUSED_CHECK_CUBLAS(cublasGemmBatchedEx(
          handle_, CUBLAS_OP_N, CUBLAS_OP_T, d, c.lk, c.lq, &one, in(kDO, r.first), t, ldq, in(kP, r.first), t, c.ld,
          r.accumulate ? &one : &zero, role(kDV, r.first), tkv, ldk, r.count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    // dP^T = V dO^T into F.
    GENBENCH_BWD_UNFUSED_CHECK_CUBLAS(cublasGemmBatchedEx(
        handle_, CUBLAS_OP_T, CUBLAS_OP_N, c.lk, c.lq, d, &one, in(kV, c.first), t, ldk, in(kDO, c.first), t, ldq,
        &zero, role(kF, c.first), CUDA_R_32F, c.ld, c.count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    if (p.dtype == DType::bf16)
      score_gradients<__nv_bfloat16><<<grid, kRowThreads, 0, st>>>(role(kF, c.first), role(kP, c.first), row0(c.first),
                                                                   p.lse, dsum_, c.lq, c.lk, c.ld, p.causal ? 1 : 0);
    else
      score_gradients<__half><<<grid, kRowThreads, 0, st>>>(role(kF, c.first), role(kP, c.first), row0(c.first), p.lse,
                                                            dsum_, c.lq, c.lk, c.ld, p.causal ? 1 : 0);
    GENBENCH_CHECK_LAUNCH();
    // dQ^T = K^T dS^T, scaled (row-major dQ is lq x d).
    GENBENCH_BWD_UNFUSED_CHECK_CUBLAS(cublasGemmBatchedEx(
        handle_, CUBLAS_OP_N, CUBLAS_OP_N, d, c.lq, c.lk, &scale, in(kK, c.first), t, ldk, in(kP, c.first), t, c.ld,
        &zero, role(kDQ, c.first), t, ldq, c.count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    // dK^T = Q^T dS per group member, scaled.
    for (const Range& r : c.groups)
      GENBENCH_BWD_UNFUSED_CHECK_CUBLAS(cublasGemmBatchedEx(
          handle_, CUBLAS_OP_N, CUBLAS_OP_T, d, c.lk, c.lq, &scale, in(kQ, r.first), t, ldq, in(kP, r.first), t, c.ld,
          r.accumulate ? &one : &zero, role(kDK, r.first), tkv, ldk, r.count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  cublasHandle_t handle_ = nullptr;
  int group_ = 1, max_units_ = 0;
  std::int64_t total_q_ = 0, acc_elems_ = 0;
  std::size_t units_ = 0, scratch_bytes_ = 0;
  std::vector<Chunk> chunks_;
  std::vector<Zero> zeros_;
  float *dsum_ = nullptr, *acc_k_ = nullptr, *acc_v_ = nullptr;
  void* cublas_ws_ = nullptr;
  DeviceBuffer table_;
};

class AttentionBackwardUnfused final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = AttentionShape::from(p);
    if (auto why = dtype_not_in(s.dtype, {DType::fp16, DType::bf16}); !why.empty()) return why;
    if (s.head_dim <= 0 || s.head_dim % 8 != 0 || s.head_dim > 256)
      return "head_dim must be a multiple of 8 up to 256 (16-byte rows for the D kernel and cuBLAS)";
    if (s.heads_kv <= 0 || s.heads % s.heads_kv != 0) return "heads must be a multiple of heads_kv";
    if (s.seqlen_q > INT_MAX || s.seqlen_k > INT_MAX || s.heads * s.head_dim > INT_MAX || s.batch * s.heads > INT_MAX)
      return "sizes beyond int (cuBLAS dimensions, leading dimensions and batch counts)";
    if (const std::size_t need = head_scratch_bytes(s); need > kScratchCap)
      return strprintf(
          "one head's S/dP (fp32) and P/dS (%s) of %lld x %lld take %.3g GiB, over the %.3g GiB scratch cap (the "
          "unfused backward materialises a head's whole score matrix)",
          dtype_name(s.dtype), static_cast<long long>(s.seqlen_q), static_cast<long long>(s.seqlen_k),
          static_cast<double>(need) / (1 << 30), static_cast<double>(kScratchCap) / (1 << 30));
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    auto c = std::make_unique<UnfusedBackwardCase>(AttentionShape::from(p), ctx);
    c->set_deterministic(p.boolean(attention_backward_axis::deterministic));
    return c;
  }
};

}  // namespace

}  // namespace genbench::attention_backward

namespace genbench {

std::unique_ptr<Implementation> make_attention_backward_unfused() {
  return std::make_unique<attention_backward::AttentionBackwardUnfused>();
}

}  // namespace genbench
