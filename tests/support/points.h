#pragma once
// Building sweep points in tests: every axis at the op's default, then the named ones set.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ops/op.h"
#include "sweep/point.h"

namespace genbench::test {

inline Point point_with(const Op& op, const std::string& impl, const std::map<std::string, AxisValue>& values = {}) {
  Point p;
  p.impl = impl;
  for (const auto& a : op.axes()) p.values.push_back(a.default_value);
  for (const auto& [name, v] : values) {
    const std::size_t i = op.axis_index(name);
    if (i >= p.values.size()) {
      ADD_FAILURE() << "op " << op.name() << " has no axis " << name;
      continue;
    }
    p.values[i] = v;
  }
  return p;
}

}  // namespace genbench::test
