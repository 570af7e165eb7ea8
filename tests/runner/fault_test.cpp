// GENBENCH_INJECT_FAULT parsing and the host backend's handling of each kind (the GPU kinds
// fall back to their host-simulated forms there); the GPU behaviour is covered by
// tests/reliability/test_gpu_faults.py.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backend/backend.h"
#include "core/error.h"
#include "runner/fault.h"

namespace genbench {
namespace {

std::unique_ptr<Backend> host_backend() { return make_host_backend(BackendOptions{}); }

TEST(FaultPlan, UnsetIsInert) {
  const FaultPlan f = FaultPlan::parse("");
  EXPECT_FALSE(f.active());
  EXPECT_EQ(f.kind(), FaultPlan::Kind::none);
  EXPECT_FALSE(f.hits(0, "g", 0));
  auto b = host_backend();
  EXPECT_NO_THROW(f.at_point_start(0, "g", 0, *b));
}

TEST(FaultPlan, ParsesTheDeviceKinds) {
  const FaultPlan skip = FaultPlan::parse("rank=1,point=4,kind=skip_collective");
  EXPECT_EQ(skip.kind(), FaultPlan::Kind::skip_collective);
  EXPECT_TRUE(skip.hits(1, "any", 4));
  EXPECT_FALSE(skip.hits(0, "any", 4));
  EXPECT_FALSE(skip.hits(1, "any", 3));

  const FaultPlan dev = FaultPlan::parse("kind=device_error,point=1,bench=c");
  EXPECT_EQ(dev.kind(), FaultPlan::Kind::device_error);
  EXPECT_TRUE(dev.hits(0, "c", 1));  // rank defaults to 0
  EXPECT_FALSE(dev.hits(0, "other", 1));
  EXPECT_EQ(dev.call(), "cudaLaunchKernel");
}

TEST(FaultPlan, ParsesEveryKindAndCall) {
  EXPECT_EQ(FaultPlan::parse("kind=error").kind(), FaultPlan::Kind::error);
  EXPECT_EQ(FaultPlan::parse("kind=hang").kind(), FaultPlan::Kind::hang);
  EXPECT_EQ(FaultPlan::parse("kind=wrong").kind(), FaultPlan::Kind::wrong);
  EXPECT_EQ(FaultPlan::parse("kind=held").kind(), FaultPlan::Kind::held);
  EXPECT_EQ(FaultPlan::parse("kind=oom").kind(), FaultPlan::Kind::oom);
  EXPECT_EQ(FaultPlan::parse("kind=error,call=cudaMemcpyAsync").call(), "cudaMemcpyAsync");
}

TEST(FaultPlan, MalformedSpecsAreUsageErrors) {
  for (const char* spec :
       {"rank=1,point=3", "kind=skip", "kind=device-error", "kind=skip_collective,rank=-1", "kind=device_error,point=x",
        "kind=device_error;rank=1", "kind=skip_collective,when=now", "kind=error,call="}) {
    try {
      FaultPlan::parse(spec);
      ADD_FAILURE() << spec << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("GENBENCH_INJECT_FAULT"), std::string::npos) << e.what();
    }
  }
}

TEST(FaultPlan, UnknownKindMessageListsTheNewKinds) {
  try {
    FaultPlan::parse("kind=explode");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("skip_collective"), std::string::npos) << m;
    EXPECT_NE(m.find("device_error"), std::string::npos) << m;
    EXPECT_NE(m.find("held"), std::string::npos) << m;
  }
}

TEST(FaultPlan, DeviceErrorOnTheHostBackendIsTheSimulatedError) {
  const FaultPlan f = FaultPlan::parse("rank=0,point=2,kind=device_error");
  auto b = host_backend();
  EXPECT_NO_THROW(f.at_point_start(0, "g", 1, *b));  // another point
  try {
    f.at_point_start(0, "g", 2, *b);
    FAIL() << "no error";
  } catch (const UsageError&) {
    FAIL() << "a usage error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cudaLaunchKernel failed"), std::string::npos) << m;
    EXPECT_NE(m.find("GENBENCH_INJECT_FAULT"), std::string::npos) << m;
  }
}

TEST(FaultPlan, OtherRanksAndPointsAreUntouched) {
  auto b = host_backend();
  for (const char* kind : {"skip_collective", "device_error", "hang", "error"}) {
    const FaultPlan f = FaultPlan::parse(std::string("rank=1,point=3,kind=") + kind);
    EXPECT_NO_THROW(f.at_point_start(0, "g", 3, *b)) << kind;
    EXPECT_NO_THROW(f.at_point_start(1, "g", 2, *b)) << kind;
  }
}

}  // namespace
}  // namespace genbench
