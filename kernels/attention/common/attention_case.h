#pragma once
// The part every CUDA attention implementation shares: device inputs filled on the device
// with the project's seeded normal distribution (ops/fill.h's formula; fp8 inputs hold the
// draw / input_descale(), see attention_validate.h), outputs (O in output_dtype()), the
// per-sequence lengths as cumulative arrays (cu_seqlens, int32, batch + 1 entries), eager and
// graph execution, and validation through attention_validate.h.
//
// Graph mode: the first execution captures launch() into one CUDA Graph; later executions
// replay it. Kernels that read the sequence lengths from cu_seqlens (device memory) serve a
// new set of lengths without a new capture: set_lengths() only rewrites those arrays.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "kernels/attention/common/attention_validate.h"
#include "ops/attention/attention.h"
#include "ops/implementation.h"

namespace genbench::attention {

class DeviceAttentionCase : public Case {
 public:
  DeviceAttentionCase(const AttentionShape& s, Context& ctx);
  ~DeviceAttentionCase() override;

  Validation validate() override;
  void run() override;
  // The configuration, and in graph mode "g:<captures>cap[+2len] p50 <us> max <us>" (replay times).
  std::string variant() const override;

  // New per-sequence lengths (each within the shape's seqlen_q / seqlen_k): rewrites the
  // cu_seqlens arrays in place (stream-ordered), so a captured graph serves them.
  void set_lengths(const std::vector<std::int64_t>& len_q, const std::vector<std::int64_t>& len_k);
  // One execution (eager launch or graph replay), enqueued on the backend's stream.
  void execute();
  // Copies inputs and outputs back and validates them (does not execute).
  Validation check_outputs();
  void poison_outputs();
  bool graph_captured() const { return graph_exec_ != nullptr; }
  int graph_captures() const { return captures_; }
  const AttentionShape& shape() const { return s_; }
  // Per-tensor descale of Q, K and V (true value = stored x descale): 1/64 for fp8, else 1.
  float descale() const { return input_descale(s_.dtype); }

 protected:
  // Enqueues the whole computation on `stream` (captured as is in graph mode).
  virtual void launch(cudaStream_t stream) = 0;
  // The tile configuration / algorithm, for variant().
  virtual std::string config_name() const { return ""; }

  cudaStream_t stream() const { return be_.stream(); }
  const CudaBackend& cuda() const { return be_; }

  AttentionShape s_;
  CudaBackend& be_;
  std::uint64_t seed_;
  std::int64_t rows_q_ = 0, rows_k_ = 0;  // buffer capacity in rows (batch * seqlen)
  std::vector<std::int64_t> len_q_, len_k_;
  std::int64_t max_len_q_ = 0, max_len_k_ = 0;
  DeviceBuffer q_, k_, v_, o_, lse_, cu_q_, cu_k_;

 private:
  void capture();
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
  int captures_ = 0;
  std::string graph_note_, graph_short_;  // capture count and replay jitter (long, and for variant())
};

// Converts n device elements of dtype t (fp32, fp16, bf16, fp8_e4m3, fp8_e5m2) to host floats.
std::vector<float> download_as_float(const void* p, DType t, std::size_t n);
// The same, each value multiplied by `scale` (exact for a power of two).
std::vector<float> download_as_float(const void* p, DType t, std::size_t n, float scale);

}  // namespace genbench::attention
