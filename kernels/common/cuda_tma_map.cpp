#include <cuda_runtime.h>

#include <mutex>
#include <vector>

#include "core/error.h"
#include "core/strings.h"
#include "kernels/common/tma_map.h"

namespace genbench {

namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_fn(const char* who) {
  static EncodeTiled fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* ptr = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<EncodeTiled>(ptr);
  });
  if (!fn) throw Error(strprintf("%s: the driver does not provide cuTensorMapEncodeTiled", who));
  return fn;
}

}  // namespace

CUtensorMap make_tma_map(const char* who, CUtensorMapDataType type, const void* base,
                         std::initializer_list<std::uint64_t> dims, std::initializer_list<std::uint64_t> byte_strides,
                         std::initializer_list<std::uint32_t> box, int swizzle_bytes) {
  if (byte_strides.size() + 1 != dims.size() || box.size() != dims.size())
    throw Error(strprintf("%s: tensor map with inconsistent ranks", who));
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  if (swizzle_bytes == 64) swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
  else if (swizzle_bytes == 32) swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
  else if (swizzle_bytes != 128) throw Error(strprintf("%s: no %d-byte swizzle (128, 64, 32)", who, swizzle_bytes));
  const std::vector<cuuint64_t> d(dims.begin(), dims.end()), s(byte_strides.begin(), byte_strides.end());
  const std::vector<cuuint32_t> b(box.begin(), box.end()), elem(dims.size(), 1);
  CUtensorMap m{};
  const CUresult r = encode_fn(who)(&m, type, static_cast<cuuint32_t>(d.size()), const_cast<void*>(base), d.data(),
                                    s.data(), b.data(), elem.data(), CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error(strprintf("%s: cuTensorMapEncodeTiled failed (CUresult %d)", who, static_cast<int>(r)));
  return m;
}

}  // namespace genbench
