#pragma once
// Per-group row counts of a grouped (mixture-of-experts) GEMM, drawn from a seed as a top-k
// router would assign tokens to experts: every token picks `top_k` distinct experts, expert e
// with weight (e + 1)^-skew (skew 0: uniform; larger: a few experts take most tokens), by the
// Gumbel top-k trick. The sizes sum to tokens * top_k. Header-only and free of the rest of the
// project so standalone device checks use the same draw.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace genbench::grouped {

constexpr double kMaxSkew = 4.0;

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1) from a counter.
inline double uniform01(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t r = splitmix64(seed * 0x100000001B3ull ^ splitmix64(i));
  return (static_cast<double>(r >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

inline std::vector<std::int64_t> routed_group_sizes(std::int64_t groups, std::int64_t tokens, std::int64_t top_k,
                                                    double skew, std::uint64_t seed) {
  if (groups < 1) throw std::invalid_argument("groups must be at least 1");
  if (top_k < 1 || top_k > groups) throw std::invalid_argument("top_k must be from 1 to groups");
  if (!(skew >= 0.0 && skew <= kMaxSkew)) throw std::invalid_argument("skew must be from 0 to 4");
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(groups), 0);
  std::vector<double> logw(static_cast<std::size_t>(groups));
  for (std::int64_t e = 0; e < groups; ++e)
    logw[static_cast<std::size_t>(e)] = -skew * std::log(static_cast<double>(e + 1));
  std::vector<std::pair<double, std::int64_t>> keys(static_cast<std::size_t>(groups));
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t e = 0; e < groups; ++e) {
      const double u = uniform01(seed, static_cast<std::uint64_t>(t * groups + e));
      keys[static_cast<std::size_t>(e)] = {logw[static_cast<std::size_t>(e)] - std::log(-std::log(u)), e};
    }
    std::partial_sort(keys.begin(), keys.begin() + top_k, keys.end(), [](const auto& a, const auto& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    for (std::int64_t i = 0; i < top_k; ++i)
      ++sizes[static_cast<std::size_t>(keys[static_cast<std::size_t>(i)].second)];
  }
  return sizes;
}

// Fixed sizes: `rows` per group.
inline std::vector<std::int64_t> fixed_group_sizes(std::int64_t groups, std::int64_t rows) {
  if (groups < 1) throw std::invalid_argument("groups must be at least 1");
  return std::vector<std::int64_t>(static_cast<std::size_t>(groups), rows);
}

}  // namespace genbench::grouped
