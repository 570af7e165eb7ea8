// gemm/cublaslt on the cuda backend: one cuBLASLt matmul per iteration.
//
// Row-major semantics as gemm/reference documents (D = op(A) op(B), A stored m x k or k x m,
// B stored k x n or n x k). cuBLASLt is column-major, so it computes the transpose instead:
// D^T (n x m, column-major) = op(B)^T op(A)^T, with the B buffer as cuBLASLt's "A" operand
// and the A buffer as its "B" operand. Row-major trans_a=n, trans_b=t is column-major "TN",
// the only layout cuBLASLt offers for fp8 and int8.
//
// Precisions: fp32 (fp32 math), tf32 (fp32 storage, CUBLAS_COMPUTE_32F_FAST_TF32), fp16 and
// bf16 (fp32 accumulation, output in the input type), fp8 e4m3/e5m2 (per-tensor scale factors
// for A and B, fp32 accumulation, bf16 output), int8 (int32 accumulation and output).
//
// Algorithm: the heuristic's best kCandidates candidates are each timed briefly with events
// and the fastest is kept; Case::variant() records it (heuristic rank, algorithm id, tile,
// stages, split-k, swizzle) so a result can be reproduced.
//
// Workspace: GENBENCH_CUBLASLT_WORKSPACE_MB (default 32 MiB), allocated per point and counted
// in its peak memory.
//
// cache=cold: the runner times run() alone, so there is no untimed slot to flush L2 between
// iterations. Instead the case holds enough copies of A, B and D that together they exceed
// twice the L2 size, and successive iterations rotate through them: each iteration reads
// operands that the previous ones evicted.
//
// mode=graph: K iterations (10..100, enough for a replay of >= 50 us) are captured into a
// CUDA Graph in prepare(); run() replays it and iterations_per_run() returns K.
#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "backend/cuda/check.h"
#include "backend/cuda/convert.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/graph.h"
#include "core/strings.h"
#include "kernels/gemm/cublaslt/device_fill.h"
#include "kernels/registry.h"
#include "ops/gemm.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

constexpr int kCandidates = 8;
constexpr double kGraphTargetSeconds = 50e-6;
constexpr float kScaleA = 0.75f, kScaleB = 1.25f;  // fp8 per-tensor scale factors
constexpr std::size_t kAlign = 256;

std::size_t workspace_bytes() {
  std::size_t mb = 32;
  if (const char* e = std::getenv("GENBENCH_CUBLASLT_WORKSPACE_MB")) {
    char* end = nullptr;
    const long v = std::strtol(e, &end, 10);
    if (end != e && v >= 0 && v <= 4096) mb = static_cast<std::size_t>(v);
  }
  return mb << 20;
}

cublasLtHandle_t lt_handle() {
  // One handle per process; it holds host state only and lives until exit.
  static const cublasLtHandle_t h = [] {
    cublasLtHandle_t x = nullptr;
    GENBENCH_CHECK_CUBLAS(cublasLtCreate(&x));
    return x;
  }();
  return h;
}

bool is_fp8(DType t) { return t == DType::fp8_e4m3 || t == DType::fp8_e5m2; }

struct LtTypes {
  cudaDataType_t ab, d, scale;
  cublasComputeType_t compute;
};

LtTypes lt_types(DType t) {
  switch (t) {
    case DType::fp32: return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::tf32: return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case DType::fp16: return {CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::fp8_e4m3: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::fp8_e5m2: return {CUDA_R_8F_E5M2, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::int8: return {CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I};
    default: return {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
  }
}

DType output_type(DType t) {
  if (t == DType::int8) return DType::int32;
  if (is_fp8(t)) return DType::bf16;
  return t;
}

std::size_t padded(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// The matmul descriptor and the three layouts of one problem (C shares D's layout).
struct LtProblem {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t x = nullptr, y = nullptr, d = nullptr;  // x: B buffer, y: A buffer
  cublasLtMatmulPreference_t pref = nullptr;

  LtProblem() = default;
  LtProblem(const LtProblem&) = delete;
  LtProblem& operator=(const LtProblem&) = delete;
  ~LtProblem() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (y) cublasLtMatrixLayoutDestroy(y);
    if (x) cublasLtMatrixLayoutDestroy(x);
    if (op) cublasLtMatmulDescDestroy(op);
  }

  void build(const GemmShape& s, std::size_t ws, const float* scale_x, const float* scale_y) {
    const LtTypes t = lt_types(s.dtype);
    GENBENCH_CHECK_CUBLAS(cublasLtMatmulDescCreate(&op, t.compute, t.scale));
    const cublasOperation_t opx = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opy = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    GENBENCH_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opx, sizeof(opx)));
    GENBENCH_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opy, sizeof(opy)));
    if (scale_x)
      GENBENCH_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_x, sizeof(scale_x)));
    if (scale_y)
      GENBENCH_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_y, sizeof(scale_y)));
    const auto m = static_cast<std::uint64_t>(s.m), n = static_cast<std::uint64_t>(s.n),
               k = static_cast<std::uint64_t>(s.k);
    // B buffer: row-major k x n ("n") is column-major n x k; row-major n x k ("t") is k x n.
    if (s.trans_b) GENBENCH_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&x, t.ab, k, n, static_cast<std::int64_t>(k)));
    else GENBENCH_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&x, t.ab, n, k, static_cast<std::int64_t>(n)));
    // A buffer: row-major m x k ("n") is column-major k x m; row-major k x m ("t") is m x k.
    if (s.trans_a) GENBENCH_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&y, t.ab, m, k, static_cast<std::int64_t>(m)));
    else GENBENCH_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&y, t.ab, k, m, static_cast<std::int64_t>(k)));
    GENBENCH_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&d, t.d, n, m, static_cast<std::int64_t>(n)));
    if (s.batch > 1) {
      const std::int32_t count = static_cast<std::int32_t>(s.batch);
      const std::int64_t sx = s.k * s.n, sy = s.m * s.k, sd = s.m * s.n;
      for (auto [layout, stride] : {std::pair{x, sx}, std::pair{y, sy}, std::pair{d, sd}}) {
        GENBENCH_CHECK_CUBLAS(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
        GENBENCH_CHECK_CUBLAS(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
      }
    }
    GENBENCH_CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    GENBENCH_CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  }

  // Up to `want` heuristic candidates; empty when cuBLASLt has none (status in *why).
  std::vector<cublasLtMatmulHeuristicResult_t> candidates(int want, std::string* why) const {
    std::vector<cublasLtMatmulHeuristicResult_t> r(static_cast<std::size_t>(want));
    int found = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_handle(), op, x, y, d, d, pref, want, r.data(), &found);
    if (st != CUBLAS_STATUS_SUCCESS) {
      if (why) *why = cublasLtGetStatusString(st);
      found = 0;
    }
    r.resize(static_cast<std::size_t>(std::max(found, 0)));
    r.erase(std::remove_if(r.begin(), r.end(), [](const auto& h) { return h.state != CUBLAS_STATUS_SUCCESS; }), r.end());
    return r;
  }
};

std::string describe_algo(const cublasLtMatmulAlgo_t& a, int rank, int of) {
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr) {
    std::int32_t v = -1;  // stays -1 when the attribute is absent
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&a, attr, &v, sizeof(v), &written) != CUBLAS_STATUS_SUCCESS) v = -1;
    return static_cast<int>(v);
  };
  return strprintf("h%d/%d id=%d tile=%d stages=%d splitk=%d swz=%d", rank, of, get(CUBLASLT_ALGO_CONFIG_ID),
                   get(CUBLASLT_ALGO_CONFIG_TILE_ID), get(CUBLASLT_ALGO_CONFIG_STAGES_ID),
                   get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM), get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING));
}

class CublasLtCase final : public Case {
 public:
  CublasLtCase(const GemmShape& s, Context& ctx) : s_(s), be_(cuda_backend_of(ctx.backend)), stream_(be_.stream()) {
    const std::size_t in = dtype_size(s.dtype), out = dtype_size(output_type(s.dtype));
    const auto bt = static_cast<std::size_t>(s.batch);
    na_ = static_cast<std::size_t>(s.m * s.k) * bt;
    nb_ = static_cast<std::size_t>(s.k * s.n) * bt;
    nd_ = static_cast<std::size_t>(s.m * s.n) * bt;
    pa_ = padded(na_ * in);
    pb_ = padded(nb_ * in);
    pd_ = padded(nd_ * out);
    if (s.cold) {
      const double l2 = static_cast<double>(be_.properties().l2CacheSize);
      const double set = static_cast<double>(pa_ + pb_ + pd_);
      copies_ = static_cast<std::size_t>(std::max(2.0, std::ceil(2.0 * l2 / set)));
    }
    a_ = ctx.backend.allocate(pa_ * copies_);
    b_ = ctx.backend.allocate(pb_ * copies_);
    d_ = ctx.backend.allocate(pd_ * copies_);
    ws_bytes_ = workspace_bytes();
    if (ws_bytes_) ws_ = ctx.backend.allocate(ws_bytes_);

    const float a_scale = s.dtype == DType::int8 ? 8.0f : 1.0f;
    fill_normal_device(a_.get(), static_cast<std::int64_t>(na_), ctx.seed + 11, s.dtype, a_scale, stream_);
    fill_normal_device(b_.get(), static_cast<std::int64_t>(nb_), ctx.seed + 12, s.dtype, a_scale, stream_);
    for (std::size_t c = 1; c < copies_; ++c) {
      GENBENCH_CHECK_CUDA(cudaMemcpyAsync(a_.as<unsigned char>() + c * pa_, a_.get(), na_ * in, cudaMemcpyDeviceToDevice, stream_));
      GENBENCH_CHECK_CUDA(cudaMemcpyAsync(b_.as<unsigned char>() + c * pb_, b_.get(), nb_ * in, cudaMemcpyDeviceToDevice, stream_));
    }
    const float* sx = nullptr;
    const float* sy = nullptr;
    if (is_fp8(s.dtype)) {
      // cuBLASLt's A operand is the B buffer and vice versa.
      // Each scale on its own 256-byte boundary, as separate allocations would be.
      scales_ = ctx.backend.allocate(2 * kAlign);
      GENBENCH_CHECK_CUDA(cudaMemcpyAsync(scales_.get(), &kScaleB, sizeof(float), cudaMemcpyHostToDevice, stream_));
      GENBENCH_CHECK_CUDA(cudaMemcpyAsync(scales_.as<unsigned char>() + kAlign, &kScaleA, sizeof(float),
                                          cudaMemcpyHostToDevice, stream_));
      sx = scales_.as<float>();
      sy = reinterpret_cast<const float*>(scales_.as<unsigned char>() + kAlign);
    }
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
    lt_.build(s, ws_bytes_, sx, sy);

    std::string why;
    const auto cands = lt_.candidates(kCandidates, &why);
    if (cands.empty()) throw Error("cuBLASLt offers no algorithm for this problem" + (why.empty() ? "" : ": " + why));
    double best = INFINITY;
    std::string first_failure;
    for (std::size_t i = 0; i < cands.size(); ++i) {
      algo_ = cands[i].algo;
      double t = INFINITY;
      try {
        t = time_on_stream(stream_, 3, [&] { matmul(0); });
      } catch (const std::exception& e) {
        cudaGetLastError();  // a candidate that fails to launch is skipped
        if (first_failure.empty()) first_failure = e.what();
        continue;
      }
      if (t < best) {
        best = t;
        best_index_ = i;
      }
    }
    if (!std::isfinite(best))
      throw Error(strprintf("none of the %zu cuBLASLt candidate algorithms ran; the first failed with: %s",
                            cands.size(), first_failure.c_str()));
    algo_ = cands[best_index_].algo;
    variant_ = describe_algo(algo_, static_cast<int>(best_index_), static_cast<int>(cands.size()));
    seconds_per_iteration_ = best;
    if (s.graph) {
      const int k = graph_iterations(best, kGraphTargetSeconds, 10, 100);
      graph_.capture(stream_, k, [&](int i) { matmul(static_cast<std::size_t>(i) % copies_); });
      variant_ += strprintf(" g%d", k);
    }
    if (copies_ > 1) variant_ += strprintf(" c%zu", copies_);
  }

  void matmul(std::size_t c) {
    const void* alpha = s_.dtype == DType::int8 ? static_cast<const void*>(&alpha_i_) : static_cast<const void*>(&alpha_f_);
    const void* beta = s_.dtype == DType::int8 ? static_cast<const void*>(&beta_i_) : static_cast<const void*>(&beta_f_);
    void* d = d_.as<unsigned char>() + c * pd_;
    GENBENCH_CHECK_CUBLAS(cublasLtMatmul(lt_handle(), lt_.op, alpha, b_.as<unsigned char>() + c * pb_, lt_.x,
                                         a_.as<unsigned char>() + c * pa_, lt_.y, beta, d, lt_.d, d, lt_.d, &algo_,
                                         ws_bytes_ ? ws_.get() : nullptr, ws_bytes_, stream_));
  }

  void run() override {
    if (!graph_.empty()) {
      graph_.launch(stream_);
      return;
    }
    matmul(next_);
    next_ = (next_ + 1) % copies_;
  }

  int iterations_per_run() const override { return graph_.empty() ? 1 : graph_.iterations(); }
  std::string variant() const override { return variant_; }

  Validation validate() override {
    const DType od = output_type(s_.dtype);
    // Poison copy 0 of D (NaN for floating outputs, a value no int8 product sum reaches for
    // int32), then run the timed path once: iteration 0 writes copy 0.
    GENBENCH_CHECK_CUDA(cudaMemsetAsync(d_.get(), od == DType::int32 ? 0x80 : 0xff, nd_ * dtype_size(od), stream_));
    next_ = 0;
    run();
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
    next_ = 0;

    const std::size_t in = dtype_size(s_.dtype);
    std::vector<unsigned char> ha(na_ * in), hb(nb_ * in), hd(nd_ * dtype_size(od));
    GENBENCH_CHECK_CUDA(cudaMemcpy(ha.data(), a_.get(), ha.size(), cudaMemcpyDeviceToHost));
    GENBENCH_CHECK_CUDA(cudaMemcpy(hb.data(), b_.get(), hb.size(), cudaMemcpyDeviceToHost));
    GENBENCH_CHECK_CUDA(cudaMemcpy(hd.data(), d_.get(), hd.size(), cudaMemcpyDeviceToHost));

    auto a = [&](std::int64_t bt, std::int64_t i, std::int64_t kk) {
      const std::int64_t off = bt * s_.m * s_.k + (s_.trans_a ? kk * s_.m + i : i * s_.k + kk);
      return convert::element(s_.dtype, ha.data(), static_cast<std::size_t>(off));
    };
    auto b = [&](std::int64_t bt, std::int64_t kk, std::int64_t j) {
      const std::int64_t off = bt * s_.k * s_.n + (s_.trans_b ? j * s_.k + kk : kk * s_.n + j);
      return convert::element(s_.dtype, hb.data(), static_cast<std::size_t>(off));
    };
    const double scale = is_fp8(s_.dtype) ? static_cast<double>(kScaleA) * static_cast<double>(kScaleB) : 1.0;

    Validation v;
    switch (s_.dtype) {
      case DType::fp32: v.tolerance = 1e-5; break;
      case DType::tf32: v.tolerance = 1e-4; break;
      case DType::fp16: v.tolerance = 2e-3; break;
      case DType::int8: v.tolerance = 0; break;
      default: v.tolerance = 1e-2; break;  // bf16 output (bf16, fp8)
    }
    const std::int64_t total = s_.batch * s_.m * s_.n;
    const std::int64_t step = std::max<std::int64_t>(1, total / 509);
    std::vector<std::int64_t> picks;
    for (std::int64_t e = 0; e < total; e += step) picks.push_back(e);
    picks.push_back(total - 1);
    double worst = 0;
    std::int64_t unwritten = 0;
    for (const std::int64_t e : picks) {
      const std::int64_t bt = e / (s_.m * s_.n), i = (e / s_.n) % s_.m, j = e % s_.n;
      double ref = 0, mag = 0;
      for (std::int64_t kk = 0; kk < s_.k; ++kk) {
        const double p = a(bt, i, kk) * b(bt, kk, j);
        ref += p;
        mag += std::fabs(p);
      }
      ref *= scale;
      mag *= scale;
      const double got = convert::element(od, hd.data(), static_cast<std::size_t>(e));
      double err;
      if (std::isnan(got) || (od == DType::int32 && got == static_cast<double>(static_cast<std::int32_t>(0x80808080u)))) {
        err = INFINITY;
        ++unwritten;
      } else if (s_.dtype == DType::int8) {
        err = std::fabs(got - ref);  // exact integer arithmetic
      } else {
        // Relative to the sum of |products|, the scale rounding errors grow with.
        err = std::fabs(got - ref) / std::max(mag, 1e-30);
      }
      worst = std::max(worst, err);
    }
    v.error = worst;
    v.ok = worst <= v.tolerance;
    v.detail = strprintf("max error %.3g on %zu sampled elements against a double reference of the inputs "
                         "copied back (tolerance %.1g)%s",
                         worst, picks.size(), v.tolerance,
                         unwritten ? strprintf("; %lld still poisoned", static_cast<long long>(unwritten)).c_str() : "");
    return v;
  }

  double seconds_per_iteration() const { return seconds_per_iteration_; }

 private:
  GemmShape s_;
  CudaBackend& be_;
  cudaStream_t stream_;
  std::size_t na_ = 0, nb_ = 0, nd_ = 0;  // elements of one copy
  std::size_t pa_ = 0, pb_ = 0, pd_ = 0;  // bytes of one copy, padded
  std::size_t copies_ = 1, next_ = 0;
  std::size_t ws_bytes_ = 0;
  DeviceBuffer a_, b_, d_, ws_, scales_;
  LtProblem lt_;
  cublasLtMatmulAlgo_t algo_{};
  std::size_t best_index_ = 0;
  std::string variant_;
  double seconds_per_iteration_ = 0;
  CapturedGraph graph_;
  const float alpha_f_ = 1.0f, beta_f_ = 0.0f;
  const std::int32_t alpha_i_ = 1, beta_i_ = 0;
};

class GemmCublasLt final : public Implementation {
 public:
  std::string name() const override { return "cublaslt"; }
  const Op& op() const override { return gemm_op(); }
  BackendKind backend() const override { return BackendKind::cuda; }
  std::string description() const override {
    return "cuBLASLt matmul (fp32/tf32/fp16/bf16/fp8/int8), fastest of the heuristic's top candidates";
  }

  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = GemmShape::from(p);
    const auto& prop = cuda_backend_of(ctx.backend).properties();
    const int cc = prop.major * 10 + prop.minor;
    if (is_fp8(s.dtype) && cc < 89)
      return strprintf("fp8 matmul needs compute capability 8.9 or newer (this GPU is %d.%d)", prop.major, prop.minor);
    if (s.m * s.n > INT32_MAX && s.batch > 1) return "batched matrices beyond 2^31 elements";
    if (s.batch > INT32_MAX) return "batch beyond 2^31";
    // Ask the heuristic for one algorithm: cuBLASLt's own word on type, layout and alignment.
    LtProblem lt;
    static const float dummy = 1.0f;  // fp8 needs scale pointers set; the heuristic never reads them
    const float* sp = is_fp8(s.dtype) ? &dummy : nullptr;
    lt.build(s, workspace_bytes(), sp, sp);
    std::string why;
    if (lt.candidates(1, &why).empty()) {
      std::string r = strprintf("cuBLASLt has no %s algorithm for trans_a=%c trans_b=%c m=%lld n=%lld k=%lld",
                                dtype_name(s.dtype), s.trans_a ? 't' : 'n', s.trans_b ? 't' : 'n',
                                static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k));
      if ((is_fp8(s.dtype) || s.dtype == DType::int8) && (s.trans_a || !s.trans_b))
        r += " (fp8 and int8 need trans_a=n trans_b=t, column-major TN)";
      if (!why.empty()) r += " [" + why + "]";
      return r;
    }
    return "";
  }

  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<CublasLtCase>(GemmShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_gemm_cublaslt() { return std::make_unique<GemmCublasLt>(); }

}  // namespace genbench
