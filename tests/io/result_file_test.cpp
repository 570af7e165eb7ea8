#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <fstream>

#include "core/error.h"
#include "io/result_file.h"
#include "io/schema.h"
#include "ops/gemm.h"
#include "support/test_env.h"

namespace genbench {
namespace {

RunAttributes attrs(std::uint64_t fp = 42, int world = 2) {
  RunAttributes a;
  a.tool_version = "test";
  a.config_text = "benchmarks: []";
  a.config_fingerprint = fp;
  a.world_size = world;
  a.backend = "host";
  a.start_utc = utc_now();
  return a;
}

BenchmarkInfo gemm_bench() {
  BenchmarkInfo b;
  b.name = "g";
  b.op = &gemm_op();
  b.implementations = {"reference"};
  b.sweep_size = 3;
  b.max_iterations = 5;
  return b;
}

PointRecord record(std::size_t index, int iterations) {
  PointRecord r;
  r.point.index = index;
  r.point.impl = "reference";
  for (const auto& a : gemm_op().axes()) r.point.values.push_back(a.default_value);
  r.status = schema::kOk;
  r.samples.assign(2, {});
  for (int k = 0; k < iterations; ++k) {
    r.samples[0].push_back(1e-3 * (k + 1));
    r.samples[1].push_back(2e-3 * (k + 1));
  }
  r.ranks.resize(2);
  r.ranks[1].peak_memory_bytes = 1234;
  r.slowest.n = static_cast<std::size_t>(iterations);
  r.slowest.median = 2e-3;
  r.tflops = 1.5;
  return r;
}

// Reads dims of a dataset.
std::vector<hsize_t> dims_of(hid_t f, const std::string& path) {
  hid_t d = H5Dopen2(f, path.c_str(), H5P_DEFAULT);
  EXPECT_GE(d, 0) << path;
  hid_t s = H5Dget_space(d);
  std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(s)));
  H5Sget_simple_extent_dims(s, dims.data(), nullptr);
  H5Sclose(s);
  H5Dclose(d);
  return dims;
}

TEST(ResultFile, RoundTrip) {
  const std::string path = test::temp_dir() + "/r.h5";
  auto file = ResultFile::create(path, false, attrs());
  DeviceInfo d0, d1;
  d0.rank = 0;
  d0.name = "cpu0";
  d1.rank = 1;
  d1.name = "cpu1";
  file.write_system({d0, d1});
  file.append(gemm_bench(), record(0, 3));
  file.append(gemm_bench(), record(2, 5));
  file.finish("complete", utc_now());
  EXPECT_EQ(check_result_file(path), "");

  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  EXPECT_EQ(dims_of(f, "/system"), (std::vector<hsize_t>{2}));
  EXPECT_EQ(dims_of(f, "/benchmarks/g/points"), (std::vector<hsize_t>{2}));
  EXPECT_EQ(dims_of(f, "/benchmarks/g/samples"), (std::vector<hsize_t>{2, 2, 5}));
  EXPECT_EQ(dims_of(f, "/benchmarks/g/rank_stats"), (std::vector<hsize_t>{2, 2}));
  // Samples: row 0 has 3 iterations then NaN padding; rank 1 doubled.
  std::vector<double> s(2 * 2 * 5);
  hid_t ds = H5Dopen2(f, "/benchmarks/g/samples", H5P_DEFAULT);
  ASSERT_GE(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data()), 0);
  H5Dclose(ds);
  EXPECT_DOUBLE_EQ(s[0], 1e-3);
  EXPECT_DOUBLE_EQ(s[2], 3e-3);
  EXPECT_TRUE(std::isnan(s[3]));
  EXPECT_DOUBLE_EQ(s[5], 2e-3);
  EXPECT_DOUBLE_EQ(s[10 + 9], 10e-3);  // row 1, rank 1, iteration 4
  // The point column is readable on its own.
  hid_t dp = H5Dopen2(f, "/benchmarks/g/points", H5P_DEFAULT);
  hid_t mt = H5Tcreate(H5T_COMPOUND, 16);
  H5Tinsert(mt, "point", 0, H5T_NATIVE_INT64);
  H5Tinsert(mt, "tflops", 8, H5T_NATIVE_DOUBLE);
  struct {
    std::int64_t point;
    double tflops;
  } rows[2];
  ASSERT_GE(H5Dread(dp, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows), 0);
  EXPECT_EQ(rows[0].point, 0);
  EXPECT_EQ(rows[1].point, 2);
  EXPECT_DOUBLE_EQ(rows[1].tflops, 1.5);
  H5Tclose(mt);
  H5Dclose(dp);
  H5Fclose(f);
}

TEST(ResultFile, RefusesToOverwriteWithoutForce) {
  const std::string path = test::temp_dir() + "/exists.h5";
  { std::ofstream(path) << "precious"; }
  EXPECT_THROW(ResultFile::create(path, false, attrs()), UsageError);
  std::ifstream in(path);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");  // untouched
  EXPECT_NO_THROW(ResultFile::create(path, true, attrs()));
  EXPECT_EQ(check_result_file(path), "");
}

TEST(ResultFile, UnwritableFolderIsAUsageError) {
  EXPECT_THROW(ResultFile::create("/nonexistent-dir/x.h5", false, attrs()), UsageError);
}

TEST(ResultFile, ResumeReturnsCompletedPointsAndChecksTheConfig) {
  const std::string path = test::temp_dir() + "/resume.h5";
  {
    auto file = ResultFile::create(path, false, attrs(7));
    file.append(gemm_bench(), record(0, 2));
    file.append(gemm_bench(), record(1, 2));
  }
  std::map<std::string, std::set<std::size_t>> done;
  auto again = ResultFile::resume(path, attrs(7), &done);
  EXPECT_EQ(done["g"], (std::set<std::size_t>{0, 1}));
  again.append(gemm_bench(), record(2, 2));
  done.clear();
  ResultFile::resume(path, attrs(7), &done);
  EXPECT_EQ(done["g"].size(), 3u);
  EXPECT_THROW(ResultFile::resume(path, attrs(8), &done), UsageError);      // other config
  EXPECT_THROW(ResultFile::resume(path, attrs(7, 4), &done), UsageError);   // other world size
  EXPECT_THROW(ResultFile::resume(path + ".missing", attrs(7), &done), UsageError);
}

TEST(ResultFile, RejectsForeignAndDamagedFiles) {
  const std::string dir = test::temp_dir();
  { std::ofstream(dir + "/text.h5") << "not hdf5"; }
  EXPECT_NE(check_result_file(dir + "/text.h5").find("not an HDF5 file"), std::string::npos);
  hid_t f = H5Fcreate((dir + "/other.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(f);
  EXPECT_NE(check_result_file(dir + "/other.h5").find("not a genbench result file"), std::string::npos);
  // A genbench file cut in half.
  const std::string good = dir + "/good.h5";
  {
    auto file = ResultFile::create(good, false, attrs());
    file.append(gemm_bench(), record(0, 2));
  }
  std::ifstream in(good, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/cut.h5", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  EXPECT_NE(check_result_file(dir + "/cut.h5"), "");
}

}  // namespace
}  // namespace genbench
