// The fa3 backward kernel (kernels/attention_backward/fa3_sm90) run on the CPU: the kernel's
// source compiled as host code against an emulation of the Hopper PTX layer
// (tests/kernels/emulation/sm90/), its pre, main and post kernels launched block by block, and dQ,
// dK, dV compared with the double reference (tests/support/backward_problem.h) by the GPU tests'
// tolerances. Shapes: d64 and d128, fp16 and bf16, MHA/GQA/MQA, causal with sq < sk and sq > sk,
// varlen with lengths 1..130, several key and query blocks. This checks the kernel's indexing,
// masking, ring and barrier protocol (a deadlock fails) and the pieces' arithmetic; it does not
// check the hardware's reading of the descriptor layouts (the emulation states its own) or
// timing-dependent races. Exit status 0 when every shape is within tolerance.
// clang-format off
// The CUDA headers first, then the emulation (it redefines their qualifiers), then the kernels.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/common/sm90_ptx.cuh"
#include "kernels/common/fast_math.cuh"
#include "kernels/attention_backward/common/backward_rows.cuh"
#include "kernels/attention_backward/fa3_sm90/fa3_bwd_kernel.cuh"
#include "kernels/attention_backward/fa3_sm90/fa3_bwd_args.h"
// clang-format on

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ops/dtype.h"
#include "support/backward_problem.h"

namespace genbench::attention_backward::fa3 {
// The kernel's `extern __shared__ unsigned char smem_raw[]` (one block runs at a time).
alignas(1024) unsigned char smem_raw[emu::kSmem];
}  // namespace genbench::attention_backward::fa3

using namespace genbench;
using namespace genbench::backward_test;
namespace f3 = genbench::attention_backward::fa3;

static CUtensorMap map_of(const void* base, int batch, int seq, int heads, int d, int box_rows, bool packed) {
  emu::TmaMap m{};
  m.base = static_cast<const unsigned char*>(base);
  const std::uint64_t b = packed ? 1 : batch, s = packed ? static_cast<std::uint64_t>(batch) * seq : seq;
  m.dims[0] = d;
  m.dims[1] = heads;
  m.dims[2] = s;
  m.dims[3] = b;
  m.strides[0] = static_cast<std::uint64_t>(d) * 2;
  m.strides[1] = static_cast<std::uint64_t>(heads) * d * 2;
  m.strides[2] = s * m.strides[1];
  m.box[0] = 64;
  m.box[1] = 1;
  m.box[2] = box_rows;
  m.box[3] = 1;
  m.elem = 2;
  CUtensorMap out{};
  std::memcpy(&out, &m, sizeof m);
  return out;
}

template <typename T, int D>
static bool run(const Shape& s) {
  const Problem p = make_problem(s, 99);
  auto bits = [&](const std::vector<float>& x) {
    std::vector<std::uint16_t> b(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) b[i] = to_bits(s.dtype, x[i]);
    return b;
  };
  std::vector<std::uint16_t> q = bits(p.q), k = bits(p.k), v = bits(p.v), o = bits(p.o), dout = bits(p.dout);
  std::vector<std::uint16_t> dq(q.size(), 0xffff), dk(k.size(), 0xffff), dv(v.size(), 0xffff);
  // The module's parameters and workspace over the host arrays (workspace and outputs NaN or
  // 0xffff, so an unwritten element fails), 64 floats of slack past the workspace.
  attention_backward::BackwardParams bp{};
  bp.o = o.data();
  bp.dout = dout.data();
  bp.lse = p.lse.data();
  bp.dq = dq.data();
  bp.dk = dk.data();
  bp.dv = dv.data();
  bp.cu_q = p.cu_q.data();
  bp.cu_k = p.cu_k.data();
  bp.batch = p.batch;
  bp.heads = s.heads;
  bp.heads_kv = s.heads_kv;
  bp.head_dim = s.d;
  bp.seqlen_q = p.seqlen_q;
  bp.seqlen_k = p.seqlen_k;
  bp.rows_q = p.rows_q;
  bp.rows_k = p.rows_k;
  bp.lse_head_stride = s.varlen ? p.rows_q : p.seqlen_q;
  bp.varlen = s.varlen;
  bp.causal = s.causal;
  bp.dtype = s.dtype;
  bp.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.d)));
  std::vector<float> workspace(f3::workspace_layout(bp).bytes() / sizeof(float) + 64, NAN);
  const f3::Args a = f3::make_args(bp, workspace.data());
  const int lpad = a.lpad;
  // 16-byte alignment of the bulk copies' sources
  if (reinterpret_cast<std::uintptr_t>(a.lse2) % 16 || reinterpret_cast<std::uintptr_t>(a.dsum) % 16) {
    std::printf("unaligned host arrays\n");
    return false;
  }
  CUtensorMap mq{}, mk{}, mv{}, mdo{}, mdq{};
  if (p.seqlen_q > 0) {
    mq = map_of(q.data(), p.batch, p.seqlen_q, s.heads, s.d, 64, s.varlen);
    mdo = map_of(dout.data(), p.batch, p.seqlen_q, s.heads, s.d, 64, s.varlen);
    // The fp32 dQ accumulator [rows_q][heads][D], boxes of 32 columns x 1 x 64 rows.
    emu::TmaMap m{};
    m.base = reinterpret_cast<const unsigned char*>(a.dq_acc);
    m.dims[0] = s.d;
    m.dims[1] = s.heads;
    m.dims[2] = static_cast<std::uint64_t>(p.rows_q);
    m.dims[3] = 1;
    m.strides[0] = static_cast<std::uint64_t>(s.d) * 4;
    m.strides[1] = static_cast<std::uint64_t>(s.heads) * s.d * 4;
    m.box[0] = 32;
    m.box[1] = 1;
    m.box[2] = 64;
    m.box[3] = 1;
    m.elem = 4;
    std::memcpy(&mdq, &m, sizeof m);
  }
  if (p.seqlen_k > 0) {
    mk = map_of(k.data(), p.batch, p.seqlen_k, s.heads_kv, s.d, 128, s.varlen);
    mv = map_of(v.data(), p.batch, p.seqlen_k, s.heads_kv, s.d, 128, s.varlen);
  }
  const auto u = [](long long x) { return static_cast<unsigned>(x); };
  if (lpad > 0)
    emu::launch(dim3(u(lpad / (256 / (D / 8))), u(s.heads), u(p.batch)), dim3(256), 0,
                attention_backward::rows::bwd_pre<T, D, f3::Args>, a);
  if (p.seqlen_k > 0)
    emu::launch(dim3(u((p.seqlen_k + 127) / 128), u(s.heads_kv), u(p.batch)), dim3(384), f3::Layout<D>::kBytes,
                f3::bwd_main<T, D>, mq, mk, mv, mdo, mdq, a);
  const long long chunks = p.rows_q * s.heads * (D / 8);
  emu::launch(dim3(u(std::min(chunks / 256 + 1, 4096LL))), dim3(256), 0,
              attention_backward::rows::bwd_post<T, D, f3::Args>, a);
  const double e0 = relative_error(s.dtype, dq, p.dq), e1 = relative_error(s.dtype, dk, p.dk),
               e2 = relative_error(s.dtype, dv, p.dv);
  const double tol = tolerance(s.dtype);
  const bool ok = e0 <= tol && e1 <= tol && e2 <= tol;
  std::printf("%s %-50s dQ %.2e dK %.2e dV %.2e  (wgmma %lld, tma %lld B, reds %lld)\n", ok ? "ok  " : "FAIL",
              describe(s).c_str(), e0, e1, e2, emu::g_wgmma, emu::g_tma_bytes, emu::g_reds);
  return ok;
}

static bool dispatch(const Shape& s) {
  if (s.d == 64) return s.dtype == DType::bf16 ? run<__nv_bfloat16, 64>(s) : run<__half, 64>(s);
  return s.dtype == DType::bf16 ? run<__nv_bfloat16, 128>(s) : run<__half, 128>(s);
}

int main() {
  emu::g_smem = f3::smem_raw;
  emu::g_block_reset = emu::reset_block_state;
  std::vector<Shape> shapes;
  auto add = [&](int d, DType dt, int h, int hk, bool causal, bool varlen, std::vector<int> lq, std::vector<int> lk) {
    Shape s;
    s.d = d;
    s.dtype = dt;
    s.heads = h;
    s.heads_kv = hk;
    s.causal = causal;
    s.varlen = varlen;
    s.len_q = lq;
    s.len_k = lk;
    shapes.push_back(s);
  };
  for (int d : {64, 128}) {
    add(d, DType::bf16, 2, 2, false, false, {130}, {130});
    add(d, DType::fp16, 2, 2, true, false, {130}, {130});
    add(d, DType::bf16, 4, 2, true, false, {77}, {200});
    add(d, DType::fp16, 2, 1, true, false, {200}, {77});
    add(d, DType::bf16, 4, 2, true, true, {1, 17, 130}, {17, 130, 1});
    add(d, DType::fp16, 2, 1, false, true, {130, 1, 17}, {129, 65, 17});
    add(d, DType::bf16, 4, 2, true, false, {300}, {300});
  }
  int bad = 0;
  for (const Shape& s : shapes) bad += dispatch(s) ? 0 : 1;
  std::printf("%d of %zu shapes failed\n", bad, shapes.size());
  return bad ? 1 : 0;
}
