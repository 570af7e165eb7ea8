#pragma once
#include <cstddef>
#include <vector>

namespace genbench {

struct Summary {
  std::size_t n = 0;
  double mean = 0, median = 0, stddev = 0, min = 0, max = 0, p10 = 0, p90 = 0, p99 = 0;
};

// Percentile by linear interpolation between order statistics (q in [0, 1]).
double percentile_sorted(const std::vector<double>& sorted, double q);
Summary summarize(std::vector<double> samples);

// When to stop iterating a point. Evaluated on the slowest-rank samples, which every rank
// holds identically, so every rank stops after the same iteration.
struct TimingPolicy {
  int warmup = 3;
  // Warm-up also runs until this many seconds have passed (0: the count alone). A few launches
  // leave the GPU in whatever clock and power state the previous work left it; under seconds
  // of sustained load an H200 settles ~1.5% slower at fp8 attention (docs/lab/fa3-v10-v12.md, fa3 v12).
  double warmup_time_s = 0;
  int min_iterations = 10;
  int max_iterations = 1000;
  double min_time_s = 0.05;        // sum of timed samples before an early stop is allowed
  double max_time_s = 5.0;         // hard stop for one point
  double target_rel_noise = 0.01;  // stop once the median's relative standard error is below this
  // run() calls back to back between a sample's timer start and stop; the sample is divided
  // by it (and by Case::iterations_per_run()), so samples stay per iteration.
  int launches_per_sample = 1;
  // Seconds between device-state samples during the timed iterations (runner/state_monitor.h);
  // 0: sampled just before and after them only.
  double state_period_s = 0.02;
  // A point timed while any rank's card was held back (power cap, thermal or hardware
  // slowdown, power brake: clocks_event::kHolding) is timed again after cooldown_s of rest, up
  // to retime_held times; one still held after them is kept and flagged (its throttled column).
  int retime_held = 2;
  double cooldown_s = 5.0;
  // cold: the L2 cache is flushed before every timed sample (Backend::flush_cache, outside the
  // timed region), so each sample reads its operands from memory; hot: left as the previous
  // sample left it.
  bool cold_cache = false;
  // Rounds: the benchmark's points run this many times, each round in its own shuffled order
  // (sweep/sweep.h, round_order), so that a slow spell of the card or a neighbour falls on
  // different points each round; every round of a point is its own row of the file.
  int rounds = 1;
};

// Whether warm-up is over after `done` launches that took `elapsed_s` seconds.
bool warmup_done(const TimingPolicy& p, int done, double elapsed_s);

// Relative standard error of the median: 1.2533 * stddev / (sqrt(n) * median).
double median_rel_error(const Summary& s);

class StopCriterion {
 public:
  explicit StopCriterion(const TimingPolicy& p) : policy_(p) {}
  // Add one sample (seconds); returns true when the point should stop.
  bool add(double seconds);
  const std::vector<double>& samples() const { return samples_; }
  // Why it stopped: "converged", "max_iterations", "max_time".
  const char* reason() const { return reason_; }
  // n, mean, median and stddev of the samples so far (the other fields 0), kept as they come
  // in: O(log n) per sample, where sorting them all at every sample made a point of n samples
  // cost O(n^2 log n).
  Summary so_far() const;

 private:
  TimingPolicy policy_;
  std::vector<double> samples_;
  std::vector<double> low_;   // max-heap: the lower half, one more than high_ when n is odd
  std::vector<double> high_;  // min-heap: the upper half
  double mean_ = 0, m2_ = 0;  // Welford: running mean and sum of squared deviations
  double total_ = 0;
  const char* reason_ = "";
};

}  // namespace genbench
