//===- Stream.cpp - ppu programs to and from instruction streams ----------===//
#include "tq/Target/PPUISA/Stream.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::ppu;
namespace sim = ::tq::ppu;

sim::Stream mlir::ppu::toStream(ProgramOp p) {
  sim::Stream s = streamHeader(p);
  for (Operation &op : p.getBody().front())
    if (FailureOr<sim::Instr> i = toInstr(&op); succeeded(i))
      s.code.push_back(*i);
  return s;
}

ProgramOp mlir::ppu::fromStream(OpBuilder &b, Location loc, StringRef name,
                                const sim::Stream &s) {
  const sim::MachineConfig &m = s.machine;
  auto program = ProgramOp::create(b, loc, name, m.V, m.macUnits, m.ubTiles,
                                   m.dataRows, m.accTiles, m.fmemTiles);
  Block *body = new Block();
  program.getBody().push_back(body);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(body);
  for (const sim::Binding &bd : s.bindings) {
    if (bd.isWidth()) {
      WidthInputOp::create(b, loc, bd.name, bd.baseTile);
      continue;
    }
    BindingOp::create(b, loc, bd.name, bd.output,
                      SmallVector<int64_t>(bd.shape.begin(), bd.shape.end()),
                      bd.baseTile);
  }
  for (const sim::ConstTile &c : s.constants) {
    FloatAttr step = c.vectors ? FloatAttr() : b.getF32FloatAttr(c.step);
    DenseFPElementsAttr steps;
    if (c.vectors)
      steps = DenseFPElementsAttr::get(
          RankedTensorType::get({int64_t(c.steps.size())}, b.getF32Type()),
          ArrayRef<float>(c.steps));
    ConstOp::create(b, loc, b.getI32IntegerAttr(c.slot),
                    b.getI32IntegerAttr(c.bits), step,
                    c.vectors == sim::kRowVectors ? b.getUnitAttr() : nullptr,
                    c.vectors == sim::kColVectors ? b.getUnitAttr() : nullptr,
                    steps, b.getDenseI32ArrayAttr(c.values));
  }
  for (const sim::Instr &i : s.code) {
    bool pow2 = i.flags & sim::kPow2, rows = i.flags & sim::kRowVectors,
         cols = i.flags & sim::kColVectors;
    switch (i.op) {
    case sim::Op::Quant:
      QuantOp::create(b, loc, i.dst, i.src, i.bits, pow2, rows, cols);
      break;
    case sim::Op::Load:
      LoadOp::create(b, loc, (i.flags & sim::kLoadB) ? Buffer::b : Buffer::a,
                     i.dst, i.src, bool(i.flags & sim::kTranspose));
      break;
    case sim::Op::Mac:
      MacOp::create(b, loc, i.dst, i.src, i.src2,
                    bool(i.flags & sim::kAccumulate),
                    bool(i.flags & sim::kBF16Product));
      break;
    case sim::Op::Post:
      PostOp::create(b, loc, i.dst, i.src, i.bits, bool(i.flags & sim::kRelu),
                     pow2,
                     (i.flags & sim::kLayerScale) ? b.getF32FloatAttr(i.imm)
                                                  : FloatAttr());
      break;
    case sim::Op::Store:
      StoreOp::create(b, loc, i.dst, i.src);
      break;
    case sim::Op::WUpd:
      WUpdOp::create(b, loc, i.dst, i.src, llvm::APFloat(i.imm), pow2);
      break;
    case sim::Op::Req:
      ReqOp::create(b, loc, i.dst, i.src, i.bits, pow2, rows, cols);
      break;
    case sim::Op::Deq:
      DeqOp::create(b, loc, i.dst, i.src);
      break;
    case sim::Op::Halt:
      HaltOp::create(b, loc);
      break;
    }
  }
  return program;
}
