#include "backend/cuda/graph.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cuda/check.h"
#include "backend/cuda/nccl_comm.h"

namespace genbench {

CapturedGraph::~CapturedGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

void CapturedGraph::capture(cudaStream_t stream, int times, const std::function<void(int)>& body) {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
  exec_ = nullptr;
  graph_ = nullptr;
  GENBENCH_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < times; ++i) body(i);
  } catch (...) {
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(stream, &broken);  // leave the stream usable
    if (broken) cudaGraphDestroy(broken);
    cudaGetLastError();
    throw;
  }
  GENBENCH_CHECK_CUDA(cudaStreamEndCapture(stream, &graph_));
  GENBENCH_CHECK_CUDA(cudaGraphInstantiate(&exec_, graph_, 0));
  GENBENCH_CHECK_CUDA(cudaGraphUpload(exec_, stream));
  iterations_ = times;
}

void CapturedGraph::launch(cudaStream_t stream) const { GENBENCH_CHECK_CUDA(cudaGraphLaunch(exec_, stream)); }

int graph_iterations(double seconds_per_iteration, double target_s, int lo, int hi) {
  if (!(seconds_per_iteration > 0)) return hi;
  const double k = std::ceil(target_s / seconds_per_iteration);
  return static_cast<int>(std::clamp(k, static_cast<double>(lo), static_cast<double>(hi)));
}

std::vector<double> time_each_on_stream(cudaStream_t stream, int reps, const std::function<void()>& body, int untimed) {
  cudaEvent_t a = nullptr, b = nullptr;
  GENBENCH_CHECK_CUDA(cudaEventCreate(&a));
  const cudaError_t rc = cudaEventCreate(&b);
  if (rc != cudaSuccess) cudaEventDestroy(a);
  GENBENCH_CHECK_CUDA(rc);
  std::vector<double> t;
  try {
    for (int u = 0; u < untimed; ++u) body();
    for (int r = 0; r < reps; ++r) {
      GENBENCH_CHECK_CUDA(cudaEventRecord(a, stream));
      body();
      GENBENCH_CHECK_CUDA(cudaEventRecord(b, stream));
      wait_event(b);  // polled, after b is recorded: the wait adds no time to the sample
      float ms = 0;
      GENBENCH_CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
      t.push_back(static_cast<double>(ms) * 1e-3);
    }
  } catch (...) {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    throw;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t;
}

double time_on_stream(cudaStream_t stream, int reps, const std::function<void()>& body) {
  std::vector<double> t = time_each_on_stream(stream, reps, body);
  if (t.empty()) return 0;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace genbench
