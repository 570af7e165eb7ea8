#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace genbench {

// Element types an op can be swept over. tf32 is fp32 storage with tf32 tensor-core math.
// int4 (s4) and fp4_e2m1 are gemm's dense 4-bit types: no device path is built for them (the
// cards that have them, A100-class for s4 and Blackwell for e2m1, are not reachable to validate
// one), so on a GPU they are `unsupported` with the reason; the host reference computes them,
// one element a byte (dtype_size), where a device kernel would pack two.
enum class DType { fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, int8, int32, int4, fp4_e2m1 };

const char* dtype_name(DType t);
std::optional<DType> parse_dtype(const std::string& s);
std::size_t dtype_size(DType t);  // bytes per element in memory
const std::vector<std::string>& dtype_names();

// "" when t is one of `allowed`, else the reason an implementation gives for refusing it:
// "dtype fp8_e4m3 is not supported (fp16, bf16)".
std::string dtype_not_in(DType t, std::initializer_list<DType> allowed);

// Round a float to the nearest value representable in t (round-to-nearest-even), so host
// implementations compute on exactly the inputs a device kernel of that precision would see.
float round_to(DType t, float x);

}  // namespace genbench
