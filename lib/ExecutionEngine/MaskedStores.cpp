//===- MaskedStores.cpp - one-lane masked stores as stores ----------------===//
//
// See tq/ExecutionEngine/MaskedStores.h.
//
//===----------------------------------------------------------------------===//
#include "tq/ExecutionEngine/MaskedStores.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

#include <optional>

using namespace llvm;

namespace tq::cpu {

/// The one lane a constant mask sets, if it sets exactly one. An undef or
/// poison lane counts as not set (a refinement LLVM's back end makes too,
/// and the miscompile with it).
static std::optional<unsigned> singleLane(Value *mask, unsigned lanes) {
  auto *c = dyn_cast<Constant>(mask);
  if (!c)
    return std::nullopt;
  std::optional<unsigned> lane;
  for (unsigned i = 0; i < lanes; ++i) {
    Constant *element = c->getAggregateElement(i);
    if (element && isa<UndefValue>(element))
      continue;
    auto *bit = dyn_cast_or_null<ConstantInt>(element);
    if (!bit)
      return std::nullopt;
    if (bit->isZero())
      continue;
    if (lane)
      return std::nullopt;
    lane = i;
  }
  return lane;
}

unsigned scalarizeSingleLaneMaskedStores(Module &module) {
  const DataLayout &layout = module.getDataLayout();
  unsigned replaced = 0;
  for (Function &f : module)
    for (BasicBlock &block : f)
      for (Instruction &inst : make_early_inc_range(block)) {
        auto *call = dyn_cast<IntrinsicInst>(&inst);
        if (!call || call->getIntrinsicID() != Intrinsic::masked_store)
          continue;
        // llvm.masked.store(value, ptr, mask), the alignment on ptr.
        Value *value = call->getArgOperand(0), *ptr = call->getArgOperand(1);
        auto *type = dyn_cast<FixedVectorType>(value->getType());
        if (!type)
          continue;
        Type *element = type->getElementType();
        // The lanes of a vector in memory are packed: an element type with
        // padding (i1, i24) is not at its GEP's offset, and is left alone.
        if (layout.getTypeSizeInBits(element) !=
            layout.getTypeAllocSizeInBits(element))
          continue;
        std::optional<unsigned> lane =
            singleLane(call->getArgOperand(2), type->getNumElements());
        if (!lane)
          continue;
        IRBuilder<> b(call);
        uint64_t offset = *lane * layout.getTypeAllocSize(element);
        Value *at = b.CreateConstGEP1_64(element, ptr, *lane);
        b.CreateAlignedStore(
            b.CreateExtractElement(value, b.getInt64(*lane)), at,
            commonAlignment(call->getParamAlign(1).valueOrOne(), offset));
        call->eraseFromParent();
        ++replaced;
      }
  return replaced;
}

} // namespace tq::cpu
