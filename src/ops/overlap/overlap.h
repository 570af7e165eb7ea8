#pragma once
// overlap: a compute operation (a GEMM) on one stream and a collective on another, at the same
// time, as tensor-parallel layers run them. The timed run() is the overlapped execution; each
// point also reports the compute and the collective alone and how much each slows the other
// (extra columns, declared in overlap.cpp's define_columns(); docs/hdf5-schema.md).
//
// chunks = 1: the GEMM and the whole collective start together.
// chunks = c > 1: the GEMM is split along M into c pieces and the collective buffer into c
// pieces; piece i's collective starts when GEMM piece i is done, so it overlaps GEMM piece
// i + 1 (the pipelined form of a tensor-parallel layer).
#include <cstdint>
#include <string>

#include "ops/collective/collective.h"
#include "ops/gemm/gemm.h"
#include "ops/op.h"

namespace genbench {

namespace overlap_axis {
enum : std::size_t {
  compute,  // gemm
  m,        // GEMM rows (split into `chunks` pieces)
  n,
  k,
  dtype,       // GEMM input precision
  collective,  // all_reduce | all_gather | reduce_scatter | all_to_all
  bytes,       // collective size, nccl-tests convention
  coll_dtype,  // collective element type
  priority,    // equal | comm_high | compute_high: stream priorities
  nccl_ctas,   // CTAs NCCL runs with (0 = NCCL's choice)
  chunks,      // pipeline pieces (1 = plain concurrent)
  count
};
}

enum class StreamPriority { equal, comm_high, compute_high };

struct OverlapShape {
  GemmShape gemm;         // the whole GEMM: row-major A (m x k) times B stored n x k ("t")
  CollectiveShape coll;   // the whole collective
  CollectiveShape piece;  // one of the `chunks` collective pieces (= coll when chunks = 1)
  StreamPriority priority;
  int nccl_ctas;
  int chunks;

  static OverlapShape from(const Point& p, int world_size);
};

// Names of the extra columns, shared by the op and its implementations.
namespace overlap_metric {
inline constexpr const char* t_compute = "t_compute_s";  // GEMM alone (all pieces)
inline constexpr const char* t_comm = "t_comm_s";        // collective alone (all pieces)
inline constexpr const char* t_both = "t_both_s";        // overlapped execution
inline constexpr const char* t_compute_overlap = "t_compute_in_overlap_s";
inline constexpr const char* t_comm_overlap = "t_comm_in_overlap_s";
inline constexpr const char* efficiency = "overlap_efficiency";  // (tc + tm - tb) / min(tc, tm)
inline constexpr const char* compute_slowdown = "compute_slowdown";
inline constexpr const char* comm_slowdown = "comm_slowdown";
}  // namespace overlap_metric

// The derived numbers from the five medians, in extra-column order.
std::vector<std::pair<std::string, double>> overlap_metrics(double t_compute, double t_comm, double t_both,
                                                            double t_compute_overlap, double t_comm_overlap);

// One piece of a collective split into `chunks` equal parts (element counts rounded down).
CollectiveShape collective_piece(const CollectiveShape& whole, int chunks);

const Op& overlap_op();

}  // namespace genbench
