//===- Interval.cpp - target iteration intervals (SPEC A6) ----------------===//
#include "tq/Runtime/Interval.h"

#include <algorithm>
#include <cmath>

using namespace tq;

void UpdateInterval::recomputed(int64_t t, double s, double diffBit) {
  ++count;
  double previous = started ? m : s;
  m = started ? options.alpha * s + (1 - options.alpha) * previous : s;
  started = true;
  int64_t interval;
  if (t < options.warmup) {
    interval = 1;
  } else if (options.stable >= 0 && t >= options.stable) {
    interval = std::max<int64_t>(options.period, 1);
  } else {
    double diff1 = std::fabs(m - previous);
    double diff2 = options.delta * diffBit * diffBit;
    double d = std::max(diff1, diff2);
    double target =
        d > 0 ? options.beta / d - options.gamma : double(options.maxInterval);
    interval = target >= double(options.maxInterval)
                   ? options.maxInterval
                   : std::max<int64_t>(1, int64_t(std::floor(target)));
  }
  last = interval;
  next = t + interval;
  if (options.stable >= 0 && t < options.stable)
    next = std::min(next, options.stable);
}

double tq::pointPosition(const float *steps, int64_t n) {
  float largest = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(steps[i]))
      largest = std::max(largest, steps[i]);
  return largest > 0 ? std::log2(double(largest)) : 0.0;
}
