// Registers this folder's implementation(s): the one place they are named.
#include "kernels/layer/common/composed_layer.h"

namespace genbench {

namespace {

const layer::LayerImpls& impls() {
  static const layer::LayerImpls t{BackendKind::host,
                                   {{"gemm", "reference"},
                                    {"w4a16", "reference"},
                                    {"attention", "reference"},
                                    {"decode", "reference"},
                                    {"pointwise", "reference"}}};
  return t;
}

class LayerReference final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context& ctx) const override {
    return layer::can_compose(p, ctx, impls());
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<layer::ComposedLayer>(p, ctx, impls());
  }
};

std::unique_ptr<Implementation> make_layer_reference() { return std::make_unique<LayerReference>(); }

}  // namespace

GENBENCH_REGISTER_IMPLEMENTATION((ImplementationInfo{"layer", "reference", BackendKind::host,
                                                     "every part's host reference, back to back"}),
                                 &make_layer_reference)

}  // namespace genbench
