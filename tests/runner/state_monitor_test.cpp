// The device state during timed iterations (runner/state_monitor.h), on a backend whose samples
// are scripted: sample i has SM clock 1000 + i MHz, power 100 + i W, and the software power cap
// (0x4) from the third on.
#include "runner/state_monitor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace genbench {
namespace {

using namespace std::chrono_literals;

class ScriptedBackend final : public Backend {
 public:
  explicit ScriptedBackend(bool valid = true) : valid_(valid) {}
  BackendKind kind() const override { return BackendKind::host; }
  DeviceInfo device_info() const override { return {}; }
  std::unique_ptr<Timer> make_timer() override { return nullptr; }
  void synchronize() override {}
  void flush_cache() override {}
  MemoryInfo memory_info() const override { return {}; }
  DeviceState sample_state() override {
    const int i = served_++;
    DeviceState s;
    s.valid = valid_;
    if (!valid_) return s;
    s.sm_clock_mhz = 1000 + i;
    s.mem_clock_mhz = 2619;
    s.power_w = 100 + i;
    s.temperature_c = 40 + (i % 3);
    s.throttle_reasons = i >= 2 ? 0x4 : 0x0;
    s.throttled = i >= 2;
    return s;
  }
  int served() const { return served_; }

 protected:
  void* raw_allocate(std::size_t bytes) override { return std::malloc(bytes); }
  void raw_free(void* p) override { std::free(p); }

 private:
  bool valid_;
  std::atomic<int> served_{0};
};

void wait_for_samples(const StateMonitor& m, int n) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (m.samples() < n && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_GE(m.samples(), n) << "the monitor took fewer samples than expected in 10 s";
}

TEST(StateMonitor, AggregatesTheSamplesTakenWhileItRuns) {
  ScriptedBackend b;
  StateMonitor m(b, 2ms);
  wait_for_samples(m, 6);
  const DeviceState s = m.finish();
  const int n = m.samples();
  ASSERT_GE(n, 6);
  ASSERT_LE(n, b.served());  // a sample taken after the stop is not counted
  EXPECT_TRUE(s.valid);
  // The counted samples are the first n served: clocks 1000 .. 1000 + n - 1, mean in between.
  EXPECT_DOUBLE_EQ(s.sm_clock_mhz, 1000 + (n - 1) / 2.0);
  EXPECT_DOUBLE_EQ(s.mem_clock_mhz, 2619);
  EXPECT_DOUBLE_EQ(s.power_w, 100 + n - 1);  // the highest
  EXPECT_DOUBLE_EQ(s.temperature_c, 42);
  EXPECT_EQ(s.throttle_reasons, 0x4u);
  EXPECT_TRUE(s.throttled);
  // finish() is idempotent and takes no further samples.
  const int served = b.served();
  const DeviceState again = m.finish();
  EXPECT_EQ(b.served(), served);
  EXPECT_DOUBLE_EQ(again.sm_clock_mhz, s.sm_clock_mhz);
}

TEST(StateMonitor, OnlyTheFirstSampleBeforeAnyPeriod) {
  // With a long period, finish() returns at once (the thread waits on a condition, not a
  // sleep) with the one sample taken at construction: not throttled yet.
  ScriptedBackend b;
  const auto t0 = std::chrono::steady_clock::now();
  StateMonitor m(b, 60s);
  const DeviceState s = m.finish();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_EQ(m.samples(), 1);
  EXPECT_TRUE(s.valid);
  EXPECT_DOUBLE_EQ(s.sm_clock_mhz, 1000);
  EXPECT_FALSE(s.throttled);
  EXPECT_EQ(s.throttle_reasons, 0u);
}

TEST(StateMonitor, BackendWithoutStateIsSampledOnce) {
  ScriptedBackend b(false);
  StateMonitor m(b, 1ms);
  std::this_thread::sleep_for(20ms);
  const DeviceState s = m.finish();
  EXPECT_EQ(b.served(), 1);  // no thread was started
  EXPECT_EQ(m.samples(), 0);
  EXPECT_FALSE(s.valid);
  EXPECT_TRUE(std::isnan(s.sm_clock_mhz));
  EXPECT_TRUE(std::isnan(s.power_w));
}

DeviceState state(double sm, double power, std::uint64_t reasons, bool valid = true) {
  DeviceState s;
  s.valid = valid;
  s.sm_clock_mhz = sm;
  s.mem_clock_mhz = sm + 1;
  s.power_w = power;
  s.temperature_c = power / 10;
  s.throttle_reasons = reasons;
  s.throttled = (reasons & 0xfc) != 0;
  return s;
}

TEST(StateMonitor, MergeTakesClocksFromDuringAndEveryReason) {
  const DeviceState before = state(1980, 90, 0x1), during = state(1760, 650, 0x4), after = state(1980, 120, 0x0);
  const DeviceState m = merge_states(before, during, after);
  EXPECT_TRUE(m.valid);
  EXPECT_DOUBLE_EQ(m.sm_clock_mhz, 1760);
  EXPECT_DOUBLE_EQ(m.mem_clock_mhz, 1761);
  EXPECT_DOUBLE_EQ(m.power_w, 650);
  EXPECT_DOUBLE_EQ(m.temperature_c, 65);
  EXPECT_EQ(m.throttle_reasons, 0x5u);
  EXPECT_TRUE(m.throttled);
  // A reason seen only just before the loop still counts; the later power is the higher.
  const DeviceState m2 = merge_states(state(1980, 90, 0x80), state(1980, 300, 0), state(1980, 310, 0));
  EXPECT_EQ(m2.throttle_reasons, 0x80u);
  EXPECT_TRUE(m2.throttled);
  EXPECT_DOUBLE_EQ(m2.power_w, 310);
}

TEST(StateMonitor, MergeFallsBackToAfterWithoutSamplesDuring) {
  const DeviceState none = state(0, 0, 0x4, false);  // invalid: its fields are ignored
  const DeviceState m = merge_states(state(1980, 90, 0), none, state(1900, 200, 0x8));
  EXPECT_DOUBLE_EQ(m.sm_clock_mhz, 1900);
  EXPECT_DOUBLE_EQ(m.power_w, 200);
  EXPECT_EQ(m.throttle_reasons, 0x8u);
  EXPECT_TRUE(m.throttled);
  const DeviceState all_invalid = merge_states(none, none, none);
  EXPECT_FALSE(all_invalid.valid);
  EXPECT_EQ(all_invalid.throttle_reasons, 0u);
  EXPECT_FALSE(all_invalid.throttled);
}

TEST(StateMonitor, RanksFoldToLowestClocksHighestPowerEveryReason) {
  DeviceState all;
  add_rank_state(all, state(1980, 300, 0x1));
  add_rank_state(all, state(0, 999, 0x80, false));  // an invalid rank is left out
  add_rank_state(all, state(1760, 650, 0x4));
  add_rank_state(all, state(1900, 500, 0));
  EXPECT_TRUE(all.valid);
  EXPECT_DOUBLE_EQ(all.sm_clock_mhz, 1760);
  EXPECT_DOUBLE_EQ(all.mem_clock_mhz, 1761);
  EXPECT_DOUBLE_EQ(all.power_w, 650);
  EXPECT_DOUBLE_EQ(all.temperature_c, 65);
  EXPECT_EQ(all.throttle_reasons, 0x5u);
  EXPECT_TRUE(all.throttled);
  DeviceState none;
  add_rank_state(none, state(1980, 300, 0x4, false));
  EXPECT_FALSE(none.valid);
  EXPECT_FALSE(none.throttled);
}

TEST(StateMonitor, HoldingReasonsInWords) {
  EXPECT_EQ(holding_reasons(0x4 | 0x80), "software power cap, power brake");
  EXPECT_EQ(holding_reasons(0x8 | 0x20 | 0x40), "hardware slowdown, software thermal, hardware thermal");
  EXPECT_EQ(holding_reasons(0x1 | 0x2), "");  // idle and application clocks hold nothing back
  EXPECT_EQ(holding_reasons(0), "");
}

}  // namespace
}  // namespace genbench
