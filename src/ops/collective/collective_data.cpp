#include "ops/collective/collective_data.h"

#include <algorithm>
#include <cmath>

namespace genbench {

float collective_input(const CollectiveShape& s, std::uint64_t seed, int rank, std::int64_t i) {
  const std::uint64_t h =
      (seed * 2654435761ull) ^ (static_cast<std::uint64_t>(rank) * 40503ull + static_cast<std::uint64_t>(i) * 9973ull);
  const std::uint64_t x = (h ^ (h >> 13)) * 0x9e3779b97f4a7c15ull;
  // fp8 represents integers exactly only up to 16, so its inputs (like prod's) are 1 or 2.
  const bool tiny = s.redop == ReduceOp::prod || s.dtype == DType::fp8_e4m3 || s.dtype == DType::fp8_e5m2;
  if (tiny) return static_cast<float>(1 + ((x >> 33) & 1));
  return static_cast<float>(1 + ((x >> 33) % 8));
}

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
      // Chunk r of my output is chunk `rank` of rank r's input.
      const std::int64_t chunk = s.send_count / n;
      return collective_input(s, seed, static_cast<int>(i / chunk), rank * chunk + i % chunk);
    }
    case CollectiveKind::broadcast: return collective_input(s, seed, s.root, i);
    case CollectiveKind::send_recv: return collective_input(s, seed, (rank - 1 + n) % n, i);  // ring
  }
  return 0;
}

std::vector<double> collective_expected(const CollectiveShape& s, std::uint64_t seed, int rank) {
  std::vector<double> out(static_cast<std::size_t>(s.recv_count));
  for (std::int64_t i = 0; i < s.recv_count; ++i)
    out[static_cast<std::size_t>(i)] = collective_expected_at(s, seed, rank, i);
  return out;
}

std::int64_t count_wrong(const CollectiveShape& s, const std::vector<double>& expected,
                         const std::vector<double>& got) {
  double tol = 0;
  if (s.redop == ReduceOp::avg && is_reduction(s.kind)) tol = s.dtype == DType::fp32 ? 1e-6 : 1e-2;
  std::int64_t wrong = static_cast<std::int64_t>(expected.size() > got.size() ? expected.size() - got.size() : 0);
  for (std::size_t i = 0; i < std::min(expected.size(), got.size()); ++i) {
    const double e = expected[i], g = got[i];
    if (!(std::fabs(g - e) <= tol * std::fabs(e))) ++wrong;
  }
  return wrong;
}

}  // namespace genbench
