// Registers this folder's implementation(s): the one place they are named.
#include "ops/implementation.h"

namespace genbench {

std::unique_ptr<Implementation> make_decode_reference_host();

GENBENCH_REGISTER_IMPLEMENTATION(
    (ImplementationInfo{
        "decode",
        "reference",
        BackendKind::host,
        "fp32 decode attention on the CPU through the block table, inputs rounded to the dtypes (validation reference)",
        {},
        ""}),
    &make_decode_reference_host)

}  // namespace genbench
