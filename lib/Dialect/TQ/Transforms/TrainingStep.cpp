//===- TrainingStep.cpp - a training step from a forward function ---------===//
//
// See the description of tq-training-step in Passes.td. The reverse pass is
// Autodiff.cpp; here are the parameters, the loss and the optimizer.
//
//===----------------------------------------------------------------------===//
#include "tq/Dialect/TQ/Transforms/Autodiff.h"
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Roles.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQTRAININGSTEP
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

namespace {

/// The name of a parameter: its constant's location name (the ONNX
/// initializer), else `param<i>`.
std::string parameterName(arith::ConstantOp c, unsigned i) {
  Location loc = c.getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc);
      fused && !fused.getLocations().empty())
    loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return "param" + std::to_string(i);
}

/// The parameters of `func`: the f32 tensor constants it uses, in program
/// order; only those named in `only` when it is not empty.
SmallVector<arith::ConstantOp> findParameters(func::FuncOp func,
                                              ArrayRef<std::string> only) {
  SmallVector<arith::ConstantOp> constants;
  func.walk([&](arith::ConstantOp c) {
    auto type = dyn_cast<RankedTensorType>(c.getType());
    if (type && type.getElementType().isF32() && type.getNumElements() > 0 &&
        !c.use_empty() &&
        (only.empty() ||
         llvm::is_contained(only, parameterName(c, constants.size()))))
      constants.push_back(c);
  });
  return constants;
}

/// Replaces the parameters of `func` by leading arguments marked
/// `tq.parameter` and `tq.name`; returns the arguments.
SmallVector<Value> promoteParameters(func::FuncOp func,
                                     ArrayRef<std::string> only) {
  SmallVector<arith::ConstantOp> constants = findParameters(func, only);
  Builder b(func.getContext());
  SmallVector<Value> params;
  for (auto [i, c] : llvm::enumerate(constants)) {
    NamedAttribute attrs[] = {
        b.getNamedAttr(kParameterArgAttr, b.getUnitAttr()),
        b.getNamedAttr(kNameArgAttr, b.getStringAttr(parameterName(c, i)))};
    (void)func.insertArgument(i, c.getType(), b.getDictionaryAttr(attrs),
                              c.getLoc());
    Value arg = func.getArgument(i);
    c.getResult().replaceAllUsesWith(arg);
    c.erase();
    params.push_back(arg);
  }
  return params;
}

/// Builds the all-parallel-and-reduction linalg.generic of a loss term.
Value reduceGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                    ArrayRef<AffineMap> maps, RankedTensorType type,
                    double init, ArrayRef<utils::IteratorType> iters,
                    function_ref<Value(OpBuilder &, Location, ValueRange)> f) {
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Value start = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(init));
  Value acc = linalg::FillOp::create(b, loc, start, empty).getResult(0);
  return linalg::GenericOp::create(
             b, loc, type, inputs, acc, maps, iters,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, f(nb, nloc, args));
             })
      .getResult(0);
}

struct Loss {
  Value loss;     // tensor<f32>: the mean cross-entropy
  Value gradient; // dloss/dlogits
};

/// The mean softmax cross-entropy of logits `z` [B, K] against class indices
/// `labels` [B], and its gradient (softmax(z) − onehot(labels)) / B.
Loss emitCrossEntropy(OpBuilder &b, Location loc, Value z, Value labels) {
  auto zType = cast<RankedTensorType>(z.getType());
  int64_t batch = zType.getDimSize(0);
  MLIRContext *ctx = b.getContext();
  AffineExpr i, k;
  bindDims(ctx, i, k);
  AffineMap ik = AffineMap::get(2, 0, {i, k}, ctx),
            iOnly = AffineMap::get(2, 0, {i}, ctx),
            none = AffineMap::get(1, 0, {}, ctx),
            row = AffineMap::get(1, 0, {b.getAffineDimExpr(0)}, ctx);
  using utils::IteratorType;
  SmallVector<IteratorType> rowReduce{IteratorType::parallel,
                                      IteratorType::reduction};
  auto rowType = RankedTensorType::get({batch}, b.getF32Type());
  auto scalarType = RankedTensorType::get({}, b.getF32Type());

  // m = max_k z, s = Σ_k exp(z − m), the label's logit z_y.
  Value m =
      reduceGeneric(b, loc, z, {ik, iOnly}, rowType, -INFINITY, rowReduce,
                    [](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                      return arith::MaximumFOp::create(nb, nloc, a[0], a[1]);
                    });
  Value s = reduceGeneric(
      b, loc, ValueRange{z, m}, {ik, iOnly, iOnly}, rowType, 0.0, rowReduce,
      [](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value e = math::ExpOp::create(
            nb, nloc, arith::SubFOp::create(nb, nloc, a[0], a[1]));
        return arith::AddFOp::create(nb, nloc, a[2], e);
      });
  auto isLabel = [](OpBuilder &nb, Location nloc, Value label) {
    Value kIdx = arith::IndexCastOp::create(
        nb, nloc, nb.getI64Type(), linalg::IndexOp::create(nb, nloc, 1));
    return arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, kIdx,
                                 label);
  };
  Value zy = reduceGeneric(
      b, loc, ValueRange{z, labels}, {ik, iOnly, iOnly}, rowType, 0.0,
      rowReduce, [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value zero =
            arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(0.0));
        Value pick = arith::SelectOp::create(nb, nloc, isLabel(nb, nloc, a[1]),
                                             a[0], zero);
        return arith::AddFOp::create(nb, nloc, a[2], pick);
      });
  // loss = Σ_i (m + log s − z_y) / B
  double invBatch = 1.0 / double(batch);
  Value loss = reduceGeneric(
      b, loc, ValueRange{m, s, zy}, {row, row, row, none}, scalarType, 0.0,
      {IteratorType::reduction},
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value lse = arith::AddFOp::create(nb, nloc, a[0],
                                          math::LogOp::create(nb, nloc, a[1]));
        Value term = arith::MulFOp::create(
            nb, nloc, arith::SubFOp::create(nb, nloc, lse, a[2]),
            arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(invBatch)));
        return arith::AddFOp::create(nb, nloc, a[3], term);
      });
  // dz = (exp(z − m) / s − [k = y]) / B
  Value gInit =
      tensor::EmptyOp::create(b, loc, zType.getShape(), b.getF32Type());
  Value gradient =
      linalg::GenericOp::create(
          b, loc, zType, ValueRange{z, m, s, labels}, gInit,
          ArrayRef<AffineMap>{ik, iOnly, iOnly, iOnly, ik},
          SmallVector<IteratorType>(2, IteratorType::parallel),
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            Value p = arith::DivFOp::create(
                nb, nloc,
                math::ExpOp::create(
                    nb, nloc, arith::SubFOp::create(nb, nloc, a[0], a[1])),
                a[2]);
            Value one =
                arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(1.0));
            Value zero =
                arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(0.0));
            Value hot = arith::SelectOp::create(
                nb, nloc, isLabel(nb, nloc, a[3]), one, zero);
            Value g = arith::MulFOp::create(
                nb, nloc, arith::SubFOp::create(nb, nloc, p, hot),
                arith::ConstantOp::create(nb, nloc,
                                          nb.getF32FloatAttr(invBatch)));
            linalg::YieldOp::create(nb, nloc, g);
          })
          .getResult(0);
  return {loss, gradient};
}

struct TrainingStep : public mlir::tq::impl::TQTrainingStepBase<TrainingStep> {
  using TQTrainingStepBase::TQTrainingStepBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(function);
    if (!forward || forward.isExternal()) {
      mlir::emitError(module.getLoc(), "tq-training-step: no function '")
          << function.getValue() << "' with a body to train";
      return signalPassFailure();
    }
    if (momentum < 0.0 || momentum >= 1.0 || weightDecay < 0.0) {
      mlir::emitError(forward.getLoc(), "tq-training-step: momentum must be "
                                        "in [0, 1) and weight-decay >= 0");
      return signalPassFailure();
    }
    for (StringRef name : {"train_step", "predict", "initial_parameters"})
      if (Operation *existing = module.lookupSymbol(name)) {
        mlir::emitError(existing->getLoc(), "tq-training-step: the module "
                                            "already has a function '")
            << name << "'";
        return signalPassFailure();
      }
    FunctionType type = forward.getFunctionType();
    auto logitsType = type.getNumResults() == 1
                          ? dyn_cast<RankedTensorType>(type.getResult(0))
                          : RankedTensorType();
    if (!logitsType || logitsType.getRank() != 2 ||
        !logitsType.getElementType().isF32() || !logitsType.hasStaticShape() ||
        !forward.getBody().hasOneBlock()) {
      mlir::emitError(forward.getLoc(),
                      "tq-training-step: the forward function must have one "
                      "block and one result, static [batch, classes] f32 "
                      "logits");
      return signalPassFailure();
    }

    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(forward);
    emitInitialParameters(b, forward);
    auto predict = cast<func::FuncOp>(b.clone(*forward));
    predict.setSymName("predict");
    promoteParameters(predict, parameters);
    addEpochArgument(predict);
    b.setInsertionPointAfter(predict);
    auto step = cast<func::FuncOp>(b.clone(*forward));
    step.setSymName("train_step");
    if (failed(buildStep(step)))
      return signalPassFailure();
    if (!keepForward)
      forward.erase();
  }

  /// Appends an i32 argument named `name` and marked `marker`.
  static void addMarkedI32Argument(func::FuncOp func, StringRef marker,
                                   StringRef name) {
    Builder b(func.getContext());
    NamedAttribute attrs[] = {
        b.getNamedAttr(marker, b.getUnitAttr()),
        b.getNamedAttr(kNameArgAttr, b.getStringAttr(name))};
    (void)func.insertArgument(func.getNumArguments(), b.getI32Type(),
                              b.getDictionaryAttr(attrs), func.getLoc());
  }

  /// Appends the epoch (an i32 from 0, marked `tq.epoch`), which the
  /// bit-width schedule keys on (SPEC T8).
  static void addEpochArgument(func::FuncOp func) {
    addMarkedI32Argument(func, kEpochArgAttr, "epoch");
  }

  /// Appends the iteration (an i32 from 0, marked `tq.iteration`), which
  /// stochastic rounding offsets its seeds by.
  static void addIterationArgument(func::FuncOp func) {
    addMarkedI32Argument(func, kIterationArgAttr, "iteration");
  }

  /// `@initial_parameters() -> (params...)`: the forward's parameter values,
  /// where a driver starts training from.
  void emitInitialParameters(OpBuilder &b, func::FuncOp forward) {
    SmallVector<arith::ConstantOp> constants =
        findParameters(forward, parameters);
    SmallVector<Type> types;
    for (arith::ConstantOp c : constants)
      types.push_back(c.getType());
    auto func = func::FuncOp::create(b, forward.getLoc(), "initial_parameters",
                                     b.getFunctionType({}, types));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(func.addEntryBlock());
    SmallVector<Value> values;
    for (arith::ConstantOp c : constants)
      values.push_back(b.clone(*c)->getResult(0));
    func::ReturnOp::create(b, forward.getLoc(), values);
    for (auto [i, c] : llvm::enumerate(constants))
      func.setResultAttr(i, kNameArgAttr, b.getStringAttr(parameterName(c, i)));
  }

  LogicalResult buildStep(func::FuncOp step) {
    SmallVector<Value> params = promoteParameters(step, parameters);
    Block &body = step.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value logits = ret.getOperand(0);
    Location loc = ret.getLoc();
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Builder attrs(ctx);

    // Momenta after the parameters, labels and the learning rate last.
    SmallVector<Value> momenta;
    unsigned numParams = params.size();
    if (momentum != 0.0)
      for (unsigned i = 0; i < numParams; ++i) {
        auto name = step.getArgAttrOfType<StringAttr>(i, kNameArgAttr);
        NamedAttribute a = attrs.getNamedAttr(
            kNameArgAttr, attrs.getStringAttr(name.str() + ".momentum"));
        (void)step.insertArgument(numParams + i, params[i].getType(),
                                  attrs.getDictionaryAttr(a), loc);
        momenta.push_back(step.getArgument(numParams + i));
      }
    // The forward's inputs and the labels hold one sample per row: marked
    // so that tq-cpu-split-batch can share the samples among threads.
    int64_t batch = cast<RankedTensorType>(logits.getType()).getDimSize(0);
    for (BlockArgument a : step.getArguments()) {
      auto t = dyn_cast<RankedTensorType>(a.getType());
      if (!llvm::is_contained(params, a) && !llvm::is_contained(momenta, a) &&
          t && t.getRank() > 0 && t.getDimSize(0) == batch)
        step.setArgAttr(a.getArgNumber(), kBatchArgAttr, attrs.getUnitAttr());
    }
    unsigned end = step.getNumArguments();
    (void)step.insertArgument(
        end, RankedTensorType::get({batch}, attrs.getI64Type()),
        attrs.getDictionaryAttr(
            {attrs.getNamedAttr(kNameArgAttr, attrs.getStringAttr("labels")),
             attrs.getNamedAttr(kBatchArgAttr, attrs.getUnitAttr())}),
        loc);
    (void)step.insertArgument(end + 1,
                              RankedTensorType::get({}, attrs.getF32Type()),
                              attrs.getDictionaryAttr(attrs.getNamedAttr(
                                  kNameArgAttr, attrs.getStringAttr("lr"))),
                              loc);
    addEpochArgument(step);
    addIterationArgument(step);
    Value labels = step.getArgument(end), lr = step.getArgument(end + 1);

    b.setInsertionPoint(ret);
    Loss loss = emitCrossEntropy(b, loc, logits, labels);
    FailureOr<SmallVector<Value>> grads =
        emitGradients(b, body, logits, loss.gradient, params);
    if (failed(grads))
      return failure();

    // v ← μ·v + g + λ·p; p ← p − lr·v (lr read as a 0-d operand: only
    // tensors cross between the PPU and the host).
    SmallVector<Value> newParams, newMomenta;
    for (unsigned i = 0; i < numParams; ++i) {
      auto type = cast<RankedTensorType>(params[i].getType());
      AffineMap id = b.getMultiDimIdentityMap(type.getRank());
      SmallVector<Value> ins{params[i], (*grads)[i], lr};
      if (!momenta.empty())
        ins.push_back(momenta[i]);
      SmallVector<Type> types(momenta.empty() ? 1 : 2, type);
      SmallVector<Value> outs;
      for (Type t : types)
        outs.push_back(tensor::EmptyOp::create(
            b, loc, cast<RankedTensorType>(t).getShape(), b.getF32Type()));
      SmallVector<AffineMap> maps(ins.size() + outs.size(), id);
      maps[2] = AffineMap::get(type.getRank(), 0, {}, ctx);
      auto update = linalg::GenericOp::create(
          b, params[i].getLoc(), types, ins, outs, maps,
          SmallVector<utils::IteratorType>(type.getRank(),
                                           utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            auto cst = [&](double v) {
              return arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(v));
            };
            Value v = a[1];
            if (weightDecay != 0.0)
              v = arith::AddFOp::create(
                  nb, nloc, v,
                  arith::MulFOp::create(nb, nloc, cst(weightDecay), a[0]));
            if (!momenta.empty())
              v = arith::AddFOp::create(
                  nb, nloc,
                  arith::MulFOp::create(nb, nloc, cst(momentum), a[3]), v);
            Value p = arith::SubFOp::create(
                nb, nloc, a[0], arith::MulFOp::create(nb, nloc, a[2], v));
            SmallVector<Value> yielded{p};
            if (!momenta.empty())
              yielded.push_back(v);
            linalg::YieldOp::create(nb, nloc, yielded);
          });
      newParams.push_back(update.getResult(0));
      if (!momenta.empty())
        newMomenta.push_back(update.getResult(1));
    }
    SmallVector<Value> results(newParams);
    results.append(newMomenta);
    results.push_back(loss.loss);
    results.push_back(logits);
    func::ReturnOp::create(b, loc, results);
    ret.erase();
    SmallVector<Type> resultTypes;
    for (Value v : results)
      resultTypes.push_back(v.getType());
    // The results are named like the arguments they update; the logits
    // keep the forward's name (its ONNX output).
    StringAttr logitsName =
        step.getResultAttrOfType<StringAttr>(0, kNameArgAttr);
    step.removeResAttrsAttr();
    step.setFunctionType(
        FunctionType::get(ctx, step.getArgumentTypes(), resultTypes));
    auto name = [&](unsigned i, StringAttr n) {
      if (n)
        step.setResultAttr(i, kNameArgAttr, n);
    };
    unsigned updated = newParams.size() + newMomenta.size();
    for (unsigned i = 0; i < updated; ++i)
      name(i, step.getArgAttrOfType<StringAttr>(i, kNameArgAttr));
    name(updated, attrs.getStringAttr("loss"));
    name(updated + 1, logitsName);
    return success();
  }
};

} // namespace
