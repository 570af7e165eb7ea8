#pragma once
// collective: one NCCL-style collective over all ranks. "bytes" follows nccl-tests: the
// total output of all_gather, the total input of reduce_scatter, the per-rank buffer of
// all_to_all, and the buffer size of the others.
#include <cstdint>
#include <string>

#include "ops/dtype.h"
#include "ops/op.h"

namespace genbench {

namespace collective_axis {
enum : std::size_t { collective, bytes, dtype, redop, in_place, root, mode, count };
}

enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv };
enum class ReduceOp { sum, prod, max, min, avg };

struct CollectiveShape {
  CollectiveKind kind;
  std::int64_t bytes;  // as requested
  DType dtype;
  ReduceOp redop;
  bool in_place;
  int root;
  bool graph;
  int world;
  // Element counts after rounding down so every rank gets a whole number of elements.
  std::int64_t send_count;  // elements in each rank's send buffer
  std::int64_t recv_count;  // elements in each rank's receive buffer

  static CollectiveShape from(const Point& p, int world_size);
  double size_bytes() const;    // nccl-tests "size" after rounding
  double busbw_factor() const;  // nccl-tests' factor from algbw to busbw
};

const char* collective_name(CollectiveKind k);
// all_reduce, reduce and reduce_scatter combine values with the reduction op.
bool is_reduction(CollectiveKind k);
const Op& collective_op();

}  // namespace genbench
