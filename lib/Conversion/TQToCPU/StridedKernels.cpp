//===- StridedKernels.cpp - elementwise generics on strided views --------===//
//
// See the description of tq-cpu-float-kernels in tq/Conversion/Passes.td.
//
// All-parallel generics with several outputs, or with operands read at a
// stride along the innermost dim: the max-pool gradient's routing (it reads
// and writes the four taps of every 2x2 window as views with a stride of 2)
// and the weight update that reads a transposed gradient. LLVM leaves their
// scalar loops scalar. Here each row along the innermost dim is vectors of
// L lanes:
//   - a contiguous operand is a vector load or store;
//   - two views of one buffer one element apart (a window's even and odd
//     taps) are one load of 2L contiguous elements, split into the even and
//     the odd lanes by shuffles, or, as outputs, one store of both
//     interleaved;
//   - a view at a stride of 2 without its partner is the even lanes of such
//     a load;
//   - any other stride is a gather; no stride at all (a broadcast) is one
//     scalar load.
// Each element gets the body's ops on the same values, in vector form: the
// same bits as the scalar loops.
//
//===----------------------------------------------------------------------===//
#include "FloatKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tq;
using namespace mlir::tq::floatkernels;

namespace {

/// How the kernel reaches one memref operand of the generic.
struct Access {
  Value view;
  AffineMap map;
  int64_t offset = 0;
  SmallVector<int64_t> strides;
  /// The elements between two iterations along the innermost loop dim: 0
  /// for an operand that does not use it (a broadcast).
  int64_t step = 0;
  /// One past the last element the operand reaches, from the buffer's
  /// aligned start.
  int64_t extent = 1;
  /// With step 2: the access one element after this one (its odd lanes),
  /// and the one before it, whose load this one shares.
  int follower = -1, leader = -1;
};

/// The source a view was taken from by one memref.subview, or the value:
/// two views with the same base start from the same aligned pointer.
Value baseOf(Value v) {
  if (auto sv = v.getDefiningOp<memref::SubViewOp>())
    return sv.getSource();
  return v;
}

/// The access of memref operand `v` read or written through `map`, if it
/// is a static strided f32 memref (any element type for a broadcast) read
/// through a projected permutation.
std::optional<Access> accessOf(Value v, AffineMap map, unsigned innermost) {
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!t || !t.hasStaticShape() || t.getNumElements() == 0 ||
      !map.isProjectedPermutation(/*allowZeroInResults=*/true))
    return std::nullopt;
  Access a;
  a.view = v;
  a.map = map;
  if (failed(t.getStridesAndOffset(a.strides, a.offset)) ||
      ShapedType::isDynamic(a.offset) || a.offset < 0 ||
      llvm::any_of(a.strides,
                   [](int64_t s) { return ShapedType::isDynamic(s) || s < 0; }))
    return std::nullopt;
  a.extent = a.offset + 1;
  for (auto [p, e] : llvm::enumerate(map.getResults())) {
    a.extent += a.strides[p] * (t.getDimSize(p) - 1);
    if (auto d = dyn_cast<AffineDimExpr>(e); d && d.getPosition() == innermost)
      a.step = a.strides[p];
  }
  if (a.step != 0 && !t.getElementType().isF32())
    return std::nullopt;
  if (!t.getElementType().isIntOrFloat())
    return std::nullopt;
  return a;
}

/// Pairs the accesses at a stride of 2 that are one element apart on the
/// same base, with the same strides and map.
void pairTaps(MutableArrayRef<Access> accesses) {
  for (auto [i, a] : llvm::enumerate(accesses))
    for (auto [j, b] : llvm::enumerate(accesses))
      if (a.step == 2 && b.step == 2 && a.follower < 0 && b.leader < 0 &&
          a.leader < 0 && b.follower < 0 && i != j &&
          baseOf(a.view) == baseOf(b.view) && a.strides == b.strides &&
          a.map == b.map && b.offset == a.offset + 1) {
        a.follower = j;
        b.leader = i;
        a.extent = std::max(a.extent, b.extent);
      }
}

struct StridedElementwiseKernel : FloatKernelPattern<linalg::GenericOp> {
  using FloatKernelPattern::FloatKernelPattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rw) const override {
    unsigned loops = op.getNumLoops();
    if (!op.hasPureBufferSemantics() || loops == 0 ||
        op.getNumParallelLoops() != loops || !isElementwiseBody(op.getBody()))
      return rw.notifyMatchFailure(op, "not an elementwise generic on buffers");
    unsigned innermost = loops - 1;
    Block *body = op.getBody();
    unsigned numInputs = op.getNumDpsInputs();

    // The outputs: contiguous, or pairs of taps at a stride of 2.
    SmallVector<Access> writes;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      std::optional<Access> a =
          accessOf(init.get(), op.getMatchingIndexingMap(&init), innermost);
      if (!a || !a->map.isIdentity() || (a->step != 1 && a->step != 2))
        return rw.notifyMatchFailure(op, "an output not written as vectors");
      writes.push_back(*a);
    }
    if (writes.empty())
      return rw.notifyMatchFailure(op, "no output");
    pairTaps(writes);
    for (const Access &w : writes)
      if (w.step == 2 && w.leader < 0 && w.follower < 0)
        return rw.notifyMatchFailure(op, "an output at a stride of 2 alone");
    // Outputs on one buffer must be slices that never meet: the vectors
    // store them one after the other, and the threads store rows at once.
    for (auto [i, a] : llvm::enumerate(writes))
      for (const Access &b : ArrayRef(writes).drop_front(i + 1)) {
        if (rootOf(a.view) != rootOf(b.view))
          continue;
        auto sa = a.view.getDefiningOp<memref::SubViewOp>();
        auto sb = b.view.getDefiningOp<memref::SubViewOp>();
        if (!sa || !sb || !cpu::disjointSubviews(sa, sb))
          return rw.notifyMatchFailure(op, "outputs that may meet");
      }

    // What the body reads: the inputs and the outputs' old values that it
    // uses. A non-memref input is the same in every lane.
    SmallVector<Access> reads;
    SmallVector<Value> argOf; // the block argument of each read
    SmallVector<std::pair<Value, Value>> scalars;
    for (OpOperand &operand : op->getOpOperands()) {
      Value arg = body->getArgument(operand.getOperandNumber());
      bool isInit = operand.getOperandNumber() >= numInputs;
      if (isInit && arg.use_empty())
        continue;
      if (!isa<MemRefType>(operand.get().getType())) {
        if (!operand.get().getType().isIntOrFloat())
          return rw.notifyMatchFailure(op, "an operand of another type");
        scalars.push_back({arg, operand.get()});
        continue;
      }
      std::optional<Access> a = accessOf(
          operand.get(), op.getMatchingIndexingMap(&operand), innermost);
      if (!a)
        return rw.notifyMatchFailure(op, "an operand not read as vectors");
      reads.push_back(*a);
      argOf.push_back(arg);
    }
    pairTaps(reads);

    // Every vector's operands are loaded before its results are stored: a
    // buffer both read and written must be read where this iteration writes
    // it, element for element (and no other output meets it, above).
    for (const Access &r : reads) {
      auto same = [&](const Access &w) {
        return baseOf(r.view) == baseOf(w.view) && r.offset == w.offset &&
               r.strides == w.strides && r.map == w.map;
      };
      auto meets = [&](const Access &w) {
        return rootOf(r.view) == rootOf(w.view);
      };
      if (llvm::any_of(writes, meets) && !llvm::any_of(writes, same))
        return rw.notifyMatchFailure(op, "an input aliases an output");
    }

    // One output with contiguous or gathered operands stays with the other
    // kernels: ElementwiseKernel takes the contiguous ones, and a transposed
    // copy is better served by a layout kernel than by gathers.
    auto interleaved = [](const Access &a) { return a.step == 2; };
    if (writes.size() < 2 && !llvm::any_of(reads, interleaved) &&
        !llvm::any_of(writes, interleaved))
      return rw.notifyMatchFailure(op, "one output, no view at a stride of 2");

    ArrayRef<int64_t> shape =
        cast<MemRefType>(op.getDpsInits()[0].getType()).getShape();
    int64_t W = shape.back();
    int64_t L = rowLanes(o.lanes, W);
    // A gather's offsets are i32.
    if (llvm::any_of(reads, [&](const Access &a) {
          return a.step * (L - 1) > std::numeric_limits<int32_t>::max();
        }))
      return rw.notifyMatchFailure(op, "a gather's offsets past i32");

    ImplicitLocOpBuilder b(op.getLoc(), rw);
    Type f32 = b.getF32Type();
    auto vF32 = VectorType::get({L}, f32);
    auto flatView = [&](const Access &a) -> Value {
      return memref::ReinterpretCastOp::create(
          b,
          MemRefType::get({a.extent},
                          cast<MemRefType>(a.view.getType()).getElementType()),
          a.view, 0, ArrayRef<int64_t>{a.extent}, ArrayRef<int64_t>{1});
    };
    SmallVector<Value> readViews, writeViews;
    for (const Access &a : reads)
      readViews.push_back(a.leader < 0 ? flatView(a) : Value());
    for (const Access &a : writes)
      writeViews.push_back(a.leader < 0 ? flatView(a) : Value());

    // The element of `a` at the outer indices `ivs` and column 0.
    auto rowStart = [&](ImplicitLocOpBuilder &rb, const Access &a,
                        ValueRange ivs) {
      Value at = idx(rb, a.offset);
      for (auto [p, e] : llvm::enumerate(a.map.getResults())) {
        auto d = dyn_cast<AffineDimExpr>(e);
        if (!d || d.getPosition() == innermost || a.strides[p] == 0)
          continue;
        at = arith::AddIOp::create(
            rb, at,
            arith::MulIOp::create(rb, ivs[d.getPosition()],
                                  idx(rb, a.strides[p])));
      }
      return at;
    };
    auto maskOf = [&](ImplicitLocOpBuilder &vb, int64_t n) -> Value {
      if (n >= L)
        return Value();
      return vector::CreateMaskOp::create(
          vb, VectorType::get({L}, vb.getI1Type()), ValueRange{idx(vb, n)});
    };
    auto load = [&](ImplicitLocOpBuilder &vb, Value view, Value at,
                    int64_t n) -> Value {
      if (n <= 0)
        return zeros(vb, vF32);
      if (Value mask = maskOf(vb, n))
        return vector::MaskedLoadOp::create(vb, vF32, view, ValueRange{at},
                                            mask, zeros(vb, vF32));
      return vector::LoadOp::create(vb, vF32, view, ValueRange{at});
    };
    auto store = [&](ImplicitLocOpBuilder &vb, Value v, Value view, Value at,
                     int64_t n) {
      if (n <= 0)
        return;
      if (Value mask = maskOf(vb, n))
        vector::MaskedStoreOp::create(vb, view, ValueRange{at}, mask, v);
      else
        vector::StoreOp::create(vb, v, view, ValueRange{at});
    };
    auto lanes = [&](int64_t first, int64_t stride) {
      SmallVector<int64_t> m;
      for (int64_t i = 0; i < L; ++i)
        m.push_back(first + stride * i);
      return m;
    };
    // The lanes of the interleaved pair (a, b): a0 b0 a1 b1 ...
    auto interleave = [&](int64_t half) {
      SmallVector<int64_t> m;
      for (int64_t i = 0; i < L / 2; ++i) {
        m.push_back(half * L / 2 + i);
        m.push_back(L + half * L / 2 + i);
      }
      return m;
    };

    // Columns [col, col + n) of the row at `ivs`.
    auto chunk = [&](ImplicitLocOpBuilder &vb, ValueRange ivs, Value col,
                     int64_t n) {
      IRMapping map;
      for (auto [arg, v] : scalars)
        map.map(arg, vector::BroadcastOp::create(
                         vb, VectorType::get({L}, arg.getType()), v));
      for (auto [i, a] : llvm::enumerate(reads)) {
        if (a.leader >= 0)
          continue; // loaded with its leader
        Value at = rowStart(vb, a, ivs);
        Value arg = argOf[i];
        if (a.step == 0) {
          Value s = memref::LoadOp::create(vb, readViews[i], ValueRange{at});
          map.map(arg, vector::BroadcastOp::create(
                           vb, VectorType::get({L}, s.getType()), s));
          continue;
        }
        at = arith::AddIOp::create(
            vb, at, arith::MulIOp::create(vb, col, idx(vb, a.step)));
        if (a.step == 1) {
          map.map(arg, load(vb, readViews[i], at, n));
        } else if (a.step == 2) {
          // 2n elements with the odd partner, 2n - 1 without.
          int64_t count = a.follower >= 0 ? 2 * n : 2 * n - 1;
          Value lo = load(vb, readViews[i], at, std::min(count, L));
          Value hi = load(vb, readViews[i],
                          arith::AddIOp::create(vb, at, idx(vb, L)), count - L);
          map.map(arg, vector::ShuffleOp::create(vb, lo, hi, lanes(0, 2)));
          if (a.follower >= 0)
            map.map(argOf[a.follower],
                    vector::ShuffleOp::create(vb, lo, hi, lanes(1, 2)));
        } else {
          auto vI32 = VectorType::get({L}, vb.getI32Type());
          SmallVector<int32_t> offsets;
          for (int64_t l = 0; l < L; ++l)
            offsets.push_back(static_cast<int32_t>(l * a.step));
          Value index = arith::ConstantOp::create(
              vb, vI32, DenseElementsAttr::get(vI32, ArrayRef(offsets)));
          Value mask = maskOf(vb, n);
          if (!mask)
            mask = vector::ConstantMaskOp::create(
                vb, VectorType::get({L}, vb.getI1Type()), ArrayRef<int64_t>{L});
          map.map(arg, vector::GatherOp::create(vb, vF32, readViews[i],
                                                ValueRange{at}, index, mask,
                                                zeros(vb, vF32)));
        }
      }
      SmallVector<Value> results =
          applyBodyToVectorResults(vb, body, map, vF32);
      for (auto [k, w] : llvm::enumerate(writes)) {
        if (w.leader >= 0)
          continue; // stored with its leader
        Value at = arith::AddIOp::create(
            vb, rowStart(vb, w, ivs),
            arith::MulIOp::create(vb, col, idx(vb, w.step)));
        if (w.step == 1) {
          store(vb, results[k], writeViews[k], at, n);
          continue;
        }
        Value even = results[k], odd = results[w.follower];
        store(vb, vector::ShuffleOp::create(vb, even, odd, interleave(0)),
              writeViews[k], at, std::min(2 * n, L));
        store(vb, vector::ShuffleOp::create(vb, even, odd, interleave(1)),
              writeViews[k], arith::AddIOp::create(vb, at, idx(vb, L)),
              2 * n - L);
      }
    };

    forEachRowVector(b, shape.drop_back(), W, L, o.threads, chunk);
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tq::floatkernels::populateStridedKernelPatterns(
    RewritePatternSet &patterns, KernelOptions o) {
  patterns.add<StridedElementwiseKernel>(patterns.getContext(), o);
}
