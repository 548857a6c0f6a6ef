//===- Profile.h - time per kernel call -------------------------*- C++ -*-===//
//
// The run-time side of tq-to-cpu's profile option (Profile.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TQ_LIB_EXECUTIONENGINE_PROFILE_H
#define TQ_LIB_EXECUTIONENGINE_PROFILE_H

#include "tq/ExecutionEngine/CPUModule.h"

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace tq::cpu::detail {

/// A module's profile: one entry per kernel call site (the ids the
/// program passes), and when each call in progress started.
struct ProfileState {
  std::vector<ProfileEntry> entries;
  std::vector<int64_t> started;
};

/// Resolves tq_profile_begin and tq_profile_end in `engine`.
void registerProfileSymbols(mlir::ExecutionEngine &engine);

/// Makes `state` receive the times while this object lives.
class ActiveProfile {
public:
  explicit ActiveProfile(ProfileState *state);
  ~ActiveProfile();

private:
  ProfileState *previous;
};

} // namespace tq::cpu::detail

#endif // TQ_LIB_EXECUTIONENGINE_PROFILE_H
