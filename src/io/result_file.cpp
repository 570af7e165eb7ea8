#include "io/result_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/strings.h"
#include "io/columns.h"
#include "io/h5.h"
#include "io/schema.h"

namespace genbench {

using h5::Compound;
using h5::Id;

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

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

// The file access properties of every write (docs/reliability.md, "The writer"):
// - no data sieve buffer: each H5Dwrite of a row goes straight to pwrite() at the row's offset,
//   never as a read-modify-write of a larger block around it (which would also fill the holes
//   of the sparse samples dataset);
// - no HDF5 file lock: readers (h5py, the analysis) may hold the file open while the run writes
//   points, and the writer never waits for them nor fails on their lock; rank 0 is the only
//   writer of a file;
// - every allocation aligned to 16 bytes, so that a points row's 16-byte status field, at a
//   16-byte offset in a row whose size is a multiple of 16, never straddles a page.
Id write_fapl() {
  Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_sieve_buf_size(fapl, 0);
  H5Pset_alignment(fapl, 1, 16);
#if H5_VERSION_GE(1, 10, 7)
  H5Pset_file_locking(fapl, 0, 1);
#endif
  return fapl;
}

Id read_fapl() {
  Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
#if H5_VERSION_GE(1, 10, 7)
  H5Pset_file_locking(fapl, 0, 1);
#endif
  return fapl;
}

// "cannot write FILE (what): <errno text> (disk full)" for a failed write; errno is read at once.
[[noreturn]] void write_failed(const std::string& path, const char* what, int err) {
  std::string msg = "cannot write " + path + " (" + what + ")";
  if (err) msg += std::string(": ") + std::strerror(err);
  if (err == ENOSPC || err == EDQUOT) msg += " (disk full)";
  else if (!err) msg += " (disk full or I/O error?)";
  throw Error(msg);
}

void checked_write(hid_t dset, hid_t memtype, hid_t mspace, hid_t fspace, const void* buf, const std::string& path,
                   const char* what) {
  errno = 0;
  if (H5Dwrite(dset, memtype, mspace, fspace, H5P_DEFAULT, buf) < 0) write_failed(path, what, errno);
}

void checked_flush(hid_t f, const std::string& path) {
  errno = 0;
  if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) write_failed(path, "flush", errno);
}

// Copies a file keeping its holes: only the extents that hold data (SEEK_DATA/SEEK_HOLE) are
// copied, then the copy is extended to the same size. The samples dataset of a v2 file is
// allocated in full but written only where points ran, so a plain copy would write (and occupy)
// every unwritten byte.
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
  int err = 0;
  bool plain = false;
  std::vector<char> buf;
  // Copies [off, end) at the same offsets.
  auto copy_range = [&](off_t off, off_t end) {
    while (off < end && !err) {
      ssize_t n = -1;
      if (!plain) {
        off_t src = off, dst = off;
        n = ::copy_file_range(in, &src, out, &dst, static_cast<std::size_t>(end - off), 0);
        if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
          plain = true;
          continue;
        }
      } else {
        buf.resize(1 << 20);
        n = ::pread(in, buf.data(), static_cast<std::size_t>(std::min<off_t>(end - off, off_t(buf.size()))), off);
        for (ssize_t done = 0; n > 0 && done < n;) {
          const ssize_t w = ::pwrite(out, buf.data() + done, static_cast<std::size_t>(n - done), off + done);
          if (w < 0) {
            n = -1;
            break;
          }
          done += w;
        }
      }
      if (n < 0) err = errno;
      else if (n == 0) break;  // shorter than stat said
      else off += n;
    }
  };
  off_t pos = 0;
  while (pos < st.st_size && !err) {
    off_t data = ::lseek(in, pos, SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // only a hole from pos to the end
      data = pos;                 // SEEK_DATA not supported: copy everything
      copy_range(pos, st.st_size);
      break;
    }
    off_t hole = ::lseek(in, data, SEEK_HOLE);
    if (hole < 0) hole = st.st_size;
    copy_range(data, std::min<off_t>(hole, st.st_size));
    pos = hole;
  }
  if (!err && ::ftruncate(out, st.st_size) != 0) err = errno;
  if (::close(out) != 0 && !err) err = errno;
  ::close(in);
  if (err) {
    ::unlink(to.c_str());
    throw Error("cannot write " + to + ": " + std::strerror(err) + (err == ENOSPC ? " (disk full)" : ""));
  }
}

// Reliability (docs/reliability.md): every change to an existing result file's HDF5 metadata
// (a new benchmark's datasets, /system, /ceilings, the state attributes) is made on a copy that
// then replaces the file by rename(), so a process killed at any moment leaves either the
// previous or the new version of the file, both complete. A kill leaves at most a stale
// FILE.tmpPID beside it. Points are written in place (ResultFile::append), without a copy.
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
      Id fapl = read_fapl();
      Id f(H5Fopen(tmp_.c_str(), H5F_ACC_RDONLY, fapl), H5Fclose);
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

}  // namespace

// Whether process pid has ended: no such process, or one that has exited and waits to be reaped
// (a zombie: a killed rank whose parent has not collected it yet still answers kill(pid, 0)).
bool process_gone(int pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  char name[32];
  std::snprintf(name, sizeof(name), "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(name, "r");
  if (!f) return false;  // no /proc: alive as far as can be told
  char buf[512];
  const std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');  // the state follows the command name "(...)"
  return close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

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
    if (pid == ::getpid() || process_gone(pid)) ::unlink((slash == std::string::npos ? name : dir + name).c_str());
  }
  ::closedir(d);
}

namespace {

Id open_rw(const std::string& path) {
  Id fapl = write_fapl();
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl), H5Fclose);
  if (!f.valid()) throw Error("cannot open result file " + path + " for writing");
  return f;
}

void write_units(hid_t dset, const Compound& c) {
  for (const auto& col : c.columns())
    if (!col.unit.empty()) h5::set_attr(dset, ("unit_" + col.name).c_str(), col.unit);
}

// A contiguous dataset allocated in full at creation (so that writing its rows later changes no
// metadata). fill: the value unwritten rows read as, written at creation; nullptr: never
// written (the file keeps a hole there until a row is written).
Id create_fixed(hid_t group, const char* name, hid_t type, const std::vector<hsize_t>& dims, const void* fill,
                const std::string& path) {
  Id space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_layout(dcpl, H5D_CONTIGUOUS);
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  if (fill) {
    H5Pset_fill_value(dcpl, type, fill);
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC);
  } else {
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  }
  errno = 0;
  const hid_t d = H5Dcreate2(group, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d < 0) write_failed(path, name, errno);
  return Id(d, H5Dclose);
}

std::vector<hsize_t> dims_of(hid_t dset) {
  Id space(H5Dget_space(dset), H5Sclose);
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(0, H5Sget_simple_extent_ndims(space))));
  if (!dims.empty()) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

// Writes `count` (from `start`) of dataset d from a packed buffer.
void write_block(hid_t d, hid_t memtype, const std::vector<hsize_t>& start, const std::vector<hsize_t>& count,
                 const void* data, const std::string& path, const char* what) {
  Id fspace(H5Dget_space(d), H5Sclose);
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  Id mspace(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose);
  checked_write(d, memtype, mspace, fspace, data, path, what);
}

void write_root(hid_t f, const RunAttributes& a) {
  h5::set_attr(f, schema::kAttrFormat, std::string(schema::kFormat));
  h5::set_attr(f, schema::kAttrSchemaVersion, std::int64_t{schema::kSchemaVersion});
  h5::set_attr(f, schema::kAttrSchemaDescription, columns::schema_description_json());
  h5::set_attr(f, "tool_version", a.tool_version);
  h5::set_attr(f, "git_revision", a.git_revision);
  h5::set_attr(f, "source_tree", a.source_tree);
  h5::set_attr(f, "config", a.config_text);
  h5::set_attr(f, "config_path", a.config_path);
  h5::set_attr(f, schema::kAttrFingerprint,
               strprintf("%016llx", static_cast<unsigned long long>(a.config_fingerprint)));
  h5::set_attr(f, "command_line", a.command_line);
  h5::set_attr(f, "selection", a.selection);
  h5::set_attr(f, "start_utc", a.start_utc);
  h5::set_attr(f, "end_utc", std::string());
  h5::set_attr(f, schema::kAttrWorldSize, std::int64_t{a.world_size});
  h5::set_attr(f, schema::kAttrBackend, a.backend);
  h5::set_attr(f, schema::kAttrState, std::string("running"));
}

// The completed points of one v2 benchmark group: rows whose status is set. Throws UsageError
// when such a row's point column is not its row (a damaged file).
std::set<std::size_t> completed_points(hid_t g, const std::string& bench, const std::string& path) {
  std::set<std::size_t> done;
  Id d(H5Dopen2(g, schema::kPoints, H5P_DEFAULT), H5Dclose);
  if (!d.valid()) return done;
  const auto dims = dims_of(d);
  const hsize_t rows = dims.empty() ? 0 : dims[0];
  struct Cell {
    std::int64_t point;
    char status[columns::kStatusLen];
  };
  std::vector<Cell> cells(rows);
  Id st(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(st, columns::kStatusLen);
  H5Tset_strpad(st, H5T_STR_NULLTERM);
  Id mt(H5Tcreate(H5T_COMPOUND, sizeof(Cell)), H5Tclose);
  H5Tinsert(mt, "point", HOFFSET(Cell, point), H5T_NATIVE_INT64);
  H5Tinsert(mt, "status", HOFFSET(Cell, status), st);
  if (rows && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, cells.data()) < 0)
    throw UsageError("--resume: cannot read the points of benchmark '" + bench + "' in " + path + " (damaged file?)");
  for (hsize_t r = 0; r < rows; ++r) {
    if (cells[r].status[0] == '\0') continue;
    if (cells[r].point != static_cast<std::int64_t>(r))
      throw UsageError(strprintf("--resume: %s: benchmark '%s' row %llu holds point %lld (damaged file?)", path.c_str(),
                                 bench.c_str(), static_cast<unsigned long long>(r),
                                 static_cast<long long>(cells[r].point)));
    done.insert(static_cast<std::size_t>(r));
  }
  return done;
}

}  // namespace

// What appends keep open between points: the file and, per benchmark written to, its three
// datasets, their sizes and the row layouts of points and rank_stats. Opening the file costs
// about 30 small reads of HDF5 metadata and two superblock writes (the open-for-writing mark
// and its clearing at close), and building the points row type compares some hundred compound
// members; kept open, a point is its raw-data writes only (docs/reliability.md, "The writer").
// Members close in reverse order: the datasets and types before the file.
struct ResultFile::Open {
  struct Bench {
    Id samples, rank_stats, points;
    Compound pc, rc;
    Id ptype, rtype;
    std::size_t status_col = 0;
    hsize_t rows = 0, ranks = 0, iters = 0;  // the datasets' dimensions (samples: rows x ranks x iters)
  };
  Id file;
  std::map<std::string, Bench> benches;
};

ResultFile::ResultFile(std::string path, int world) : path_(std::move(path)), world_(world) {}
ResultFile::ResultFile(ResultFile&&) noexcept = default;
ResultFile& ResultFile::operator=(ResultFile&&) noexcept = default;
ResultFile::~ResultFile() {
  QuietHdf5 quiet;
  close_open();
}

void ResultFile::close_open() { open_.reset(); }

std::string check_result_file(const std::string& path, int* version) {
  QuietHdf5 quiet;
  if (!file_exists(path)) return path + ": no such file";
  if (H5Fis_hdf5(path.c_str()) <= 0) return path + ": not an HDF5 file (or truncated)";
  Id fapl = read_fapl();
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), H5Fclose);
  if (!f.valid()) return path + ": cannot be opened as HDF5 (damaged or truncated)";
  if (h5::get_attr_string(f, schema::kAttrFormat) != schema::kFormat)
    return path + ": not a genbench result file (no format='genbench-results' attribute)";
  const auto v = h5::get_attr_int(f, schema::kAttrSchemaVersion);
  if (v < schema::kOldestReadableVersion || v > schema::kSchemaVersion)
    return strprintf("%s: schema version %lld, but this build reads versions %d to %d", path.c_str(),
                     static_cast<long long>(v), schema::kOldestReadableVersion, schema::kSchemaVersion);
  if (version) *version = static_cast<int>(v);
  return "";
}

ResultFile ResultFile::create(const std::string& path, bool force, const RunAttributes& attrs) {
  QuietHdf5 quiet;
  if (file_exists(path) && !force)
    throw UsageError(path + " already exists; use --force to overwrite it or --resume to continue it");
  // A run killed while it created or changed this file (before its rename) left FILE.tmpPID
  // beside it, and there may be no file to --resume: a new run clears what ended runs left.
  remove_stale_copies(path);
  // Write to a temporary name first so a failure here never damages an existing file.
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    Id fapl = write_fapl();
    Id f(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), H5Fclose);
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
  int version = 0;
  const std::string why = check_result_file(path, &version);
  if (!why.empty()) throw UsageError("--resume: " + why);
  if (version != schema::kSchemaVersion)
    throw UsageError(
        strprintf("--resume: %s has schema version %d; this build continues only version %d files "
                  "(export and the analysis still read it): start a new output file",
                  path.c_str(), version, schema::kSchemaVersion));
  QuietHdf5 quiet;
  remove_stale_copies(path);
  ResultFile file(path, attrs.world_size);
  Staged staged(path);
  {
    Id f = open_rw(staged.tmp());
    const std::string fp = strprintf("%016llx", static_cast<unsigned long long>(attrs.config_fingerprint));
    if (h5::get_attr_string(f, schema::kAttrFingerprint) != fp) {
      // Files from before selections have no "selection" attribute: they ran the whole config.
      const std::string had = H5Aexists(f, "selection") > 0 ? h5::get_attr_string(f, "selection") : std::string();
      if (had != attrs.selection)
        throw UsageError("--resume: " + path + " was made with " +
                         (had.empty() ? std::string("the whole config") : "the selection '" + had + "'") +
                         ", this run has " +
                         (attrs.selection.empty() ? std::string("none") : "'" + attrs.selection + "'") +
                         "; resume with the same -b/-a or use a new output file");
      throw UsageError("--resume: " + path +
                       " was made from a different config; use a new output file or the original config");
    }
    if (h5::get_attr_int(f, schema::kAttrWorldSize) != attrs.world_size)
      throw UsageError(strprintf("--resume: %s was made with %lld ranks, this job has %d", path.c_str(),
                                 static_cast<long long>(h5::get_attr_int(f, schema::kAttrWorldSize)),
                                 attrs.world_size));
    Id g(H5Gopen2(f, schema::kBenchmarks, H5P_DEFAULT), H5Gclose);
    if (g.valid()) {
      for (const auto& name : h5::member_names(g)) {
        Id bg(H5Gopen2(g, name.c_str(), H5P_DEFAULT), H5Gclose);
        if (!bg.valid()) continue;
        auto set = completed_points(bg, name, path);
        if (done) (*done)[name] = std::move(set);
        file.ready_.insert(name);
      }
    }
    h5::set_attr(f, schema::kAttrState, std::string("running"));
    h5::set_attr(f, "resumed_utc", attrs.start_utc);
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) throw UsageError("--resume: cannot write " + path + " (disk full?)");
  }
  staged.commit();
  return file;
}

void ResultFile::write_system(const std::vector<DeviceInfo>& ranks) {
  QuietHdf5 quiet;
  close_open();
  Staged staged(path_);
  {
    Id f = open_rw(staged.tmp());
    if (H5Lexists(f, schema::kSystem, H5P_DEFAULT) > 0) H5Ldelete(f, schema::kSystem, H5P_DEFAULT);
    const Compound c = columns::layout(columns::system());
    Id type = c.type();
    const hsize_t n = ranks.size();
    Id space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    Id d(h5::check(H5Dcreate2(f, schema::kSystem, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "system", path_),
         H5Dclose);
    std::vector<unsigned char> buf;
    for (const auto& r : ranks) {
      h5::Row row(c);
      columns::fill_system(r, row);
      buf.insert(buf.end(), row.data(), row.data() + c.size());
    }
    if (n) checked_write(d, type, H5S_ALL, H5S_ALL, buf.data(), path_, "system");
    write_units(d, c);
    checked_flush(f, path_);
  }
  staged.commit();
}

void ResultFile::write_ceilings(const std::vector<Ceiling>& rows) {
  QuietHdf5 quiet;
  close_open();
  Staged staged(path_);
  {
    Id f = open_rw(staged.tmp());
    if (H5Lexists(f, schema::kCeilings, H5P_DEFAULT) > 0) H5Ldelete(f, schema::kCeilings, H5P_DEFAULT);
    const Compound c = columns::layout(columns::ceilings());
    Id type = c.type();
    const hsize_t n = rows.size();
    Id space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    Id d(h5::check(H5Dcreate2(f, schema::kCeilings, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "ceilings",
                   path_),
         H5Dclose);
    std::vector<unsigned char> buf;
    for (const auto& r : rows) {
      h5::Row row(c);
      columns::fill_ceiling(r, row);
      buf.insert(buf.end(), row.data(), row.data() + c.size());
    }
    if (n) checked_write(d, type, H5S_ALL, H5S_ALL, buf.data(), path_, "ceilings");
    checked_flush(f, path_);
  }
  staged.commit();
}

// The benchmark's group and its three datasets, allocated for the whole sweep (a staged change:
// the file is copied and renamed once per benchmark).
void ResultFile::create_benchmark(const BenchmarkInfo& b) {
  QuietHdf5 quiet;
  close_open();
  const std::string gpath = std::string(schema::kBenchmarks) + "/" + b.name;
  {
    Id fapl = read_fapl();
    Id f(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, fapl), H5Fclose);
    if (f.valid() && H5Lexists(f, gpath.c_str(), H5P_DEFAULT) > 0) {
      ready_.insert(b.name);
      return;
    }
  }
  if (!b.op) throw Error("benchmark '" + b.name + "': no op");
  Staged staged(path_);
  {
    Id f = open_rw(staged.tmp());
    Id g(h5::check(H5Gcreate2(f, gpath.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "group", path_), H5Gclose);
    h5::set_attr(g, "op", b.op->name());
    h5::set_attr(g, "implementations", b.implementations);
    std::vector<std::string> axes;
    for (const auto& a : b.op->axes()) axes.push_back(a.name);
    h5::set_attr(g, "axes", axes);
    h5::set_attr(g, "sweep_size", static_cast<std::int64_t>(b.sweep_size));
    h5::set_attr(g, "rounds", static_cast<std::int64_t>(std::max(1, b.timing.rounds)));
    h5::set_attr(g, "max_iterations", static_cast<std::int64_t>(b.timing.max_iterations));
    h5::set_attr(g, "timing_warmup", static_cast<std::int64_t>(b.timing.warmup));
    h5::set_attr(g, "timing_warmup_time_s", b.timing.warmup_time_s);
    h5::set_attr(g, "timing_min_iterations", static_cast<std::int64_t>(b.timing.min_iterations));
    h5::set_attr(g, "timing_min_time_s", b.timing.min_time_s);
    h5::set_attr(g, "timing_max_time_s", b.timing.max_time_s);
    h5::set_attr(g, "timing_target_noise", b.timing.target_rel_noise);
    h5::set_attr(g, "timing_launches_per_sample", static_cast<std::int64_t>(b.timing.launches_per_sample));
    h5::set_attr(g, "timing_state_period_s", b.timing.state_period_s);
    h5::set_attr(g, "timing_retime_held", static_cast<std::int64_t>(b.timing.retime_held));
    h5::set_attr(g, "timing_cooldown_s", b.timing.cooldown_s);
    h5::set_attr(g, "timing_cache", std::string(b.timing.cold_cache ? "cold" : "hot"));
    h5::set_attr(g, schema::kAttrOpDescription, b.op->description_json());
    {
      nlohmann::json tags = nlohmann::json::object();  // the benchmark's labels (config 'tags'), by name
      for (const auto& [k, v] : b.tags) tags[k] = v;
      h5::set_attr(g, "tags", tags.dump());
    }
    const auto cols = columns::points(*b.op);
    h5::set_attr(g, schema::kAttrColumns, columns::columns_json(cols));

    const hsize_t rows = std::max<hsize_t>(1, b.sweep_size * static_cast<hsize_t>(std::max(1, b.timing.rounds)));
    const hsize_t world = static_cast<hsize_t>(world_);
    const hsize_t iters = static_cast<hsize_t>(std::max(1, b.timing.max_iterations));
    const Compound pc = columns::layout(cols);
    const Compound rc = columns::layout(columns::rank_stats());
    Id ptype = pc.type(), rtype = rc.type();
    const h5::Row pfill = columns::fill_row(pc), rfill = columns::fill_row(rc);
    Id p = create_fixed(g, schema::kPoints, ptype, {rows}, pfill.data(), path_);
    write_units(p, pc);
    Id r = create_fixed(g, schema::kRankStats, rtype, {rows, world}, rfill.data(), path_);
    write_units(r, rc);
    Id s = create_fixed(g, schema::kSamples, H5T_IEEE_F64LE, {rows, world, iters}, nullptr, path_);
    h5::set_attr(s, "units", std::string("s"));
    h5::set_attr(s, "dims", std::vector<std::string>{"point", "rank", "iteration"});
    checked_flush(f, path_);
  }
  staged.commit();
  ready_.insert(b.name);
}

void ResultFile::append(const BenchmarkInfo& b, const PointRecord& rec) {
  if (!b.op) throw Error("benchmark '" + b.name + "': no op");
  if (rec.status.empty()) throw Error("benchmark '" + b.name + "': a point without a status cannot be recorded");
  if (!ready_.count(b.name)) create_benchmark(b);
  QuietHdf5 quiet;
  if (!open_) {
    auto o = std::make_unique<Open>();
    o->file = open_rw(path_);
    open_ = std::move(o);
  }
  auto it = open_->benches.find(b.name);
  if (it == open_->benches.end()) {
    const std::string gpath = std::string(schema::kBenchmarks) + "/" + b.name;
    Id g(H5Gopen2(open_->file, gpath.c_str(), H5P_DEFAULT), H5Gclose);
    if (!g.valid()) throw Error(path_ + ": benchmark '" + b.name + "' is missing from the file");
    Open::Bench ob;
    ob.samples = Id(H5Dopen2(g, schema::kSamples, H5P_DEFAULT), H5Dclose);
    ob.rank_stats = Id(H5Dopen2(g, schema::kRankStats, H5P_DEFAULT), H5Dclose);
    ob.points = Id(H5Dopen2(g, schema::kPoints, H5P_DEFAULT), H5Dclose);
    if (!ob.samples.valid() || !ob.rank_stats.valid() || !ob.points.valid())
      throw Error(path_ + ": benchmark '" + b.name + "' lacks a dataset");
    const auto sdims = dims_of(ob.samples);
    if (sdims.size() != 3) throw Error(path_ + ": benchmark '" + b.name + "': samples is not 3-dimensional");
    ob.rows = sdims[0];
    ob.ranks = sdims[1];
    ob.iters = sdims[2];
    ob.pc = columns::layout(columns::points(*b.op));
    ob.rc = columns::layout(columns::rank_stats());
    ob.ptype = ob.pc.type();
    ob.rtype = ob.rc.type();
    ob.status_col = ob.pc.index("status");
    it = open_->benches.emplace(b.name, std::move(ob)).first;
  }
  Open::Bench& d = it->second;
  const hsize_t world = static_cast<hsize_t>(world_);
  const hsize_t row = rec.round * b.sweep_size + rec.point.index;
  if (row >= d.rows || d.ranks != world)
    throw Error(strprintf("%s: benchmark '%s': point %llu does not fit its datasets (%llu rows, %llu ranks)",
                          path_.c_str(), b.name.c_str(), static_cast<unsigned long long>(row),
                          static_cast<unsigned long long>(d.rows), static_cast<unsigned long long>(d.ranks)));

  // Samples: only the iterations that ran ([row, :, :n]); the rest stays unwritten.
  hsize_t n = 0;
  for (const auto& s : rec.samples) n = std::max<hsize_t>(n, s.size());
  n = std::min(n, d.iters);
  if (n) {
    std::vector<double> samples(world * n, std::nan(""));
    for (std::size_t r = 0; r < rec.samples.size() && r < world; ++r)
      for (std::size_t k = 0; k < rec.samples[r].size() && k < n; ++k) samples[r * n + k] = rec.samples[r][k];
    write_block(d.samples, H5T_NATIVE_DOUBLE, {row, 0, 0}, {1, world, n}, samples.data(), path_, "samples");
  }

  std::vector<unsigned char> rbuf;
  for (std::size_t r = 0; r < world; ++r) {
    h5::Row rr(d.rc);
    columns::fill_rank_stats(r < rec.ranks.size() ? rec.ranks[r] : RankRecord{}, rr);
    rbuf.insert(rbuf.end(), rr.data(), rr.data() + d.rc.size());
  }
  write_block(d.rank_stats, d.rtype, {row, 0}, {1, world}, rbuf.data(), path_, "rank_stats");

  // The points row twice: first with an empty status, then whole again with the status, which
  // is the only change; a kill between or during the two writes leaves the point not complete.
  // The flushes write nothing (no metadata changed, raw data goes straight to the file); they
  // make sure of it before the status and before the progress line.
  h5::Row prow(d.pc);
  columns::fill_points(*b.op, rec, prow);
  prow.set(d.status_col, std::string());
  write_block(d.points, d.ptype, {row}, {1}, prow.data(), path_, "points");
  checked_flush(open_->file, path_);
  prow.set(d.status_col, rec.status);
  write_block(d.points, d.ptype, {row}, {1}, prow.data(), path_, "points status");
  checked_flush(open_->file, path_);
}

void ResultFile::finish(const std::string& state, const std::string& end_utc) {
  QuietHdf5 quiet;
  close_open();
  Staged staged(path_);
  {
    Id f = open_rw(staged.tmp());
    h5::set_attr(f, schema::kAttrState, state);
    h5::set_attr(f, "end_utc", end_utc);
    checked_flush(f, path_);
  }
  staged.commit();
}

}  // namespace genbench
