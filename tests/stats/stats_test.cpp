#include <gtest/gtest.h>

#include <cmath>

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
