// The one place implementations are registered: add a line here when adding a folder under
// kernels/<op>/<impl>/.
#include "kernels/registry.h"

namespace genbench {

void register_implementations(Registry& r) {
  // host backend
  r.add(make_attention_reference_host());
  r.add(make_gemm_reference_host());
  r.add(make_collective_mpi());
  // cuda backend
}

}  // namespace genbench
