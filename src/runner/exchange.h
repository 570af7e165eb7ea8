#pragma once
// What the ranks exchange during a run, as typed records that travel as JSON text over MPI
// (Comm::gather / broadcast of strings): every rank's DeviceInfo, every rank's ceilings, the
// points already in a resumed file, and each rank's view of a finished point. One encoding
// (nlohmann_json) replaces the hand-made separators and packed arrays of earlier versions.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/ceilings.h"
#include "comm/comm.h"

namespace genbench::exchange {

// What one rank knows about a point after its timed iterations; rank 0 gathers them all.
struct RankPoint {
  std::int64_t peak_bytes = 0;                              // framework allocation accounting over the point
  std::int64_t memory_delta = 0;                            // device free memory before minus after prepare
  DeviceState state;                                        // merged over before, during and after the iterations
  std::vector<std::pair<std::string, double>> extra;        // Case::extra_metrics()
  std::vector<std::pair<std::string, std::string>> chosen;  // Case::chosen()
};

// Each gather returns every rank's record on rank 0 (index = rank) and nothing elsewhere.
std::vector<DeviceInfo> gather_devices(const Comm& comm, const DeviceInfo& mine);
std::vector<Ceiling> gather_ceilings(const Comm& comm, const std::vector<Ceiling>& mine);
std::vector<RankPoint> gather_point(const Comm& comm, const RankPoint& mine);

// Benchmark name -> point indices already recorded; rank 0's map reaches every rank.
using DoneSet = std::map<std::string, std::set<std::size_t>>;
void broadcast_done(const Comm& comm, DoneSet& done);

// The encodings themselves (tested without MPI).
std::string encode(const DeviceInfo& d);
DeviceInfo decode_device(const std::string& text);
std::string encode(const std::vector<Ceiling>& rows);
std::vector<Ceiling> decode_ceilings(const std::string& text);
std::string encode(const RankPoint& p);
RankPoint decode_point(const std::string& text);
std::string encode(const DoneSet& d);
DoneSet decode_done(const std::string& text);

}  // namespace genbench::exchange
