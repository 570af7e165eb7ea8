// collective/nccl with every rank of the job: every collective, several types and reductions,
// in-place and out-of-place, eager and graph, verified element by element (count of wrong
// elements must be 0), plus one buffer large enough for the sampled check. Skipped without a
// GPU or when the job has more ranks than this node has GPUs (the decision is the same on
// every rank: one node, one device count).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backend/backend.h"
#ifdef GENBENCH_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/nccl_comm.h"
#include "core/watchdog.h"
#endif
#include "core/strings.h"
#include "ops/collective/collective.h"
#include "ops/implementation.h"
#include "support/points.h"
#include "support/test_env.h"

namespace genbench {
namespace {

Point coll_point(const std::string& kind, std::int64_t bytes, const std::string& dtype, const std::string& redop,
                 bool in_place, const std::string& mode, int root) {
  Point p = test::point_with(collective_op(), "nccl");
  namespace c = collective_axis;
  p.values[c::collective] = kind;
  p.values[c::bytes] = bytes;
  p.values[c::dtype] = dtype;
  p.values[c::redop] = redop;
  p.values[c::in_place] = std::int64_t{in_place ? 1 : 0};
  p.values[c::mode] = mode;
  p.values[c::root] = std::int64_t{root};
  return p;
}

bool usable(const Comm& comm) {
  const std::int64_t ok = test::have_gpu() && comm.local_size() <= cuda_device_count() ? 1 : 0;
  return comm.min(ok) == 1;
}

class NcclMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    const Comm& comm = test::comm();
    if (!usable(comm)) GTEST_SKIP() << "needs one GPU per rank";
    BackendOptions o;
    o.local_rank = comm.local_rank();
    o.local_size = comm.local_size();
    backend_ = make_cuda_backend(o);
    impl_ = Registry::instance().find("collective", "nccl", BackendKind::cuda);
    ASSERT_NE(impl_, nullptr);
  }

  // Runs one point through can_implement / prepare / validate / run; returns false when the
  // implementation declined it (with its reason in *why).
  bool check(const Point& p, std::string* why = nullptr) {
    const Comm& comm = test::comm();
    if (collective_op().check(p, comm.size()) != "") return false;
    if (collective_op().skip_reason(p, comm.size()) != "") return false;
    Context ctx{*backend_, comm, 99 + p.index};
    const std::string no = impl_->can_implement(p, ctx);
    if (why) *why = no;
    if (!no.empty()) return false;
    auto c = impl_->prepare(p, ctx);
    const Validation v = c->validate();
    EXPECT_TRUE(v.ok) << collective_op().describe(p) << ": " << v.detail << " (rank " << comm.rank() << ")";
    EXPECT_EQ(v.error, 0.0) << collective_op().describe(p);
    c->run();
    backend_->synchronize();
    comm.barrier();
    return true;
  }

  std::unique_ptr<Backend> backend_;
  const Implementation* impl_ = nullptr;
};

TEST_F(NcclMpi, EveryCollectiveTypeAndPlacementVerifies) {
  int ran = 0;
  const int root = test::comm().size() - 1;
  for (const char* kind :
       {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv"})
    for (const char* dtype : {"fp32", "bf16", "int32", "fp8_e4m3"})
      for (bool in_place : {false, true})
        ran += check(coll_point(kind, 12345 * 4, dtype, "sum", in_place, "eager", root)) ? 1 : 0;
  // Every collective the world size allows (send_recv needs an even one) ran out of place in
  // fp32, bf16 and int32, and the five with an in-place form ran in place too.
  const int kinds = test::comm().size() % 2 == 0 ? 7 : 6;
  EXPECT_GE(ran, kinds * 3 + 5 * 3);
}

TEST_F(NcclMpi, EveryReductionVerifies) {
  for (const char* kind : {"all_reduce", "reduce_scatter", "reduce"})
    for (const char* redop : {"sum", "prod", "max", "min", "avg"})
      for (const char* dtype : {"fp32", "fp16", "bf16"})
        EXPECT_TRUE(check(coll_point(kind, 4096, dtype, redop, false, "eager", 0))) << kind << " " << redop;
}

TEST_F(NcclMpi, GraphModeCapturesSeveralOperations) {
  const Comm& comm = test::comm();
  for (const char* kind : {"all_reduce", "all_gather", "all_to_all", "send_recv"}) {
    const Point p = coll_point(kind, 1 << 16, "fp32", "sum", false, "graph", 0);
    if (collective_op().check(p, comm.size()) != "") continue;
    Context ctx{*backend_, comm, 5};
    ASSERT_EQ(impl_->can_implement(p, ctx), "");
    auto c = impl_->prepare(p, ctx);
    EXPECT_GE(c->iterations_per_run(), 10) << kind;
    EXPECT_LE(c->iterations_per_run(), 100) << kind;
    EXPECT_TRUE(c->validate().ok) << kind;
    auto timer = backend_->make_timer();
    comm.barrier();
    timer->start();
    c->run();
    timer->stop();
    EXPECT_GT(timer->seconds(), 0.0);
    comm.barrier();
  }
}

TEST_F(NcclMpi, LargeBufferSampledCheck) {
  // 2^24 + 2^20 fp32 elements: above the full-check limit, verified on sampled blocks.
  EXPECT_TRUE(
      check(coll_point("all_reduce", ((std::int64_t{1} << 24) + (1 << 20)) * 4, "fp32", "sum", false, "eager", 0)));
  EXPECT_TRUE(
      check(coll_point("all_gather", ((std::int64_t{1} << 24) + (1 << 20)) * 4, "bf16", "sum", true, "eager", 0)));
}

#ifdef GENBENCH_HAVE_CUDA
TEST_F(NcclMpi, NonBlockingCommunicatorsNumberCollectivesInStep) {
  // Every rank numbers its NCCL collectives in the same order (the watchdog's "#n" matches
  // across ranks); the polling waits leave nothing outstanding and no asynchronous error.
  const Comm& comm = test::comm();
  const auto before = static_cast<std::int64_t>(nccl_collective_count());
  EXPECT_EQ(comm.max(before), comm.min(before));
  EXPECT_TRUE(check(coll_point("all_reduce", 1 << 16, "fp32", "sum", false, "eager", 0)));
  if (comm.size() % 2 == 0) {
    EXPECT_TRUE(check(coll_point("send_recv", 1 << 16, "fp32", "sum", false, "eager", 0)));
  }
  wait_stream(cuda_backend_of(*backend_).stream());
  const auto after = static_cast<std::int64_t>(nccl_collective_count());
  EXPECT_GT(after, before);
  EXPECT_EQ(comm.max(after), comm.min(after));
  EXPECT_EQ(activity_describe().find("not yet completed"), std::string::npos) << activity_describe();
  ncclResult_t state = ncclInternalError;
  ASSERT_EQ(ncclCommGetAsyncError(nccl_comm_for(comm), &state), ncclSuccess);
  EXPECT_EQ(state, ncclSuccess);
  EXPECT_NO_THROW(nccl_check_async_errors());
  comm.barrier();
}
#endif

TEST_F(NcclMpi, DeclinesWhatItCannotDo) {
  std::string why;
  EXPECT_FALSE(check(coll_point("all_to_all", 4096, "fp32", "sum", true, "eager", 0), &why));
  EXPECT_NE(why.find("in-place"), std::string::npos) << why;
  EXPECT_FALSE(check(coll_point("all_reduce", 4096, "int32", "avg", false, "eager", 0), &why));
  EXPECT_NE(why, "");
}

}  // namespace
}  // namespace genbench
