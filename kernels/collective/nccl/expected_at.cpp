#include "kernels/collective/nccl/expected_at.h"

#include <algorithm>

#include "ops/collective_data.h"

namespace genbench {

namespace {

double reduce_at(const CollectiveShape& s, std::uint64_t seed, std::int64_t i) {
  double acc = collective_input(s, seed, 0, i);
  for (int r = 1; r < s.world; ++r) {
    const double x = collective_input(s, seed, r, i);
    switch (s.redop) {
      case ReduceOp::sum:
      case ReduceOp::avg: acc += x; break;
      case ReduceOp::prod: acc *= x; break;
      case ReduceOp::max: acc = std::max(acc, x); break;
      case ReduceOp::min: acc = std::min(acc, x); break;
    }
  }
  return s.redop == ReduceOp::avg ? acc / s.world : acc;
}

}  // namespace

double collective_expected_at(const CollectiveShape& s, std::uint64_t seed, int rank, std::int64_t i) {
  const int n = s.world;
  switch (s.kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::reduce: return reduce_at(s, seed, i);
    case CollectiveKind::reduce_scatter: return reduce_at(s, seed, static_cast<std::int64_t>(rank) * s.recv_count + i);
    case CollectiveKind::all_gather:
      return collective_input(s, seed, static_cast<int>(i / s.send_count), i % s.send_count);
    case CollectiveKind::all_to_all: {
      const std::int64_t chunk = s.send_count / n;
      return collective_input(s, seed, static_cast<int>(i / chunk), rank * chunk + i % chunk);
    }
    case CollectiveKind::broadcast: return collective_input(s, seed, s.root, i);
    case CollectiveKind::send_recv: return collective_input(s, seed, (rank - 1 + n) % n, i);
  }
  return 0;
}

}  // namespace genbench
