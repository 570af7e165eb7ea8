#pragma once
// The part every CUDA implementation of attention_backward shares: Q, K, V and dO filled on the
// device with the project's seeded normal draw, O and LSE from the forward (the device
// reference forward, fp32 arithmetic, run once when the case is prepared), dQ, dK and dV in the
// point's dtype, the sequence lengths as cumulative arrays, eager and graph execution, and the
// validation of dQ, dK and dV (backward_validate.h) after they are poisoned.
//
// An implementation derives from it and enqueues the whole backward in launch(stream) from
// params(); scratch memory comes from workspace(bytes), counted in the point's memory.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/graph.h"
#include "kernels/attention_backward/common/backward_params.h"
#include "ops/attention/attention.h"
#include "ops/implementation.h"

namespace genbench::attention_backward {

// The sizes and flags of a shape's BackwardParams, pointers null (for can_implement checks
// before anything is allocated; the case's params() adds its buffers).
BackwardParams backward_params_of(const AttentionShape& s, bool deterministic);

class DeviceBackwardCase : public Case {
 public:
  DeviceBackwardCase(const AttentionShape& s, Context& ctx);
  // The point's `deterministic` axis (set by the implementation's prepare()).
  void set_deterministic(bool on) { deterministic_ = on; }
  ~DeviceBackwardCase() override;

  Validation validate() override;
  void run() override;
  std::string variant() const override;

  const AttentionShape& shape() const { return s_; }
  // One execution (eager launch or graph replay), enqueued on the backend's stream.
  void execute();

 protected:
  // Enqueues the whole backward on `stream` (captured as is in graph mode).
  virtual void launch(cudaStream_t stream) = 0;
  // The tile configuration / algorithm, for variant().
  virtual std::string config_name() const { return ""; }

  BackwardParams params() const;
  // Scratch memory of `bytes` (kept for the case's life; a second call with more bytes grows it).
  void* workspace(std::size_t bytes);
  cudaStream_t stream() const { return be_.stream(); }
  const CudaBackend& cuda() const { return be_; }

  AttentionShape s_;
  CudaBackend& be_;
  std::uint64_t seed_;
  std::int64_t rows_q_ = 0, rows_k_ = 0;
  std::vector<std::int64_t> len_q_, len_k_;
  DeviceBuffer q_, k_, v_, o_, do_, lse_, dq_, dk_, dv_, cu_q_, cu_k_, ws_;
  std::size_t ws_bytes_ = 0;
  bool deterministic_ = false;

 private:
  void poison_outputs();
  CapturedGraph graph_;  // mode graph: launch() captured once, replayed
};

// A fused backward kernel module (fa2_sm80, fa3_sm90): its four entry points, each the
// module's free function of that name (fa2_backward.h describes their contract).
struct FusedBackward {
  std::string (*unsupported)(const BackwardParams& p, int sm_major, int sm_minor);
  std::size_t (*workspace_bytes)(const BackwardParams& p);
  void (*launch)(const BackwardParams& p, void* workspace, cudaStream_t stream);
  std::string (*config_name)(const BackwardParams& p);
};

// The implementation around such a module: fp16 and bf16, 32-bit row indices, whatever the
// module refuses on this card (with its reason), the point's `deterministic` axis passed on,
// the workspace counted in the point's memory.
std::unique_ptr<Implementation> make_fused_backward(const FusedBackward& kernel);

}  // namespace genbench::attention_backward
