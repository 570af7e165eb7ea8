#include "io/export.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/error.h"
#include "io/h5.h"
#include "io/result_file.h"
#include "io/schema.h"

namespace genbench {

namespace {

using h5::Id;
using Json = nlohmann::ordered_json;

// A compound dataset read into memory, with accessors per field.
struct Table {
  struct Field {
    std::string name;
    H5T_class_t cls;
    std::size_t offset, size;
  };
  std::vector<Field> fields;
  std::vector<unsigned char> data;
  std::size_t row_size = 0, rows = 0;

  Json value(std::size_t r, const Field& f) const {
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
};

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
      continue;  // a field type this exporter does not know: leave it out
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
  std::vector<std::string> names;
  Id g(H5Gopen2(file, schema::kBenchmarks, H5P_DEFAULT), H5Gclose);
  if (!g.valid()) return names;
  hsize_t n = 0;
  H5Gget_num_objs(g, &n);
  for (hsize_t i = 0; i < n; ++i) {
    char name[256];
    H5Gget_objname_by_idx(g, i, name, sizeof(name));
    names.emplace_back(name);
  }
  return names;
}

Id open_checked(const std::string& path) {
  const std::string why = check_result_file(path);
  if (!why.empty()) throw UsageError(why);
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) throw UsageError(path + ": cannot open");
  return f;
}

std::string csv_cell(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  return v.dump();
}

void write_csv(const Table& t, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw UsageError("cannot write " + path);
  for (std::size_t i = 0; i < t.fields.size(); ++i) out << (i ? "," : "") << t.fields[i].name;
  out << "\n";
  for (std::size_t r = 0; r < t.rows; ++r) {
    for (std::size_t i = 0; i < t.fields.size(); ++i) out << (i ? "," : "") << csv_cell(t.value(r, t.fields[i]));
    out << "\n";
  }
  if (!out) throw UsageError("cannot write " + path + " (disk full?)");
}

Json rows_json(const Table& t) {
  Json rows = Json::array();
  for (std::size_t r = 0; r < t.rows; ++r) {
    Json row = Json::object();
    for (const auto& f : t.fields) row[f.name] = t.value(r, f);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

void export_csv(const std::string& result_file, const std::string& out_dir) {
  Id f = open_checked(result_file);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw UsageError("cannot create " + out_dir + ": " + ec.message());
  write_csv(read_table(f, schema::kSystem, result_file), out_dir + "/system.csv");
  for (const auto& name : benchmark_names(f))
    write_csv(completed_rows(
                  read_table(f, std::string(schema::kBenchmarks) + "/" + name + "/" + schema::kPoints, result_file)),
              out_dir + "/" + name + ".csv");
}

void export_json(const std::string& result_file, const std::string& out_path) {
  Id f = open_checked(result_file);
  Json doc;
  Json attrs = Json::object();
  for (const char* a : {"format", "tool_version", "git_revision", "source_tree", "config_path", "config_fingerprint",
                        "command_line", "start_utc", "end_utc", "backend", "state", "config"})
    attrs[a] = h5::get_attr_string(f, a);
  attrs["schema_version"] = h5::get_attr_int(f, schema::kAttrSchemaVersion);
  attrs["world_size"] = h5::get_attr_int(f, schema::kAttrWorldSize);
  doc["attributes"] = attrs;
  doc["system"] = rows_json(read_table(f, schema::kSystem, result_file));
  Json benches = Json::object();
  for (const auto& name : benchmark_names(f))
    benches[name] = rows_json(completed_rows(
        read_table(f, std::string(schema::kBenchmarks) + "/" + name + "/" + schema::kPoints, result_file)));
  doc["benchmarks"] = benches;
  if (out_path == "-") {
    std::cout << doc.dump(1) << "\n";
    return;
  }
  std::ofstream out(out_path);
  if (!out) throw UsageError("cannot write " + out_path);
  out << doc.dump(1) << "\n";
  if (!out) throw UsageError("cannot write " + out_path + " (disk full?)");
}

}  // namespace genbench
