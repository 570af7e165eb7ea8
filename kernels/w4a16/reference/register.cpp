// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

std::unique_ptr<Implementation> make_w4a16_reference_host();

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{"w4a16", "reference", BackendKind::host,
                        "W4A16 on the CPU: weights dequantised ((q - z) * s in fp32), then fp32 accumulation"}),
    &make_w4a16_reference_host)

}  // namespace genbench
