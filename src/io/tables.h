#pragma once
// Reading a result file's tables back (export, describe): a compound dataset into memory with
// its fields, the benchmarks' names, the completed rows of a points table.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "io/h5.h"

namespace genbench {

// A compound dataset read into memory: integers as int64, floats as double, strings as stored.
struct Table {
  struct Field {
    std::string name;
    H5T_class_t cls;
    std::size_t offset, size;
  };
  std::vector<Field> fields;
  std::vector<unsigned char> data;
  std::size_t row_size = 0, rows = 0;

  // A cell as JSON: an integer, a float (null when not finite) or a string.
  nlohmann::ordered_json value(std::size_t r, const Field& f) const;
  // The field of that name, or nullptr.
  const Field* field(const std::string& name) const;
};

// Throws UsageError naming file_name when the dataset is missing, no table or unreadable.
Table read_table(hid_t file, const std::string& path, const std::string& file_name);
// The rows whose status is set (schema 2 allocates a row for every point of the sweep; a row
// whose status is empty has not completed; schema 1 files have no such rows).
Table completed_rows(Table t);
// The groups under /benchmarks, in the file's order.
std::vector<std::string> benchmark_names(hid_t file);
// Opens a genbench result file of a readable schema version, read-only; throws UsageError
// saying why not (check_result_file).
h5::Id open_result_file(const std::string& path);

}  // namespace genbench
