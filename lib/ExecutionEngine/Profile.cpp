//===- Profile.cpp - time per kernel call (CompileOptions::profile) -------===//
//
// With tq-to-cpu's profile option, the program calls tq_profile_begin(id)
// and tq_profile_end(id) around each kernel call. The JIT resolves both to
// the functions here, which add the time between them to the entry `id`
// of the module being invoked.
//
//===----------------------------------------------------------------------===//
#include "Profile.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

#include <chrono>

using namespace tq::cpu;

namespace {
/// The profile of the call in progress (calls come from one thread; the
/// kernels' own threads do not call these).
detail::ProfileState *active = nullptr;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
} // namespace

extern "C" void tq_profile_begin(int64_t id) {
  if (active && id >= 0 && size_t(id) < active->started.size())
    active->started[id] = nowNs();
}

extern "C" void tq_profile_end(int64_t id) {
  if (!active || id < 0 || size_t(id) >= active->started.size())
    return;
  ProfileEntry &e = active->entries[id];
  e.seconds += double(nowNs() - active->started[id]) * 1e-9;
  ++e.calls;
}

void detail::registerProfileSymbols(mlir::ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("tq_profile_begin")] = {
        llvm::orc::ExecutorAddr::fromPtr(&tq_profile_begin),
        llvm::JITSymbolFlags::Exported};
    symbols[interner("tq_profile_end")] = {
        llvm::orc::ExecutorAddr::fromPtr(&tq_profile_end),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
}

detail::ActiveProfile::ActiveProfile(ProfileState *state) : previous(active) {
  active = state;
}
detail::ActiveProfile::~ActiveProfile() { active = previous; }
