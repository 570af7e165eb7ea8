#pragma once
// The HDF5 result file, written by rank 0 only. Each point is appended and the file closed
// again, so a run killed between points leaves a valid file holding every completed point.
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/ceilings.h"
#include "ops/op.h"
#include "stats/stats.h"
#include "sweep/point.h"

namespace genbench {

struct RunAttributes {
  std::string tool_version;
  std::string git_revision;
  std::string config_text;
  std::string config_path;
  std::uint64_t config_fingerprint = 0;
  std::string command_line;
  std::string start_utc;
  int world_size = 1;
  std::string backend;
};

struct RankRecord {
  Summary summary;                 // of this rank's samples (seconds)
  std::int64_t peak_memory_bytes = 0;   // framework allocation accounting
  std::int64_t memory_delta_bytes = 0;  // device free memory before minus during the point
};

struct PointRecord {
  Point point;
  std::string status;    // schema::kOk ...
  std::string reason;    // why not ok
  std::string variant;   // which kernel configuration / algorithm ran
  std::string stop_reason;
  std::vector<std::vector<double>> samples;  // [rank][iteration], equal lengths
  std::vector<RankRecord> ranks;
  Summary slowest;       // of the per-iteration maximum over ranks
  Work work;
  double tflops = 0, algbw_gbps = 0, busbw_gbps = 0;
  double validation_error = 0, validation_tolerance = 0;
  DeviceState state;     // after the timed iterations, over ranks (see docs/cuda-backend.md)
  std::vector<double> extra;  // the op's extra_columns(), in order (rank 0's values; NaN = none)
  double ceiling_fraction = std::numeric_limits<double>::quiet_NaN();  // rate / the op's ceiling
};

struct BenchmarkInfo {
  std::string name;
  const Op* op = nullptr;
  std::vector<std::string> implementations;
  std::size_t sweep_size = 0;
  int max_iterations = 1;
  TimingPolicy timing;
};

class ResultFile {
 public:
  // Creates a new file (refuses an existing one unless force) and writes the root attributes.
  static ResultFile create(const std::string& path, bool force, const RunAttributes& attrs);
  // Opens an existing file to continue it; refuses a file of another tool, schema version,
  // config or world size. Returns the points already recorded per benchmark.
  static ResultFile resume(const std::string& path, const RunAttributes& attrs,
                           std::map<std::string, std::set<std::size_t>>* done);

  void write_system(const std::vector<DeviceInfo>& ranks);
  // Replaces /ceilings with these rows (every rank's).
  void write_ceilings(const std::vector<Ceiling>& rows);
  void append(const BenchmarkInfo& b, const PointRecord& rec);
  // Sets end time and final state ("complete", "interrupted", "failed").
  void finish(const std::string& state, const std::string& end_utc);
  const std::string& path() const { return path_; }

 private:
  explicit ResultFile(std::string path, int world) : path_(std::move(path)), world_(world) {}
  std::string path_;
  int world_ = 1;
};

// Schema check used by readers: "" when the file is a genbench result file this build can
// read, otherwise why not.
std::string check_result_file(const std::string& path);

std::string utc_now();

}  // namespace genbench
