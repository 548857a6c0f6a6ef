//===- TQDialect.cpp - tile-quant dialect registration --------------------===//
#include "tq/Dialect/TQ/IR/TQ.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tq;

#include "tq/Dialect/TQ/IR/TQEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tq/Dialect/TQ/IR/TQAttrs.cpp.inc"

#include "tq/Dialect/TQ/IR/TQOpsDialect.cpp.inc"

void TQDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "tq/Dialect/TQ/IR/TQOps.cpp.inc"
      >();
}

void TQDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tq/Dialect/TQ/IR/TQAttrs.cpp.inc"
      >();
}
