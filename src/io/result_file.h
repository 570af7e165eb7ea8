#pragma once
// The HDF5 result file (schema version 2, docs/hdf5-schema.md), written by rank 0 only. Each
// benchmark's datasets are allocated in full when its first point is written (one row per sweep
// point); a point then writes its rows in place, at fixed offsets, and changes no HDF5 metadata,
// so its cost does not grow with the file and a kill at any moment leaves a file that opens
// with every completed point (docs/reliability.md). Between points the file and the datasets
// stay open, so a point is its raw writes only; a whole-file change closes them first.
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
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
  std::string source_tree;  // content hash of the built tree (cmake/GenbenchRevision.cmake)
  std::string config_text;
  std::string config_path;
  std::uint64_t config_fingerprint = 0;
  std::string command_line;
  std::string selection;  // the command line's -b / -a, canonical ("" = the whole config)
  std::string start_utc;
  int world_size = 1;
  std::string backend;
};

struct RankRecord {
  Summary summary;                      // of this rank's samples (seconds)
  std::int64_t peak_memory_bytes = 0;   // framework allocation accounting
  std::int64_t memory_delta_bytes = 0;  // device free memory before minus during the point
};

struct PointRecord {
  Point point;
  std::size_t round = 0;  // which round of timing.rounds; the row is round * sweep_size + point.index
  std::size_t order = 0;  // position of the point in its round's run order (sweep/sweep.h, round_order)
  std::string status;     // schema::kOk ...
  std::string reason;     // why not ok
  std::string variant;    // which kernel configuration / algorithm ran
  std::string stop_reason;
  int retimed = 0;                           // earlier timings dropped because the card was held back
  std::vector<std::vector<double>> samples;  // [rank][iteration], equal lengths
  std::vector<RankRecord> ranks;
  Summary slowest;  // of the per-iteration maximum over ranks
  Work work;
  double validation_error = 0, validation_tolerance = 0;
  DeviceState state;  // during the timed iterations, over ranks (see docs/cuda-backend.md)
  // The op's part of the row, in Op::columns() order (effective shape, tuning chosen, metrics,
  // extra columns): NaN / "" where a value does not apply.
  std::vector<ColumnValue> op_values;
  double ceiling_fraction = std::numeric_limits<double>::quiet_NaN();  // rate / the op's ceiling
};

struct BenchmarkInfo {
  std::string name;
  const Op* op = nullptr;
  std::vector<std::string> implementations;
  std::size_t sweep_size = 0;
  TimingPolicy timing;                                    // timing.max_iterations bounds the samples' last dimension
  std::vector<std::pair<std::string, std::string>> tags;  // BenchmarkConfig::tags
};

class ResultFile {
 public:
  // Creates a new file (refuses an existing one unless force) and writes the root attributes.
  static ResultFile create(const std::string& path, bool force, const RunAttributes& attrs);
  // Opens an existing file to continue it; refuses a file of another tool, schema version
  // (version 1 files are read by export and the analysis but not continued), config or world
  // size. Returns the points already completed per benchmark (rows whose status is set).
  static ResultFile resume(const std::string& path, const RunAttributes& attrs,
                           std::map<std::string, std::set<std::size_t>>* done);

  void write_system(const std::vector<DeviceInfo>& ranks);
  // Replaces /ceilings with these rows (every rank's).
  void write_ceilings(const std::vector<Ceiling>& rows);
  // Writes the point's rows at row rec.round * sweep_size + rec.point.index (allocating the
  // benchmark's datasets first when this is its first point): samples and rank_stats, then the
  // points row with an empty status, then its status, which marks the point complete. A point
  // written again (resumed after a kill before its status) overwrites its rows. The file and the
  // benchmark's datasets are opened by the first append and stay open for the next ones.
  void append(const BenchmarkInfo& b, const PointRecord& rec);
  // Sets end time and final state ("complete", "interrupted", "failed").
  void finish(const std::string& state, const std::string& end_utc);
  const std::string& path() const { return path_; }
  // Closes the file and the datasets appends keep open; the next append opens them again.
  // HDF5 shares one open file per process, so code of this process that reads the file while
  // points are being written (a test) closes it first.
  void close() { close_open(); }

  ResultFile(ResultFile&&) noexcept;
  ResultFile& operator=(ResultFile&&) noexcept;
  ResultFile(const ResultFile&) = delete;
  ResultFile& operator=(const ResultFile&) = delete;
  ~ResultFile();  // closes the file if a point left it open

 private:
  struct Open;  // the file and the datasets appends write to, kept open between points
  ResultFile(std::string path, int world);
  void create_benchmark(const BenchmarkInfo& b);
  // Closes what appends left open: before a whole-file change, whose copy replaces the file.
  void close_open();
  std::string path_;
  int world_ = 1;
  std::set<std::string> ready_;  // benchmarks whose datasets exist in the file
  std::unique_ptr<Open> open_;
};

// Schema check used by readers: "" when the file is a genbench result file this build can
// read (schema version kOldestReadableVersion .. kSchemaVersion), otherwise why not. version,
// when given, receives the file's schema version.
std::string check_result_file(const std::string& path, int* version = nullptr);

std::string utc_now();

// Whether process pid (on this host) has ended: gone, or exited and not yet reaped (a zombie).
bool process_gone(int pid);
// Removes the FILE.tmpPID copies next to path that runs on this host left when killed (their
// process has ended, process_gone) and this process's own; copies of live runs stay.
void remove_stale_copies(const std::string& path);

}  // namespace genbench
