#pragma once
// The MPI layer: world and node-local ranks, barriers, and the few collectives the runner
// needs to agree on decisions and gather results to rank 0. Nothing else calls MPI directly
// except the host collective implementations, which get the communicator from here.
#include <mpi.h>

#include "core/error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace genbench {

#define GENBENCH_CHECK_MPI(call)                                                                               \
  do {                                                                                                         \
    const int genbench_mpi_rc_ = (call);                                                                       \
    if (genbench_mpi_rc_ != MPI_SUCCESS)                                                                       \
      ::genbench::throw_call_error(#call, ::genbench::mpi_error_string(genbench_mpi_rc_), __FILE__, __LINE__); \
  } while (0)

std::string mpi_error_string(int rc);

class Comm {
 public:
  // Initialises MPI (if needed) and splits the node-local communicator.
  Comm(int* argc, char*** argv);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  const std::string& host() const { return host_; }
  MPI_Comm world() const { return MPI_COMM_WORLD; }
  bool is_root() const { return rank_ == 0; }

  void barrier() const;
  double max(double v) const;
  std::int64_t max(std::int64_t v) const;
  std::int64_t min(std::int64_t v) const;
  double sum(double v) const;
  // Element-wise maximum over ranks, in place.
  void max_inplace(std::vector<double>& v) const;
  // Rank 0 receives every rank's vector (all of equal length n), concatenated in rank order.
  std::vector<double> gather(const std::vector<double>& v) const;
  std::vector<std::int64_t> gather(const std::vector<std::int64_t>& v) const;
  std::vector<std::string> gather(const std::string& s) const;  // rank 0 gets all
  void broadcast(std::string& s, int root = 0) const;
  void broadcast(std::int64_t& v, int root = 0) const;
  [[noreturn]] void abort(int code) const;

  static std::string library_version();

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string host_;
  MPI_Comm local_ = MPI_COMM_NULL;
  bool owns_mpi_ = false;
};

}  // namespace genbench
