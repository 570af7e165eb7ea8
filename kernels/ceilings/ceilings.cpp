// measure_ceilings (backend/ceilings.h): the CUDA measurement lives in cuda_ceilings.cpp; the
// host backend has no ceilings.
#include "backend/ceilings.h"

namespace genbench {

#ifdef GENBENCH_HAVE_CUDA
std::vector<Ceiling> measure_cuda_ceilings(Backend& b);
#endif

std::vector<Ceiling> measure_ceilings(Backend& b) {
#ifdef GENBENCH_HAVE_CUDA
  if (b.kind() == BackendKind::cuda) return measure_cuda_ceilings(b);
#endif
  (void)b;
  return {};
}

}  // namespace genbench
