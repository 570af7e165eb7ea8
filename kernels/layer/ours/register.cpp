// Registers this folder's implementation(s): the one place they are named. The table says which
// implementation runs each part of the layer (kernels/layer/common/composed_layer.h).
#include "kernels/layer/common/composed_layer.h"

namespace genbench {

namespace {
#ifdef GENBENCH_HAVE_CUDA
const layer::LayerImpls& impls() {
  static const layer::LayerImpls t{
      BackendKind::cuda,
      {{"gemm", "cublaslt"}, {"w4a16", "mma_sm80"}, {"attention", "fa3"}, {"decode", "fa3"}, {"pointwise", "cuda"}}};
  return t;
}
std::unique_ptr<Implementation> make_layer_ours() { return layer::make_cuda_layer(impls()); }
#endif
}  // namespace

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{
        "layer",
        "ours",
        BackendKind::cuda,
        "our kernels where we have them (fa3 attention and decode, the W4A16 kernel, pointwise), cuBLASLt GEMMs; "
        "one CUDA graph",
        {},
        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_layer_ours))

}  // namespace genbench
