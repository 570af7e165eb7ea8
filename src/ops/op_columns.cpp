// The column builder (ops/op_columns.h).
#include "ops/op_columns.h"

#include <string>
#include <utility>
#include <vector>

namespace genbench {

namespace {

OpColumn f64_column(std::string name, std::string unit, std::string meaning, ColumnKind kind) {
  OpColumn c;
  c.name = std::move(name);
  c.type = ColumnType::f64;
  c.unit = std::move(unit);
  c.meaning = std::move(meaning);
  c.kind = kind;
  return c;
}

}  // namespace

const char* column_kind_source(ColumnKind k) {
  switch (k) {
    case ColumnKind::effective: return "from the point (the shape that runs)";
    case ColumnKind::chosen: return "reported by the case (what it chose)";
    case ColumnKind::metric: return "from the work and the median time";
    case ColumnKind::extra: return "reported by the case (measured beside the timed run)";
  }
  return "?";
}

OpColumns& OpColumns::metric(std::string name, std::string unit, std::string meaning,
                             double (*rate)(const Work&, double), std::string label) {
  OpColumn c = f64_column(std::move(name), std::move(unit), std::move(meaning), ColumnKind::metric);
  c.rate = rate;
  c.label = std::move(label);
  cols_.push_back(std::move(c));
  return *this;
}

OpColumns& OpColumns::extra(std::string name, std::string unit, std::string meaning) {
  cols_.push_back(f64_column(std::move(name), std::move(unit), std::move(meaning), ColumnKind::extra));
  return *this;
}

OpColumns& OpColumns::same_as(const std::vector<OpColumn>& columns, ColumnKind kind) {
  for (const auto& c : columns)
    if (c.kind == kind) cols_.push_back(c);
  return *this;
}

}  // namespace genbench
