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
// truncation), lane 1 of 4 floats from a pointer aligned to 16, lane 3 of
// 4 bytes with poison and undef lanes, two lanes, a mask known only at run
// time, lane 0 of i1s (no address per lane) and lane 1 of i24s (3 bytes
// apart in the vector, 4 as an array).
constexpr const char *kModule = R"(
declare void @llvm.masked.store.v16i8.p0(<16 x i8>, ptr, <16 x i1>)
declare void @llvm.masked.store.v4f32.p0(<4 x float>, ptr, <4 x i1>)
declare void @llvm.masked.store.v8i1.p0(<8 x i1>, ptr, <8 x i1>)
declare void @llvm.masked.store.v4i8.p0(<4 x i8>, ptr, <4 x i1>)
declare void @llvm.masked.store.v4i24.p0(<4 x i24>, ptr, <4 x i1>)

define void @one_byte(<16 x i32> %x, ptr %p) {
  %t = trunc <16 x i32> %x to <16 x i8>
  call void @llvm.masked.store.v16i8.p0(<16 x i8> %t, ptr align 1 %p, <16 x i1> <i1 false, i1 false, i1 true, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false>)
  ret void
}

define void @one_float(<4 x float> %x, ptr %p) {
  call void @llvm.masked.store.v4f32.p0(<4 x float> %x, ptr align 16 %p, <4 x i1> <i1 false, i1 true, i1 false, i1 false>)
  ret void
}

define void @undef_lanes(<4 x i32> %x, ptr %p) {
  %t = trunc <4 x i32> %x to <4 x i8>
  call void @llvm.masked.store.v4i8.p0(<4 x i8> %t, ptr align 4 %p, <4 x i1> <i1 poison, i1 false, i1 undef, i1 true>)
  ret void
}

define void @padded(<4 x i24> %x, ptr %p) {
  call void @llvm.masked.store.v4i24.p0(<4 x i24> %x, ptr align 4 %p, <4 x i1> <i1 false, i1 true, i1 false, i1 false>)
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

/// The lane a plain store takes from its vector, and its offset in bytes
/// from the masked store's pointer.
std::pair<uint64_t, uint64_t> laneAndOffset(const Module &m, StoreInst *s) {
  auto *lane = cast<ExtractElementInst>(s->getValueOperand());
  auto *at = cast<GetElementPtrInst>(s->getPointerOperand());
  APInt offset(64, 0);
  EXPECT_TRUE(at->accumulateConstantOffset(m.getDataLayout(), offset));
  return {cast<ConstantInt>(lane->getIndexOperand())->getZExtValue(),
          offset.getZExtValue()};
}

TEST(MaskedStores, OneLaneBecomesAStoreOfThatElement) {
  LLVMContext context;
  SMDiagnostic error;
  std::unique_ptr<Module> m = parseAssemblyString(kModule, error, context);
  ASSERT_TRUE(m) << error.getMessage().str();

  EXPECT_EQ(tq::cpu::scalarizeSingleLaneMaskedStores(*m), 3u);
  EXPECT_FALSE(verifyModule(*m, &errs()));

  // Lane 2 of the truncated bytes: one i8 extracted from lane 2 and stored
  // 2 bytes past %p, never a wider store.
  Stores bytes = storesOf(*m, "one_byte");
  EXPECT_EQ(bytes.masked, 0u);
  ASSERT_EQ(bytes.plain.size(), 1u);
  StoreInst *b = bytes.plain.front();
  EXPECT_TRUE(b->getValueOperand()->getType()->isIntegerTy(8));
  EXPECT_EQ(laneAndOffset(*m, b), std::make_pair(uint64_t(2), uint64_t(2)));
  EXPECT_EQ(b->getAlign().value(), 1u);

  // Lane 1 of 4 floats 16-aligned: 4 bytes past %p, aligned to 4.
  Stores floats = storesOf(*m, "one_float");
  EXPECT_EQ(floats.masked, 0u);
  ASSERT_EQ(floats.plain.size(), 1u);
  StoreInst *f = floats.plain.front();
  EXPECT_TRUE(f->getValueOperand()->getType()->isFloatTy());
  EXPECT_EQ(laneAndOffset(*m, f), std::make_pair(uint64_t(1), uint64_t(4)));
  EXPECT_EQ(f->getAlign().value(), 4u);

  // Poison and undef lanes are not set: lane 3, 3 bytes past a pointer
  // aligned to 4, so aligned to 1.
  Stores undef = storesOf(*m, "undef_lanes");
  EXPECT_EQ(undef.masked, 0u);
  ASSERT_EQ(undef.plain.size(), 1u);
  EXPECT_EQ(laneAndOffset(*m, undef.plain.front()),
            std::make_pair(uint64_t(3), uint64_t(3)));
  EXPECT_EQ(undef.plain.front()->getAlign().value(), 1u);

  // Left alone: two lanes, a mask not known, lanes smaller than a byte,
  // lanes with padding.
  for (const char *name : {"two_lanes", "run_time", "bits", "padded"}) {
    Stores kept = storesOf(*m, name);
    EXPECT_EQ(kept.masked, 1u) << name;
    EXPECT_TRUE(kept.plain.empty()) << name;
  }
}

} // namespace
