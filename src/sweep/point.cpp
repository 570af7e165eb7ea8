#include "sweep/point.h"

#include "core/strings.h"

namespace genbench {

std::string to_string(const AxisValue& v) {
  if (auto i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (auto d = std::get_if<double>(&v)) return strprintf("%g", *d);
  return std::get<std::string>(v);
}

}  // namespace genbench
