//===- Calibration.cpp - per-layer quantization parameters in JSON --------===//
#include "tq/Dialect/TQ/Transforms/Calibration.h"
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Roles.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQEXPORTCALIBRATION
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;
namespace json = llvm::json;

/// The bit_width record attribute written by tq-adaptive-bit-width.
static constexpr StringLiteral kBitWidthAttr = "tq.bit_width";

const CalibratedLayer *CalibrationTable::lookup(StringRef name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &layers[it->second];
}

static bool isLayerOp(Operation *op) {
  return isa<MatmulOp, Conv2DOp>(op) || succeeded(matchComputeOp(op));
}

llvm::DenseMap<Operation *, std::string> mlir::tq::nameLayers(Operation *root) {
  llvm::DenseMap<Operation *, std::string> names;
  llvm::StringMap<int64_t> ordinals;
  root->walk([&](Operation *op) {
    if (!isLayerOp(op))
      return;
    if (auto name = dyn_cast<NameLoc>(op->getLoc())) {
      names[op] = name.getName().str();
      return;
    }
    auto func = op->getParentOfType<FunctionOpInterface>();
    std::string prefix = func ? func.getName().str() : "";
    names[op] = prefix + "#" + std::to_string(ordinals[prefix]++);
  });
  return names;
}

static std::string print(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

static std::string print(Attribute a) {
  std::string s;
  llvm::raw_string_ostream os(s);
  a.print(os);
  return s;
}

FailureOr<CalibrationTable> mlir::tq::collectCalibration(Operation *root) {
  CalibrationTable table;
  llvm::DenseMap<Operation *, std::string> names = nameLayers(root);
  WalkResult result = root->walk([&](Operation *op) {
    if (!isa<MatmulOp, Conv2DOp>(op))
      return WalkResult::advance();
    CalibratedLayer layer;
    layer.name = names[op];
    layer.op = op->getName().getStringRef().str();
    for (unsigned i = 0; i < 2; ++i) {
      Value v = op->getOperand(i);
      CalibratedOperand c;
      if (!isa<TiledType>(v.getType())) {
        c.isFloat = true;
        layer.operands.push_back(c);
        continue;
      }
      c.type = print(v.getType());
      Operation *def = v.getDefiningOp();
      if (def)
        if (Attribute record = def->getAttr(kBitWidthAttr))
          c.record = print(record);
      if (auto q = dyn_cast_or_null<QuantizeOp>(def); q && q.getBits()) {
        DenseIntElementsAttr widths;
        if (matchPattern(q.getBits(), m_Constant(&widths))) {
          for (const APInt &w : widths.getValues<APInt>())
            c.tileBits.push_back(w.getSExtValue());
        } else if (auto search =
                       q.getBits().getDefiningOp<AdaptiveBitWidthOp>()) {
          c.adaptive = CalibratedOperand::Adaptive{
              search.getLow().convertToDouble(),
              search.getHigh().convertToDouble(),
              static_cast<int64_t>(search.getInit()),
              static_cast<int64_t>(search.getMin()),
              static_cast<int64_t>(search.getMax()),
              static_cast<int64_t>(search.getStep())};
        } else {
          op->emitOpError("operand #")
              << i << " of layer '" << layer.name
              << "' has a run-time width that a calibration file cannot "
                 "describe (only fixed, per-tile and adaptive widths)";
          return WalkResult::interrupt();
        }
      } else if (auto cst = dyn_cast_or_null<ConstantOp>(def)) {
        if (std::optional<DenseIntElementsAttr> widths = cst.getTileBits())
          for (const APInt &w : widths->getValues<APInt>())
            c.tileBits.push_back(w.getSExtValue());
      }
      layer.operands.push_back(c);
    }
    table.byName[layer.name] = table.layers.size();
    table.layers.push_back(std::move(layer));
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  return table;
}

std::string mlir::tq::printCalibration(const CalibrationTable &table) {
  json::Array layers;
  for (const CalibratedLayer &layer : table.layers) {
    json::Array operands;
    for (const CalibratedOperand &c : layer.operands) {
      json::Object o;
      if (c.isFloat) {
        o["float"] = true;
        operands.push_back(std::move(o));
        continue;
      }
      o["type"] = c.type;
      if (!c.tileBits.empty())
        o["tile_bits"] = json::Array(c.tileBits);
      if (c.adaptive)
        o["adaptive"] = json::Object{
            {"low", c.adaptive->low},   {"high", c.adaptive->high},
            {"init", c.adaptive->init}, {"min", c.adaptive->min},
            {"max", c.adaptive->max},   {"step", c.adaptive->step}};
      if (!c.record.empty())
        o["record"] = c.record;
      operands.push_back(std::move(o));
    }
    layers.push_back(json::Object{{"name", layer.name},
                                  {"op", layer.op},
                                  {"operands", std::move(operands)}});
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv(
      "{0:2}",
      json::Value(json::Object{{"version", 1}, {"layers", std::move(layers)}}));
  os << "\n";
  return text;
}

FailureOr<CalibrationTable> mlir::tq::parseCalibration(StringRef text,
                                                       std::string &error) {
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    error = llvm::toString(parsed.takeError());
    return failure();
  }
  auto fail = [&](const Twine &msg) -> FailureOr<CalibrationTable> {
    error = msg.str();
    return failure();
  };
  const json::Object *top = parsed->getAsObject();
  if (!top)
    return fail("expected a JSON object");
  std::optional<int64_t> version = top->getInteger("version");
  if (!version || *version != 1)
    return fail("expected \"version\": 1");
  const json::Array *layers = top->getArray("layers");
  if (!layers)
    return fail("expected a \"layers\" array");
  CalibrationTable table;
  for (auto [li, lv] : llvm::enumerate(*layers)) {
    const json::Object *l = lv.getAsObject();
    std::string where = "layers[" + std::to_string(li) + "]";
    std::optional<StringRef> name = l ? l->getString("name") : std::nullopt;
    std::optional<StringRef> op = l ? l->getString("op") : std::nullopt;
    const json::Array *ops = l ? l->getArray("operands") : nullptr;
    if (!name || !op || !ops || ops->size() != 2)
      return fail(where + ": expected \"name\", \"op\" and two \"operands\"");
    CalibratedLayer layer;
    layer.name = name->str();
    layer.op = op->str();
    for (auto [oi, ov] : llvm::enumerate(*ops)) {
      std::string at = where + ".operands[" + std::to_string(oi) + "]";
      const json::Object *o = ov.getAsObject();
      if (!o)
        return fail(at + ": expected an object");
      CalibratedOperand c;
      if (o->getBoolean("float").value_or(false)) {
        c.isFloat = true;
        layer.operands.push_back(c);
        continue;
      }
      std::optional<StringRef> type = o->getString("type");
      if (!type)
        return fail(at + ": expected a \"type\" string or \"float\": true");
      c.type = type->str();
      if (const json::Array *bits = o->getArray("tile_bits"))
        for (const json::Value &b : *bits) {
          std::optional<int64_t> n = b.getAsInteger();
          if (!n || *n < 2 || *n > 16)
            return fail(at + ": tile_bits must be integers in [2, 16]");
          c.tileBits.push_back(*n);
        }
      if (const json::Object *a = o->getObject("adaptive")) {
        std::optional<double> low = a->getNumber("low"),
                              high = a->getNumber("high");
        std::optional<int64_t> init = a->getInteger("init"),
                               min = a->getInteger("min"),
                               max = a->getInteger("max"),
                               step = a->getInteger("step");
        if (!low || !high || !init || !min || !max || !step)
          return fail(at + ": \"adaptive\" needs low, high, init, min, max "
                           "and step");
        c.adaptive =
            CalibratedOperand::Adaptive{*low, *high, *init, *min, *max, *step};
      }
      if (std::optional<StringRef> record = o->getString("record"))
        c.record = record->str();
      layer.operands.push_back(c);
    }
    if (table.byName.count(layer.name))
      return fail(where + ": duplicate layer name '" + layer.name + "'");
    table.byName[layer.name] = table.layers.size();
    table.layers.push_back(std::move(layer));
  }
  return table;
}

FailureOr<CalibrationTable> mlir::tq::readCalibrationFile(StringRef path,
                                                          Location loc) {
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &error);
  if (!file) {
    emitError(loc) << "cannot read calibration file: " << error;
    return failure();
  }
  FailureOr<CalibrationTable> table =
      parseCalibration(file->getBuffer(), error);
  if (failed(table))
    emitError(loc) << "malformed calibration file '" << path << "': " << error;
  return table;
}

namespace {
struct TQExportCalibrationPass
    : mlir::tq::impl::TQExportCalibrationBase<TQExportCalibrationPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<CalibrationTable> table = collectCalibration(getOperation());
    if (failed(table))
      return signalPassFailure();
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(file, &error);
    if (!out) {
      mlir::emitError(getOperation()->getLoc(),
                      "cannot write calibration file: ")
          << error;
      return signalPassFailure();
    }
    out->os() << printCalibration(*table);
    out->keep();
    markAllAnalysesPreserved();
  }
};
} // namespace
