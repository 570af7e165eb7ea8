// The overlap op through the whole pipeline on the host backend (overlap/host: CPU GEMM in a
// thread, MPI collective on the main thread), with every rank of the job: validation of both
// parts after an overlapped run, the extra columns in the points table and how they derive
// from each other, launches_per_sample, and what the host cannot run.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <string>
#include <vector>

#include "config/config.h"
#include "io/result_file.h"
#include "runner/runner.h"
#include "support/test_env.h"

namespace genbench {
namespace {

const char* kConfig = R"(settings:
  timing: {warmup: 1, min_iterations: 3, max_iterations: 5, min_time: 0, max_time: 1, launches_per_sample: 2}
benchmarks:
  - name: ov
    op: overlap
    implementations: [host]
    axes:
      m: 64
      n: 32
      k: 48
      dtype: [fp32, bf16]
      collective: [all_reduce, all_gather, reduce_scatter, all_to_all]
      bytes: 16K
      coll_dtype: fp32
      chunks: [1, 4]
  - name: ov-cuda-only
    op: overlap
    implementations: [host]
    axes: {m: 64, n: 32, k: 48, bytes: 16K, coll_dtype: fp32, priority: comm_high, nccl_ctas: [0, 8]}
)";

std::vector<double> column(hid_t d, const char* name, hsize_t rows) {
  hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(double));
  H5Tinsert(mt, name, 0, H5T_NATIVE_DOUBLE);
  std::vector<double> v(rows);
  EXPECT_GE(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0) << name;
  H5Tclose(mt);
  return v;
}

std::vector<std::string> strings(hid_t d, const char* name, hsize_t rows) {
  constexpr std::size_t kLen = 32;
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, kLen);
  hid_t mt = H5Tcreate(H5T_COMPOUND, kLen);
  H5Tinsert(mt, name, 0, st);
  std::vector<char> buf(rows * kLen);
  EXPECT_GE(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), 0) << name;
  std::vector<std::string> v;
  for (hsize_t i = 0; i < rows; ++i) v.emplace_back(buf.data() + i * kLen, strnlen(buf.data() + i * kLen, kLen));
  H5Tclose(mt);
  H5Tclose(st);
  return v;
}

TEST(Overlap, HostPipelineExtraColumns) {
  const Comm& comm = test::comm();
  std::string dir = comm.is_root() ? test::temp_dir() : "";
  comm.broadcast(dir);
  const std::string path = dir + "/overlap.h5";
  const Config cfg = parse_config(kConfig, "overlap.yaml");
  ASSERT_EQ(cfg.benchmarks[0].timing.launches_per_sample, 2);
  RunOptions opts;
  opts.output = path;
  opts.backend = "host";
  opts.quiet = true;
  EXPECT_EQ(run_benchmarks(cfg, opts, comm), kExitOk);
  if (!comm.is_root()) return;
  ASSERT_EQ(check_result_file(path), "");
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  // No ceilings on the host backend.
  EXPECT_LE(H5Lexists(f, "/ceilings", H5P_DEFAULT), 0);
  hid_t g = H5Gopen2(f, "/benchmarks/ov", H5P_DEFAULT);
  hid_t a = H5Aopen(g, "timing_launches_per_sample", H5P_DEFAULT);
  std::int64_t lps = 0;
  H5Aread(a, H5T_NATIVE_INT64, &lps);
  EXPECT_EQ(lps, 2);
  H5Aclose(a);
  H5Gclose(g);

  hid_t d = H5Dopen2(f, "/benchmarks/ov/points", H5P_DEFAULT);
  hid_t sp = H5Dget_space(d);
  hsize_t rows = 0;
  H5Sget_simple_extent_dims(sp, &rows, nullptr);
  H5Sclose(sp);
  const auto status = strings(d, "status", rows);
  const auto tc = column(d, "t_compute_s", rows), tm = column(d, "t_comm_s", rows), tb = column(d, "t_both_s", rows);
  const auto tco = column(d, "t_compute_in_overlap_s", rows), tmo = column(d, "t_comm_in_overlap_s", rows);
  const auto eff = column(d, "overlap_efficiency", rows), csl = column(d, "compute_slowdown", rows),
             msl = column(d, "comm_slowdown", rows), cf = column(d, "ceiling_fraction", rows),
             verr = column(d, "validation_error", rows), med = column(d, "time_median_s", rows);
  EXPECT_EQ(rows, 2u * 4u * 2u);
  int ok = 0;
  for (hsize_t i = 0; i < rows; ++i) {
    // 16 KiB of fp32 split in 4 chunks over up to 4 ranks always has whole elements.
    EXPECT_EQ(status[i], "ok") << "row " << i;
    if (status[i] != "ok") continue;
    ++ok;
    for (double t : {tc[i], tm[i], tb[i], tco[i], tmo[i], med[i]}) {
      EXPECT_TRUE(std::isfinite(t)) << "row " << i;
      EXPECT_GT(t, 0) << "row " << i;
    }
    EXPECT_NEAR(eff[i], (tc[i] + tm[i] - tb[i]) / std::min(tc[i], tm[i]), 1e-9 * std::fabs(eff[i]) + 1e-12);
    EXPECT_NEAR(csl[i], tco[i] / tc[i], 1e-9 * csl[i]);
    EXPECT_NEAR(msl[i], tmo[i] / tm[i], 1e-9 * msl[i]);
    // Inside one overlapped run, each part lasts no longer than the whole run.
    EXPECT_LE(tco[i], tb[i] * (1 + 1e-9));
    EXPECT_LE(tmo[i], tb[i] * (1 + 1e-9));
    EXPECT_TRUE(std::isnan(cf[i]));  // no ceilings on the host
    EXPECT_LT(verr[i], 1e-5);        // GEMM error plus wrong collective elements
  }
  EXPECT_EQ(ok, static_cast<int>(rows));
  H5Dclose(d);

  // Stream priorities and NCCL CTA limits need the cuda backend: recorded, never run.
  d = H5Dopen2(f, "/benchmarks/ov-cuda-only/points", H5P_DEFAULT);
  const auto st2 = strings(d, "status", 2);
  EXPECT_EQ(st2[0], "unsupported");
  EXPECT_EQ(st2[1], "unsupported");
  const auto t2 = column(d, "t_both_s", 2);
  EXPECT_TRUE(std::isnan(t2[0]) && std::isnan(t2[1]));
  H5Dclose(d);
  H5Fclose(f);
}

}  // namespace
}  // namespace genbench
