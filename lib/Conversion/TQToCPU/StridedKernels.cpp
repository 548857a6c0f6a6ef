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
// Rows of at most half the target's vector go two to a vector (the rows of
// 7 of a 14 x 14 max pool's gradient: 16 lanes, not a masked 8), lanes
// [0, W) and [W, 2W): each operand's two rows are loaded and merged by one
// shuffle (one load when they are contiguous), and each output row stored
// from its lanes. With an odd number of rows the last is alone.
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
  /// The same along the loop dim before it (two rows packed in a vector).
  int64_t rowStep = 0;
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
    auto d = dyn_cast<AffineDimExpr>(e);
    if (d && d.getPosition() == innermost)
      a.step = a.strides[p];
    if (d && innermost > 0 && d.getPosition() == innermost - 1)
      a.rowStep = a.strides[p];
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

/// The vector code of the generic's rows, over the accesses the pattern
/// matched: one row per vector, or two rows of at most half a vector each
/// in one (lanes [0, W) and [W, 2W)).
class RowEmitter {
public:
  RowEmitter(ImplicitLocOpBuilder &b, Block *body, ArrayRef<Access> reads,
             ArrayRef<Value> argOf, ArrayRef<std::pair<Value, Value>> scalars,
             ArrayRef<Access> writes, unsigned innermost)
      : body(body), reads(reads), argOf(argOf), scalars(scalars),
        writes(writes), innermost(innermost) {
    for (const Access &a : reads)
      readViews.push_back(a.leader < 0 ? flatView(b, a) : Value());
    for (const Access &a : writes)
      writeViews.push_back(a.leader < 0 ? flatView(b, a) : Value());
  }

  /// Columns [col, col + n) of the row at the outer indices `ivs`, in one
  /// vector of L lanes.
  void row(ImplicitLocOpBuilder &b, ValueRange ivs, Value col, int64_t n,
           int64_t L);
  /// The row of W columns at `ivs` and, with `second`, the next one along
  /// the loop dim before the innermost, in one vector of L >= 2W lanes.
  void rows(ImplicitLocOpBuilder &b, ValueRange ivs, int64_t W, int64_t L,
            bool second);

private:
  Block *body;
  ArrayRef<Access> reads;
  ArrayRef<Value> argOf; // the block argument of each read
  ArrayRef<std::pair<Value, Value>> scalars;
  ArrayRef<Access> writes;
  unsigned innermost;
  SmallVector<Value> readViews, writeViews;

  static Value flatView(ImplicitLocOpBuilder &b, const Access &a) {
    auto t = cast<MemRefType>(a.view.getType());
    return memref::ReinterpretCastOp::create(
        b, MemRefType::get({a.extent}, t.getElementType()), a.view, 0,
        ArrayRef<int64_t>{a.extent}, ArrayRef<int64_t>{1});
  }
  /// The element of `a` at the outer indices `ivs` and column 0.
  Value rowStart(ImplicitLocOpBuilder &b, const Access &a,
                 ValueRange ivs) const {
    Value at = idx(b, a.offset);
    for (auto [p, e] : llvm::enumerate(a.map.getResults())) {
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d || d.getPosition() == innermost || a.strides[p] == 0)
        continue;
      at = arith::AddIOp::create(
          b, at,
          arith::MulIOp::create(b, ivs[d.getPosition()], idx(b, a.strides[p])));
    }
    return at;
  }
  /// The mask of the first `n` of `L` lanes; none for all of them.
  static Value maskOf(ImplicitLocOpBuilder &b, int64_t n, int64_t L) {
    if (n >= L)
      return Value();
    return vector::CreateMaskOp::create(b, VectorType::get({L}, b.getI1Type()),
                                        ValueRange{idx(b, n)});
  }
  /// `n` elements from `at`, zeros in the other of L lanes.
  static Value load(ImplicitLocOpBuilder &b, Value view, Value at, int64_t n,
                    int64_t L) {
    auto t = VectorType::get({L}, b.getF32Type());
    if (n <= 0)
      return zeros(b, t);
    if (Value mask = maskOf(b, n, L))
      return vector::MaskedLoadOp::create(b, t, view, ValueRange{at}, mask,
                                          zeros(b, t));
    return vector::LoadOp::create(b, t, view, ValueRange{at});
  }
  /// The first `n` lanes of `v` stored from `at`.
  static void store(ImplicitLocOpBuilder &b, Value v, Value view, Value at,
                    int64_t n) {
    if (n <= 0)
      return;
    if (Value mask =
            maskOf(b, n, cast<VectorType>(v.getType()).getNumElements()))
      vector::MaskedStoreOp::create(b, view, ValueRange{at}, mask, v);
    else
      vector::StoreOp::create(b, v, view, ValueRange{at});
  }
  /// Lanes first, first + stride, ... of the two vectors `x` ++ `y`.
  static Value shuffle(ImplicitLocOpBuilder &b, Value x, Value y,
                       function_ref<int64_t(int64_t)> lane) {
    int64_t L = cast<VectorType>(x.getType()).getNumElements();
    SmallVector<int64_t> m;
    for (int64_t i = 0; i < L; ++i)
      m.push_back(lane(i));
    return vector::ShuffleOp::create(b, x, y, m);
  }
  /// A gather of the lanes at the element offsets `offsets` from `at`
  /// (the first `n` of them).
  static Value gather(ImplicitLocOpBuilder &b, Value view, Value at,
                      ArrayRef<int32_t> offsets, int64_t n) {
    int64_t L = offsets.size();
    auto vI32 = VectorType::get({L}, b.getI32Type());
    Value index = arith::ConstantOp::create(
        b, vI32, DenseElementsAttr::get(vI32, offsets));
    Value mask = maskOf(b, n, L);
    if (!mask)
      mask = vector::ConstantMaskOp::create(
          b, VectorType::get({L}, b.getI1Type()), ArrayRef<int64_t>{L});
    auto t = VectorType::get({L}, b.getF32Type());
    return vector::GatherOp::create(b, t, view, ValueRange{at}, index, mask,
                                    zeros(b, t));
  }
  /// The scalar operands, broadcast to L lanes.
  void mapScalars(ImplicitLocOpBuilder &b, IRMapping &map, int64_t L) const {
    for (auto [arg, v] : scalars)
      map.map(arg, vector::BroadcastOp::create(
                       b, VectorType::get({L}, arg.getType()), v));
  }
};

void RowEmitter::row(ImplicitLocOpBuilder &b, ValueRange ivs, Value col,
                     int64_t n, int64_t L) {
  IRMapping map;
  mapScalars(b, map, L);
  for (auto [i, a] : llvm::enumerate(reads)) {
    if (a.leader >= 0)
      continue; // loaded with its leader
    Value at = rowStart(b, a, ivs);
    Value arg = argOf[i];
    if (a.step == 0) {
      Value s = memref::LoadOp::create(b, readViews[i], ValueRange{at});
      map.map(arg, vector::BroadcastOp::create(
                       b, VectorType::get({L}, s.getType()), s));
      continue;
    }
    at = arith::AddIOp::create(b, at,
                               arith::MulIOp::create(b, col, idx(b, a.step)));
    if (a.step == 1) {
      map.map(arg, load(b, readViews[i], at, n, L));
    } else if (a.step == 2) {
      // 2n elements with the odd partner, 2n - 1 without.
      int64_t count = a.follower >= 0 ? 2 * n : 2 * n - 1;
      Value lo = load(b, readViews[i], at, std::min(count, L), L);
      Value hi = load(b, readViews[i], arith::AddIOp::create(b, at, idx(b, L)),
                      count - L, L);
      map.map(arg, shuffle(b, lo, hi, [](int64_t l) { return 2 * l; }));
      if (a.follower >= 0)
        map.map(argOf[a.follower],
                shuffle(b, lo, hi, [](int64_t l) { return 2 * l + 1; }));
    } else {
      SmallVector<int32_t> offsets;
      for (int64_t l = 0; l < L; ++l)
        offsets.push_back(static_cast<int32_t>(l * a.step));
      map.map(arg, gather(b, readViews[i], at, offsets, n));
    }
  }
  SmallVector<Value> results = applyBodyToVectorResults(
      b, body, map, VectorType::get({L}, b.getF32Type()));
  for (auto [k, w] : llvm::enumerate(writes)) {
    if (w.leader >= 0)
      continue; // stored with its leader
    Value at = arith::AddIOp::create(
        b, rowStart(b, w, ivs), arith::MulIOp::create(b, col, idx(b, w.step)));
    if (w.step == 1) {
      store(b, results[k], writeViews[k], at, n);
      continue;
    }
    // The interleaved pair: even0 odd0 even1 odd1 ...
    Value even = results[k], odd = results[w.follower];
    auto lanes = [L](int64_t half) {
      return
          [L, half](int64_t l) { return (l % 2) * L + half * L / 2 + l / 2; };
    };
    store(b, shuffle(b, even, odd, lanes(0)), writeViews[k], at,
          std::min(2 * n, L));
    store(b, shuffle(b, even, odd, lanes(1)), writeViews[k],
          arith::AddIOp::create(b, at, idx(b, L)), 2 * n - L);
  }
}

void RowEmitter::rows(ImplicitLocOpBuilder &b, ValueRange ivs, int64_t W,
                      int64_t L, bool second) {
  SmallVector<Value> next(ivs);
  next[innermost - 1] = arith::AddIOp::create(b, ivs[innermost - 1], idx(b, 1));
  int64_t n = second ? 2 * W : W;
  // Lanes [0, W) from `x`'s `lane(l)`, [W, 2W) from `y`'s `lane(l - W)`.
  auto merge = [&](Value x, Value y, function_ref<int64_t(int64_t)> lane) {
    return shuffle(b, x, y, [&](int64_t l) -> int64_t {
      if (l < W)
        return lane(l);
      return l < 2 * W ? L + lane(l - W) : 0;
    });
  };
  IRMapping map;
  mapScalars(b, map, L);
  for (auto [i, a] : llvm::enumerate(reads)) {
    if (a.leader >= 0)
      continue;
    Value at = rowStart(b, a, ivs);
    Value atNext = second ? rowStart(b, a, next) : Value();
    Value arg = argOf[i];
    auto t = VectorType::get({L}, b.getF32Type());
    if (a.step == 0) {
      Value s = memref::LoadOp::create(b, readViews[i], ValueRange{at});
      Value v =
          vector::BroadcastOp::create(b, VectorType::get({L}, s.getType()), s);
      if (second && a.rowStep != 0) {
        Value s2 = memref::LoadOp::create(b, readViews[i], ValueRange{atNext});
        v = merge(v,
                  vector::BroadcastOp::create(
                      b, VectorType::get({L}, s2.getType()), s2),
                  [](int64_t l) { return l; });
      }
      map.map(arg, v);
    } else if (a.step == 1) {
      if (!second || a.rowStep == W) // both rows in one load
        map.map(arg, load(b, readViews[i], at, n, L));
      else
        map.map(arg, merge(load(b, readViews[i], at, W, L),
                           load(b, readViews[i], atNext, W, L),
                           [](int64_t l) { return l; }));
    } else if (a.step == 2) {
      int64_t count = a.follower >= 0 ? 2 * W : 2 * W - 1;
      Value x = load(b, readViews[i], at, count, L);
      Value y = second ? load(b, readViews[i], atNext, count, L) : zeros(b, t);
      map.map(arg, merge(x, y, [](int64_t l) { return 2 * l; }));
      if (a.follower >= 0)
        map.map(argOf[a.follower],
                merge(x, y, [](int64_t l) { return 2 * l + 1; }));
    } else {
      SmallVector<int32_t> offsets;
      for (int64_t l = 0; l < L; ++l)
        offsets.push_back(static_cast<int32_t>(
            l < W ? l * a.step
                  : (l < 2 * W ? a.rowStep + (l - W) * a.step : 0)));
      map.map(arg, gather(b, readViews[i], at, offsets, n));
    }
  }
  SmallVector<Value> results = applyBodyToVectorResults(
      b, body, map, VectorType::get({L}, b.getF32Type()));
  for (auto [k, w] : llvm::enumerate(writes)) {
    if (w.leader >= 0)
      continue;
    Value at = rowStart(b, w, ivs);
    Value atNext = second ? rowStart(b, w, next) : Value();
    Value r = results[k];
    if (w.step == 1) {
      if (!second || w.rowStep == W) {
        store(b, r, writeViews[k], at, n);
      } else {
        store(b, r, writeViews[k], at, W);
        store(b, shuffle(b, r, r, [&](int64_t l) { return (W + l) % L; }),
              writeViews[k], atNext, W);
      }
      continue;
    }
    // Each row's pair interleaved: even0 odd0 even1 odd1 ...
    Value even = r, odd = results[w.follower];
    auto rowLanes = [&](int64_t first) {
      return [&, first](int64_t l) -> int64_t {
        return l < 2 * W ? (l % 2) * L + first + l / 2 : 0;
      };
    };
    store(b, shuffle(b, even, odd, rowLanes(0)), writeViews[k], at, 2 * W);
    if (second)
      store(b, shuffle(b, even, odd, rowLanes(W)), writeViews[k], atNext,
            2 * W);
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
    // Rows of at most half the target's vector go two to a vector (the
    // max-pool gradient's 7-wide rows in 16 lanes, not 8).
    int64_t packedLanes = rowLanes(o.lanes, 2 * W);
    bool pack = loops >= 2 && shape[innermost - 1] >= 2 && 2 * W <= o.lanes &&
                packedLanes > L;
    // A gather's offsets are i32.
    auto reach = [&](const Access &a) {
      return pack ? a.rowStep + a.step * (W - 1) : a.step * (L - 1);
    };
    if (llvm::any_of(reads, [&](const Access &a) {
          return reach(a) > std::numeric_limits<int32_t>::max();
        }))
      return rw.notifyMatchFailure(op, "a gather's offsets past i32");

    ImplicitLocOpBuilder b(op.getLoc(), rw);
    RowEmitter emit(b, body, reads, argOf, scalars, writes, innermost);
    if (pack) {
      // Pairs of rows along the dim before the innermost, and the last row
      // alone when that dim is odd.
      int64_t H = shape[innermost - 1];
      SmallVector<Value> lbs, ubs, steps;
      for (int64_t size : shape.drop_back()) {
        lbs.push_back(idx(b, 0));
        ubs.push_back(idx(b, size));
        steps.push_back(idx(b, 1));
      }
      ubs.back() = idx(b, (H + 1) / 2);
      cpu::buildIndependentLoops(
          b, b.getLoc(), lbs, ubs, steps, o.threads,
          [&](OpBuilder &nb, Location l, ValueRange pairs) {
            ImplicitLocOpBuilder rb(l, nb);
            SmallVector<Value> ivs(pairs);
            ivs.back() = arith::MulIOp::create(rb, pairs.back(), idx(rb, 2));
            if (H % 2 == 0) {
              emit.rows(rb, ivs, W, packedLanes, /*second=*/true);
              return;
            }
            Value both = arith::CmpIOp::create(
                rb, arith::CmpIPredicate::slt,
                arith::AddIOp::create(rb, ivs.back(), idx(rb, 1)), idx(rb, H));
            scf::IfOp::create(
                rb, both,
                [&](OpBuilder &tb, Location tl) {
                  ImplicitLocOpBuilder ib(tl, tb);
                  emit.rows(ib, ivs, W, packedLanes, /*second=*/true);
                  scf::YieldOp::create(ib);
                },
                [&](OpBuilder &eb, Location el) {
                  ImplicitLocOpBuilder ib(el, eb);
                  emit.rows(ib, ivs, W, packedLanes, /*second=*/false);
                  scf::YieldOp::create(ib);
                });
          });
    } else {
      forEachRowVector(b, shape.drop_back(), W, L, o.threads,
                       [&](ImplicitLocOpBuilder &vb, ValueRange ivs, Value col,
                           int64_t n) { emit.row(vb, ivs, col, n, L); });
    }
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tq::floatkernels::populateStridedKernelPatterns(
    RewritePatternSet &patterns, KernelOptions o) {
  patterns.add<StridedElementwiseKernel>(patterns.getContext(), o);
}
