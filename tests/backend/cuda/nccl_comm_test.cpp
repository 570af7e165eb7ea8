// The CUDA backend's polling wait for device work (backend/cuda/nccl_comm.h: wait_device_work)
// and the numbering of NCCL collectives, as the watchdog's record names them. Fake queries stand
// in for cudaStreamQuery and fake enqueues for NCCL calls, so none of this needs a GPU; it is
// built with the CUDA backend only.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/watchdog.h"
#ifdef GENBENCH_HAVE_CUDA
#include "backend/cuda/nccl_comm.h"
#endif

namespace genbench {
namespace {

#ifdef GENBENCH_HAVE_CUDA
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(DeviceWait, PollsTheQueryAndNamesTheOutstandingCollective) {
  nccl_collective(nullptr, "ncclAllReduce", [] { return ncclSuccess; });
  const std::uint64_t number = nccl_collective_count();
  int polls = 0;
  std::string seen;
  wait_device_work(
      [&] {
        if (++polls == 1) seen = activity_describe();
        return polls < 4 ? cudaErrorNotReady : cudaSuccess;
      },
      "cudaStreamQuery");
  EXPECT_EQ(polls, 4);
  EXPECT_TRUE(has(seen, "in ncclAllReduce #" + std::to_string(number) + " (waiting for the device")) << seen;
  // Completed: no longer named.
  EXPECT_FALSE(has(activity_describe(), "ncclAllReduce #" + std::to_string(number))) << activity_describe();
}

TEST(DeviceWait, AFailedQueryThrowsNamingTheCall) {
  int polls = 0;
  try {
    wait_device_work([&] { return ++polls < 3 ? cudaErrorNotReady : cudaErrorLaunchFailure; }, "cudaEventQuery");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(has(e.what(), "cudaEventQuery failed")) << e.what();
    EXPECT_EQ(polls, 3);
  }
}

TEST(DeviceWait, ArmedSkipLeavesOutExactlyOneCollective) {
  int enqueued = 0;
  const auto enqueue = [&] {
    ++enqueued;
    return ncclSuccess;
  };
  nccl_skip_next_collective();
  nccl_collective(nullptr, "ncclAllGather", enqueue);
  const std::uint64_t skipped = nccl_collective_count();
  EXPECT_EQ(enqueued, 0);
  EXPECT_TRUE(has(activity_describe(), "ncclAllGather #" + std::to_string(skipped) + " skipped"))
      << activity_describe();
  nccl_collective(nullptr, "ncclAllGather", enqueue);
  EXPECT_EQ(enqueued, 1);
  EXPECT_EQ(nccl_collective_count(), skipped + 1);  // skipped ones keep their number
  wait_device_work([] { return cudaSuccess; }, "cudaStreamQuery");
  activity_device_op(nullptr, 0);
}

TEST(DeviceWait, AFailedEnqueueThrowsNamingTheCollective) {
  try {
    nccl_collective(nullptr, "ncclReduceScatter", [] { return ncclInvalidArgument; });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(has(e.what(), "ncclReduceScatter failed")) << e.what();
    EXPECT_TRUE(has(e.what(), "collective #")) << e.what();
  }
  wait_device_work([] { return cudaSuccess; }, "cudaStreamQuery");
  activity_device_op(nullptr, 0);
}
#endif

}  // namespace
}  // namespace genbench
