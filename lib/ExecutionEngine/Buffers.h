//===- Buffers.h - MLIR types to CPUModule buffers (internal) ---*- C++ -*-===//
#ifndef TQ_LIB_EXECUTIONENGINE_BUFFERS_H
#define TQ_LIB_EXECUTIONENGINE_BUFFERS_H

#include "tq/ExecutionEngine/CPUModule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Types.h"

namespace tq::cpu::detail {

/// Appends the buffers of one argument or result of type `t`, named `name`
/// (a `!tq.tiled` value is two: data and steps); fails with the reason.
llvm::LogicalResult flatten(mlir::Type t, const std::string &name,
                            std::vector<BufferType> &out, std::string &why);

/// Labels the buffers of `sig` (the flattened signature of `f`) with the
/// `tq.name` of their argument or result: "x", or "x.data" and "x.steps"
/// for a tiled one. Buffers of unnamed values keep an empty label.
void labelBuffers(mlir::func::FuncOp f, Signature &sig);

/// Whether `got` matches `want` in number, element types and shapes (and
/// has data); else says which `what` ("input", "output") buffer differs.
bool checkBuffers(const std::vector<BufferType> &want,
                  const std::vector<Buffer> &got, const char *what,
                  std::string &error);

} // namespace tq::cpu::detail

#endif // TQ_LIB_EXECUTIONENGINE_BUFFERS_H
