//===- TypeParser.cpp - !tq.tiled parser and printer ----------------------===//
//
// The grammar is documented on TQ_TiledType in TQTypes.td; each function
// below repeats the production it parses.
//
//===----------------------------------------------------------------------===//
#include "tq/Dialect/TQ/IR/TQ.h"

#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::tq;

/// bound ::= (`(` int `)`)?
static ParseResult parseBound(AsmParser &parser, int64_t &bits) {
  if (failed(parser.parseOptionalLParen()))
    return success();
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseInteger(bits) || parser.parseRParen())
    return failure();
  if (bits == 0) // 0 stands for "no bound" in the type's storage
    return parser.emitError(loc, "bit width must be in [2, 16], got 0");
  return success();
}

/// bits ::= int | `?` bound | `per_tile` bound
static ParseResult parseBits(AsmParser &parser, BitsKind &kind, int64_t &bits) {
  bits = 0;
  if (succeeded(parser.parseOptionalQuestion())) {
    kind = BitsKind::dynamic;
    return parseBound(parser, bits);
  }
  if (succeeded(parser.parseOptionalKeyword("per_tile"))) {
    kind = BitsKind::per_tile;
    return parseBound(parser, bits);
  }
  kind = BitsKind::fixed;
  SMLoc loc = parser.getCurrentLocation();
  OptionalParseResult result = parser.parseOptionalInteger(bits);
  if (!result.has_value())
    return parser.emitError(loc, "expected a bit width: an integer, '?' or "
                                 "'per_tile'");
  return *result;
}

/// scale-kind ::= `f32` | `pow2` | `pow2_f32`
static ParseResult parseScaleKind(AsmParser &parser, ScaleKind &kind) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<ScaleKind> k = symbolizeScaleKind(word);
  if (!k)
    return parser.emitError(loc, "unknown scale kind '")
           << word << "'; expected f32, pow2 or pow2_f32";
  kind = *k;
  return success();
}

/// tiled-type ::= `<` shape `x` storage `:` bits `,` float-type
///                `,` `tile` `=` int `x` int `,` `dims` `=` `[` int `,` int `]`
///                (`,` `scale` `=` scale-kind)? (`,` `offset`)? `>`
Type TiledType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape, tile;
  IntegerType storage;
  FloatType expressed;
  BitsKind bitsKind;
  int64_t bits;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true))
    return {};
  SMLoc storageLoc = parser.getCurrentLocation();
  Type storageType;
  if (parser.parseType(storageType))
    return {};
  storage = dyn_cast<IntegerType>(storageType);
  if (!storage) {
    parser.emitError(storageLoc, "expected an integer storage type, got ")
        << storageType;
    return {};
  }
  if (parser.parseColon() || parseBits(parser, bitsKind, bits) ||
      parser.parseComma())
    return {};
  SMLoc exprLoc = parser.getCurrentLocation();
  Type exprType;
  if (parser.parseType(exprType))
    return {};
  expressed = dyn_cast<FloatType>(exprType);
  if (!expressed) {
    parser.emitError(exprLoc, "expected a float expressed type, got ")
        << exprType;
    return {};
  }
  int64_t d0, d1;
  if (parser.parseComma() || parser.parseKeyword("tile") ||
      parser.parseEqual() ||
      parser.parseDimensionList(tile, /*allowDynamic=*/false,
                                /*withTrailingX=*/false) ||
      parser.parseComma() || parser.parseKeyword("dims") ||
      parser.parseEqual() || parser.parseLSquare() || parser.parseInteger(d0) ||
      parser.parseComma() || parser.parseInteger(d1) || parser.parseRSquare())
    return {};
  ScaleKind scaleKind = ScaleKind::f32;
  bool hasOffset = false;
  while (succeeded(parser.parseOptionalComma())) {
    if (succeeded(parser.parseOptionalKeyword("offset"))) {
      hasOffset = true;
      continue;
    }
    if (parser.parseKeyword("scale",
                            " or 'offset' after ',' in a !tq.tiled type") ||
        parser.parseEqual() || parseScaleKind(parser, scaleKind))
      return {};
  }
  if (parser.parseGreater())
    return {};
  int64_t dims[2] = {d0, d1};
  return parser.getChecked<TiledType>(
      loc, parser.getContext(), ArrayRef<int64_t>(shape), storage, bitsKind,
      bits, expressed, ArrayRef<int64_t>(tile), ArrayRef<int64_t>(dims),
      scaleKind, hasOffset);
}

void TiledType::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printDimensionList(getShape());
  printer << 'x' << getStorageType() << ':';
  switch (getBitsKind()) {
  case BitsKind::fixed:
    printer << getBits();
    break;
  case BitsKind::dynamic:
    printer << '?';
    break;
  case BitsKind::per_tile:
    printer << "per_tile";
    break;
  }
  if (getBitsKind() != BitsKind::fixed && getBits())
    printer << '(' << getBits() << ')';
  printer << ", " << getExpressedType() << ", tile = " << getTileShape()[0]
          << 'x' << getTileShape()[1] << ", dims = [" << getSplitDims()[0]
          << ", " << getSplitDims()[1]
          << "], scale = " << stringifyScaleKind(getScaleKind());
  if (getHasOffset())
    printer << ", offset";
  printer << '>';
}
