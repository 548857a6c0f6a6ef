//===- TQTypes.cpp - tiled quantized tensor type --------------------------===//
//
// Verification and helpers of !tq.tiled. The textual form is parsed and
// printed in TypeParser.cpp.
//
//===----------------------------------------------------------------------===//
#include "tq/Dialect/TQ/IR/TQ.h"
#include "tq/Runtime/Quant.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tq;

#define GET_TYPEDEF_CLASSES
#include "tq/Dialect/TQ/IR/TQOpsTypes.cpp.inc"

void TQDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tq/Dialect/TQ/IR/TQOpsTypes.cpp.inc"
      >();
}

std::string mlir::tq::formatDims(ArrayRef<int64_t> v, StringRef sep) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      v, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << '?';
        else
          os << d;
      },
      sep);
  return s;
}

LogicalResult TiledType::verify(function_ref<InFlightDiagnostic()> emitError,
                                ArrayRef<int64_t> shape,
                                IntegerType storageType, BitsKind bitsKind,
                                int64_t bits, FloatType expressedType,
                                ArrayRef<int64_t> tileShape,
                                ArrayRef<int64_t> splitDims,
                                ScaleKind scaleKind, bool hasOffset) {
  int64_t rank = shape.size();
  if (rank < 2)
    return emitError() << "tiled tensor must have rank >= 2, got " << rank;
  for (int64_t d : shape)
    if (!ShapedType::isDynamic(d) && d < 0)
      return emitError() << "dimension sizes must be non-negative, got "
                         << formatDims(shape, "x");
  unsigned width = storageType.getWidth();
  if (!storageType.isSignless() || (width != 4 && width != 8 && width != 16))
    return emitError() << "storage type must be i4, i8 or i16, got "
                       << storageType;
  if (bitsKind == BitsKind::fixed || bits != 0) {
    // A fixed width, or the bound of a run-time one.
    if (bits < 2 || bits > 16)
      return emitError() << "bit width must be in [2, 16], got " << bits;
    if (bits > width)
      return emitError() << "storage type " << storageType
                         << " is narrower than the bit width " << bits;
  }
  if (!expressedType.isF32() && !expressedType.isF16() &&
      !expressedType.isBF16())
    return emitError() << "expressed type must be f32, f16 or bf16, got "
                       << expressedType;
  if (tileShape.size() != 2)
    return emitError() << "tile shape must have 2 sizes, got "
                       << tileShape.size();
  if (tileShape[0] <= 0 || tileShape[1] <= 0)
    return emitError() << "tile sizes must be positive, got "
                       << formatDims(tileShape, "x");
  if (tileShape[0] != tileShape[1] && tileShape[0] != 1 && tileShape[1] != 1)
    return emitError() << "tiles must be square (VxV) or per-vector (1xV, "
                          "Vx1), got "
                       << formatDims(tileShape, "x");
  if (splitDims.size() != 2)
    return emitError() << "expected 2 split dims, got " << splitDims.size();
  for (int64_t d : splitDims)
    if (d < 0 || d >= rank)
      return emitError() << "split dim " << d << " is out of range for rank "
                         << rank;
  if (splitDims[0] == splitDims[1])
    return emitError() << "split dims must be distinct, got ["
                       << formatDims(splitDims, ", ") << "]";
  if (splitDims[0] > splitDims[1])
    return emitError() << "split dims must be in increasing order, got ["
                       << formatDims(splitDims, ", ") << "]";
  (void)scaleKind;
  (void)hasOffset;
  return success();
}

bool TiledType::hasStaticShape() const {
  return llvm::none_of(getShape(), ShapedType::isDynamic);
}

int64_t TiledType::getMaxBits() const {
  if (getBitsKind() == BitsKind::fixed || getBits())
    return getBits();
  return getStorageType().getWidth();
}

int64_t TiledType::getTileExtent(int64_t dim) const {
  for (int k = 0; k < 2; ++k)
    if (getSplitDims()[k] == dim)
      return getTileShape()[k];
  return 1;
}

SmallVector<int64_t> TiledType::getGridShape() const {
  SmallVector<int64_t> grid(getShape());
  for (int k = 0; k < 2; ++k) {
    int64_t &d = grid[getSplitDims()[k]];
    if (!ShapedType::isDynamic(d))
      d = llvm::divideCeil(d, getTileShape()[k]);
  }
  return grid;
}

TiledType TiledType::cloneWith(ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> tileShape,
                               ArrayRef<int64_t> splitDims) const {
  return TiledType::get(getContext(), shape, getStorageType(), getBitsKind(),
                        getBits(), getExpressedType(), tileShape, splitDims,
                        getScaleKind(), getHasOffset());
}

//===----------------------------------------------------------------------===//
// Bridges to the reference numerics
//===----------------------------------------------------------------------===//

::tq::ref::TileLayout mlir::tq::getRefLayout(TiledType type) {
  ::tq::ref::TileLayout layout;
  for (int k = 0; k < 2; ++k) {
    layout.tile[k] = type.getTileShape()[k];
    layout.dims[k] = type.getSplitDims()[k];
  }
  return layout;
}

::tq::ref::QuantForm mlir::tq::getRefForm(TiledType type) {
  using ::tq::ref::QuantForm;
  bool offset = type.getHasOffset();
  switch (type.getScaleKind()) {
  case ScaleKind::f32:
    return offset ? QuantForm::OffsetScaled : QuantForm::Scaled;
  case ScaleKind::pow2:
    return offset ? QuantForm::OffsetPow2 : QuantForm::Pow2;
  case ScaleKind::pow2_f32:
    return offset ? QuantForm::OffsetPow2Scaled : QuantForm::Pow2Scaled;
  }
  llvm_unreachable("unknown scale kind");
}

::tq::ref::Rounding mlir::tq::getRefRounding(RoundingMode mode) {
  using ::tq::ref::Rounding;
  switch (mode) {
  case RoundingMode::nearest_even:
    return Rounding::NearestEven;
  case RoundingMode::up:
    return Rounding::Up;
  case RoundingMode::down:
    return Rounding::Down;
  case RoundingMode::toward_zero:
    return Rounding::TowardZero;
  case RoundingMode::stochastic:
    return Rounding::Stochastic;
  }
  llvm_unreachable("unknown rounding mode");
}
