// Standalone check of the decode kernel (kernels/decode/fa3_sm90) on one GPU, built by
// scripts/device/decode-check.sh without the rest of the tree:
//   decode_check validate   odd lengths, GQA/MQA, head_dim 64/128/256, new tokens 1-16, pages
//                           0/16/64/128/256, bf16/fp16/fp8 K/V, forced splits: each against the
//                           fp64 host reference; paged runs also against the contiguous layout
//                           of the same data (bit-exact); graph replays with new lengths.
//   decode_check small      one small paged case of each K/V type (for compute-sanitizer).
//   decode_check bench R    the copy ceiling and the target shapes, R rounds, CSV lines.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/decode/common/decode_reference.h"
#include "kernels/decode/fa3_sm90/decode_sm90.h"
#include "ops/decode/decode_layout.h"

using namespace genbench;
using namespace genbench::decode;

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

namespace {

__device__ std::uint64_t sm64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Normal(0,1) x scale, stored as bf16 (0), fp16 (1) or e4m3 (2).
__global__ void fill_kernel(void* out, long long n, std::uint64_t seed, int type, float scale) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const std::uint64_t a = sm64(seed ^ sm64(2 * i)), b = sm64(seed ^ sm64(2 * i + 1));
    const float u1 = ((a >> 40) + 0.5f) * (1.0f / 16777216.0f), u2 = (b >> 40) * (1.0f / 16777216.0f);
    const float x = scale * sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
    if (type == 0) reinterpret_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16(x);
    else if (type == 1) reinterpret_cast<__half*>(out)[i] = __float2half(x);
    else reinterpret_cast<__nv_fp8_e4m3*>(out)[i] = __nv_fp8_e4m3(x);
  }
}

int type_code(fa3::Elem e) { return e == fa3::Elem::bf16 ? 0 : e == fa3::Elem::fp16 ? 1 : 2; }
int elem_bytes(fa3::Elem e) { return e == fa3::Elem::fp8_e4m3 ? 1 : 2; }
DType dtype_of(fa3::Elem e) {
  return e == fa3::Elem::bf16 ? DType::bf16 : e == fa3::Elem::fp16 ? DType::fp16 : DType::fp8_e4m3;
}
const char* ename(fa3::Elem e) { return e == fa3::Elem::bf16 ? "bf16" : e == fa3::Elem::fp16 ? "fp16" : "fp8"; }

std::vector<float> to_float(const std::vector<std::uint8_t>& raw, fa3::Elem t, float scale) {
  const std::size_t n = raw.size() / elem_bytes(t);
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (t == fa3::Elem::fp8_e4m3) {
      __nv_fp8_e4m3 x;
      x.__x = raw[i];
      out[i] = static_cast<float>(x) * scale;
    } else {
      std::uint16_t u;
      std::memcpy(&u, &raw[2 * i], 2);
      if (t == fa3::Elem::bf16) {
        __nv_bfloat16_raw r;
        r.x = u;
        out[i] = __bfloat162float(__nv_bfloat16(r)) * scale;
      } else {
        __half_raw r;
        r.x = u;
        out[i] = __half2float(__half(r)) * scale;
      }
    }
  }
  return out;
}

std::vector<std::uint8_t> download(const void* p, std::size_t bytes) {
  std::vector<std::uint8_t> v(bytes);
  CK(cudaMemcpy(v.data(), p, bytes, cudaMemcpyDeviceToHost));
  return v;
}

struct Spec {
  int batch, heads, heads_kv, d, n, cache, page;
  bool varlen, causal;
  fa3::Elem q, kv;
  int splits = 0;  // 0: planned
  bool rotate = false;
};

std::string describe(const Spec& s) {
  char b[200];
  std::snprintf(
      b, sizeof b, "b=%d h=%d/%d d=%d new=%d cache=%d page=%d%s%s q=%s kv=%s%s", s.batch, s.heads, s.heads_kv, s.d, s.n,
      s.cache, s.page, s.varlen ? " varlen" : "", s.causal ? " causal" : "", ename(s.q), ename(s.kv),
      (std::string(s.splits ? " splits=" + std::to_string(s.splits) : "") + (s.rotate ? " rotate" : "")).c_str());
  return b;
}

// Device buffers of one problem.
struct Problem {
  Spec s;
  DecodeDims dims;
  void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *ws = nullptr;
  float* lse = nullptr;
  int *table = nullptr, *lens = nullptr;
  std::vector<std::int32_t> h_table;
  std::vector<std::int64_t> h_lens;
  float kv_descale = 1;
  std::size_t q_bytes = 0, pool_bytes = 0;

  static DecodeDims dims_of(const Spec& s) {
    DecodeDims dims;
    dims.batch = s.batch;
    dims.heads = s.heads;
    dims.heads_kv = s.heads_kv;
    dims.head_dim = s.d;
    dims.new_tokens = s.n;
    dims.cache = s.cache;
    dims.page_size = s.page;
    dims.varlen = s.varlen;
    dims.causal = s.causal;
    dims.kv_bytes = elem_bytes(s.kv);
    return dims;
  }
  explicit Problem(const Spec& sp, std::uint64_t seed) : s(sp), dims(dims_of(sp)) {
    kv_descale = s.kv == fa3::Elem::fp8_e4m3 ? 1.0f / 64 : 1.0f;
    q_bytes = static_cast<std::size_t>(s.batch) * s.n * s.heads * s.d * 2;
    pool_bytes = static_cast<std::size_t>(dims.pool_elements()) * elem_bytes(s.kv);
    CK(cudaMalloc(&q, q_bytes));
    CK(cudaMalloc(&o, q_bytes));
    CK(cudaMalloc(&lse, q_bytes / 2 / s.d * sizeof(float)));
    CK(cudaMalloc(&k, pool_bytes));
    CK(cudaMalloc(&v, pool_bytes));
    fill_kernel<<<1024, 256>>>(q, q_bytes / 2, seed + 1, type_code(s.q), 1.0f);
    fill_kernel<<<4096, 256>>>(k, dims.pool_elements(), seed + 2, type_code(s.kv), 1.0f / kv_descale);
    fill_kernel<<<4096, 256>>>(v, dims.pool_elements(), seed + 3, type_code(s.kv), 1.0f / kv_descale);
    h_table = block_table(dims, seed);
    CK(cudaMalloc(&table, h_table.size() * 4));
    CK(cudaMemcpy(table, h_table.data(), h_table.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&lens, s.batch * 4));
    set_lengths(cache_lengths(dims, 0));
  }
  ~Problem() {
    for (void* p : {q, k, v, o, ws, static_cast<void*>(lse), static_cast<void*>(table), static_cast<void*>(lens)})
      if (p) cudaFree(p);
  }
  void set_lengths(const std::vector<std::int64_t>& l) {
    h_lens = l;
    std::vector<int> li(l.begin(), l.end());
    CK(cudaMemcpy(lens, li.data(), li.size() * 4, cudaMemcpyHostToDevice));
  }
  fa3::Arguments args() const {
    fa3::Arguments a;
    a.q = q;
    a.k = k;
    a.v = v;
    a.o = o;
    a.lse = lse;
    a.block_table = table;
    a.cache_len = lens;
    a.batch = s.batch;
    a.heads = s.heads;
    a.heads_kv = s.heads_kv;
    a.head_dim = s.d;
    a.new_tokens = s.n;
    a.max_cache = s.cache;
    a.page_size = s.page;
    a.pages_per_seq = static_cast<int>(dims.pages_per_seq());
    a.causal = s.causal;
    a.scale = 1.0f / std::sqrt(static_cast<float>(s.d));
    a.k_descale = a.v_descale = kv_descale;
    a.q_type = s.q;
    a.kv_type = s.kv;
    a.num_splits = s.splits;
    a.rotate = s.rotate;
    return a;
  }
  void poison() {
    CK(cudaMemset(o, 0xff, q_bytes));
    CK(cudaMemset(lse, 0xff, q_bytes / 2 / s.d * sizeof(float)));
  }
  HostDecodeData host() const {
    HostDecodeData x;
    x.dims = dims;
    x.q_dtype = dtype_of(s.q);
    x.kv_dtype = dtype_of(s.kv);
    x.scale = 1.0f / std::sqrt(static_cast<float>(s.d));
    x.lengths = h_lens;
    x.table = h_table;
    x.q = to_float(download(q, q_bytes), s.q, 1.0f);
    x.k = to_float(download(k, pool_bytes), s.kv, kv_descale);
    x.v = to_float(download(v, pool_bytes), s.kv, kv_descale);
    x.o = to_float(download(o, q_bytes), s.q, 1.0f);
    x.lse.resize(q_bytes / 2 / s.d);
    CK(cudaMemcpy(x.lse.data(), lse, x.lse.size() * 4, cudaMemcpyDeviceToHost));
    return x;
  }
};

int g_sms = 132;

fa3::Launcher make_launcher(Problem& pr) {
  fa3::Launcher l(pr.args(), g_sms);
  if (l.workspace_size() && !pr.ws) {
    CK(cudaMalloc(&pr.ws, l.workspace_size()));
    CK(cudaMemset(pr.ws, 0, l.workspace_size()));  // the split counters start at 0
  }
  l.set_workspace(pr.ws);
  return l;
}

// The same data in the contiguous layout (page 0): pools rearranged on the host.
bool paged_matches_contiguous(Problem& pr, const fa3::Launcher& paged, std::string& detail) {
  Spec cs = pr.s;
  cs.page = 0;
  Problem cp(cs, 999);
  const std::size_t row = static_cast<std::size_t>(pr.s.heads_kv) * pr.s.d * elem_bytes(pr.s.kv);
  for (void* const* pair : {&pr.k, &pr.v}) {
    const auto raw = download(*pair, pr.pool_bytes);
    std::vector<std::uint8_t> out(cp.pool_bytes, 0);
    for (int b = 0; b < pr.s.batch; ++b)
      for (int j = 0; j < pr.s.cache; ++j) {
        const std::int64_t src = pool_row(pr.dims, pr.h_table, b, j);
        std::memcpy(&out[(static_cast<std::size_t>(b) * pr.s.cache + j) * row], &raw[src * row], row);
      }
    CK(cudaMemcpy(pair == &pr.k ? cp.k : cp.v, out.data(), out.size(), cudaMemcpyHostToDevice));
  }
  CK(cudaMemcpy(cp.q, pr.q, pr.q_bytes, cudaMemcpyDeviceToDevice));
  cp.set_lengths(pr.h_lens);
  fa3::Launcher lc = make_launcher(cp);
  cp.poison();
  lc.run(0);
  pr.poison();
  paged.run(0);
  CK(cudaDeviceSynchronize());
  const auto a = download(pr.o, pr.q_bytes), b = download(cp.o, cp.q_bytes);
  std::size_t diff = 0;
  for (std::size_t i = 0; i < a.size(); i += 2)
    if (std::memcmp(&a[i], &b[i], 2) != 0) ++diff;
  char buf[160];
  std::snprintf(buf, sizeof buf, "paged vs contiguous (%s / %s): %zu of %zu O elements differ", paged.variant().c_str(),
                lc.variant().c_str(), diff, a.size() / 2);
  detail = buf;
  return diff == 0;
}

int validate_one(const Spec& s, bool graph, std::uint64_t seed) {
  Problem pr(s, seed);
  fa3::Launcher l = make_launcher(pr);
  int fails = 0;
  l.run(0);  // two runs first: the split counters must be back at zero for the validated one
  l.run(0);
  pr.poison();
  l.run(0);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  DecodeCheck c = validate_decode(pr.host(), seed, 3e7);
  std::printf("%s %s [%s]: %s\n", c.ok ? "PASS" : "FAIL", describe(s).c_str(), l.variant().c_str(), c.detail.c_str());
  fails += !c.ok;
  if (s.page > 0) {
    std::string d;
    const bool ok = paged_matches_contiguous(pr, l, d);
    std::printf("%s %s: %s\n", ok ? "PASS" : "FAIL", describe(s).c_str(), d.c_str());
    fails += !ok;
  }
  if (graph) {
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaGraph_t gph;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    l.run(st);
    CK(cudaStreamEndCapture(st, &gph));
    CK(cudaGraphInstantiate(&ge, gph, 0));
    for (std::uint64_t draw : {1ull, 2ull}) {
      DecodeDims dd = pr.dims;
      dd.varlen = true;  // new lengths for the same captured graph
      pr.set_lengths(cache_lengths(dd, draw));
      pr.poison();
      CK(cudaGraphLaunch(ge, st));
      CK(cudaStreamSynchronize(st));
      DecodeCheck g = validate_decode(pr.host(), seed + draw, 3e7);
      std::printf("%s %s graph replay, lengths draw %llu (first %lld): %s\n", g.ok ? "PASS" : "FAIL",
                  describe(s).c_str(), static_cast<unsigned long long>(draw), static_cast<long long>(pr.h_lens[0]),
                  g.detail.c_str());
      fails += !g.ok;
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(gph);
    cudaStreamDestroy(st);
  }
  return fails;
}

double time_ms(const fa3::Launcher& l, int iters) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i) l.run(0);
  CK(cudaEventRecord(a));
  for (int i = 0; i < iters; ++i) l.run(0);
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms / iters;
}

double copy_ceiling_GBps() {
  const std::size_t bytes = std::size_t{2} << 30;
  void *a, *b;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  for (int i = 0; i < 3; ++i) CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0));
  for (int i = 0; i < 10; ++i) CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  cudaFree(a);
  cudaFree(b);
  return 2.0 * bytes * 10 / (ms * 1e-3) / 1e9;  // read + write
}

}  // namespace

// The bench's shapes: the serving points of docs/decode.md, then the A/B set (the rotated
// block order, other split counts).
std::vector<Spec> bench_specs() {
  using E = fa3::Elem;
  return {
      {8, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::bf16, 0},
      {8, 32, 8, 128, 1, 8192, 16, false, true, E::bf16, E::bf16, 0},
      {8, 32, 8, 128, 1, 8192, 64, false, true, E::bf16, E::bf16, 0},
      {8, 32, 8, 128, 1, 8192, 256, false, true, E::bf16, E::bf16, 0},
      {8, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::fp8_e4m3, 0},
      {8, 32, 8, 128, 1, 8192, 16, false, true, E::bf16, E::fp8_e4m3, 0},
      {64, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::bf16, 0},
      {64, 32, 8, 128, 1, 8192, 16, false, true, E::bf16, E::bf16, 0},
      {64, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::fp8_e4m3, 0},
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::bf16, 0},
      {16, 64, 8, 128, 1, 16384, 64, false, true, E::bf16, E::bf16, 0},
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::fp8_e4m3, 0},
      {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::bf16, 0},
      {1, 32, 8, 128, 1, 131072, 64, false, true, E::bf16, E::bf16, 0},
      {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::fp8_e4m3, 0},
      {8, 32, 8, 128, 4, 8192, 16, false, true, E::bf16, E::bf16, 0},
      {8, 32, 8, 128, 16, 8192, 16, false, true, E::bf16, E::bf16, 0},
      {64, 32, 8, 128, 1, 8192, 16, true, true, E::bf16, E::bf16, 0},
      // A/B: the rotated block order, and other split counts
      {8, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::bf16, 0, true},
      {8, 32, 8, 128, 1, 8192, 16, false, true, E::bf16, E::bf16, 0, true},
      {8, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::fp8_e4m3, 0, true},
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::bf16, 0, true},
      {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::bf16, 0, true},
      {64, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::bf16, 0, true},
      {8, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::bf16, 8},
      {8, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::bf16, 16},
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::bf16, 4},
      {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::bf16, 66},
      {64, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::fp8_e4m3, 1},
  };
}

// The splits mode's shapes: fp8 K/V, the 128K sequence and 70B b=16 at forced split counts beside the
// planned ones (a bf16 shape first, to be timed again later in the list).
std::vector<Spec> split_specs() {
  using E = fa3::Elem;
  return {
      {8, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::bf16, 0},
      {8, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::fp8_e4m3, 0},
      {8, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::fp8_e4m3, 4},
      {8, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::fp8_e4m3, 8},
      {8, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::fp8_e4m3, 12},
      {8, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::bf16, 0},
      {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::fp8_e4m3, 0},
      {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::fp8_e4m3, 25},
      {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::fp8_e4m3, 33},
      {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::fp8_e4m3, 66},
      {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::fp8_e4m3, 98},
      {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::bf16, 0},
      {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::bf16, 17},
      {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::bf16, 25},
      {64, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::fp8_e4m3, 0},
      {64, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::fp8_e4m3, 2},
      {64, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::fp8_e4m3, 4},
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::fp8_e4m3, 0},
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::fp8_e4m3, 2},
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::fp8_e4m3, 4},
      // 70B b=16 bf16: its planned 2 splits are one wave of 256 CTAs; more, shorter CTAs.
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::bf16, 0},
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::bf16, 4},
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::bf16, 8},
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::bf16, 16},
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::bf16, 33},
      {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::bf16, 0},
  };
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "validate";
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  std::printf("device %s, %d SMs\n", prop.name, g_sms);
  using E = fa3::Elem;
  if (mode == "validate" || mode == "small") {
    std::vector<std::pair<Spec, bool>> cases;
    if (mode == "small") {
      cases = {{{2, 8, 2, 128, 1, 300, 16, true, true, E::bf16, E::bf16, 0}, false},
               {{2, 8, 2, 128, 3, 300, 64, true, true, E::bf16, E::fp8_e4m3, 3}, false},
               {{1, 4, 1, 64, 2, 200, 16, false, true, E::fp16, E::fp16, 2}, false},
               {{1, 4, 4, 64, 1, 130, 0, false, false, E::bf16, E::bf16, 0}, false},
               {{1, 8, 1, 256, 4, 150, 16, false, true, E::bf16, E::bf16, 0}, false},
               {{2, 8, 2, 128, 1, 300, 16, true, true, E::bf16, E::bf16, 4, true}, false}};
    } else {
      cases = {
          // Llama-3-8B group (4 query heads per KV head), odd lengths, each page size.
          {{3, 32, 8, 128, 1, 1000, 0, true, true, E::bf16, E::bf16, 0}, true},
          {{3, 32, 8, 128, 1, 1000, 16, true, true, E::bf16, E::bf16, 0}, true},
          {{3, 32, 8, 128, 1, 1000, 64, true, true, E::bf16, E::bf16, 0}, false},
          {{3, 32, 8, 128, 1, 1000, 128, true, true, E::bf16, E::bf16, 0}, false},
          {{3, 32, 8, 128, 1, 1000, 256, true, true, E::bf16, E::bf16, 0}, false},
          {{2, 32, 8, 128, 1, 777, 16, true, true, E::bf16, E::bf16, 5}, false},   // forced splits
          {{2, 64, 8, 128, 1, 3001, 64, true, true, E::bf16, E::bf16, 0}, false},  // Llama-3-70B group
          // speculative decoding: new tokens 2..16, causal among them (rows 16..128 per KV head)
          {{2, 32, 8, 128, 4, 517, 16, true, true, E::bf16, E::bf16, 0}, true},
          {{2, 32, 8, 128, 16, 517, 64, true, true, E::bf16, E::bf16, 0}, true},
          {{2, 64, 8, 128, 16, 300, 16, true, true, E::bf16, E::bf16, 3}, false},
          {{2, 32, 8, 128, 5, 400, 0, false, false, E::bf16, E::bf16, 0}, false},
          // MQA, MHA, head_dim 64 / 256, fp16
          {{2, 16, 1, 128, 1, 1500, 16, true, true, E::bf16, E::bf16, 0}, false},
          {{4, 8, 8, 64, 1, 900, 16, true, true, E::fp16, E::fp16, 0}, false},
          {{2, 16, 4, 256, 2, 700, 64, true, true, E::bf16, E::bf16, 0}, false},
          {{2, 16, 4, 256, 2, 700, 64, true, true, E::fp16, E::fp16, 0}, false},
          // fp8 K/V (per-tensor descale 1/64)
          {{3, 32, 8, 128, 1, 1000, 16, true, true, E::bf16, E::fp8_e4m3, 0}, true},
          {{3, 32, 8, 128, 1, 1000, 0, true, true, E::bf16, E::fp8_e4m3, 0}, false},
          {{2, 64, 8, 128, 8, 600, 64, true, true, E::bf16, E::fp8_e4m3, 0}, false},
          {{2, 16, 4, 64, 1, 555, 16, true, true, E::fp16, E::fp8_e4m3, 0}, false},
          {{2, 16, 4, 256, 3, 555, 128, true, true, E::bf16, E::fp8_e4m3, 2}, false},
          // one long sequence split over the SMs
          {{1, 32, 8, 128, 1, 20000, 64, false, true, E::bf16, E::bf16, 0}, true},
          // the rotated block order (A/B switch), empty splits of short sequences
          {{3, 32, 8, 128, 1, 1000, 16, true, true, E::bf16, E::bf16, 0, true}, true},
          {{3, 32, 8, 128, 2, 2000, 0, true, true, E::bf16, E::fp8_e4m3, 12, true}, false},
          {{2, 32, 8, 128, 16, 700, 64, true, true, E::bf16, E::bf16, 0, true}, false},
      };
    }
    int fails = 0;
    std::uint64_t seed = 100;
    for (auto& [s, graph] : cases) fails += validate_one(s, graph, seed++);
    std::printf("%s: %d failure(s)\n", mode.c_str(), fails);
    return fails ? 1 : 0;
  }
  if (mode == "bench" || mode == "splits") {
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
    const std::vector<Spec> specs = mode == "splits" ? split_specs() : bench_specs();
    std::vector<std::vector<double>> ms(specs.size());
    std::vector<double> ceil;
    std::vector<std::string> var(specs.size());
    for (int r = 0; r < rounds; ++r) {
      ceil.push_back(copy_ceiling_GBps());
      {  // the first shape timed after the copy ceiling ran 8-11% slow (docs/lab/decode.md): one untimed
        Problem pr(specs[0], 7);
        fa3::Launcher l = make_launcher(pr);
        time_ms(l, 50);
      }
      for (std::size_t i = 0; i < specs.size(); ++i) {
        Problem pr(specs[i], 7 + i);
        fa3::Launcher l = make_launcher(pr);
        const DecodeBytes by = bytes(pr.dims, pr.h_lens);
        const int iters = std::max(10, std::min(200, static_cast<int>(2e10 / by.total())));
        ms[i].push_back(time_ms(l, iters));
        var[i] = l.variant();
      }
    }
    auto med = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double c = med(ceil);
    std::printf("copy_ceiling_GBps,%.1f,rounds", c);
    for (double x : ceil) std::printf(",%.1f", x);
    std::printf("\n");
    std::printf("shape,variant,time_us_median,time_us_rounds,GBps,ceiling_fraction,tokens_per_s,tflops\n");
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const DecodeDims dd = Problem::dims_of(specs[i]);
      const auto lens = cache_lengths(dd, 0);
      const double t = med(ms[i]) * 1e-3;
      const double gbps = bytes(dd, lens).total() / t / 1e9;
      std::printf("%s,%s,%.2f,%.2f/%.2f/%.2f,%.1f,%.3f,%.4g,%.2f\n", describe(specs[i]).c_str(), var[i].c_str(),
                  t * 1e6, ms[i][0] * 1e3, ms[i][std::min<std::size_t>(1, ms[i].size() - 1)] * 1e3, ms[i].back() * 1e3,
                  gbps, gbps / c, specs[i].batch * specs[i].n / t, flops(dd, lens) / t / 1e12);
    }
    return 0;
  }
  if (mode == "profile") {  // a few launches of each shape, for Nsight Compute
    const std::vector<Spec> specs = {
        {64, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::bf16, 0},
        {64, 32, 8, 128, 1, 8192, 0, false, true, E::bf16, E::fp8_e4m3, 0},
        {16, 64, 8, 128, 1, 16384, 0, false, true, E::bf16, E::bf16, 0},
        {1, 32, 8, 128, 1, 131072, 0, false, true, E::bf16, E::bf16, 0},
    };
    for (std::size_t i = 0; i < specs.size(); ++i) {
      Problem pr(specs[i], 7 + i);
      fa3::Launcher l = make_launcher(pr);
      for (int r = 0; r < 3; ++r) l.run(0);
      CK(cudaDeviceSynchronize());
      std::printf("%s %s: 3 launches\n", describe(specs[i]).c_str(), l.variant().c_str());
    }
    return 0;
  }
  std::fprintf(stderr, "usage: decode_check validate|small|bench [rounds]|splits [rounds]|profile\n");
  return 2;
}
