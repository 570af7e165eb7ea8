// The whole pipeline on the host backend with every rank of the job: sweep, timing with a
// shared stopping decision, gathering to rank 0, HDF5, resume.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"

#include "config/config.h"
#include "io/result_file.h"
#include "ops/gemm/gemm.h"
#include "ops/implementation.h"
#include "runner/runner.h"
#include "support/test_env.h"

namespace genbench {
namespace {

const char* kConfig = R"(benchmarks:
  - name: coll
    op: collective
    implementations: [mpi]
    axes:
      collective: [all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv]
      bytes: [8, 4K]
      in_place: [false, true]
    timing: {warmup: 1, min_iterations: 3, max_iterations: 6, min_time: 0, max_time: 1}
  - name: attn
    op: attention
    implementations: [reference]
    axes: {heads: 2, heads_kv: 1, seqlen_q: [17, 33], seqlen_k: 40, head_dim: 64, causal: [false, true]}
    timing: {warmup: 0, min_iterations: 2, max_iterations: 3, min_time: 0}
  - name: gemm
    op: gemm
    implementations: [reference]
    axes: {m: 33, n: 17, k: 65, trans_a: [n, t], trans_b: [n, t], dtype: [fp32, fp16, int8]}
    timing: {warmup: 0, min_iterations: 2, max_iterations: 3, min_time: 0}
)";

// Shared path: rank 0 makes the directory and tells the others.
std::string shared_dir() {
  std::string d = test::comm().is_root() ? test::temp_dir() : "";
  test::comm().broadcast(d);
  return d;
}

// Points recorded in a benchmark's table: rows whose status is set (the table is pre-sized to the
// sweep; a row not run has status "").
std::int64_t rows(const std::string& path, const std::string& bench) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, ("/benchmarks/" + bench + "/points").c_str(), H5P_DEFAULT);
  hid_t s = H5Dget_space(d);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(s, &n, nullptr);
  H5Sclose(s);
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, 16);
  hid_t mt = H5Tcreate(H5T_COMPOUND, 16);
  H5Tinsert(mt, "status", 0, st);
  std::vector<char> buf(16 * n);
  std::int64_t recorded = -1;
  if (H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) >= 0) {
    recorded = 0;
    for (hsize_t i = 0; i < n; ++i) recorded += buf[16 * i] != '\0' ? 1 : 0;
  }
  H5Tclose(mt);
  H5Tclose(st);
  H5Dclose(d);
  H5Fclose(f);
  return recorded;
}

// impl, status and reason of every row of a benchmark's points, as the file stores them
// (fixed-length strings), in one read.
struct RowText {
  std::string impl, status, reason;
};
std::vector<RowText> row_texts(const std::string& path, const std::string& bench) {
  std::vector<RowText> out;
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, ("/benchmarks/" + bench + "/points").c_str(), H5P_DEFAULT);
  hid_t sp = H5Dget_space(d);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(sp, &n, nullptr);
  H5Sclose(sp);
  hid_t ft = H5Dget_type(d);
  const char* names[3] = {"impl", "status", "reason"};
  hid_t types[3];
  std::size_t offs[3], size = 0;
  for (int c = 0; c < 3; ++c) {
    const int mi = H5Tget_member_index(ft, names[c]);
    EXPECT_GE(mi, 0) << names[c];
    types[c] = H5Tget_member_type(ft, static_cast<unsigned>(mi));
    offs[c] = size;
    size += H5Tget_size(types[c]);
  }
  hid_t mt = H5Tcreate(H5T_COMPOUND, size);
  for (int c = 0; c < 3; ++c) H5Tinsert(mt, names[c], offs[c], types[c]);
  std::vector<char> buf(n * size);
  EXPECT_GE(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), 0);
  auto field = [&](hsize_t row, int c) {
    const char* at = buf.data() + row * size + offs[c];
    return std::string(at, strnlen(at, H5Tget_size(types[c])));
  };
  for (hsize_t i = 0; i < n; ++i)
    if (!field(i, 1).empty()) out.push_back({field(i, 0), field(i, 1), field(i, 2)});
  H5Tclose(mt);
  for (hid_t t : types) H5Tclose(t);
  H5Tclose(ft);
  H5Dclose(d);
  H5Fclose(f);
  return out;
}

// Options of a quiet host-backend run into `path`.
RunOptions host_run(const std::string& path) {
  RunOptions opts;
  opts.output = path;
  opts.backend = "host";
  opts.quiet = true;
  return opts;
}

TEST(Runner, HostPipelineEveryOpEveryRank) {
  const Comm& comm = test::comm();
  const std::string path = shared_dir() + "/run.h5";
  const Config cfg = parse_config(kConfig, "runner.yaml");
  RunOptions opts = host_run(path);
  EXPECT_EQ(run_benchmarks(cfg, opts, comm), kExitOk);
  if (comm.is_root()) {
    EXPECT_EQ(check_result_file(path), "");
    EXPECT_EQ(rows(path, "coll"), 7 * 2 * 2);
    EXPECT_EQ(rows(path, "attn"), 4);
    EXPECT_EQ(rows(path, "gemm"), 12);
    // Status of every point and the samples' shape, read the way users read the file.
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/benchmarks/coll/points", H5P_DEFAULT);
    hid_t mt = H5Tcreate(H5T_COMPOUND, 16 + 8);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 16);
    H5Tinsert(mt, "status", 0, st);
    H5Tinsert(mt, "iterations", 16, H5T_NATIVE_INT64);
    struct Row {
      char status[16];
      std::int64_t iterations;
    };
    std::vector<Row> r(28);
    ASSERT_GE(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, r.data()), 0);
    int ok = 0, skipped = 0;
    for (const auto& x : r) {
      const std::string s(x.status);
      if (s == "ok") {
        ++ok;
        EXPECT_GE(x.iterations, 3);
        EXPECT_LE(x.iterations, 6);
      }
      if (s == "skipped") ++skipped;
      EXPECT_NE(s, "failed");
    }
    // 8 bytes is less than one fp32 per rank for the split collectives once there are 4 ranks.
    EXPECT_EQ(ok + skipped, 28);
    EXPECT_GT(ok, 20);
    H5Tclose(st);
    H5Tclose(mt);
    H5Dclose(d);
    hid_t ds = H5Dopen2(f, "/benchmarks/coll/samples", H5P_DEFAULT);
    hid_t sp = H5Dget_space(ds);
    hsize_t dims[3];
    H5Sget_simple_extent_dims(sp, dims, nullptr);
    EXPECT_EQ(dims[1], static_cast<hsize_t>(comm.size()));
    EXPECT_EQ(dims[2], 6u);
    H5Sclose(sp);
    H5Dclose(ds);
    H5Fclose(f);
  }
  // A second run into the same file is refused without --force, and --resume finds nothing to do.
  EXPECT_THROW(run_benchmarks(cfg, opts, comm), UsageError);
  opts.resume = true;
  EXPECT_EQ(run_benchmarks(cfg, opts, comm), kExitOk);
  if (comm.is_root()) {
    EXPECT_EQ(rows(path, "coll"), 28);
  }
}

// An implementation whose can_implement() throws (a bad setting it reads, a library error) fails its points with the
// reason, on every rank alike; the other points run and the file is complete; the exit code says points failed.
class ThrowingGemm : public Implementation {
 public:
  std::string can_implement(const Point&, const Context&) const override {
    throw UsageError("TEST_SETTING='x' is not a number");
  }
  std::unique_ptr<Case> prepare(const Point&, Context&) const override { return nullptr; }
};

TEST(Runner, ThrowingCanImplementFailsItsPointsOnly) {
  static const bool added = [] {
    Registry::instance().add({"gemm", "test_throws", BackendKind::host, "test: can_implement throws"},
                             [] { return std::unique_ptr<Implementation>(std::make_unique<ThrowingGemm>()); });
    return true;
  }();
  ASSERT_TRUE(added);
  const Comm& comm = test::comm();
  const std::string path = shared_dir() + "/throws.h5";
  const Config cfg = parse_config(R"(benchmarks:
  - name: gemm
    op: gemm
    implementations: [reference, test_throws]
    axes: {m: 17, n: 9, k: 33, dtype: fp32}
    timing: {warmup: 0, min_iterations: 2, max_iterations: 2, min_time: 0}
)",
                                  "throws.yaml");
  RunOptions opts = host_run(path);
  EXPECT_EQ(run_benchmarks(cfg, opts, comm), kExitFailedPoints);
  if (comm.is_root()) {
    EXPECT_EQ(check_result_file(path), "");
    const auto texts = row_texts(path, "gemm");
    ASSERT_EQ(texts.size(), 2u);
    for (const auto& [impl, status, reason] : texts) {
      if (impl == "reference") {
        EXPECT_EQ(status, "ok") << reason;
      } else {
        EXPECT_EQ(impl, "test_throws");
        EXPECT_EQ(status, "failed");
        EXPECT_NE(reason.find("TEST_SETTING='x' is not a number"), std::string::npos) << reason;
      }
    }
  }
}

// An implementation that finds out only when preparing that it cannot run a point (a vendor
// library with no engine for the shape) throws Unsupported: the point is unsupported with the
// reason, not failed, and the run's exit code says nothing failed.
class RefusingAtPrepareGemm : public Implementation {
 public:
  std::string can_implement(const Point&, const Context&) const override { return ""; }
  std::unique_ptr<Case> prepare(const Point&, Context&) const override {
    throw Unsupported("test: no engine for this shape");
  }
};

TEST(Runner, UnsupportedAtPrepareIsUnsupportedNotFailed) {
  static const bool added = [] {
    Registry::instance().add({"gemm", "test_refuses", BackendKind::host, "test: prepare throws Unsupported"},
                             [] { return std::unique_ptr<Implementation>(std::make_unique<RefusingAtPrepareGemm>()); });
    return true;
  }();
  ASSERT_TRUE(added);
  const Comm& comm = test::comm();
  const std::string path = shared_dir() + "/refuses.h5";
  const Config cfg = parse_config(R"(benchmarks:
  - name: gemm
    op: gemm
    implementations: [reference, test_refuses]
    axes: {m: 17, n: 9, k: 33, dtype: fp32}
    timing: {warmup: 0, min_iterations: 2, max_iterations: 2, min_time: 0}
)",
                                  "refuses.yaml");
  RunOptions opts = host_run(path);
  EXPECT_EQ(run_benchmarks(cfg, opts, comm), kExitOk);
  if (comm.is_root()) {
    EXPECT_EQ(check_result_file(path), "");
    const auto texts = row_texts(path, "gemm");
    ASSERT_EQ(texts.size(), 2u);
    for (const auto& [impl, status, reason] : texts) {
      if (impl == "reference") {
        EXPECT_EQ(status, "ok") << reason;
      } else {
        EXPECT_EQ(status, "unsupported") << reason;
        EXPECT_NE(reason.find("no engine for this shape"), std::string::npos) << reason;
      }
    }
  }
}

// A case whose report (Case::extra_metrics(), Case::chosen()) is not what its op's columns
// expect: an extra column no column declares, or a declared one left out. Its points fail with
// the reason; nothing is written as a silent NaN.
class ReportingCase : public Case {
 public:
  explicit ReportingCase(std::vector<std::pair<std::string, double>> extra) : extra_(std::move(extra)) {}
  Validation validate() override { return {}; }
  void run() override {}
  std::vector<std::pair<std::string, double>> extra_metrics() override { return extra_; }

 private:
  std::vector<std::pair<std::string, double>> extra_;
};

class ReportingImpl : public Implementation {
 public:
  std::string can_implement(const Point&, const Context&) const override { return ""; }
  std::unique_ptr<Case> prepare(const Point&, Context&) const override {
    return std::make_unique<ReportingCase>(extra());
  }
  virtual std::vector<std::pair<std::string, double>> extra() const = 0;
};

class StrayExtraGemm final : public ReportingImpl {
  std::vector<std::pair<std::string, double>> extra() const override { return {{"stray_s", 1.0}}; }
};

class MissingExtraOverlap final : public ReportingImpl {
  std::vector<std::pair<std::string, double>> extra() const override { return {{"t_compute_s", 1.0}}; }
};

TEST(Runner, AReportOfUndeclaredOrMissingColumnsFailsThePoint) {
  static const bool added = [] {
    Registry::instance().add({"gemm", "test_stray_extra", BackendKind::host, "test: reports an undeclared extra"},
                             [] { return std::unique_ptr<Implementation>(std::make_unique<StrayExtraGemm>()); });
    Registry::instance().add({"overlap", "test_missing_extra", BackendKind::host, "test: leaves extras out"},
                             [] { return std::unique_ptr<Implementation>(std::make_unique<MissingExtraOverlap>()); });
    return true;
  }();
  ASSERT_TRUE(added);
  const Comm& comm = test::comm();
  const std::string path = shared_dir() + "/report.h5";
  const Config cfg = parse_config(R"(benchmarks:
  - name: gemm
    op: gemm
    implementations: [reference, test_stray_extra]
    axes: {m: 17, n: 9, k: 33, dtype: fp32}
    timing: {warmup: 0, min_iterations: 2, max_iterations: 2, min_time: 0}
  - name: ov
    op: overlap
    implementations: [host, test_missing_extra]
    axes: {m: 16, n: 16, k: 16, dtype: fp32, bytes: 4K, coll_dtype: fp32}
    timing: {warmup: 0, min_iterations: 2, max_iterations: 2, min_time: 0}
)",
                                  "report.yaml");
  EXPECT_EQ(run_benchmarks(cfg, host_run(path), comm), kExitFailedPoints);
  if (comm.is_root()) {
    EXPECT_EQ(check_result_file(path), "");
    for (const char* bench : {"gemm", "ov"}) {
      const auto texts = row_texts(path, bench);
      ASSERT_EQ(texts.size(), 2u) << bench;
      for (const auto& [impl, status, reason] : texts) {
        if (impl == "reference" || impl == "host") {
          EXPECT_EQ(status, "ok") << bench << ": " << reason;
        } else if (impl == "test_stray_extra") {
          EXPECT_EQ(status, "failed");
          EXPECT_NE(reason.find("the case reports 'stray_s', which is no extra column of op gemm"), std::string::npos)
              << reason;
        } else {
          EXPECT_EQ(impl, "test_missing_extra");
          EXPECT_EQ(status, "failed");
          EXPECT_NE(reason.find("no value for extra column 't_comm_s' of op overlap"), std::string::npos) << reason;
        }
      }
    }
  }
}

// warmup_time: the untimed launches go on until that long has passed (here ~1000x what one
// launch of the tiny GEMM takes), with every rank taking the same decision; the file records it
// (and the state sampling period beside it).
TEST(Runner, WarmupLastsWarmupTime) {
  const Comm& comm = test::comm();
  const std::string path = shared_dir() + "/warm.h5";
  const Config cfg = parse_config(R"(benchmarks:
  - name: gemm
    op: gemm
    implementations: [reference]
    axes: {m: 16, n: 16, k: 16, dtype: fp32}
    timing: {warmup: 0, warmup_time: 2.0, min_iterations: 1, max_iterations: 1, min_time: 0, state_period: 0.05}
)",
                                  "warm.yaml");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(run_benchmarks(cfg, host_run(path), comm), kExitOk);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(took, 2.0);
  if (comm.is_root()) {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    hid_t a = H5Aopen_by_name(f, "/benchmarks/gemm", "timing_warmup_time_s", H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(a, 0);
    double v = 0;
    EXPECT_GE(H5Aread(a, H5T_NATIVE_DOUBLE, &v), 0);
    EXPECT_DOUBLE_EQ(v, 2.0);
    H5Aclose(a);
    a = H5Aopen_by_name(f, "/benchmarks/gemm", "timing_state_period_s", H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(a, 0);
    EXPECT_GE(H5Aread(a, H5T_NATIVE_DOUBLE, &v), 0);
    EXPECT_DOUBLE_EQ(v, 0.05);
    H5Aclose(a);
    H5Fclose(f);
    EXPECT_EQ(rows(path, "gemm"), 1);
  }
}

TEST(Runner, InterruptedRunIsValidAndResumable) {
  const Comm& comm = test::comm();
  const std::string dir = shared_dir();
  const Config cfg = parse_config(kConfig, "runner.yaml");
  RunOptions opts = host_run(dir + "/partial.h5");
  // A stop request (as SIGINT/SIGTERM/SIGUSR1 would make) ends the run at a point boundary.
  install_stop_handlers();
  std::raise(SIGUSR1);
  EXPECT_TRUE(stop_requested());
  EXPECT_EQ(run_benchmarks(cfg, opts, comm), kExitInterrupted);
  clear_stop_request();
  if (comm.is_root()) {
    EXPECT_EQ(check_result_file(opts.output), "");
  }
  opts.resume = true;
  EXPECT_EQ(run_benchmarks(cfg, opts, comm), kExitOk);
  if (comm.is_root()) {
    EXPECT_EQ(rows(opts.output, "coll"), 28);
    EXPECT_EQ(rows(opts.output, "gemm"), 12);
  }
}

TEST(Runner, ResumeRefusesAnotherConfig) {
  const Comm& comm = test::comm();
  const std::string dir = shared_dir();
  RunOptions opts = host_run(dir + "/a.h5");
  const Config small = parse_config(
      "benchmarks:\n  - {name: g, op: gemm, implementations: [reference], axes: {m: 8, n: 8, k: 8},"
      " timing: {warmup: 0, min_iterations: 1, max_iterations: 2, min_time: 0}}\n",
      "a.yaml");
  EXPECT_EQ(run_benchmarks(small, opts, comm), kExitOk);
  const Config other = parse_config(
      "benchmarks:\n  - {name: g, op: gemm, implementations: [reference], axes: {m: 16, n: 8, k: 8},"
      " timing: {warmup: 0, min_iterations: 1, max_iterations: 2, min_time: 0}}\n",
      "a.yaml");
  opts.resume = true;
  EXPECT_THROW(run_benchmarks(other, opts, comm), UsageError);
}

}  // namespace
}  // namespace genbench

namespace genbench {
namespace {

TEST(Runner, AutoLeavesOutWhatTheDeviceCannotRun) {
  const Comm& comm = test::comm();
  std::string dir = comm.is_root() ? test::temp_dir() : "";
  comm.broadcast(dir);
  // Host: every precision runs, graph mode does not; with `auto` the graph points are not
  // part of the run at all, instead of being recorded as unsupported.
  const Config cfg = parse_config(
      "benchmarks:\n  - {name: g, op: gemm, implementations: [reference], axes: {m: 8, n: 8, k: 8, dtype: auto,"
      " mode: [eager, graph]}, timing: {warmup: 0, min_iterations: 1, max_iterations: 2, min_time: 0}}\n",
      "auto.yaml");
  RunOptions opts = host_run(dir + "/auto.h5");
  EXPECT_EQ(run_benchmarks(cfg, opts, comm), kExitOk);
  if (comm.is_root()) {
    // Every precision of the gemm op (the host reference computes them all), eager only.
    const auto& dt = gemm_op().axes()[gemm_axis::dtype].choices;
    EXPECT_EQ(rows(opts.output, "g"), static_cast<std::int64_t>(dt.size()));
    EXPECT_GE(dt.size(), 7u);
  }
}

}  // namespace
}  // namespace genbench
