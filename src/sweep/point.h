#pragma once
// A sweep point: one implementation and one value per axis of its op, in the op's axis order.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace genbench {

// integer/size/boolean axes hold int64 (booleans as 0/1), real axes hold double,
// choice axes hold the chosen string.
using AxisValue = std::variant<std::int64_t, double, std::string>;

std::string to_string(const AxisValue& v);

struct Point {
  std::size_t index = 0;  // position in the benchmark's expanded sweep
  std::string impl;
  std::vector<AxisValue> values;

  // Typed accessors; `axis` is one of the op's axis index constants (ops/<op>.h).
  std::int64_t integer(std::size_t axis) const { return std::get<std::int64_t>(values.at(axis)); }
  double real(std::size_t axis) const { return std::get<double>(values.at(axis)); }
  bool boolean(std::size_t axis) const { return integer(axis) != 0; }
  const std::string& choice(std::size_t axis) const { return std::get<std::string>(values.at(axis)); }
};

}  // namespace genbench
