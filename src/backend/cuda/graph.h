#pragma once
// CUDA Graph capture for mode=graph: an implementation captures K iterations of its work on
// the backend's stream once, in prepare(), and each run() replays them with one launch. The
// runner divides each timed sample by Case::iterations_per_run() (= K).
#include <cuda_runtime.h>

#include <functional>
#include <vector>

namespace genbench {

class CapturedGraph {
 public:
  CapturedGraph() = default;
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  ~CapturedGraph();

  // Records body(0) ... body(times - 1), enqueued on `stream`, into one instantiated graph.
  void capture(cudaStream_t stream, int times, const std::function<void(int)>& body);
  void launch(cudaStream_t stream) const;
  bool empty() const { return exec_ == nullptr; }
  int iterations() const { return iterations_; }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  int iterations_ = 0;
};

// Iterations per graph so one replay lasts at least target_s, clamped to [lo, hi].
int graph_iterations(double seconds_per_iteration, double target_s, int lo, int hi);

// Seconds of each of `reps` event-timed calls of body (enqueued on stream), after
// `untimed` calls that are not timed.
std::vector<double> time_each_on_stream(cudaStream_t stream, int reps, const std::function<void()>& body,
                                        int untimed = 1);

// Median seconds of one call of body, from `reps` event-timed calls after one untimed call.
double time_on_stream(cudaStream_t stream, int reps, const std::function<void()>& body);

}  // namespace genbench
