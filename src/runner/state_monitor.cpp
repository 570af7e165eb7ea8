#include "runner/state_monitor.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace genbench {

namespace {

double higher(double a, double b) { return std::isnan(a) ? b : std::isnan(b) ? a : std::max(a, b); }
double lower(double a, double b) { return std::isnan(a) ? b : std::isnan(b) ? a : std::min(a, b); }

}  // namespace

StateMonitor::StateMonitor(Backend& backend, std::chrono::milliseconds period) : backend_(backend), period_(period) {
  const DeviceState first = backend_.sample_state();
  if (!first.valid) return;
  add(first);
  thread_ = std::thread([this] { loop(); });
}

StateMonitor::~StateMonitor() { finish(); }

void StateMonitor::loop() {
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    if (cv_.wait_for(lock, period_, [this] { return stop_; })) return;
    lock.unlock();
    const DeviceState s = backend_.sample_state();  // not under the lock: NVML may take a while
    lock.lock();
    if (stop_) return;
    add(s);
  }
}

void StateMonitor::add(const DeviceState& s) {
  if (!s.valid) return;
  ++n_;
  if (!std::isnan(s.sm_clock_mhz)) {
    sm_sum_ += s.sm_clock_mhz;
    ++n_sm_;
  }
  if (!std::isnan(s.mem_clock_mhz)) {
    mem_sum_ += s.mem_clock_mhz;
    ++n_mem_;
  }
  acc_.power_w = higher(acc_.power_w, s.power_w);
  acc_.temperature_c = higher(acc_.temperature_c, s.temperature_c);
  acc_.throttle_reasons |= s.throttle_reasons;
  acc_.throttled = acc_.throttled || s.throttled;
}

DeviceState StateMonitor::finish() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(m_);
  DeviceState s = acc_;
  s.valid = n_ > 0;
  s.sm_clock_mhz = n_sm_ > 0 ? sm_sum_ / n_sm_ : std::nan("");
  s.mem_clock_mhz = n_mem_ > 0 ? mem_sum_ / n_mem_ : std::nan("");
  return s;
}

int StateMonitor::samples() const {
  std::lock_guard<std::mutex> lock(m_);
  return n_;
}

DeviceState merge_states(const DeviceState& before, const DeviceState& during, const DeviceState& after) {
  DeviceState s;
  s.valid = before.valid || during.valid || after.valid;
  s.sm_clock_mhz = during.valid && !std::isnan(during.sm_clock_mhz) ? during.sm_clock_mhz : after.sm_clock_mhz;
  s.mem_clock_mhz = during.valid && !std::isnan(during.mem_clock_mhz) ? during.mem_clock_mhz : after.mem_clock_mhz;
  s.power_w = higher(during.valid ? during.power_w : std::nan(""), after.power_w);
  s.temperature_c = higher(during.valid ? during.temperature_c : std::nan(""), after.temperature_c);
  for (const DeviceState* x : {&before, &during, &after}) {
    if (!x->valid) continue;
    s.throttle_reasons |= x->throttle_reasons;
    s.throttled = s.throttled || x->throttled;
  }
  return s;
}

void add_rank_state(DeviceState& all, const DeviceState& rank) {
  if (!rank.valid) return;
  all.sm_clock_mhz = all.valid ? lower(all.sm_clock_mhz, rank.sm_clock_mhz) : rank.sm_clock_mhz;
  all.mem_clock_mhz = all.valid ? lower(all.mem_clock_mhz, rank.mem_clock_mhz) : rank.mem_clock_mhz;
  all.power_w = all.valid ? higher(all.power_w, rank.power_w) : rank.power_w;
  all.temperature_c = all.valid ? higher(all.temperature_c, rank.temperature_c) : rank.temperature_c;
  all.throttle_reasons |= rank.throttle_reasons;
  all.throttled = all.throttled || rank.throttled;
  all.valid = true;
}

std::string holding_reasons(std::uint64_t reasons) {
  using namespace clocks_event;
  static const std::pair<std::uint64_t, const char*> kNames[] = {{kSwPowerCap, "software power cap"},
                                                                 {kHwSlowdown, "hardware slowdown"},
                                                                 {kSwThermal, "software thermal"},
                                                                 {kHwThermal, "hardware thermal"},
                                                                 {kPowerBrake, "power brake"}};
  std::string out;
  for (const auto& [bit, name] : kNames)
    if (reasons & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

}  // namespace genbench
