// overlap/cuda with every rank of the job: GEMM and collective verified after an overlapped
// run, for plain and pipelined execution, every collective, an NCCL CTA limit and each stream
// priority; the extra metrics are finite, consistent with each other, and each part inside
// the overlap lasts no longer than the whole. Skipped without one GPU per rank.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "ops/implementation.h"
#include "ops/overlap/overlap.h"
#include "support/points.h"
#include "support/test_env.h"

namespace genbench {
namespace {

Point overlap_point(const std::string& coll, std::int64_t chunks, std::int64_t ctas, const std::string& prio,
                    const std::string& dtype = "bf16") {
  Point p = test::point_with(overlap_op(), "cuda");
  namespace o = overlap_axis;
  p.values[o::m] = std::int64_t{512};
  p.values[o::n] = std::int64_t{256};
  p.values[o::k] = std::int64_t{384};
  p.values[o::dtype] = dtype;
  p.values[o::collective] = coll;
  p.values[o::bytes] = std::int64_t{4} << 20;
  p.values[o::coll_dtype] = std::string("bf16");
  p.values[o::chunks] = chunks;
  p.values[o::nccl_ctas] = ctas;
  p.values[o::priority] = prio;
  return p;
}

bool usable(const Comm& comm) {
  const std::int64_t ok = test::have_gpu() && comm.local_size() <= cuda_device_count() ? 1 : 0;
  return comm.min(ok) == 1;
}

TEST(OverlapCuda, VerifiesAndReportsConsistentMetrics) {
  const Comm& comm = test::comm();
  if (!usable(comm)) GTEST_SKIP() << "needs one GPU per rank";
  BackendOptions o;
  o.local_rank = comm.local_rank();
  o.local_size = comm.local_size();
  auto backend = make_cuda_backend(o);
  const Implementation* impl = Registry::instance().find("overlap", "cuda", BackendKind::cuda);
  ASSERT_NE(impl, nullptr);
  const std::vector<Point> points = {
      overlap_point("all_reduce", 1, 0, "equal"),        overlap_point("all_reduce", 4, 0, "comm_high"),
      overlap_point("all_gather", 2, 4, "compute_high"), overlap_point("reduce_scatter", 4, 8, "equal"),
      overlap_point("all_to_all", 1, 0, "equal"),        overlap_point("all_reduce", 2, 0, "equal", "fp8_e4m3"),
      overlap_point("all_reduce", 1, 0, "equal", "fp32")};
  int ran = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const std::string what = overlap_op().describe(p);
    ASSERT_EQ(overlap_op().check(p, comm.size()), "") << what;
    ASSERT_EQ(overlap_op().skip_reason(p, comm.size()), "") << what;
    Context ctx{*backend, comm, 1234 + i};
    const std::string no = impl->can_implement(p, ctx);
    if (!no.empty()) {
      // Only fp8 may be missing (compute capability below 8.9).
      EXPECT_EQ(std::get<std::string>(p.values[overlap_axis::dtype]), "fp8_e4m3") << what << ": " << no;
      continue;
    }
    auto c = impl->prepare(p, ctx);
    const Validation v = c->validate();
    EXPECT_TRUE(v.ok) << what << ": " << v.detail << " (rank " << comm.rank() << ")";
    for (int r = 0; r < 5; ++r) {
      comm.barrier();
      c->run();
      backend->synchronize();
    }
    std::map<std::string, double> m;
    const auto reported = c->extra_metrics();
    for (const auto& [k, x] : reported) m[k] = x;
    EXPECT_EQ(overlap_op().check_report({c->chosen(), reported}, impl->info().tuning), "") << what;
    namespace om = overlap_metric;
    for (const char* k : {om::t_compute, om::t_comm, om::t_both, om::t_compute_overlap, om::t_comm_overlap}) {
      EXPECT_TRUE(std::isfinite(m[k])) << what << " " << k;
      EXPECT_GT(m[k], 0) << what << " " << k;
    }
    EXPECT_LE(m[om::t_compute_overlap], m[om::t_both] * (1 + 1e-6)) << what;
    EXPECT_LE(m[om::t_comm_overlap], m[om::t_both] * (1 + 1e-6)) << what;
    EXPECT_NEAR(m[om::efficiency],
                (m[om::t_compute] + m[om::t_comm] - m[om::t_both]) / std::min(m[om::t_compute], m[om::t_comm]), 1e-9);
    EXPECT_NE(c->variant().find("prio"), std::string::npos);
    ++ran;
    comm.barrier();
  }
  EXPECT_GE(ran, 6);
}

}  // namespace
}  // namespace genbench
