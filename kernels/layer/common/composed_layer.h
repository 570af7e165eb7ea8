#pragma once
// The layer op's implementations (ops/layer/layer.h) differ only in which implementation runs
// each part: a LayerImpls table. ComposedLayer prepares every part as a Case of its own op
// through the registry, validates them all, runs them back to back in the layer's order, and
// times each alone (extra columns t_<part>_s, parts_alone_s). The cuda implementations replay the
// back-to-back run from one CUDA graph (cuda_layer_graph.cpp).
#include <memory>
#include <string>
#include <vector>

#include "ops/implementation.h"
#include "ops/layer/layer.h"

namespace genbench::layer {

// The implementation of each part's op, by op name ("gemm" -> "cublaslt", ...).
struct LayerImpls {
  BackendKind backend = BackendKind::host;
  std::vector<std::pair<std::string, std::string>> by_op;
  const std::string& impl(const std::string& op) const;
};

// "" when every part can run here, else the first part that cannot and why.
std::string can_compose(const Point& p, const Context& ctx, const LayerImpls& impls);

class ComposedLayer : public Case {
 public:
  ComposedLayer(const Point& p, Context& ctx, const LayerImpls& impls);
  Validation validate() override;
  void run() override { run_parts(); }
  std::string variant() const override;
  std::vector<std::pair<std::string, double>> extra_metrics() override;

 protected:
  // The layer's order: add_rmsnorm, qkv, rope, attention, o, add_rmsnorm, gate_up, silu_mul, down.
  void run_parts();
  std::string variant_;

 private:
  struct Part {
    LayerPart spec;
    std::unique_ptr<Case> impl;
  };
  Backend& backend_;
  std::vector<Part> parts_;
};

#ifdef GENBENCH_HAVE_CUDA
// A cuda implementation of the layer whose parts run as `impls` says (a table that outlives it),
// replayed from one CUDA graph (cuda_layer_graph.cpp).
std::unique_ptr<Implementation> make_cuda_layer(const LayerImpls& impls);
#endif

}  // namespace genbench::layer
