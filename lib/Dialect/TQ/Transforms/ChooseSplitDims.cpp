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
  void runOnOperation() override {
    if (failed(annotateRolesAndSplitDims(getOperation())))
      signalPassFailure(); // the diagnostic names the op
  }
};
} // namespace
