#include "comm/comm.h"

#include <unistd.h>

#include <cstdlib>

#include "core/error.h"
#include "core/watchdog.h"

namespace genbench {

std::string mpi_error_string(int rc) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, buf, &len);
  return std::string(buf, static_cast<std::size_t>(len));
}

Comm::Comm(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GENBENCH_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(GENBENCH_ASAN)
  // Keep Open MPI's plugins loaded to the end, so leak reports can name (and skip) them.
  if (!initialized) ::setenv("OMPI_MCA_mca_base_component_disable_dlclose", "1", 0);
#endif
  if (!initialized) {
    int provided = 0;
    GENBENCH_CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
    owns_mpi_ = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  GENBENCH_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  GENBENCH_CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size_));
  GENBENCH_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local_));
  GENBENCH_CHECK_MPI(MPI_Comm_rank(local_, &local_rank_));
  GENBENCH_CHECK_MPI(MPI_Comm_size(local_, &local_size_));
  char name[256] = {0};
  gethostname(name, sizeof(name) - 1);
  host_ = name;
  process_identity().rank = rank_;
  process_identity().host = host_;
}

Comm::~Comm() {
  if (local_ != MPI_COMM_NULL) MPI_Comm_free(&local_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_mpi_ && !finalized) MPI_Finalize();
}

void Comm::barrier() const {
  ActivityScope op("MPI_Barrier");
  GENBENCH_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

double Comm::max(double v) const {
  ActivityScope op("MPI_Allreduce(max)");
  double out = 0;
  GENBENCH_CHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return out;
}

std::int64_t Comm::max(std::int64_t v) const {
  ActivityScope op("MPI_Allreduce(max)");
  std::int64_t out = 0;
  GENBENCH_CHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD));
  return out;
}

std::int64_t Comm::min(std::int64_t v) const {
  ActivityScope op("MPI_Allreduce(min)");
  std::int64_t out = 0;
  GENBENCH_CHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD));
  return out;
}

double Comm::sum(double v) const {
  ActivityScope op("MPI_Allreduce(sum)");
  double out = 0;
  GENBENCH_CHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  return out;
}

void Comm::max_inplace(std::vector<double>& v) const {
  ActivityScope op("MPI_Allreduce(max)");
  if (v.empty()) return;
  GENBENCH_CHECK_MPI(
      MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
}

std::vector<double> Comm::gather(const std::vector<double>& v) const {
  ActivityScope op("MPI_Gather");
  std::vector<double> out(is_root() ? v.size() * static_cast<std::size_t>(size_) : 0);
  GENBENCH_CHECK_MPI(MPI_Gather(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, out.data(),
                                static_cast<int>(v.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD));
  return out;
}

std::vector<std::int64_t> Comm::gather(const std::vector<std::int64_t>& v) const {
  ActivityScope op("MPI_Gather");
  std::vector<std::int64_t> out(is_root() ? v.size() * static_cast<std::size_t>(size_) : 0);
  GENBENCH_CHECK_MPI(MPI_Gather(v.data(), static_cast<int>(v.size()), MPI_INT64_T, out.data(),
                                static_cast<int>(v.size()), MPI_INT64_T, 0, MPI_COMM_WORLD));
  return out;
}

std::vector<std::string> Comm::gather(const std::string& s) const {
  ActivityScope op("MPI_Gatherv");
  int len = static_cast<int>(s.size());
  std::vector<int> lens(is_root() ? static_cast<std::size_t>(size_) : 0);
  GENBENCH_CHECK_MPI(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
  std::vector<int> displs(lens.size());
  int total = 0;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    displs[i] = total;
    total += lens[i];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  GENBENCH_CHECK_MPI(
      MPI_Gatherv(s.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lens.size(); ++i)
    out.push_back(all.substr(static_cast<std::size_t>(displs[i]), static_cast<std::size_t>(lens[i])));
  return out;
}

void Comm::broadcast(std::string& s, int root) const {
  ActivityScope op("MPI_Bcast");
  std::int64_t len = static_cast<std::int64_t>(s.size());
  broadcast(len, root);
  s.resize(static_cast<std::size_t>(len));
  GENBENCH_CHECK_MPI(MPI_Bcast(s.data(), static_cast<int>(len), MPI_CHAR, root, MPI_COMM_WORLD));
}

void Comm::broadcast(std::int64_t& v, int root) const {
  ActivityScope op("MPI_Bcast");
  GENBENCH_CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT64_T, root, MPI_COMM_WORLD));
}

void Comm::abort(int code) const {
  run_abort_hooks();  // e.g. abort device communicators first
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

std::string Comm::library_version() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string s(buf, static_cast<std::size_t>(len));
  const auto nl = s.find_first_of("\n,");
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace genbench
