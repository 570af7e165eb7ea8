#pragma once
// Every result-file dataset's columns, declared once (schema version 2). Each table below gives
// a column's name, type, unit and meaning together with how its value is obtained from the
// record the row describes (PointRecord, RankRecord, DeviceInfo, Ceiling). These tables make the
// HDF5 compound types, fill the rows the writer appends, print `genbench schema` (and the op
// columns of `genbench describe`, io/describe.h), produce the
// tables of docs/hdf5-schema.md (a test compares them) and the JSON description stored in every
// file (root attribute `schema_description`, per benchmark `columns`).
#include <cstddef>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/ceilings.h"
#include "io/h5.h"
#include "io/result_file.h"
#include "ops/op.h"

namespace genbench::columns {

// Fixed-length string sizes (bytes, NUL included); longer values are cut.
inline constexpr std::size_t kNameLen = 32;  // impl, choice axes
inline constexpr std::size_t kReasonLen = 512;
inline constexpr std::size_t kOpStrLen = 64;  // the op's string columns ("<axis>_chosen")
inline constexpr std::size_t kStatusLen = 16;

struct Column {
  std::string name;
  ColumnType type = ColumnType::f64;
  std::size_t str_len = 0;  // string columns only
  std::string unit;         // "" when dimensionless
  std::string meaning;
  std::string kind;  // points only: fixed | axis | op
  // How an op column's value is obtained (column_kind_source), for `genbench describe`; "" in
  // the schema's tables.
  std::string source;
};

const char* type_name(ColumnType t);  // "i64", "f64", "str"

// points: the fixed columns in file order. The benchmark's axes follow the column named
// kAxesAfter; the op's columns (Op::columns()) follow the last fixed column.
inline constexpr const char* kAxesAfter = "impl";
std::vector<Column> points_fixed();
std::vector<Column> axis_columns(const Op& op);
std::vector<Column> op_columns(const Op& op);
std::vector<Column> points(const Op& op);  // the full row: fixed, axes, op columns
std::vector<Column> rank_stats();
std::vector<Column> system();  // from device_info_fields()
std::vector<Column> ceilings();

// The HDF5 row type of a table. In points rows `status` starts at a multiple of 16 bytes and
// the row size is a multiple of 16, so that in a file whose allocations are 16-byte aligned the
// status never straddles a page (ResultFile writes it last, docs/reliability.md).
h5::Compound layout(const std::vector<Column>& cols);
// A row as it reads before it is written (the datasets' fill value): `point` -1, strings "",
// floats NaN, other integers 0.
h5::Row fill_row(const h5::Compound& c);

void fill_points(const Op& op, const PointRecord& rec, h5::Row& row);
void fill_rank_stats(const RankRecord& r, h5::Row& row);
void fill_system(const DeviceInfo& d, h5::Row& row);
void fill_ceiling(const Ceiling& c, h5::Row& row);

// JSON list of columns: [{"name", "type", "unit", "meaning"[, "length"][, "kind"]}].
std::string columns_json(const std::vector<Column>& cols);
// The root attribute `schema_description`: {"version", "datasets": {...}}.
std::string schema_description_json();
// `genbench schema`: every dataset and column with type, unit and meaning, then each registered
// op's columns. markdown: the tables docs/hdf5-schema.md holds between its schema markers.
std::string schema_text();
std::string schema_markdown();
// The text table both print, one line per column: name, type, unit, then how its value is
// obtained where any column has a source, then its meaning.
std::string columns_text(const std::vector<Column>& cols);

}  // namespace genbench::columns
