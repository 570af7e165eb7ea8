// Reading a result file's tables back (io/tables.h).
#include "io/tables.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/error.h"
#include "io/result_file.h"
#include "io/schema.h"

namespace genbench {

using h5::Id;
using Json = nlohmann::ordered_json;

Json Table::value(std::size_t r, const Field& f) const {
  const unsigned char* p = data.data() + r * row_size + f.offset;
  if (f.cls == H5T_INTEGER) {
    std::int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  if (f.cls == H5T_FLOAT) {
    double v;
    std::memcpy(&v, p, 8);
    return std::isfinite(v) ? Json(v) : Json(nullptr);
  }
  const char* s = reinterpret_cast<const char*>(p);
  return std::string(s, strnlen(s, f.size));
}

const Table::Field* Table::field(const std::string& name) const {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

Table read_table(hid_t file, const std::string& path, const std::string& file_name) {
  Id d(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) throw UsageError(file_name + ": missing dataset " + path);
  Id ftype(H5Dget_type(d), H5Tclose);
  if (H5Tget_class(ftype) != H5T_COMPOUND) throw UsageError(file_name + ": " + path + " is not a table");
  // Native memory type: integers as int64, floats as double, strings as they are.
  Table t;
  const int n = H5Tget_nmembers(ftype);
  std::size_t offset = 0;
  Id mtype(H5Tcreate(H5T_COMPOUND, 1), H5Tclose);
  std::vector<std::pair<std::string, Id>> members;
  for (int i = 0; i < n; ++i) {
    char* name = H5Tget_member_name(ftype, static_cast<unsigned>(i));
    Table::Field f{name, H5Tget_member_class(ftype, static_cast<unsigned>(i)), offset, 8};
    H5free_memory(name);
    Id member(H5Tget_member_type(ftype, static_cast<unsigned>(i)), H5Tclose);
    if (f.cls == H5T_STRING) {
      f.size = H5Tget_size(member);
      members.emplace_back(f.name, Id(H5Tcopy(member), H5Tclose));
    } else if (f.cls == H5T_INTEGER) {
      members.emplace_back(f.name, Id(H5Tcopy(H5T_NATIVE_INT64), H5Tclose));
    } else if (f.cls == H5T_FLOAT) {
      members.emplace_back(f.name, Id(H5Tcopy(H5T_NATIVE_DOUBLE), H5Tclose));
    } else {
      continue;  // a field type this reader does not know: leave it out
    }
    offset += f.size;
    t.fields.push_back(f);
  }
  t.row_size = offset;
  mtype = Id(H5Tcreate(H5T_COMPOUND, std::max<std::size_t>(offset, 1)), H5Tclose);
  for (std::size_t i = 0; i < members.size(); ++i)
    H5Tinsert(mtype, t.fields[i].name.c_str(), t.fields[i].offset, members[i].second);
  Id space(H5Dget_space(d), H5Sclose);
  hsize_t rows = static_cast<hsize_t>(H5Sget_simple_extent_npoints(space));
  t.rows = rows;
  t.data.resize(t.row_size * rows);
  if (rows && H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data.data()) < 0)
    throw UsageError(file_name + ": cannot read " + path + " (damaged file?)");
  return t;
}

// Schema 2 allocates a row for every point of the sweep; a row whose status is empty has not
// completed and is left out (schema 1 files have no such rows).
Table completed_rows(Table t) {
  const auto it =
      std::find_if(t.fields.begin(), t.fields.end(), [](const Table::Field& f) { return f.name == "status"; });
  if (it == t.fields.end() || it->cls != H5T_STRING) return t;
  std::size_t kept = 0;
  for (std::size_t r = 0; r < t.rows; ++r) {
    if (t.data[r * t.row_size + it->offset] == 0) continue;
    if (kept != r) std::memmove(t.data.data() + kept * t.row_size, t.data.data() + r * t.row_size, t.row_size);
    ++kept;
  }
  t.rows = kept;
  t.data.resize(kept * t.row_size);
  return t;
}

std::vector<std::string> benchmark_names(hid_t file) {
  Id g(H5Gopen2(file, schema::kBenchmarks, H5P_DEFAULT), H5Gclose);
  if (!g.valid()) return {};
  return h5::member_names(g);
}

Id open_result_file(const std::string& path) {
  const std::string why = check_result_file(path);
  if (!why.empty()) throw UsageError(why);
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) throw UsageError(path + ": cannot open");
  return f;
}

}  // namespace genbench
