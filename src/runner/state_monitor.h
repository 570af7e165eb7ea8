#pragma once
// The device's state while a point's timed iterations run. A sample just before the loop sees
// the warm-up's end and one just after sees a finishing device, so a power cap or clock
// reduction that holds only under load would be missed (docs/lab/fa3-v13-v14.md, fa3 v14: fp8
// attention under its software power cap in most samples taken during the iterations, none
// seen after them). StateMonitor samples on a thread of its own, every `period`, from its
// construction to finish(); merge_states() folds the three views into the point's state.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "backend/backend.h"

namespace genbench {

class StateMonitor {
 public:
  // Takes a first sample at once; a backend whose first sample is invalid (no NVML, the host
  // backend) is not sampled again.
  StateMonitor(Backend& backend, std::chrono::milliseconds period);
  ~StateMonitor();
  StateMonitor(const StateMonitor&) = delete;
  StateMonitor& operator=(const StateMonitor&) = delete;

  // Stops the sampling (idempotent) and returns what the valid samples saw: mean SM and memory
  // clocks, the highest power and temperature, every clocks-event reason, throttled if any
  // sample was; valid == false (and NaNs) when none was valid.
  DeviceState finish();
  int samples() const;  // valid samples so far

 private:
  void loop();
  void add(const DeviceState& s);  // under m_

  Backend& backend_;
  const std::chrono::milliseconds period_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  int n_ = 0, n_sm_ = 0, n_mem_ = 0;
  double sm_sum_ = 0, mem_sum_ = 0;
  DeviceState acc_;
  std::thread thread_;
};

// The point's state from the samples just before, during (StateMonitor) and just after the
// timed iterations: clocks from the samples during (after them where there are none), power
// and temperature the highest of during and after, reasons and throttled from all three.
DeviceState merge_states(const DeviceState& before, const DeviceState& during, const DeviceState& after);

// Folds one rank's point state into the job's (`all` starts default, invalid): the lowest
// clocks, the highest power and temperature, every reason; invalid ranks are left out.
void add_rank_state(DeviceState& all, const DeviceState& rank);

// The reasons among NVML clocks-event bits that hold the card back (those DeviceState::throttled
// counts), in words: "software power cap", "hardware slowdown", "software thermal", "hardware
// thermal", "power brake", joined by ", "; empty when there is none.
std::string holding_reasons(std::uint64_t reasons);

}  // namespace genbench
