#pragma once
#include <string>

namespace genbench {

// Writes a result file's tables for tools that do not read HDF5.
// CSV: one file per benchmark (<out_dir>/<benchmark>.csv) plus system.csv.
// JSON: one document {attributes, system, benchmarks: {name: [rows]}} to out_path ("-" = stdout).
// Throws UsageError for files that are not genbench results of a readable schema version.
void export_csv(const std::string& result_file, const std::string& out_dir);
void export_json(const std::string& result_file, const std::string& out_path);

}  // namespace genbench
