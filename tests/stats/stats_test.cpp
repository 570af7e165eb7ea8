#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>

#include "stats/stats.h"

namespace genbench {
namespace {

TEST(Stats, SummaryOfKnownSamples) {
  const Summary s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.stddev, std::sqrt(2.5), 1e-12);
  EXPECT_DOUBLE_EQ(s.p10, 1.4);
  EXPECT_DOUBLE_EQ(s.p90, 4.6);
  EXPECT_NEAR(s.p99, 4.96, 1e-12);
}

TEST(Stats, EmptyAndSingle) {
  EXPECT_TRUE(std::isnan(summarize({}).median));
  const Summary one = summarize({7});
  EXPECT_DOUBLE_EQ(one.median, 7);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
}

TEST(Stop, StopsAtMaxIterations) {
  TimingPolicy p;
  p.min_iterations = 1;
  p.max_iterations = 4;
  p.min_time_s = 1e9;  // never converges early
  StopCriterion c(p);
  EXPECT_FALSE(c.add(1e-3));
  EXPECT_FALSE(c.add(2e-3));
  EXPECT_FALSE(c.add(1e-3));
  EXPECT_TRUE(c.add(3e-3));
  EXPECT_STREQ(c.reason(), "max_iterations");
}

// Stops on a 1% relative noise of the median, after 5 to 1000 samples, no time floor.
TimingPolicy noise_policy() {
  TimingPolicy p;
  p.min_iterations = 5;
  p.max_iterations = 1000;
  p.min_time_s = 0;
  p.target_rel_noise = 0.01;
  return p;
}

TEST(Stop, ConvergesOnStableSamples) {
  StopCriterion c(noise_policy());
  int n = 0;
  while (!c.add(1e-3 * (1.0 + 0.001 * (n % 3)))) ++n;
  EXPECT_STREQ(c.reason(), "converged");
  EXPECT_EQ(c.samples().size(), 5u);  // the first chance it had
}

TEST(Stop, NoisySamplesNeedMoreIterations) {
  StopCriterion c(noise_policy());
  int n = 0;
  while (!c.add(n % 2 ? 1e-3 : 2e-3)) ++n;
  EXPECT_STREQ(c.reason(), "converged");
  EXPECT_GT(c.samples().size(), 100u);
}

TEST(Stop, MaxTime) {
  TimingPolicy p;
  p.min_iterations = 100;
  p.max_time_s = 0.5;
  StopCriterion c(p);
  EXPECT_FALSE(c.add(0.3));
  EXPECT_TRUE(c.add(0.3));
  EXPECT_STREQ(c.reason(), "max_time");
}

// The running median and standard deviation the criterion uses equal summarize()'s after every
// sample, on a stream with ties, a drift and outliers.
TEST(Stop, RunningStatisticsEqualSummarize) {
  TimingPolicy p;
  p.max_iterations = 100000;
  p.min_time_s = 1e9;
  StopCriterion c(p);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> pick(0, 99);
  for (int i = 0; i < 3000; ++i) {
    const int r = pick(rng);
    const double x = r < 3 ? 1e-2 : 1e-5 * (100 + r % 17) + 1e-9 * i;
    c.add(x);
    const Summary want = summarize(c.samples());
    const Summary got = c.so_far();
    ASSERT_EQ(got.n, want.n);
    ASSERT_EQ(got.median, want.median) << "after " << i + 1 << " samples";
    ASSERT_NEAR(got.mean, want.mean, 1e-12 * want.mean);
    ASSERT_NEAR(got.stddev, want.stddev, 1e-9 * want.stddev + 1e-300);
  }
}

// A point of many short samples that never converges: each sample costs O(log n), so 300000 of
// them take milliseconds (sorting every sample at every step took hours).
TEST(Stop, CostPerSampleStaysFlat) {
  TimingPolicy p;
  p.min_iterations = 1;
  p.max_iterations = 1 << 30;
  p.min_time_s = 0;
  p.max_time_s = 1e30;
  p.target_rel_noise = 0;  // never met: the check runs at every sample
  StopCriterion c(p);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 300000; ++i) ASSERT_FALSE(c.add(i % 2 ? 1e-6 : 2e-6));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 3.0) << "300000 samples took " << s << " s";
  EXPECT_DOUBLE_EQ(c.so_far().median, 1.5e-6);
}

TEST(Warmup, CountThenTime) {
  TimingPolicy p;
  p.warmup = 3;
  EXPECT_FALSE(warmup_done(p, 2, 10.0));
  EXPECT_TRUE(warmup_done(p, 3, 0.0));  // warmup_time 0: the count alone
  p.warmup_time_s = 0.5;
  EXPECT_FALSE(warmup_done(p, 3, 0.4));
  EXPECT_FALSE(warmup_done(p, 2, 0.6));
  EXPECT_TRUE(warmup_done(p, 3, 0.5));
  p.warmup = 0;
  EXPECT_FALSE(warmup_done(p, 0, 0.1));
  EXPECT_TRUE(warmup_done(p, 7, 0.7));
}

}  // namespace
}  // namespace genbench
