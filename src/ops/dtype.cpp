#include "ops/dtype.h"

#include <cmath>
#include <cstring>

namespace genbench {

namespace {
struct Entry {
  DType type;
  const char* name;
  std::size_t size;
};
constexpr Entry kTypes[] = {
    {DType::fp32, "fp32", 4},         {DType::tf32, "tf32", 4},         {DType::fp16, "fp16", 2},
    {DType::bf16, "bf16", 2},         {DType::fp8_e4m3, "fp8_e4m3", 1}, {DType::fp8_e5m2, "fp8_e5m2", 1},
    {DType::int8, "int8", 1},         {DType::int32, "int32", 4},       {DType::int4, "int4", 1},
    {DType::fp4_e2m1, "fp4_e2m1", 1},
};

// Keep `mant_bits` explicit mantissa bits of an fp32 value, round to nearest even, and clamp
// the exponent range to [min_exp, max_exp] (subnormals flushed through ldexp rounding).
float round_mantissa(float x, int mant_bits, int min_exp, float max_value) {
  if (!std::isfinite(x) || x == 0.0f) return x;
  int e = 0;
  std::frexp(x, &e);  // x = m * 2^e, 0.5 <= |m| < 1
  const int exp = std::max(e - 1, min_exp);
  const double quantum = std::ldexp(1.0, exp - mant_bits);
  double r = std::nearbyint(static_cast<double>(x) / quantum) * quantum;
  if (std::fabs(r) > max_value) r = std::copysign(static_cast<double>(max_value), r);
  return static_cast<float>(r);
}
}  // namespace

const char* dtype_name(DType t) {
  for (const auto& e : kTypes)
    if (e.type == t) return e.name;
  return "?";
}

std::optional<DType> parse_dtype(const std::string& s) {
  for (const auto& e : kTypes)
    if (s == e.name) return e.type;
  return std::nullopt;
}

std::size_t dtype_size(DType t) {
  for (const auto& e : kTypes)
    if (e.type == t) return e.size;
  return 0;
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& e : kTypes) v.emplace_back(e.name);
    return v;
  }();
  return names;
}

float round_to(DType t, float x) {
  switch (t) {
    case DType::fp32:
    case DType::int32: return x;
    case DType::tf32: return round_mantissa(x, 10, -126, 3.4e38f);
    case DType::fp16: return round_mantissa(x, 10, -14, 65504.0f);
    case DType::bf16: return round_mantissa(x, 7, -126, 3.39e38f);
    case DType::fp8_e4m3: return round_mantissa(x, 3, -6, 448.0f);
    case DType::fp8_e5m2: return round_mantissa(x, 2, -14, 57344.0f);
    case DType::int8: return std::fmax(-128.0f, std::fmin(127.0f, std::nearbyint(x)));
    case DType::int4: return std::fmax(-8.0f, std::fmin(7.0f, std::nearbyint(x)));
    case DType::fp4_e2m1:  // 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives
      return round_mantissa(x, 1, 0, 6.0f);
  }
  return x;
}

std::string dtype_not_in(DType t, std::initializer_list<DType> allowed) {
  std::string list;
  for (DType a : allowed) {
    if (a == t) return "";
    list += (list.empty() ? "" : ", ") + std::string(dtype_name(a));
  }
  return std::string("dtype ") + dtype_name(t) + " is not supported (" + list + ")";
}

}  // namespace genbench
