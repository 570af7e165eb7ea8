#include "runner/fault.h"

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "backend/backend.h"
#include "core/error.h"
#include "core/strings.h"
#include "core/watchdog.h"

namespace genbench {

namespace {
constexpr const char* kVar = "GENBENCH_INJECT_FAULT";

long long to_int(const std::string& key, const std::string& v) {
  std::size_t used = 0;
  long long x = -1;
  try {
    x = std::stoll(v, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size() || x < 0)
    throw UsageError(std::string(kVar) + ": '" + key + "' must be a non-negative integer, not '" + v + "'");
  return x;
}

constexpr const char* kKinds = "error, hang, wrong, oom, skip_collective, device_error or held";

[[noreturn]] void stall(const char* what) {
  ActivityScope stuck(what);
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

}  // namespace

FaultPlan FaultPlan::from_env() {
  const char* s = std::getenv(kVar);
  return parse(s ? s : "");
}

FaultPlan FaultPlan::parse(const std::string& spec) {
  FaultPlan f;
  if (spec.empty()) return f;
  bool have_kind = false;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = spec.find(',', start);
    const std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? spec.size() + 1 : comma + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) throw UsageError(std::string(kVar) + ": expected key=value, not '" + item + "'");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "rank") {
      f.rank_ = static_cast<int>(to_int(key, value));
    } else if (key == "point") {
      f.point_ = to_int(key, value);
    } else if (key == "bench") {
      f.bench_ = value;
    } else if (key == "times") {
      f.times_ = to_int(key, value);
      if (f.times_ == 0) throw UsageError(std::string(kVar) + ": 'times' must be at least 1");
    } else if (key == "call") {
      if (value.empty()) throw UsageError(std::string(kVar) + ": 'call' is empty");
      f.call_ = value;
    } else if (key == "kind") {
      have_kind = true;
      if (value == "error") f.kind_ = Kind::error;
      else if (value == "hang") f.kind_ = Kind::hang;
      else if (value == "wrong") f.kind_ = Kind::wrong;
      else if (value == "oom") f.kind_ = Kind::oom;
      else if (value == "skip_collective") f.kind_ = Kind::skip_collective;
      else if (value == "device_error") f.kind_ = Kind::device_error;
      else if (value == "held") f.kind_ = Kind::held;
      else throw UsageError(std::string(kVar) + ": kind must be " + kKinds + ", not '" + value + "'");
    } else {
      throw UsageError(std::string(kVar) + ": unknown key '" + key + "' (rank, point, kind, bench, call, times)");
    }
  }
  if (!have_kind) throw UsageError(std::string(kVar) + ": no kind= (" + kKinds + ")");
  return f;
}

bool FaultPlan::hits(int rank, const std::string& bench, std::size_t point) const {
  return kind_ != Kind::none && rank == rank_ && static_cast<long long>(point) == point_ &&
         (bench_.empty() || bench_ == bench);
}

void FaultPlan::at_point_start(int rank, const std::string& bench, std::size_t point, Backend& backend) const {
  if (!hits(rank, bench, point)) return;
  const bool cuda = backend.kind() == BackendKind::cuda;
  if (kind_ == Kind::error || (kind_ == Kind::device_error && !cuda)) {
    // The caller (main) adds rank, host and point, as for every runtime error.
    throw Error(strprintf("%s failed: unspecified launch failure (simulated by %s)", call_.c_str(), kVar));
  }
  if (kind_ == Kind::hang || (kind_ == Kind::skip_collective && !cuda)) {
    // The collective every other rank now enters is skipped; this rank stalls as if stuck in
    // a device call that never returns.
    stall("a stalled device call (the point's first collective skipped, simulated by GENBENCH_INJECT_FAULT)");
  }
  if (kind_ == Kind::skip_collective) cuda_skip_next_nccl_collective();
  if (kind_ == Kind::device_error)
    cuda_inject_device_fault(backend, std::string("[device fault injected by ") + kVar + "]");
}

void FaultPlan::before_prepare(int rank, const std::string& bench, std::size_t point) const {
  if (kind_ == Kind::oom && hits(rank, bench, point))
    throw OutOfMemory(strprintf("cannot allocate the point's buffers: out of memory (simulated by %s)", kVar));
}

void FaultPlan::after_validate(int rank, const std::string& bench, std::size_t point, Validation& v) const {
  if (kind_ != Kind::wrong || !hits(rank, bench, point)) return;
  v.ok = false;
  v.error = v.tolerance > 0 ? v.tolerance * 1000 : 1.0;
  v.detail = strprintf("error %g exceeds tolerance %g (result corrupted by %s)", v.error, v.tolerance, kVar);
}

void FaultPlan::after_timing(int rank, const std::string& bench, std::size_t point, DeviceState& during) const {
  if (kind_ != Kind::held || !hits(rank, bench, point)) return;
  if (times_ > 0 && held_so_far_++ >= times_) return;  // held for the first `times` timings only
  during.valid = true;
  during.throttle_reasons |= clocks_event::kSwPowerCap;
  during.throttled = true;
}

}  // namespace genbench
