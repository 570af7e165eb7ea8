#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "core/error.h"
#include "io/columns.h"
#include "io/export.h"
#include "io/result_file.h"
#include "io/schema.h"
#include "support/test_env.h"

namespace genbench {
namespace {

// An op whose columns cover every type: an integer, a choice and a real axis; effective columns
// of each type; a metric; an extra column.
class TestOp : public Op {
 public:
  std::string name() const override { return "writer_test_op"; }
  std::vector<AxisSpec> define_axes() const override {
    Axes v;
    v.int64("n").default_(4).help("size");
    v.choice("layout", {"row", "col"}).default_("row").help("layout");
    v.real("alpha").default_(0.5).help("scale");
    return v.done();
  }
  std::string check(const Point&, int) const override { return ""; }
  Work work(const Point& p, int) const override {
    Work w;
    w.flops = static_cast<double>(p.integer(0));
    return w;
  }
  std::vector<OpColumn> define_columns() const override {
    OpColumns c;
    c.effective("eff_n", "", "n that ran", [](const Point& p, int) { return p.integer(0); });
    c.effective("eff_layout", "", "layout that ran", [](const Point& p, int) { return p.choice(1); });
    c.effective("eff_scale", "", "scale that ran", [](const Point& p, int) { return p.real(2); });
    c.metric("rate", "FLOP/s", "flops per second", [](const Work& w, double s) { return w.flops / s; });
    c.extra("x_s", "s", "measured by the case");
    return c.done();
  }
};

const TestOp& test_op() {
  static const TestOp op;
  return op;
}

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

BenchmarkInfo bench(std::size_t sweep = 3, int max_iterations = 5) {
  BenchmarkInfo b;
  b.name = "g";
  b.op = &test_op();
  b.implementations = {"reference"};
  b.sweep_size = sweep;
  b.timing.max_iterations = max_iterations;
  return b;
}

// A point whose every value is derived from its index, so a reader can check a row by itself.
PointRecord record(std::size_t index, int iterations, int world = 2) {
  PointRecord r;
  r.point.index = index;
  r.point.impl = "reference";
  r.point.values = {static_cast<std::int64_t>(index + 1), std::string(index % 2 ? "col" : "row"),
                    0.25 * static_cast<double>(index)};
  r.status = schema::kOk;
  r.samples.assign(static_cast<std::size_t>(world), {});
  for (int w = 0; w < world; ++w)
    for (int k = 0; k < iterations; ++k)
      r.samples[w].push_back(1e-3 * static_cast<double>(w + 1) * (k + 1) + static_cast<double>(index));
  r.ranks.resize(static_cast<std::size_t>(world));
  for (int w = 0; w < world; ++w) {
    r.ranks[w].summary.n = static_cast<std::size_t>(iterations);
    r.ranks[w].summary.median = 1.0 + static_cast<double>(index + w);
    r.ranks[w].peak_memory_bytes = 1000 * (w + 1);
  }
  r.slowest.n = static_cast<std::size_t>(iterations);
  r.slowest.median = 2e-3 + static_cast<double>(index);
  r.work.flops = static_cast<double>(index + 1);
  r.op_values = {std::int64_t(index * 10), std::string("L") + std::to_string(index), 1.5 * static_cast<double>(index),
                 7.0 + static_cast<double>(index), 0.125};
  return r;
}

struct Dataset {
  hid_t f = -1, d = -1;
  Dataset(const std::string& path, const std::string& name) {
    f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    d = f >= 0 ? H5Dopen2(f, name.c_str(), H5P_DEFAULT) : -1;
  }
  ~Dataset() {
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
  }
  std::vector<hsize_t> dims() const {
    hid_t s = H5Dget_space(d);
    std::vector<hsize_t> v(static_cast<std::size_t>(H5Sget_simple_extent_ndims(s)));
    H5Sget_simple_extent_dims(s, v.data(), nullptr);
    H5Sclose(s);
    return v;
  }
  // One column of a compound dataset.
  std::size_t elements() const {
    std::size_t n = 1;
    for (auto x : dims()) n *= x;
    return n;
  }
  template <class T>
  std::vector<T> column(const char* name, hid_t type) const {
    std::vector<T> out(elements());
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(T));
    H5Tinsert(mt, name, 0, type);
    EXPECT_GE(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), 0) << name;
    H5Tclose(mt);
    return out;
  }
  std::vector<std::string> strings(const char* name, std::size_t len) const {
    std::vector<char> buf(dims()[0] * len);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, len);
    hid_t mt = H5Tcreate(H5T_COMPOUND, len);
    H5Tinsert(mt, name, 0, st);
    EXPECT_GE(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), 0) << name;
    H5Tclose(mt);
    H5Tclose(st);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < dims()[0]; ++i)
      out.emplace_back(buf.data() + i * len, strnlen(buf.data() + i * len, len));
    return out;
  }
};

std::string attr_string(const std::string& path, const std::string& obj, const char* name) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t a = H5Aopen_by_name(f, obj.c_str(), name, H5P_DEFAULT, H5P_DEFAULT);
  std::string s;
  if (a >= 0) {
    hid_t t = H5Aget_type(a);
    char* p = nullptr;
    if (H5Aread(a, t, &p) >= 0 && p) s = p;
    H5free_memory(p);
    H5Tclose(t);
    H5Aclose(a);
  }
  H5Fclose(f);
  return s;
}

TEST(ResultFile, RowsAtTheirIndicesAndUnwrittenRowsEmpty) {
  const std::string path = test::temp_dir() + "/r.h5";
  auto file = ResultFile::create(path, false, attrs());
  DeviceInfo d0, d1;
  d0.rank = 0;
  d0.name = "cpu0";
  d1.rank = 1;
  d1.name = "cpu1";
  d1.memory_bytes = 1 << 30;
  file.write_system({d0, d1});
  file.append(bench(), record(2, 5));
  file.append(bench(), record(0, 3));
  file.finish("complete", utc_now());
  EXPECT_EQ(check_result_file(path), "");

  Dataset p(path, "/benchmarks/g/points");
  ASSERT_GE(p.d, 0);
  EXPECT_EQ(p.dims(), (std::vector<hsize_t>{3}));
  EXPECT_EQ(p.column<std::int64_t>("point", H5T_NATIVE_INT64), (std::vector<std::int64_t>{0, -1, 2}));
  EXPECT_EQ(p.strings("status", 16), (std::vector<std::string>{"ok", "", "ok"}));
  EXPECT_EQ(p.strings("layout", 32), (std::vector<std::string>{"row", "", "row"}));
  const auto median = p.column<double>("time_median_s", H5T_NATIVE_DOUBLE);
  EXPECT_DOUBLE_EQ(median[0], 2e-3);
  EXPECT_TRUE(std::isnan(median[1]));  // the fill value
  EXPECT_DOUBLE_EQ(median[2], 2.002);
  EXPECT_EQ(p.column<std::int64_t>("iterations", H5T_NATIVE_INT64), (std::vector<std::int64_t>{3, 0, 5}));
  EXPECT_EQ(p.column<std::int64_t>("peak_memory_bytes", H5T_NATIVE_INT64)[2], 2000);
  EXPECT_DOUBLE_EQ(p.column<double>("alpha", H5T_NATIVE_DOUBLE)[2], 0.5);
  // op columns of each type, in Op::columns() order
  EXPECT_EQ(p.column<std::int64_t>("eff_n", H5T_NATIVE_INT64)[2], 20);
  EXPECT_EQ(p.strings("eff_layout", columns::kOpStrLen)[2], "L2");
  EXPECT_DOUBLE_EQ(p.column<double>("eff_scale", H5T_NATIVE_DOUBLE)[2], 3.0);
  EXPECT_DOUBLE_EQ(p.column<double>("rate", H5T_NATIVE_DOUBLE)[2], 9.0);
  EXPECT_DOUBLE_EQ(p.column<double>("x_s", H5T_NATIVE_DOUBLE)[0], 0.125);

  Dataset s(path, "/benchmarks/g/samples");
  EXPECT_EQ(s.dims(), (std::vector<hsize_t>{3, 2, 5}));
  std::vector<double> v(3 * 2 * 5);
  ASSERT_GE(H5Dread(s.d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  EXPECT_DOUBLE_EQ(v[0], 1e-3);           // row 0, rank 0, iteration 0
  EXPECT_DOUBLE_EQ(v[2], 3e-3);           // row 0, rank 0, iteration 2
  EXPECT_DOUBLE_EQ(v[5 + 1], 4e-3);       // row 0, rank 1, iteration 1
  EXPECT_DOUBLE_EQ(v[20 + 5 + 4], 2.01);  // row 2, rank 1, iteration 4
  Dataset rs(path, "/benchmarks/g/rank_stats");
  EXPECT_EQ(rs.dims(), (std::vector<hsize_t>{3, 2}));
  const auto rmed = rs.column<double>("median_s", H5T_NATIVE_DOUBLE);
  EXPECT_DOUBLE_EQ(rmed[2 * 2 + 1], 4.0);  // row 2, rank 1
  EXPECT_TRUE(std::isnan(rmed[1 * 2]));    // row 1 never written

  Dataset sys(path, "/system");
  EXPECT_EQ(sys.dims(), (std::vector<hsize_t>{2}));
  EXPECT_EQ(sys.strings("name", 96), (std::vector<std::string>{"cpu0", "cpu1"}));
  EXPECT_EQ(sys.column<std::int64_t>("memory_bytes", H5T_NATIVE_INT64)[1], 1 << 30);

  // The descriptions: the root's parses and names version 2; the group's columns are the row's.
  const auto desc = nlohmann::json::parse(attr_string(path, "/", schema::kAttrSchemaDescription));
  EXPECT_EQ(desc["version"], schema::kSchemaVersion);
  EXPECT_EQ(desc["datasets"]["points"]["fixed"].size(), columns::points_fixed().size());
  EXPECT_EQ(desc["datasets"]["system"].size(), device_info_fields().size());
  const auto cols = nlohmann::json::parse(attr_string(path, "/benchmarks/g", schema::kAttrColumns));
  const auto want = columns::points(test_op());
  ASSERT_EQ(cols.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(cols[i]["name"], want[i].name);
  EXPECT_EQ(attr_string(path, "/benchmarks/g", schema::kAttrOpDescription), test_op().description_json());
}

TEST(ResultFile, AppendWritesOnlyTheRowsItsPointOwns) {
  // A point changes no HDF5 metadata: outside the raw data of the three datasets, the file's
  // bytes are the same before and after an append, and so is its size. (Opening the file for
  // writing sets the superblock's consistency flag, so both snapshots are taken while the
  // writer holds it open, after its first append of this opening.)
  const std::string path = test::temp_dir() + "/inplace.h5";
  auto file = ResultFile::create(path, false, attrs());
  file.append(bench(8, 50), record(0, 50));
  file.close();  // this process reads the dataset offsets below
  auto read_all = [&] {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::vector<std::pair<haddr_t, hsize_t>> raw;
  {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    for (const char* n : {"points", "samples", "rank_stats"}) {
      hid_t d = H5Dopen2(f, (std::string("/benchmarks/g/") + n).c_str(), H5P_DEFAULT);
      raw.emplace_back(H5Dget_offset(d), H5Dget_storage_size(d));
      EXPECT_NE(raw.back().first, HADDR_UNDEF) << n << " is not allocated at creation";
      H5Dclose(d);
    }
    H5Fclose(f);
  }
  file.append(bench(8, 50), record(1, 8));  // opens the file again
  const std::string before = read_all();
  for (std::size_t i = 2; i < 8; ++i) file.append(bench(8, 50), record(i, 1 + static_cast<int>(i) * 7));
  const std::string after = read_all();
  ASSERT_EQ(after.size(), before.size());
  std::size_t changed_outside = 0, changed_inside = 0;
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (after[i] == before[i]) continue;
    bool inside = false;
    for (const auto& [off, len] : raw) inside = inside || (i >= off && i < off + len);
    ++(inside ? changed_inside : changed_outside);
  }
  EXPECT_EQ(changed_outside, 0u);
  EXPECT_GT(changed_inside, 0u);
}

TEST(ResultFile, SamplesStaySparseThroughStagedCopies) {
  const std::string dir = test::temp_dir();
  {  // does this file system keep holes?
    const std::string probe = dir + "/probe";
    std::FILE* fp = std::fopen(probe.c_str(), "w");
    ASSERT_NE(fp, nullptr);
    ASSERT_EQ(ftruncate(fileno(fp), 64 << 20), 0);
    std::fclose(fp);
    struct stat st {};
    ::stat(probe.c_str(), &st);
    if (st.st_blocks * 512 > (1 << 20)) GTEST_SKIP() << "the temporary folder's file system keeps no holes";
  }
  const std::string path = dir + "/sparse.h5";
  auto file = ResultFile::create(path, false, attrs());
  file.append(bench(2000, 1000), record(0, 10));  // samples: 2000 x 2 x 1000 doubles = 32 MB
  file.finish("complete", utc_now());             // a staged copy
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_GT(st.st_size, 32 << 20);
  EXPECT_LT(st.st_blocks * 512, 8 << 20) << "apparent " << st.st_size;
  EXPECT_EQ(check_result_file(path), "");
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
    file.append(bench(), record(0, 2));
    file.append(bench(), record(2, 2));
  }
  std::map<std::string, std::set<std::size_t>> done;
  auto again = ResultFile::resume(path, attrs(7), &done);
  EXPECT_EQ(done["g"], (std::set<std::size_t>{0, 2}));
  again.append(bench(), record(1, 2));
  again.append(bench(), record(1, 3));  // written again: the same row, not a second one
  done.clear();
  ResultFile::resume(path, attrs(7), &done);
  EXPECT_EQ(done["g"], (std::set<std::size_t>{0, 1, 2}));
  EXPECT_EQ(Dataset(path, "/benchmarks/g/points").column<std::int64_t>("iterations", H5T_NATIVE_INT64)[1], 3);
  EXPECT_THROW(ResultFile::resume(path, attrs(8), &done), UsageError);     // other config
  EXPECT_THROW(ResultFile::resume(path, attrs(7, 4), &done), UsageError);  // other world size
  EXPECT_THROW(ResultFile::resume(path + ".missing", attrs(7), &done), UsageError);
}

TEST(ResultFile, ExportLeavesOutRowsNotWritten) {
  const std::string dir = test::temp_dir();
  const std::string path = dir + "/x.h5";
  {
    auto file = ResultFile::create(path, false, attrs());
    file.write_system({DeviceInfo{}, DeviceInfo{}});
    file.append(bench(5), record(1, 2));
    file.append(bench(5), record(4, 2));
  }
  export_json(path, dir + "/x.json");
  std::ifstream in(dir + "/x.json");
  const auto doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc["benchmarks"]["g"].size(), 2u);
  EXPECT_EQ(doc["benchmarks"]["g"][0]["point"], 1);
  EXPECT_EQ(doc["benchmarks"]["g"][1]["point"], 4);
  EXPECT_EQ(doc["attributes"]["schema_version"], 2);
}

TEST(ResultFile, Version1FilesAreReadButNotContinued) {
  const std::string v1 = test::source_dir() + "/analysis/tests/data/v1_small.h5";
  if (!std::ifstream(v1)) GTEST_SKIP() << v1 << " is not in this tree";
  int version = 0;
  EXPECT_EQ(check_result_file(v1, &version), "");
  EXPECT_EQ(version, 1);
  const std::string dir = test::temp_dir();
  const std::string copy = dir + "/v1.h5";
  std::filesystem::copy_file(v1, copy);
  EXPECT_NO_THROW(export_csv(copy, dir + "/csv"));
  std::map<std::string, std::set<std::size_t>> done;
  try {
    ResultFile::resume(copy, attrs(), &done);
    ADD_FAILURE() << "a version 1 file was continued";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("new output file"), std::string::npos) << e.what();
  }
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
    file.append(bench(), record(0, 2));
  }
  std::ifstream in(good, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/cut.h5", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  EXPECT_NE(check_result_file(dir + "/cut.h5"), "");
}

// Checks completed rows against what record(index, ...) wrote.
void expect_rows_intact(const Dataset& p, const Dataset& s, const std::set<std::size_t>& rows, int iterations) {
  const auto median = p.column<double>("time_median_s", H5T_NATIVE_DOUBLE);
  const auto eff = p.column<std::int64_t>("eff_n", H5T_NATIVE_INT64);
  const auto iters = p.column<std::int64_t>("iterations", H5T_NATIVE_INT64);
  const auto dims = s.dims();
  std::vector<double> v(s.elements());
  ASSERT_GE(H5Dread(s.d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  for (const std::size_t row : rows) {
    ASSERT_DOUBLE_EQ(median[row], 2e-3 + static_cast<double>(row)) << row;
    ASSERT_EQ(eff[row], static_cast<std::int64_t>(row * 10)) << row;
    ASSERT_EQ(iters[row], iterations) << row;
    for (hsize_t w = 0; w < dims[1]; ++w)
      for (int k = 0; k < iterations; ++k)
        ASSERT_DOUBLE_EQ(v[(row * dims[1] + w) * dims[2] + k],
                         1e-3 * static_cast<double>(w + 1) * static_cast<double>(k + 1) + static_cast<double>(row))
            << "row " << row << " rank " << w;
  }
}

// A killed writer leaves FILE.tmpPID behind. Its process may still be a zombie when the next
// run starts (its parent has not reaped it): that copy is stale too. A live process's copy stays.
TEST(ResultFile, StaleCopiesOfEndedRunsAreRemovedZombiesIncluded) {
  const std::string dir = test::temp_dir();
  const std::string path = dir + "/stale.h5";
  const pid_t zombie = ::fork();
  ASSERT_GE(zombie, 0);
  if (zombie == 0) ::_exit(0);
  const pid_t live = ::fork();
  ASSERT_GE(live, 0);
  if (live == 0) {
    ::pause();
    ::_exit(0);
  }
  // the first child has exited and is not reaped yet: kill(pid, 0) still succeeds for it
  for (int i = 0; i < 200 && !process_gone(zombie); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(process_gone(zombie));
  EXPECT_EQ(::kill(zombie, 0), 0) << "the exited child should still be a zombie";
  EXPECT_FALSE(process_gone(live));
  EXPECT_FALSE(process_gone(::getpid()));
  const std::string zcopy = path + ".tmp" + std::to_string(zombie), lcopy = path + ".tmp" + std::to_string(live),
                    other = path + ".tmpx1";
  for (const auto& f : {zcopy, lcopy, other}) std::ofstream(f) << "x";
  remove_stale_copies(path);
  EXPECT_FALSE(std::filesystem::exists(zcopy)) << "the zombie's copy is stale";
  EXPECT_TRUE(std::filesystem::exists(lcopy)) << "a live run's copy must stay";
  EXPECT_TRUE(std::filesystem::exists(other)) << "not a FILE.tmpPID name";
  ::kill(live, SIGKILL);
  ::waitpid(live, nullptr, 0);
  ::waitpid(zombie, nullptr, 0);
  EXPECT_TRUE(process_gone(live));
}

// A writer killed while it creates the file leaves FILE.tmpPID and no file at all, so the next
// run is a new one, not a --resume: creating the file clears the ended run's copy too.
TEST(ResultFile, CreatingTheFileRemovesAnEndedRunsCopy) {
  const std::string path = test::temp_dir() + "/created.h5";
  const pid_t ended = ::fork();
  ASSERT_GE(ended, 0);
  if (ended == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(ended, nullptr, 0), ended);
  const std::string copy = path + ".tmp" + std::to_string(ended);
  std::ofstream(copy) << "x";
  ASSERT_TRUE(std::filesystem::exists(copy));
  { ResultFile::create(path, false, attrs(5, 4)); }
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(copy)) << "the ended run's copy is stale";
}

TEST(ResultFile, SigkillAtRandomMomentsLosesNoCompletedPoint) {
  // A child process writes points as fast as it can; it is killed (SIGKILL) at a random moment,
  // the file is checked (it opens; every completed row is intact) and resumed by the next child.
  constexpr std::size_t kPoints = 2000;
  constexpr int kIters = 20;
  const std::string path = test::temp_dir() + "/killed.h5";
  { ResultFile::create(path, false, attrs(5, 4)); }
  std::mt19937 rng(12345);
  std::size_t kills = 0;
  for (int attempt = 0; attempt < 40 && kills < 10; ++attempt) {
    std::fflush(nullptr);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        std::map<std::string, std::set<std::size_t>> done;
        auto file = ResultFile::resume(path, attrs(5, 4), &done);
        for (std::size_t i = 0; i < kPoints; ++i)
          if (!done["g"].count(i)) file.append(bench(kPoints, kIters), record(i, kIters, 4));
        file.finish("complete", utc_now());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child: %s\n", e.what());
        ::_exit(1);
      }
      ::_exit(0);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(1000, 40000)(rng)));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (WIFEXITED(status)) {
      ASSERT_EQ(WEXITSTATUS(status), 0);
      break;  // finished before the kill
    }
    ++kills;
    ASSERT_EQ(check_result_file(path), "") << "after kill " << kills;
    std::map<std::string, std::set<std::size_t>> done;
    ASSERT_NO_THROW(ResultFile::resume(path, attrs(5, 4), &done));
    Dataset p(path, "/benchmarks/g/points"), s(path, "/benchmarks/g/samples");
    if (p.d < 0) continue;  // killed before the benchmark existed
    expect_rows_intact(p, s, done["g"], kIters);
  }
  EXPECT_GE(kills, 5u);
  std::map<std::string, std::set<std::size_t>> done;
  auto file = ResultFile::resume(path, attrs(5, 4), &done);
  for (std::size_t i = 0; i < kPoints; ++i)
    if (!done["g"].count(i)) file.append(bench(kPoints, kIters), record(i, kIters, 4));
  file.close();
  Dataset p(path, "/benchmarks/g/points"), s(path, "/benchmarks/g/samples");
  const auto pts = p.column<std::int64_t>("point", H5T_NATIVE_INT64);
  ASSERT_EQ(pts.size(), kPoints);
  std::set<std::size_t> all;
  for (std::size_t i = 0; i < kPoints; ++i) {
    ASSERT_EQ(pts[i], static_cast<std::int64_t>(i));
    all.insert(i);
  }
  expect_rows_intact(p, s, all, kIters);
  std::printf("killed %zu times\n", kills);
}

TEST(DeviceInfoFields, JsonRoundTripAndErrors) {
  DeviceInfo d;
  d.rank = 3;
  d.local_rank = 1;
  d.host = "node7";
  d.device_index = 2;
  d.memory_bytes = 141LL << 30;
  d.mpi_version = "Open MPI v4.1.4";
  d.hdf5_version = "1.10.8";
  const DeviceInfo e = device_info_from_json(to_json(d));
  EXPECT_EQ(to_json(e), to_json(d));
  EXPECT_EQ(e.memory_bytes, d.memory_bytes);
  EXPECT_EQ(e.host, "node7");
  EXPECT_EQ(e.device_index, 2);
  EXPECT_THROW(device_info_from_json("{\"rank\": 1}"), Error);
  EXPECT_THROW(device_info_from_json("not json"), Error);
  auto j = nlohmann::json::parse(to_json(d));
  j["host"] = 5;
  EXPECT_THROW(device_info_from_json(j.dump()), Error);
  // The system table's columns are the field table's.
  const auto cols = columns::system();
  ASSERT_EQ(cols.size(), device_info_fields().size());
  for (std::size_t i = 0; i < cols.size(); ++i) EXPECT_EQ(cols[i].name, device_info_fields()[i].name);
}

TEST(Columns, PointsLayoutAlignsStatus) {
  const auto c = columns::layout(columns::points(test_op()));
  EXPECT_EQ(c.columns()[c.index("status")].offset % 16, 0u);
  EXPECT_EQ(c.size() % 16, 0u);
  // the axes follow impl, the op columns the fixed columns
  const auto cols = columns::points(test_op());
  EXPECT_EQ(cols[0].name, "point");
  EXPECT_EQ(cols[1].name, "round");
  EXPECT_EQ(cols[2].name, "order");
  EXPECT_EQ(cols[3].name, "impl");
  EXPECT_EQ(cols[4].name, "n");
  EXPECT_EQ(cols[6].name, "alpha");
  EXPECT_EQ(cols[7].name, "status");
  EXPECT_EQ(cols[cols.size() - 5].name, "eff_n");
  EXPECT_EQ(cols.back().name, "x_s");
}

}  // namespace
}  // namespace genbench
