// Registers this folder's implementation(s): the one place they are named. The table says which
// implementation runs each part of the layer (kernels/layer/common/composed_layer.h).
#include "kernels/layer/common/composed_layer.h"

namespace genbench {

namespace {
#ifdef GENBENCH_HAVE_CUDA
const layer::LayerImpls& impls() {
  static const layer::LayerImpls t{
      BackendKind::cuda, {{"gemm", "cublaslt"}, {"attention", "cudnn"}, {"decode", "cudnn"}, {"pointwise", "cuda"}}};
  return t;
}
std::unique_ptr<Implementation> make_layer_vendor() { return layer::make_cuda_layer(impls()); }
#endif
}  // namespace

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{
        "layer",
        "vendor",
        BackendKind::cuda,
        "vendor kernels: cuBLASLt GEMMs, cuDNN attention and decode (pointwise: ours; no int4); one CUDA "
        "graph",
        {},
        GENBENCH_CUDA_MISSING}),
    GENBENCH_CUDA_FACTORY(make_layer_vendor))

}  // namespace genbench
