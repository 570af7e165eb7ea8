// The layer's parts on the cuda backend: captured once, back to back, into one CUDA graph that
// each run() replays, as a serving engine replays a step. A part whose run() cannot be captured
// (a synchronising call) leaves the layer eager, back-to-back launches, and the variant says so.
#include <memory>

#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/graph.h"
#include "kernels/layer/common/composed_layer.h"

namespace genbench::layer {

namespace {

class GraphLayer final : public ComposedLayer {
 public:
  GraphLayer(const Point& p, Context& ctx, const LayerImpls& impls)
      : ComposedLayer(p, ctx, impls), stream_(cuda_backend_of(ctx.backend).stream()) {
    try {
      graph_.capture(stream_, 1, [this](int) { run_parts(); });
      variant_ = "one graph";
    } catch (const std::exception& e) {
      variant_ = "eager: capture failed";
      capture_error_ = e.what();
    }
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
  }

  Validation validate() override {
    Validation v = ComposedLayer::validate();
    if (!capture_error_.empty()) v.detail += "; not captured: " + capture_error_;
    return v;
  }

  void run() override {
    if (graph_.empty()) run_parts();
    else graph_.launch(stream_);
  }

 private:
  cudaStream_t stream_;
  CapturedGraph graph_;
  std::string capture_error_;
};

class CudaLayer final : public Implementation {
 public:
  explicit CudaLayer(const LayerImpls& impls) : impls_(impls) {}
  std::string can_implement(const Point& p, const Context& ctx) const override { return can_compose(p, ctx, impls_); }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<GraphLayer>(p, ctx, impls_);
  }

 private:
  const LayerImpls& impls_;
};

}  // namespace

std::unique_ptr<Implementation> make_cuda_layer(const LayerImpls& impls) { return std::make_unique<CudaLayer>(impls); }

}  // namespace genbench::layer
