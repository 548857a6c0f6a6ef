//===- ChooseSplitDims.cpp - roles and split dims of compute ops ----------===//
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Roles.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCHOOSESPLITDIMS
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

namespace {
struct TQChooseSplitDimsPass
    : mlir::tq::impl::TQChooseSplitDimsBase<TQChooseSplitDimsPass> {
  using Base::Base;
  void runOnOperation() override {
    SplitDimsOverrides overrides;
    overrides.activation.assign(actDims.begin(), actDims.end());
    overrides.weight.assign(weightDims.begin(), weightDims.end());
    overrides.gradient.assign(gradDims.begin(), gradDims.end());
    if (failed(annotateRolesAndSplitDims(getOperation(), overrides)))
      signalPassFailure(); // the diagnostic names the op
  }
};
} // namespace
