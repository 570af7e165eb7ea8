#pragma once
// cuBLASLt GEMM pieces shared by gemm/cublaslt and overlap/cuda (and the GEMM ceilings):
// descriptors of one problem in gemm/reference's row-major semantics, the choice of the fastest
// heuristic candidate, the launch, and the sampled validation against a double reference.
//
// cuBLASLt is column-major, so D^T (n x m) = op(B)^T op(A)^T is computed: the B buffer is
// cuBLASLt's "A" operand and the A buffer its "B" operand.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "ops/gemm/gemm.h"
#include "ops/implementation.h"

namespace genbench {

// The cuBLASLt workspace in bytes for a setting of the cublaslt_workspace_mb axis: a whole
// number of MiB from 0 to 4096, or "auto": its alias GENBENCH_CUBLASLT_WORKSPACE_MB where set,
// else 32 MiB. Throws UsageError (naming the variable) for anything else.
std::size_t lt_workspace_bytes(const std::string& setting = "auto");
// One handle per process (host state only), created on first use.
cublasLtHandle_t lt_handle();
bool lt_is_fp8(DType t);
// D's type: int32 for int8, bf16 for fp8, the input type otherwise.
DType lt_output_type(DType t);

// The matmul descriptor and the three layouts of one problem (C shares D's layout).
struct LtProblem {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t x = nullptr, y = nullptr, d = nullptr;  // x: B buffer, y: A buffer
  cublasLtMatmulPreference_t pref = nullptr;

  LtProblem() = default;
  LtProblem(const LtProblem&) = delete;
  LtProblem& operator=(const LtProblem&) = delete;
  ~LtProblem();

  // scale_x / scale_y: device scale factors of the B and A buffers (fp8 only, else nullptr).
  void build(const GemmShape& s, std::size_t workspace_bytes, const float* scale_x, const float* scale_y);
  // Up to `want` heuristic candidates; empty when cuBLASLt has none (its status in *why).
  std::vector<cublasLtMatmulHeuristicResult_t> candidates(int want, std::string* why) const;
};

// "h<rank>/<of> id= tile= stages= splitk= swz=" of an algorithm.
std::string lt_describe_algo(const cublasLtMatmulAlgo_t& a, int rank, int of);

// One planned GEMM: descriptors plus the algorithm chosen by tune(); run() enqueues it on any
// stream with any operand buffers of the planned shape.
class LtGemm {
 public:
  // scale_a / scale_b: device pointers to the per-tensor scales of the A and B buffers (fp8).
  LtGemm(const GemmShape& s, void* workspace, std::size_t workspace_bytes, const float* scale_a = nullptr,
         const float* scale_b = nullptr);
  // Times (1 + 3 calls, events on `stream`) up to `candidates` heuristic algorithms on these
  // buffers and keeps the fastest. Throws when none runs.
  void tune(const void* a, const void* b, void* d, cudaStream_t stream, int candidates = 8);
  void run(const void* a, const void* b, void* d, cudaStream_t stream) const;
  const std::string& variant() const { return variant_; }
  double seconds() const { return seconds_; }  // the chosen algorithm's median time in tune()

 private:
  GemmShape s_;
  void* ws_;
  std::size_t ws_bytes_;
  LtProblem lt_;
  cublasLtMatmulAlgo_t algo_{};
  bool tuned_ = false;
  std::string variant_;
  double seconds_ = 0;
};

// Compares ~510 sampled elements of D (device) with a double-precision dot product of A and B
// copied back from the device, relative to the sum of |products| (int8: exact). `scale` is the
// product of the fp8 scale factors (1 otherwise). Tolerances: fp32 1e-5, tf32 1e-4, fp16 2e-3,
// bf16/fp8 1e-2, int8 0. D must have been poisoned before the run (NaN, int32 0x80808080).
Validation lt_check_sampled(const GemmShape& s, const void* a_dev, const void* b_dev, const void* d_dev, double scale);

}  // namespace genbench
