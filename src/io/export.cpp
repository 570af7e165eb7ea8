#include "io/export.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/error.h"
#include "io/h5.h"
#include "io/schema.h"
#include "io/tables.h"

namespace genbench {

namespace {

using h5::Id;
using Json = nlohmann::ordered_json;

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
  Id f = open_result_file(result_file);
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
  Id f = open_result_file(result_file);
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
