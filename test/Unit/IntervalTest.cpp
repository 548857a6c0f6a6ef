//===- IntervalTest.cpp - target iteration intervals (SPEC A6) ------------===//
#include "tq/Runtime/Interval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace tq;

// The intervals below are worked out by hand from the formulas of SPEC A6.
TEST(Interval, FollowsTheMovingAverageOfThePointPositionA6) {
  IntervalOptions o;
  o.alpha = 0.5;
  o.beta = 1.0;
  o.gamma = 1.0;
  o.delta = 0.25;
  o.warmup = 2;
  o.maxInterval = 10;
  UpdateInterval u(o);
  EXPECT_TRUE(u.due(0));
  // Warm-up: every iteration, whatever the change.
  u.recomputed(0, -3.0);
  EXPECT_EQ(u.interval(), 1);
  EXPECT_TRUE(u.due(1));
  u.recomputed(1, -2.0); // m = 0.5 * -2 + 0.5 * -3 = -2.5
  EXPECT_DOUBLE_EQ(u.movingAverage(), -2.5);
  EXPECT_EQ(u.interval(), 1);
  // m = -2.35, diff1 = 0.15: I = floor(1 / 0.15 - 1) = 5.
  u.recomputed(2, -2.2);
  EXPECT_NEAR(u.movingAverage(), -2.35, 1e-12);
  EXPECT_EQ(u.interval(), 5);
  EXPECT_FALSE(u.due(6));
  EXPECT_TRUE(u.due(7));
  // The point position holds (diff1 = 0) but the width moved by 2 bits:
  // diff2 = 0.25 * 4 = 1, I = 1 / 1 - 1 = 0, at least 1.
  u.recomputed(7, -2.35, 2.0);
  EXPECT_EQ(u.interval(), 1);
  // Nothing moves: the longest interval.
  u.recomputed(8, -2.35);
  EXPECT_EQ(u.interval(), 10);
  EXPECT_FALSE(u.due(17));
  EXPECT_TRUE(u.due(18));
  EXPECT_EQ(u.recomputations(), 5);
}

TEST(Interval, LargeChangesGiveOneAndStableTrainingThePeriodA6) {
  IntervalOptions o;
  o.alpha = 1.0;
  o.beta = 0.5;
  o.gamma = 2.0;
  o.warmup = 0;
  o.maxInterval = 50;
  o.stable = 100;
  o.period = 30;
  UpdateInterval u(o);
  u.recomputed(0, 0.0);
  u.recomputed(1, 1.0); // diff1 = 1: 0.5 - 2 < 1
  EXPECT_EQ(u.interval(), 1);
  u.recomputed(2, 1.0625); // diff1 = 1/16: 0.5 * 16 - 2 = 6
  EXPECT_EQ(u.interval(), 6);
  u.recomputed(100, 5.0); // stable: the period, whatever the change
  EXPECT_EQ(u.interval(), 30);
  EXPECT_TRUE(u.due(130));
  EXPECT_FALSE(u.due(129));
}

TEST(Interval, AnIntervalEndsWhereTrainingIsStableA6) {
  IntervalOptions o;
  o.warmup = 0;
  o.maxInterval = 50;
  o.stable = 20;
  o.period = 7;
  UpdateInterval u(o);
  u.recomputed(0, 1.0);
  u.recomputed(1, 1.0); // nothing moves: 50, cut at iteration 20
  EXPECT_EQ(u.interval(), 50);
  EXPECT_FALSE(u.due(19));
  EXPECT_TRUE(u.due(20));
  u.recomputed(20, 1.0);
  EXPECT_EQ(u.interval(), 7);
  EXPECT_TRUE(u.due(27));
  // Stable from the first iteration (tq-train --interval-stable-epoch=1).
  o.stable = 0;
  UpdateInterval v(o);
  v.recomputed(0, 1.0);
  EXPECT_EQ(v.interval(), 7);
}

TEST(Interval, PointPositionOfTheLargestFiniteStep) {
  float inf = std::numeric_limits<float>::infinity();
  float nan = std::numeric_limits<float>::quiet_NaN();
  float steps[] = {0.0f, 0.25f, nan, 0.125f, inf};
  EXPECT_DOUBLE_EQ(pointPosition(steps, 5), -2.0);
  float zeros[] = {0.0f, 0.0f};
  EXPECT_DOUBLE_EQ(pointPosition(zeros, 2), 0.0);
  float one[] = {3.0f};
  EXPECT_DOUBLE_EQ(pointPosition(one, 1), std::log2(3.0));
}
