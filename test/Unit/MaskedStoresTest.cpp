//===- MaskedStoresTest.cpp - single-lane masked stores as plain stores ---===//
#include "tq/ExecutionEngine/MaskedStores.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

using namespace llvm;

namespace {

// Masks: lane 2 of 16 bytes (the form LLVM 22 miscompiles after a
// truncation), lane 1 of 4 floats from a pointer aligned to 16, two lanes,
// a mask known only at run time, and lane 0 of i1s (no address per lane).
constexpr const char *kModule = R"(
declare void @llvm.masked.store.v16i8.p0(<16 x i8>, ptr, <16 x i1>)
declare void @llvm.masked.store.v4f32.p0(<4 x float>, ptr, <4 x i1>)
declare void @llvm.masked.store.v8i1.p0(<8 x i1>, ptr, <8 x i1>)

define void @one_byte(<16 x i32> %x, ptr %p) {
  %t = trunc <16 x i32> %x to <16 x i8>
  call void @llvm.masked.store.v16i8.p0(<16 x i8> %t, ptr align 1 %p, <16 x i1> <i1 false, i1 false, i1 true, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false>)
  ret void
}

define void @one_float(<4 x float> %x, ptr %p) {
  call void @llvm.masked.store.v4f32.p0(<4 x float> %x, ptr align 16 %p, <4 x i1> <i1 false, i1 true, i1 false, i1 false>)
  ret void
}

define void @two_lanes(<4 x float> %x, ptr %p) {
  call void @llvm.masked.store.v4f32.p0(<4 x float> %x, ptr align 4 %p, <4 x i1> <i1 true, i1 true, i1 false, i1 false>)
  ret void
}

define void @run_time(<4 x float> %x, ptr %p, <4 x i1> %m) {
  call void @llvm.masked.store.v4f32.p0(<4 x float> %x, ptr align 4 %p, <4 x i1> %m)
  ret void
}

define void @bits(<8 x i1> %x, ptr %p) {
  call void @llvm.masked.store.v8i1.p0(<8 x i1> %x, ptr align 1 %p, <8 x i1> <i1 true, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false>)
  ret void
}
)";

/// The masked stores and plain stores of function `name`.
struct Stores {
  unsigned masked = 0;
  SmallVector<StoreInst *> plain;
};

Stores storesOf(Module &m, StringRef name) {
  Stores s;
  for (Instruction &inst : instructions(*m.getFunction(name))) {
    if (auto *call = dyn_cast<IntrinsicInst>(&inst))
      s.masked += call->getIntrinsicID() == Intrinsic::masked_store;
    if (auto *store = dyn_cast<StoreInst>(&inst))
      s.plain.push_back(store);
  }
  return s;
}

TEST(MaskedStores, OneLaneBecomesAStoreOfThatElement) {
  LLVMContext context;
  SMDiagnostic error;
  std::unique_ptr<Module> m = parseAssemblyString(kModule, error, context);
  ASSERT_TRUE(m) << error.getMessage().str();

  EXPECT_EQ(tq::cpu::scalarizeSingleLaneMaskedStores(*m), 2u);
  EXPECT_FALSE(verifyModule(*m, &errs()));

  // Lane 2 of the truncated bytes: one i8 extracted from lane 2 and stored
  // 2 bytes past %p, never a wider store.
  Stores bytes = storesOf(*m, "one_byte");
  EXPECT_EQ(bytes.masked, 0u);
  ASSERT_EQ(bytes.plain.size(), 1u);
  StoreInst *b = bytes.plain.front();
  EXPECT_TRUE(b->getValueOperand()->getType()->isIntegerTy(8));
  auto *lane = cast<ExtractElementInst>(b->getValueOperand());
  EXPECT_EQ(cast<ConstantInt>(lane->getIndexOperand())->getZExtValue(), 2u);
  auto *at = cast<GetElementPtrInst>(b->getPointerOperand());
  APInt offset(64, 0);
  ASSERT_TRUE(at->accumulateConstantOffset(m->getDataLayout(), offset));
  EXPECT_EQ(offset.getZExtValue(), 2u);
  EXPECT_EQ(b->getAlign().value(), 1u);

  // Lane 1 of 4 floats 16-aligned: 4 bytes past %p, aligned to 4.
  Stores floats = storesOf(*m, "one_float");
  EXPECT_EQ(floats.masked, 0u);
  ASSERT_EQ(floats.plain.size(), 1u);
  EXPECT_TRUE(floats.plain.front()->getValueOperand()->getType()->isFloatTy());
  EXPECT_EQ(floats.plain.front()->getAlign().value(), 4u);

  // Left alone: two lanes, a mask not known, lanes smaller than a byte.
  for (const char *name : {"two_lanes", "run_time", "bits"}) {
    Stores kept = storesOf(*m, name);
    EXPECT_EQ(kept.masked, 1u) << name;
    EXPECT_TRUE(kept.plain.empty()) << name;
  }
}

} // namespace
