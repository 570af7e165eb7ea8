#include "io/result_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <cmath>
#include <ctime>

#include "core/error.h"
#include "core/strings.h"
#include "io/h5.h"
#include "io/schema.h"

namespace genbench {

using h5::Compound;
using h5::Id;
using Kind = h5::Compound::Kind;

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

constexpr std::size_t kNameLen = 32;
constexpr std::size_t kReasonLen = 512;

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Silences HDF5's own error stack printing while we probe files; we report errors ourselves.
struct QuietHdf5 {
  H5E_auto2_t func = nullptr;
  void* data = nullptr;
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func, &data);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func, data); }
};

// Reliability (docs/reliability.md): every change to an existing result file is made on a copy
// that then replaces the file by rename(), so a process killed at any moment (SIGKILL, the OOM
// killer, a node failure after the page cache is written) leaves either the previous or the
// new version of the file, both complete. A kill leaves at most a stale FILE.tmpPID beside it.
void copy_file(const std::string& from, const std::string& to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw Error("cannot read " + from + ": " + std::strerror(errno));
  struct stat st {};
  ::fstat(in, &st);
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 0777);
  if (out < 0) {
    const int e = errno;
    ::close(in);
    throw Error("cannot write " + to + ": " + std::strerror(e) + " (is the folder writable?)");
  }
  bool ok = true;
  int err = 0;
  off_t left = st.st_size;
  bool plain = false;
  std::vector<char> buf;
  while (ok && left > 0) {
    ssize_t n = -1;
    if (!plain) {
      n = ::copy_file_range(in, nullptr, out, nullptr, static_cast<std::size_t>(left), 0);
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        plain = true;
        continue;
      }
    } else {
      buf.resize(1 << 20);
      n = ::read(in, buf.data(), buf.size());
      for (ssize_t done = 0; n > 0 && done < n;) {
        const ssize_t w = ::write(out, buf.data() + done, static_cast<std::size_t>(n - done));
        if (w < 0) {
          n = -1;
          break;
        }
        done += w;
      }
    }
    if (n < 0) {
      err = errno;
      ok = false;
    } else if (n == 0) {
      break;  // shorter than stat said
    } else {
      left -= n;
    }
  }
  if (::close(out) != 0 && ok) {
    err = errno;
    ok = false;
  }
  ::close(in);
  if (!ok) {
    ::unlink(to.c_str());
    throw Error("cannot write " + to + ": " + std::strerror(err) + (err == ENOSPC ? " (disk full)" : ""));
  }
}

class Staged {
 public:
  explicit Staged(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp" + std::to_string(::getpid())) {
    copy_file(path_, tmp_);
  }
  Staged(const Staged&) = delete;
  Staged& operator=(const Staged&) = delete;
  ~Staged() {
    if (!done_) ::unlink(tmp_.c_str());
  }
  const std::string& tmp() const { return tmp_; }
  // The copy, closed by the caller, is checked and then replaces the file.
  void commit() {
    {
      Id f(H5Fopen(tmp_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
      if (!f.valid()) throw Error("cannot write " + path_ + " (the new version does not read back; disk full?)");
    }
    if (::rename(tmp_.c_str(), path_.c_str()) != 0)
      throw Error("cannot replace " + path_ + ": " + std::strerror(errno));
    done_ = true;
  }

 private:
  std::string path_, tmp_;
  bool done_ = false;
};

// Removes FILE.tmpPID copies left by killed runs on this host (their process is gone).
void remove_stale_copies(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string base = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= base.size() || name.compare(0, base.size(), base) != 0) continue;
    const std::string digits = name.substr(base.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || (::kill(pid, 0) != 0 && errno == ESRCH))
      ::unlink((slash == std::string::npos ? name : dir + name).c_str());
  }
  ::closedir(d);
}

Id open_rw(const std::string& path) {
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) throw Error("cannot open result file " + path + " for writing");
  return f;
}

Compound points_layout(const Op& op) {
  Compound c;
  c.add("point", Kind::i64);
  c.add("impl", Kind::str, kNameLen);
  for (const auto& a : op.axes()) {
    if (a.type == AxisType::real) c.add(a.name, Kind::f64);
    else if (a.type == AxisType::choice) c.add(a.name, Kind::str, kNameLen);
    else c.add(a.name, Kind::i64);
  }
  c.add("status", Kind::str, 16);
  c.add("reason", Kind::str, kReasonLen);
  c.add("variant", Kind::str, 64);
  c.add("stop_reason", Kind::str, 16);
  c.add("iterations", Kind::i64);
  for (const char* s : {"time_median_s", "time_mean_s", "time_min_s", "time_max_s", "time_p10_s", "time_p90_s",
                        "time_p99_s", "time_stddev_s"})
    c.add(s, Kind::f64, 0, "s");
  c.add("work_flops", Kind::f64, 0, "FLOP");
  c.add("work_bytes", Kind::f64, 0, "B");
  c.add("tflops", Kind::f64, 0, "TFLOP/s");
  c.add("algbw_GBps", Kind::f64, 0, "GB/s");
  c.add("busbw_GBps", Kind::f64, 0, "GB/s");
  c.add("busbw_factor", Kind::f64);
  c.add("peak_memory_bytes", Kind::i64, 0, "B");
  c.add("validation_error", Kind::f64);
  c.add("validation_tolerance", Kind::f64);
  c.add("sm_clock_mhz", Kind::f64, 0, "MHz");
  c.add("mem_clock_mhz", Kind::f64, 0, "MHz");
  c.add("power_w", Kind::f64, 0, "W");
  c.add("temperature_c", Kind::f64, 0, "C");
  c.add("throttle_reasons", Kind::i64);
  c.add("throttled", Kind::i64);
  c.add("ceiling_fraction", Kind::f64);
  for (const auto& [name, unit] : op.extra_columns()) c.add(name, Kind::f64, 0, unit);
  return c;
}

Compound rank_stats_layout() {
  Compound c;
  c.add("iterations", Kind::i64);
  for (const char* s : {"mean_s", "median_s", "stddev_s", "min_s", "max_s", "p10_s", "p90_s", "p99_s"})
    c.add(s, Kind::f64, 0, "s");
  c.add("peak_memory_bytes", Kind::i64, 0, "B");
  c.add("memory_delta_bytes", Kind::i64, 0, "B");
  return c;
}

Compound system_layout() {
  Compound c;
  c.add("rank", Kind::i64);
  c.add("local_rank", Kind::i64);
  c.add("host", Kind::str, 64);
  c.add("backend", Kind::str, 16);
  c.add("device_index", Kind::i64);
  c.add("name", Kind::str, 96);
  c.add("uuid", Kind::str, 64);
  c.add("pci_bus_id", Kind::str, 32);
  c.add("sm_count", Kind::i64);
  c.add("cc_major", Kind::i64);
  c.add("cc_minor", Kind::i64);
  c.add("memory_bytes", Kind::i64, 0, "B");
  c.add("l2_bytes", Kind::i64, 0, "B");
  c.add("driver_version", Kind::str, kNameLen);
  c.add("runtime_version", Kind::str, kNameLen);
  c.add("nccl_version", Kind::str, kNameLen);
  c.add("cublas_version", Kind::str, kNameLen);
  c.add("cudnn_version", Kind::str, kNameLen);
  c.add("mpi_version", Kind::str, 96);
  c.add("hdf5_version", Kind::str, kNameLen);
  return c;
}

void write_units(hid_t dset, const Compound& c) {
  for (const auto& col : c.columns())
    if (!col.unit.empty()) h5::set_attr(dset, ("unit_" + col.name).c_str(), col.unit);
}

// Creates a chunked dataset whose first dimension grows by one row per point.
Id create_growing(hid_t group, const char* name, hid_t type, const std::vector<hsize_t>& row_dims,
                  const std::string& path, bool compress) {
  std::vector<hsize_t> dims{0}, maxdims{H5S_UNLIMITED}, chunk{1};
  for (auto d : row_dims) {
    dims.push_back(d);
    maxdims.push_back(d);
    chunk.push_back(d);
  }
  Id space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxdims.data()), H5Sclose);
  Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data());
  if (compress && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) H5Pset_deflate(dcpl, 1);
  if (H5Tget_class(type) == H5T_FLOAT) {
    const double nan = std::nan("");
    H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &nan);
  }
  return Id(h5::check(H5Dcreate2(group, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), name, path), H5Dclose);
}

// Appends one row (of shape row_dims) to a growing dataset.
void append_row(hid_t dset, hid_t memtype, const void* data, const std::vector<hsize_t>& row_dims,
                const std::string& path) {
  Id space(H5Dget_space(dset), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  const hsize_t row = dims[0];
  dims[0] += 1;
  h5::check(H5Dset_extent(dset, dims.data()), "H5Dset_extent", path);
  Id fspace(H5Dget_space(dset), H5Sclose);
  std::vector<hsize_t> start(dims.size(), 0), count{1};
  start[0] = row;
  for (auto d : row_dims) count.push_back(d);
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  Id mspace(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose);
  h5::check(H5Dwrite(dset, memtype, mspace, fspace, H5P_DEFAULT, data), "H5Dwrite", path);
}

void write_root(hid_t f, const RunAttributes& a) {
  h5::set_attr(f, schema::kAttrFormat, std::string(schema::kFormat));
  h5::set_attr(f, schema::kAttrSchemaVersion, std::int64_t{schema::kSchemaVersion});
  h5::set_attr(f, "tool_version", a.tool_version);
  h5::set_attr(f, "git_revision", a.git_revision);
  h5::set_attr(f, "config", a.config_text);
  h5::set_attr(f, "config_path", a.config_path);
  h5::set_attr(f, schema::kAttrFingerprint, strprintf("%016llx", static_cast<unsigned long long>(a.config_fingerprint)));
  h5::set_attr(f, "command_line", a.command_line);
  h5::set_attr(f, "start_utc", a.start_utc);
  h5::set_attr(f, "end_utc", std::string());
  h5::set_attr(f, schema::kAttrWorldSize, std::int64_t{a.world_size});
  h5::set_attr(f, schema::kAttrBackend, a.backend);
  h5::set_attr(f, schema::kAttrState, std::string("running"));
}

}  // namespace

std::string check_result_file(const std::string& path) {
  QuietHdf5 quiet;
  if (!file_exists(path)) return path + ": no such file";
  if (H5Fis_hdf5(path.c_str()) <= 0) return path + ": not an HDF5 file (or truncated)";
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) return path + ": cannot be opened as HDF5 (damaged or truncated)";
  if (h5::get_attr_string(f, schema::kAttrFormat) != schema::kFormat)
    return path + ": not a genbench result file (no format='genbench-results' attribute)";
  const auto v = h5::get_attr_int(f, schema::kAttrSchemaVersion);
  if (v != schema::kSchemaVersion)
    return strprintf("%s: schema version %lld, but this build reads version %d", path.c_str(), static_cast<long long>(v),
                     schema::kSchemaVersion);
  return "";
}

ResultFile ResultFile::create(const std::string& path, bool force, const RunAttributes& attrs) {
  QuietHdf5 quiet;
  if (file_exists(path) && !force)
    throw UsageError(path + " already exists; use --force to overwrite it or --resume to continue it");
  // Write to a temporary name first so a failure here never damages an existing file.
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    Id f(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    if (!f.valid()) throw UsageError("cannot create result file " + path + " (is the folder writable?)");
    write_root(f, attrs);
    Id g(H5Gcreate2(f, schema::kBenchmarks, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!g.valid() || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) {
      ::unlink(tmp.c_str());
      throw UsageError("cannot write result file " + path + " (disk full?)");
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw UsageError("cannot create result file " + path);
  }
  return ResultFile(path, attrs.world_size);
}

ResultFile ResultFile::resume(const std::string& path, const RunAttributes& attrs,
                              std::map<std::string, std::set<std::size_t>>* done) {
  if (!file_exists(path)) throw UsageError("--resume: " + path + " does not exist");
  const std::string why = check_result_file(path);
  if (!why.empty()) throw UsageError("--resume: " + why);
  QuietHdf5 quiet;
  remove_stale_copies(path);
  Staged staged(path);
  {
    Id f = open_rw(staged.tmp());
    const std::string fp = strprintf("%016llx", static_cast<unsigned long long>(attrs.config_fingerprint));
    if (h5::get_attr_string(f, schema::kAttrFingerprint) != fp)
      throw UsageError("--resume: " + path + " was made from a different config; use a new output file or the original config");
    if (h5::get_attr_int(f, schema::kAttrWorldSize) != attrs.world_size)
      throw UsageError(strprintf("--resume: %s was made with %lld ranks, this job has %d", path.c_str(),
                                 static_cast<long long>(h5::get_attr_int(f, schema::kAttrWorldSize)), attrs.world_size));
    h5::set_attr(f, schema::kAttrState, std::string("running"));
    h5::set_attr(f, "resumed_utc", attrs.start_utc);
    Id g(H5Gopen2(f, schema::kBenchmarks, H5P_DEFAULT), H5Gclose);
    if (g.valid() && done) {
      hsize_t n = 0;
      H5Gget_num_objs(g, &n);
      for (hsize_t i = 0; i < n; ++i) {
        char name[256];
        H5Gget_objname_by_idx(g, i, name, sizeof(name));
        Id d(H5Dopen2(g, (std::string(name) + "/" + schema::kPoints).c_str(), H5P_DEFAULT), H5Dclose);
        if (!d.valid()) continue;
        Id space(H5Dget_space(d), H5Sclose);
        hsize_t rows = 0;
        H5Sget_simple_extent_dims(space, &rows, nullptr);
        std::vector<std::int64_t> idx(rows);
        Id mt(H5Tcreate(H5T_COMPOUND, sizeof(std::int64_t)), H5Tclose);
        H5Tinsert(mt, "point", 0, H5T_NATIVE_INT64);
        if (rows && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, idx.data()) < 0)
          throw UsageError("--resume: cannot read the points of benchmark '" + std::string(name) + "' in " + path);
        auto& set = (*done)[name];
        for (auto v : idx) set.insert(static_cast<std::size_t>(v));
      }
    }
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) throw UsageError("--resume: cannot write " + path + " (disk full?)");
  }
  staged.commit();
  return ResultFile(path, attrs.world_size);
}

void ResultFile::write_system(const std::vector<DeviceInfo>& ranks) {
  QuietHdf5 quiet;
  Staged staged(path_);
  {
    Id f = open_rw(staged.tmp());
    if (H5Lexists(f, schema::kSystem, H5P_DEFAULT) > 0) H5Ldelete(f, schema::kSystem, H5P_DEFAULT);
    const Compound c = system_layout();
    Id type = c.type();
    const hsize_t n = ranks.size();
    Id space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    Id d(h5::check(H5Dcreate2(f, schema::kSystem, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "system", path_),
         H5Dclose);
    std::vector<unsigned char> buf;
    for (const auto& r : ranks) {
      h5::Row row(c);
      std::size_t i = 0;
      row.set(i++, std::int64_t{r.rank});
      row.set(i++, std::int64_t{r.local_rank});
      row.set(i++, r.host);
      row.set(i++, r.backend);
      row.set(i++, std::int64_t{r.device_index});
      row.set(i++, r.name);
      row.set(i++, r.uuid);
      row.set(i++, r.pci_bus_id);
      row.set(i++, std::int64_t{r.sm_count});
      row.set(i++, std::int64_t{r.cc_major});
      row.set(i++, std::int64_t{r.cc_minor});
      row.set(i++, r.memory_bytes);
      row.set(i++, r.l2_bytes);
      row.set(i++, r.driver_version);
      row.set(i++, r.runtime_version);
      row.set(i++, r.nccl_version);
      row.set(i++, r.cublas_version);
      row.set(i++, r.cudnn_version);
      row.set(i++, r.mpi_version);
      row.set(i++, r.hdf5_version);
      buf.insert(buf.end(), row.data(), row.data() + c.size());
    }
    if (n) h5::check(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "H5Dwrite(system)", path_);
    write_units(d, c);
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) throw Error("cannot flush " + path_ + " (disk full?)");
  }
  staged.commit();
}

void ResultFile::write_ceilings(const std::vector<Ceiling>& rows) {
  QuietHdf5 quiet;
  Staged staged(path_);
  {
    Id f = open_rw(staged.tmp());
    if (H5Lexists(f, schema::kCeilings, H5P_DEFAULT) > 0) H5Ldelete(f, schema::kCeilings, H5P_DEFAULT);
    Compound c;
    c.add("rank", Kind::i64);
    c.add("name", Kind::str, kNameLen);
    c.add("value", Kind::f64);
    c.add("unit", Kind::str, 16);
    c.add("detail", Kind::str, 192);
    Id type = c.type();
    const hsize_t n = rows.size();
    Id space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    Id d(h5::check(H5Dcreate2(f, schema::kCeilings, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "ceilings",
                   path_),
         H5Dclose);
    std::vector<unsigned char> buf;
    for (const auto& r : rows) {
      h5::Row row(c);
      row.set(0, std::int64_t{r.rank});
      row.set(1, r.name);
      row.set(2, r.value);
      row.set(3, r.unit);
      row.set(4, r.detail);
      buf.insert(buf.end(), row.data(), row.data() + c.size());
    }
    if (n) h5::check(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "H5Dwrite(ceilings)", path_);
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) throw Error("cannot flush " + path_ + " (disk full?)");
  }
  staged.commit();
}

void ResultFile::append(const BenchmarkInfo& b, const PointRecord& rec) {
  QuietHdf5 quiet;
  Staged staged(path_);
  {
    Id f = open_rw(staged.tmp());
    const std::string gpath = std::string(schema::kBenchmarks) + "/" + b.name;
    const Compound pc = points_layout(*b.op);
    const Compound rc = rank_stats_layout();
    Id ptype = pc.type(), rtype = rc.type();
    const hsize_t world = static_cast<hsize_t>(world_);
    const hsize_t iters = static_cast<hsize_t>(b.max_iterations);
    Id g;
    if (H5Lexists(f, gpath.c_str(), H5P_DEFAULT) > 0) {
      g = Id(H5Gopen2(f, gpath.c_str(), H5P_DEFAULT), H5Gclose);
    } else {
      g = Id(h5::check(H5Gcreate2(f, gpath.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "group", path_), H5Gclose);
      h5::set_attr(g, "op", b.op->name());
      h5::set_attr(g, "implementations", b.implementations);
      std::vector<std::string> axes;
      for (const auto& a : b.op->axes()) axes.push_back(a.name);
      h5::set_attr(g, "axes", axes);
      h5::set_attr(g, "sweep_size", static_cast<std::int64_t>(b.sweep_size));
      h5::set_attr(g, "max_iterations", static_cast<std::int64_t>(b.max_iterations));
      h5::set_attr(g, "timing_warmup", static_cast<std::int64_t>(b.timing.warmup));
      h5::set_attr(g, "timing_warmup_time_s", b.timing.warmup_time_s);
      h5::set_attr(g, "timing_min_iterations", static_cast<std::int64_t>(b.timing.min_iterations));
      h5::set_attr(g, "timing_min_time_s", b.timing.min_time_s);
      h5::set_attr(g, "timing_max_time_s", b.timing.max_time_s);
      h5::set_attr(g, "timing_target_noise", b.timing.target_rel_noise);
      h5::set_attr(g, "timing_launches_per_sample", static_cast<std::int64_t>(b.timing.launches_per_sample));
      h5::set_attr(g, "timing_state_period_s", b.timing.state_period_s);
      Id p = create_growing(g, schema::kPoints, ptype, {}, path_, false);
      write_units(p, pc);
      Id s = create_growing(g, schema::kSamples, H5T_IEEE_F64LE, {world, iters}, path_, true);
      h5::set_attr(s, "units", std::string("s"));
      h5::set_attr(s, "dims", std::vector<std::string>{"point", "rank", "iteration"});
      Id r = create_growing(g, schema::kRankStats, rtype, {world}, path_, false);
      write_units(r, rc);
    }

    // points row
    h5::Row row(pc);
    std::size_t i = 0;
    row.set(i++, static_cast<std::int64_t>(rec.point.index));
    row.set(i++, rec.point.impl);
    for (const auto& v : rec.point.values) {
      if (auto x = std::get_if<std::int64_t>(&v)) row.set(i++, *x);
      else if (auto d = std::get_if<double>(&v)) row.set(i++, *d);
      else row.set(i++, std::get<std::string>(v));
    }
    row.set(i++, rec.status);
    row.set(i++, rec.reason);
    row.set(i++, rec.variant);
    row.set(i++, rec.stop_reason);
    row.set(i++, static_cast<std::int64_t>(rec.slowest.n));
    // A point without samples (failed, skipped, unsupported) has no timing: NaN, never 0.
    for (double v : {rec.slowest.median, rec.slowest.mean, rec.slowest.min, rec.slowest.max, rec.slowest.p10,
                     rec.slowest.p90, rec.slowest.p99, rec.slowest.stddev})
      row.set(i++, rec.slowest.n ? v : std::nan(""));
    row.set(i++, rec.work.flops);
    row.set(i++, rec.work.bytes);
    row.set(i++, rec.tflops);
    row.set(i++, rec.algbw_gbps);
    row.set(i++, rec.busbw_gbps);
    row.set(i++, rec.work.busbw_factor);
    std::int64_t peak = 0;
    for (const auto& r : rec.ranks) peak = std::max(peak, r.peak_memory_bytes);
    row.set(i++, peak);
    row.set(i++, rec.validation_error);
    row.set(i++, rec.validation_tolerance);
    row.set(i++, rec.state.sm_clock_mhz);
    row.set(i++, rec.state.mem_clock_mhz);
    row.set(i++, rec.state.power_w);
    row.set(i++, rec.state.temperature_c);
    row.set(i++, static_cast<std::int64_t>(rec.state.throttle_reasons));
    row.set(i++, std::int64_t{rec.state.throttled ? 1 : 0});
    row.set(i++, rec.ceiling_fraction);
    for (std::size_t e = 0; e < b.op->extra_columns().size(); ++e)
      row.set(i++, e < rec.extra.size() ? rec.extra[e] : std::nan(""));

    // samples [rank][iteration], NaN past the recorded iterations
    std::vector<double> samples(world * iters, std::nan(""));
    for (std::size_t r = 0; r < rec.samples.size() && r < world; ++r)
      for (std::size_t k = 0; k < rec.samples[r].size() && k < iters; ++k) samples[r * iters + k] = rec.samples[r][k];

    std::vector<unsigned char> rbuf;
    for (std::size_t r = 0; r < world; ++r) {
      h5::Row rr(rc);
      RankRecord x = r < rec.ranks.size() ? rec.ranks[r] : RankRecord{};
      std::size_t j = 0;
      rr.set(j++, static_cast<std::int64_t>(x.summary.n));
      for (double v : {x.summary.mean, x.summary.median, x.summary.stddev, x.summary.min, x.summary.max, x.summary.p10,
                       x.summary.p90, x.summary.p99})
        rr.set(j++, x.summary.n ? v : std::nan(""));
      rr.set(j++, x.peak_memory_bytes);
      rr.set(j++, x.memory_delta_bytes);
      rbuf.insert(rbuf.end(), rr.data(), rr.data() + rc.size());
    }

    // Samples and rank stats first, the points row last: a reader that sees a point row also
    // sees its samples.
    Id ds(H5Dopen2(g, schema::kSamples, H5P_DEFAULT), H5Dclose);
    append_row(ds, H5T_NATIVE_DOUBLE, samples.data(), {world, iters}, path_);
    Id dr(H5Dopen2(g, schema::kRankStats, H5P_DEFAULT), H5Dclose);
    append_row(dr, rtype, rbuf.data(), {world}, path_);
    Id dp(H5Dopen2(g, schema::kPoints, H5P_DEFAULT), H5Dclose);
    append_row(dp, ptype, row.data(), {}, path_);
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) throw Error("cannot flush " + path_ + " (disk full?)");
  }
  staged.commit();
}

void ResultFile::finish(const std::string& state, const std::string& end_utc) {
  QuietHdf5 quiet;
  Staged staged(path_);
  {
    Id f = open_rw(staged.tmp());
    h5::set_attr(f, schema::kAttrState, state);
    h5::set_attr(f, "end_utc", end_utc);
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) throw Error("cannot flush " + path_ + " (disk full?)");
  }
  staged.commit();
}

}  // namespace genbench
