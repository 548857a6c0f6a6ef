//===- PPUOps.cpp - PPU instruction-level dialect -------------------------===//
#include "tq/Dialect/PPU/IR/PPU.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ppu;
namespace sim = ::tq::ppu;

#include "tq/Dialect/PPU/IR/PPUOpsDialect.cpp.inc"
#include "tq/Dialect/PPU/IR/PPUOpsEnums.cpp.inc"

void PPUDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tq/Dialect/PPU/IR/PPUOps.cpp.inc"
      >();
}

sim::MachineConfig mlir::ppu::getMachine(ProgramOp p) {
  sim::MachineConfig m;
  m.V = p.getV();
  m.macUnits = p.getMac();
  m.ubTiles = p.getUb();
  m.dataRows = p.getRows();
  m.accTiles = p.getAcc();
  m.fmemTiles = p.getFmem();
  return m;
}

FailureOr<sim::Instr> mlir::ppu::toInstr(Operation *op) {
  using sim::Instr;
  using sim::Op;
  return TypeSwitch<Operation *, FailureOr<Instr>>(op)
      .Case([](QuantOp o) {
        return Instr{Op::Quant,
                     uint8_t((o.getPow2() ? sim::kPow2 : 0) |
                             (o.getRowVectors() ? sim::kRowVectors : 0) |
                             (o.getColVectors() ? sim::kColVectors : 0)),
                     uint16_t(o.getBits()), o.getDst(), o.getSrc()};
      })
      .Case([](LoadOp o) {
        return Instr{Op::Load,
                     uint8_t((o.getBuffer() == Buffer::b ? sim::kLoadB : 0) |
                             (o.getTranspose() ? sim::kTranspose : 0)),
                     0, o.getDst(), o.getSrc()};
      })
      .Case([](MacOp o) {
        return Instr{Op::Mac,
                     uint8_t((o.getAccumulate() ? sim::kAccumulate : 0) |
                             (o.getBf16() ? sim::kBF16Product : 0)),
                     0,
                     o.getDst(),
                     o.getA(),
                     o.getB()};
      })
      .Case([](PostOp o) {
        Instr i{Op::Post,
                uint8_t((o.getRelu() ? sim::kRelu : 0) |
                        (o.getPow2() ? sim::kPow2 : 0) |
                        (o.getLayerScale() ? sim::kLayerScale : 0)),
                uint16_t(o.getBits()), o.getDst(), o.getSrc()};
        if (std::optional<llvm::APFloat> s = o.getLayerScale())
          i.imm = s->convertToFloat();
        return i;
      })
      .Case([](StoreOp o) {
        return Instr{Op::Store, 0, 0, o.getDst(), o.getSrc()};
      })
      .Case([](WUpdOp o) {
        Instr i{Op::WUpd, uint8_t(o.getPow2() ? sim::kPow2 : 0), 0, o.getDst(),
                o.getSrc()};
        i.imm = o.getLr().convertToFloat();
        return i;
      })
      .Case([](ReqOp o) {
        return Instr{Op::Req,
                     uint8_t((o.getPow2() ? sim::kPow2 : 0) |
                             (o.getRowVectors() ? sim::kRowVectors : 0) |
                             (o.getColVectors() ? sim::kColVectors : 0)),
                     uint16_t(o.getBits()), o.getDst(), o.getSrc()};
      })
      .Case([](DeqOp o) {
        return Instr{Op::Deq, 0, 0, o.getDst(), o.getSrc()};
      })
      .Case([](HaltOp) { return Instr{Op::Halt}; })
      .Default([](Operation *) { return failure(); });
}

sim::Stream mlir::ppu::streamHeader(ProgramOp p) {
  sim::Stream s;
  s.machine = getMachine(p);
  for (Operation &op : p.getBody().front()) {
    if (auto b = dyn_cast<BindingOp>(op)) {
      sim::Binding bd;
      bd.output = b.getOutput();
      bd.name = b.getName().str();
      for (int64_t d : b.getShape())
        bd.shape.push_back(d < 0 || d > (int64_t(1) << 24) ? 0 : uint32_t(d));
      bd.baseTile = b.getBase();
      s.bindings.push_back(bd);
      continue;
    }
    if (auto w = dyn_cast<WidthInputOp>(op)) {
      sim::Binding bd;
      bd.name = w.getName().str();
      bd.baseTile = w.getReg();
      s.bindings.push_back(bd);
      continue;
    }
    if (auto c = dyn_cast<ConstOp>(op)) {
      s.constants.push_back(c.getConstTile());
      continue;
    }
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Verifiers: the simulator's own rules
//===----------------------------------------------------------------------===//

LogicalResult ProgramOp::verify() {
  auto fits = [](uint64_t v, uint64_t max) { return v <= max; };
  if (!fits(getV(), 65535) || !fits(getMac(), 65535) ||
      !fits(getRows(), 65535) || !fits(getAcc(), 65535))
    return emitOpError("machine parameters out of range");
  std::string why = sim::verifyMachine(getMachine(*this));
  if (!why.empty())
    return emitOpError(why);
  return success();
}

LogicalResult ProgramOp::verifyRegions() {
  // Instructions verify themselves, with their location.
  sim::Stream s = streamHeader(*this);
  std::string error;
  if (!sim::validate(s, error))
    return emitOpError(error);
  return success();
}

/// Checks an instruction op against its program's machine.
static LogicalResult verifyInstruction(Operation *op) {
  auto program = op->getParentOfType<ProgramOp>();
  FailureOr<sim::Instr> i = toInstr(op);
  if (!program || failed(i))
    return success(); // HasParent reports a missing program
  if (op->getAttrOfType<IntegerAttr>("bits") &&
      op->getAttrOfType<IntegerAttr>("bits").getInt() > 65535)
    return op->emitOpError("bit width out of range");
  std::string why = sim::verifyInstr(*i, getMachine(program));
  if (!why.empty())
    return op->emitOpError(why);
  return success();
}

LogicalResult QuantOp::verify() { return verifyInstruction(*this); }
LogicalResult LoadOp::verify() { return verifyInstruction(*this); }
LogicalResult MacOp::verify() { return verifyInstruction(*this); }
LogicalResult PostOp::verify() { return verifyInstruction(*this); }
LogicalResult StoreOp::verify() { return verifyInstruction(*this); }
LogicalResult WUpdOp::verify() { return verifyInstruction(*this); }
LogicalResult ReqOp::verify() { return verifyInstruction(*this); }
LogicalResult DeqOp::verify() { return verifyInstruction(*this); }

sim::ConstTile ConstOp::getConstTile() {
  sim::ConstTile t;
  t.slot = getSlot();
  t.bits = getBits() > 65535 ? 0 : uint16_t(getBits());
  t.vectors = getRows() ? sim::kRowVectors : getCols() ? sim::kColVectors : 0;
  if (std::optional<APFloat> step = getStep())
    t.step = step->convertToFloat();
  if (std::optional<DenseElementsAttr> steps = getSteps())
    for (const APFloat &step : steps->getValues<APFloat>())
      t.steps.push_back(step.convertToFloat());
  t.values.assign(getValues().begin(), getValues().end());
  return t;
}

LogicalResult ConstOp::verify() {
  if (getRows() && getCols())
    return emitOpError("has a step per row or per column, not both");
  bool vectors = getRows() || getCols();
  if (vectors != getSteps().has_value() || vectors == getStep().has_value())
    return emitOpError(vectors ? "with rows or cols needs `steps` (one per "
                                 "vector) and no `step`"
                               : "without rows or cols needs one `step` and "
                                 "no `steps`");
  auto program = (*this)->getParentOfType<ProgramOp>();
  if (!program)
    return success();
  sim::Stream s;
  s.machine = getMachine(program);
  s.constants.push_back(getConstTile());
  std::string error;
  if (!sim::validate(s, error))
    return emitOpError(error);
  return success();
}
LogicalResult HaltOp::verify() { return verifyInstruction(*this); }

/// `bits`: a width, or `w<r>` for width register r (sim::kBitsRegister).
static ParseResult parseBits(OpAsmParser &parser, IntegerAttr &bits) {
  std::string reg;
  Builder &b = parser.getBuilder();
  SMLoc at = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeywordOrString(&reg))) {
    unsigned r;
    if (reg.size() < 2 || reg[0] != 'w' ||
        StringRef(reg).drop_front().getAsInteger(10, r) || r > 0xff)
      return parser.emitError(at, "expected a bit width or a width register "
                                  "'w<N>', got '")
             << reg << "'";
    bits = b.getI32IntegerAttr(sim::kBitsRegister | r);
    return success();
  }
  int32_t v;
  if (parser.parseInteger(v))
    return failure();
  bits = b.getI32IntegerAttr(v);
  return success();
}

static void printBits(OpAsmPrinter &p, Operation *, IntegerAttr bits) {
  int64_t v = bits.getInt();
  if (v >= 0 && v <= 0xffff && sim::isWidthRegister(uint16_t(v)))
    p << "w" << (v & 0xff);
  else
    p << v;
}

#define GET_OP_CLASSES
#include "tq/Dialect/PPU/IR/PPUOps.cpp.inc"

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto program =
      symbols.lookupNearestSymbolFrom<ProgramOp>(*this, getKernelAttr());
  if (!program)
    return emitOpError("'") << getKernel() << "' is not a ppu.program";
  // Binding argI / resultI for each operand / result, with its shape; a
  // width input argI for a tensor<i32> operand.
  llvm::StringMap<BindingOp> bindings;
  llvm::StringMap<WidthInputOp> widths;
  for (auto b : program.getBody().front().getOps<BindingOp>())
    bindings[b.getName()] = b;
  for (auto w : program.getBody().front().getOps<WidthInputOp>())
    widths[w.getName()] = w;
  auto check = [&](StringRef kind, unsigned i, Type type) -> LogicalResult {
    std::string name = (kind + Twine(i)).str();
    auto tensor = cast<RankedTensorType>(type);
    if (kind == "arg" && widths.count(name)) {
      if (tensor.getRank() != 0 || !tensor.getElementType().isInteger(32))
        return emitOpError("'")
               << name << "' of '" << getKernel()
               << "' is a width input (tensor<i32>), not " << type;
      return success();
    }
    auto it = bindings.find(name);
    if (it == bindings.end() || it->second.getOutput() != (kind == "result"))
      return emitOpError("'") << getKernel() << "' has no "
                              << (kind == "result" ? "output" : "input")
                              << " binding '" << name << "'";
    if (tensor.getShape() != it->second.getShape() ||
        !tensor.getElementType().isF32())
      return emitOpError("binding '")
             << name << "' of '" << getKernel() << "' is "
             << "[" << it->second.getShape() << "] f32, not " << type;
    return success();
  };
  for (auto [i, v] : llvm::enumerate(getArgs()))
    if (failed(check("arg", i, v.getType())))
      return failure();
  for (auto [i, v] : llvm::enumerate(getResults()))
    if (failed(check("result", i, v.getType())))
      return failure();
  unsigned expected = getArgs().size() + getResults().size();
  if (bindings.size() + widths.size() != expected)
    return emitOpError("'")
           << getKernel() << "' has " << bindings.size() + widths.size()
           << " bindings, the launch passes " << expected;
  return success();
}
