//===- Interval.h - target iteration intervals (SPEC A6) --------*- C++ -*-===//
//
// Plain C++. During training, an operand's quantization parameters are kept
// for a target iteration interval and recomputed when it ends (SPEC A6).
// With s(t) the point position of the parameters recomputed at iteration t
// and m the moving average of the point positions at recomputations:
//
//   m(t)  = alpha * s(t) + (1 - alpha) * m(previous recomputation)
//   diff1 = |m(t) - m(previous)|,   diff2 = delta * diff_bit^2
//   I     = beta / max(diff1, diff2) - gamma, in [1, maxInterval]
//
// (I = maxInterval when both differences are 0). The parameters are
// recomputed every iteration during the first `warmup` iterations, and once
// every `period` iterations from iteration `stable` on (when training is
// stable: an epoch, for tq-train); an interval chosen before `stable` ends
// there.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_RUNTIME_INTERVAL_H
#define TQ_RUNTIME_INTERVAL_H

#include <cstdint>

namespace tq {

/// The hyper-parameters of SPEC A6; the defaults are documented in
/// docs/Training.md.
struct IntervalOptions {
  double alpha = 0.1;
  double beta = 0.02;
  double gamma = 1.0;
  double delta = 0.01;
  int64_t warmup = 50;
  int64_t maxInterval = 100;
  /// From this iteration on, the interval is `period` (negative: never).
  int64_t stable = -1;
  int64_t period = 1;
};

/// One operand's interval: when its parameters are due, and the counts.
class UpdateInterval {
public:
  explicit UpdateInterval(const IntervalOptions &options) : options(options) {}

  /// Whether iteration `t` (from 0, increasing) recomputes the parameters.
  bool due(int64_t t) const { return t >= next; }
  /// Records that iteration `t` recomputed them, with point position `s`
  /// and `diffBit` the change of the bit width since the last time (0 for
  /// a fixed width); sets the next iteration that recomputes them.
  void recomputed(int64_t t, double s, double diffBit = 0);

  /// The interval chosen at the last recomputation.
  int64_t interval() const { return last; }
  int64_t recomputations() const { return count; }
  double movingAverage() const { return m; }

private:
  IntervalOptions options;
  int64_t next = 0, last = 1, count = 0;
  double m = 0;
  bool started = false;
};

/// The point position of a set of per-tile steps: log2 of the largest, the
/// one that bounds the operand's range; 0 when every step is 0.
double pointPosition(const float *steps, int64_t n);

} // namespace tq

#endif // TQ_RUNTIME_INTERVAL_H
