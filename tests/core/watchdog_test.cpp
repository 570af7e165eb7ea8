// The watchdog's pieces that device waits use (core/watchdog.h): the polling wait
// (wait_by_polling) and what the watchdog's record says about device work (activity_*).
// Fake polls stand in for the device queries, so none of this needs a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/watchdog.h"

namespace genbench {
namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(WaitByPolling, PollsUntilReadyAndChecksBetweenPolls) {
  int polls = 0, checks = 0;
  const auto n = wait_by_polling([&] { return ++polls == 5; }, [&] { ++checks; }, 1, 50);
  EXPECT_EQ(n, 5u);
  EXPECT_EQ(polls, 5);
  EXPECT_EQ(checks, 4);  // after each negative poll only
}

TEST(WaitByPolling, ReadyAtOnceNeitherChecksNorSleeps) {
  int checks = 0;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(wait_by_polling([] { return true; }, [&] { ++checks; }, 100000, 100000), 1u);
  EXPECT_EQ(checks, 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.05);
}

TEST(WaitByPolling, SleepIsCappedSoLongWaitsStayResponsive) {
  // 200 polls with a 200 us cap: far below the uncapped doubling (which would take hours).
  int polls = 0;
  const auto t0 = std::chrono::steady_clock::now();
  wait_by_polling([&] { return ++polls == 200; }, nullptr, 5, 200);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(polls, 200);
  EXPECT_GT(s, 150 * 200e-6 * 0.5);  // it does sleep between polls
  EXPECT_LT(s, 2.0);
}

TEST(WaitByPolling, AnErrorBetweenPollsEndsTheWait) {
  int polls = 0;
  EXPECT_THROW(wait_by_polling([&] { return ++polls > 100; },
                               [&] {
                                 if (polls == 3) throw Error("communicator failed");
                               },
                               1, 10),
               Error);
  EXPECT_EQ(polls, 3);
}

TEST(ActivityRecord, NumberedDeviceWaitAndSkippedOperation) {
  activity_device_op("ncclAllReduce", 7, true);
  EXPECT_TRUE(has(activity_describe(), "last device operation ncclAllReduce #7 skipped")) << activity_describe();
  {
    const ActivityScope wait("ncclBroadcast", std::uint64_t{9});
    const std::string d = activity_describe();
    EXPECT_TRUE(has(d, "in ncclBroadcast #9 (waiting for the device")) << d;
    EXPECT_TRUE(has(d, "ncclAllReduce #7 skipped")) << d;
  }
  activity_device_op("ncclAllGather", 8);
  {
    const ActivityScope wait("ncclAllGather", std::uint64_t{8});
    const std::string d = activity_describe();
    EXPECT_TRUE(has(d, "in ncclAllGather #8")) << d;
    EXPECT_FALSE(has(d, "last device operation")) << d;  // named once
  }
  EXPECT_TRUE(has(activity_describe(), "ncclAllGather #8 not yet completed")) << activity_describe();
  activity_device_done();
  EXPECT_FALSE(has(activity_describe(), "ncclAllGather")) << activity_describe();
  activity_device_op(nullptr, 0);
}

}  // namespace
}  // namespace genbench
