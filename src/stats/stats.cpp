#include "stats/stats.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace genbench {

double percentile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) return std::nan("");
  const double pos = q * static_cast<double>(s.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, s.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return s[lo] + (s[hi] - s[lo]) * frac;
}

Summary summarize(std::vector<double> v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) {
    s.mean = s.median = s.stddev = s.min = s.max = s.p10 = s.p90 = s.p99 = std::nan("");
    return s;
  }
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(sq / static_cast<double>(v.size() - 1)) : 0.0;
  s.median = percentile_sorted(v, 0.5);
  s.p10 = percentile_sorted(v, 0.10);
  s.p90 = percentile_sorted(v, 0.90);
  s.p99 = percentile_sorted(v, 0.99);
  return s;
}

double median_rel_error(const Summary& s) {
  if (s.n < 2 || !(s.median > 0)) return INFINITY;
  return 1.2533 * s.stddev / (std::sqrt(static_cast<double>(s.n)) * s.median);
}

bool warmup_done(const TimingPolicy& p, int done, double elapsed_s) {
  return done >= p.warmup && elapsed_s >= p.warmup_time_s;
}

Summary StopCriterion::so_far() const {
  Summary s;
  s.n = samples_.size();
  s.mean = mean_;
  s.stddev = s.n > 1 ? std::sqrt(m2_ / static_cast<double>(s.n - 1)) : 0.0;
  if (s.n == 0) return s;
  // as percentile_sorted(sorted, 0.5) computes it, to the last bit
  s.median = low_.size() > high_.size() ? low_.front() : low_.front() + (high_.front() - low_.front()) * 0.5;
  return s;
}

bool StopCriterion::add(double seconds) {
  samples_.push_back(seconds);
  total_ += seconds;
  const double d = seconds - mean_;
  mean_ += d / static_cast<double>(samples_.size());
  m2_ += d * (seconds - mean_);
  // Into the lower half when it belongs there, then move one across to keep the halves even.
  if (low_.empty() || seconds <= low_.front()) {
    low_.push_back(seconds);
    std::push_heap(low_.begin(), low_.end());
  } else {
    high_.push_back(seconds);
    std::push_heap(high_.begin(), high_.end(), std::greater<>());
  }
  if (low_.size() > high_.size() + 1) {
    std::pop_heap(low_.begin(), low_.end());
    high_.push_back(low_.back());
    low_.pop_back();
    std::push_heap(high_.begin(), high_.end(), std::greater<>());
  } else if (high_.size() > low_.size()) {
    std::pop_heap(high_.begin(), high_.end(), std::greater<>());
    low_.push_back(high_.back());
    high_.pop_back();
    std::push_heap(low_.begin(), low_.end());
  }
  const int n = static_cast<int>(samples_.size());
  if (n >= policy_.max_iterations) {
    reason_ = "max_iterations";
    return true;
  }
  if (total_ >= policy_.max_time_s && n >= 1) {
    reason_ = "max_time";
    return true;
  }
  if (n >= policy_.min_iterations && total_ >= policy_.min_time_s) {
    if (median_rel_error(so_far()) <= policy_.target_rel_noise) {
      reason_ = "converged";
      return true;
    }
  }
  return false;
}

}  // namespace genbench
