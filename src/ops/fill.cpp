#include "ops/fill.h"

#include <cmath>

namespace genbench {

namespace {
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
double unit(std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
}  // namespace

float random_normal(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t a = splitmix64(seed ^ splitmix64(2 * i));
  const std::uint64_t b = splitmix64(seed ^ splitmix64(2 * i + 1));
  // Box-Muller
  const double r = std::sqrt(-2.0 * std::log(unit(a)));
  return static_cast<float>(r * std::cos(6.283185307179586 * unit(b)));
}

void fill_random(std::vector<float>& v, std::uint64_t seed, DType t, float scale) {
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = round_to(t, scale * random_normal(seed, i));
}

}  // namespace genbench
