// Shared cuBLASLt pieces (lt_matmul.h): moved out of cuda_gemm_cublaslt.cpp so overlap/cuda
// and the GEMM ceilings run exactly the same GEMM.
#include "kernels/gemm/cublaslt/lt_matmul.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "backend/cuda/check.h"
#include "backend/cuda/convert.h"
#include "backend/cuda/graph.h"
#include "core/error.h"
#include "core/strings.h"

namespace genbench {

namespace {

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

const float kAlphaF = 1.0f, kBetaF = 0.0f;
const std::int32_t kAlphaI = 1, kBetaI = 0;

}  // namespace

std::size_t lt_workspace_bytes(const std::string& setting) {
  std::size_t mb = 32;
  std::string text = setting, what = "cublaslt_workspace_mb";
  if (text == "auto") {
    const char* e = std::getenv("GENBENCH_CUBLASLT_WORKSPACE_MB");
    text = e ? e : "";
    what = "GENBENCH_CUBLASLT_WORKSPACE_MB";
  }
  if (!text.empty()) {
    double v = 0;
    if (!parse_number(text.c_str(), v) || !(v >= 0) || v > 4096 || v != std::floor(v))
      throw UsageError(what + "='" + text + "' is not a whole number of MiB from 0 to 4096 (auto: 32)");
    mb = static_cast<std::size_t>(v);
  }
  return mb << 20;
}

cublasLtHandle_t lt_handle() {
  static const cublasLtHandle_t h = [] {
    cublasLtHandle_t x = nullptr;
    GENBENCH_CHECK_CUBLAS(cublasLtCreate(&x));
    return x;
  }();
  return h;
}

bool lt_is_fp8(DType t) { return t == DType::fp8_e4m3 || t == DType::fp8_e5m2; }

DType lt_output_type(DType t) {
  if (t == DType::int8) return DType::int32;
  if (lt_is_fp8(t)) return DType::bf16;
  return t;
}

LtProblem::~LtProblem() {
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (d) cublasLtMatrixLayoutDestroy(d);
  if (y) cublasLtMatrixLayoutDestroy(y);
  if (x) cublasLtMatrixLayoutDestroy(x);
  if (op) cublasLtMatmulDescDestroy(op);
}

void LtProblem::build(const GemmShape& s, std::size_t ws, const float* scale_x, const float* scale_y) {
  const LtTypes t = lt_types(s.dtype);
  GENBENCH_CHECK_CUBLAS(cublasLtMatmulDescCreate(&op, t.compute, t.scale));
  const cublasOperation_t opx = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opy = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  GENBENCH_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opx, sizeof(opx)));
  GENBENCH_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opy, sizeof(opy)));
  if (scale_x)
    GENBENCH_CHECK_CUBLAS(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_x, sizeof(scale_x)));
  if (scale_y)
    GENBENCH_CHECK_CUBLAS(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_y, sizeof(scale_y)));
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
      GENBENCH_CHECK_CUBLAS(
          cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
      GENBENCH_CHECK_CUBLAS(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                             &stride, sizeof(stride)));
    }
  }
  GENBENCH_CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  GENBENCH_CHECK_CUBLAS(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
}

std::vector<cublasLtMatmulHeuristicResult_t> LtProblem::candidates(int want, std::string* why) const {
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

std::string lt_describe_algo(const cublasLtMatmulAlgo_t& a, int rank, int of) {
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

LtGemm::LtGemm(const GemmShape& s, void* workspace, std::size_t ws_bytes, const float* scale_a, const float* scale_b)
    : s_(s), ws_(workspace), ws_bytes_(workspace ? ws_bytes : 0) {
  // cuBLASLt's A operand is the B buffer and vice versa.
  lt_.build(s, ws_bytes_, scale_b, scale_a);
}

void LtGemm::run(const void* a, const void* b, void* d, cudaStream_t stream) const {
  const bool i8 = s_.dtype == DType::int8;
  const void* alpha = i8 ? static_cast<const void*>(&kAlphaI) : static_cast<const void*>(&kAlphaF);
  const void* beta = i8 ? static_cast<const void*>(&kBetaI) : static_cast<const void*>(&kBetaF);
  GENBENCH_CHECK_CUBLAS(cublasLtMatmul(lt_handle(), lt_.op, alpha, b, lt_.x, a, lt_.y, beta, d, lt_.d, d, lt_.d,
                                       tuned_ ? &algo_ : nullptr, ws_, ws_bytes_, stream));
}

void LtGemm::tune(const void* a, const void* b, void* d, cudaStream_t stream, int want) {
  std::string why;
  const auto cands = lt_.candidates(want, &why);
  if (cands.empty()) throw Error("cuBLASLt offers no algorithm for this problem" + (why.empty() ? "" : ": " + why));
  double best = INFINITY;
  std::size_t best_index = 0;
  std::string first_failure;
  tuned_ = true;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    algo_ = cands[i].algo;
    double t = INFINITY;
    try {
      t = time_on_stream(stream, 3, [&] { run(a, b, d, stream); });
    } catch (const std::exception& e) {
      cudaGetLastError();  // a candidate that fails to launch is skipped
      if (first_failure.empty()) first_failure = e.what();
      continue;
    }
    if (t < best) {
      best = t;
      best_index = i;
    }
  }
  if (!std::isfinite(best)) {
    tuned_ = false;
    throw Error(strprintf("none of the %zu cuBLASLt candidate algorithms ran; the first failed with: %s", cands.size(),
                          first_failure.c_str()));
  }
  algo_ = cands[best_index].algo;
  variant_ = lt_describe_algo(algo_, static_cast<int>(best_index), static_cast<int>(cands.size()));
  seconds_ = best;
}

Validation lt_check_sampled(const GemmShape& s, const void* a_dev, const void* b_dev, const void* d_dev, double scale) {
  const DType od = lt_output_type(s.dtype);
  const std::size_t in = dtype_size(s.dtype);
  const auto bt = static_cast<std::size_t>(s.batch);
  std::vector<unsigned char> ha(static_cast<std::size_t>(s.m * s.k) * bt * in),
      hb(static_cast<std::size_t>(s.k * s.n) * bt * in), hd(static_cast<std::size_t>(s.m * s.n) * bt * dtype_size(od));
  GENBENCH_CHECK_CUDA(cudaMemcpy(ha.data(), a_dev, ha.size(), cudaMemcpyDeviceToHost));
  GENBENCH_CHECK_CUDA(cudaMemcpy(hb.data(), b_dev, hb.size(), cudaMemcpyDeviceToHost));
  GENBENCH_CHECK_CUDA(cudaMemcpy(hd.data(), d_dev, hd.size(), cudaMemcpyDeviceToHost));

  auto a = [&](std::int64_t b, std::int64_t i, std::int64_t kk) {
    const std::int64_t off = b * s.m * s.k + (s.trans_a ? kk * s.m + i : i * s.k + kk);
    return convert::element(s.dtype, ha.data(), static_cast<std::size_t>(off));
  };
  auto bv = [&](std::int64_t b, std::int64_t kk, std::int64_t j) {
    const std::int64_t off = b * s.k * s.n + (s.trans_b ? j * s.k + kk : kk * s.n + j);
    return convert::element(s.dtype, hb.data(), static_cast<std::size_t>(off));
  };

  Validation v;
  switch (s.dtype) {
    case DType::fp32: v.tolerance = 1e-5; break;
    case DType::tf32: v.tolerance = 1e-4; break;
    case DType::fp16: v.tolerance = 2e-3; break;
    case DType::int8: v.tolerance = 0; break;
    default: v.tolerance = 1e-2; break;  // bf16 output (bf16, fp8)
  }
  const std::int64_t total = s.batch * s.m * s.n;
  const std::int64_t step = std::max<std::int64_t>(1, total / 509);
  std::vector<std::int64_t> picks;
  for (std::int64_t e = 0; e < total; e += step) picks.push_back(e);
  picks.push_back(total - 1);
  double worst = 0;
  std::int64_t unwritten = 0;
  for (const std::int64_t e : picks) {
    const std::int64_t b = e / (s.m * s.n), i = (e / s.n) % s.m, j = e % s.n;
    double ref = 0, mag = 0;
    for (std::int64_t kk = 0; kk < s.k; ++kk) {
      const double p = a(b, i, kk) * bv(b, kk, j);
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
    } else if (s.dtype == DType::int8) {
      err = std::fabs(got - ref);  // exact integer arithmetic
    } else {
      // Relative to the sum of |products|, the scale rounding errors grow with.
      err = std::fabs(got - ref) / std::max(mag, 1e-30);
    }
    worst = std::max(worst, err);
  }
  v.error = worst;
  v.ok = worst <= v.tolerance;
  v.detail = strprintf(
      "max error %.3g on %zu sampled elements against a double reference of the inputs "
      "copied back (tolerance %.1g)%s",
      worst, picks.size(), v.tolerance,
      unwritten ? strprintf("; %lld still poisoned", static_cast<long long>(unwritten)).c_str() : "");
  return v;
}

}  // namespace genbench
