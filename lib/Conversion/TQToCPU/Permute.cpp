//===- Permute.cpp - a buffer with its dims permuted ---------------------===//
//
// cpu::emitPermute: the copy behind tq.transpose (data and steps) and the
// transposed operands of the kernels. A permutation that swaps two groups
// of trailing dims (NCHW to NHWC, or the batch moved last for a
// convolution's weight gradient) is a batch of 2-D transposes, done in
// L × L blocks transposed in registers; any other is a loop nest of
// scalar copies in the output's order.
//
//===----------------------------------------------------------------------===//
#include "FloatKernels.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tq;

namespace {

/// Values per block side (a vector of L bytes, int16 or f32 per row).
constexpr int64_t kBlock = 16;

/// For perm = [0, k) ++ [s, rank) ++ [k, s) (dims [0, k) kept, the groups
/// [k, s) and [s, rank) swapped), the pair (k, s).
std::optional<std::pair<int64_t, int64_t>>
batchedTranspose(ArrayRef<int64_t> perm) {
  int64_t rank = perm.size(), k = 0;
  while (k < rank && perm[k] == k)
    ++k;
  if (k == rank || perm[k] <= k)
    return std::nullopt;
  int64_t s = perm[k], i = k;
  for (int64_t d = s; d < rank; ++d, ++i)
    if (perm[i] != d)
      return std::nullopt;
  for (int64_t d = k; d < s; ++d, ++i)
    if (perm[i] != d)
      return std::nullopt;
  return std::make_pair(k, s);
}

/// `v` (identity layout) as [batch][A][B], merging dims [0, k), [k, s) and
/// [s, rank) (a unit batch when k is 0).
Value asBatchOfMatrices(ImplicitLocOpBuilder &b, Value v, int64_t k,
                        int64_t s) {
  int64_t rank = cast<MemRefType>(v.getType()).getRank();
  auto group = [](int64_t from, int64_t to) {
    ReassociationIndices g;
    for (int64_t d = from; d < to; ++d)
      g.push_back(d);
    return g;
  };
  if (k == 0) {
    Value m = memref::CollapseShapeOp::create(
        b, v, ArrayRef<ReassociationIndices>{group(0, s), group(s, rank)});
    auto shape = cast<MemRefType>(m.getType()).getShape();
    return memref::ExpandShapeOp::create(
        b,
        MemRefType::get({1, shape[0], shape[1]},
                        cast<MemRefType>(v.getType()).getElementType()),
        m, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  }
  return memref::CollapseShapeOp::create(
      b, v,
      ArrayRef<ReassociationIndices>{group(0, k), group(k, s), group(s, rank)});
}

/// out[n][j][i] = in[n][i][j] for [batch][A][B] buffers, in blocks of
/// kBlock × kBlock: each thread takes whole blocks of output rows (j), so
/// that two threads share a cache line only where two blocks of rows meet.
void emitBlockedTranspose(ImplicitLocOpBuilder &b, Value in, Value out,
                          int64_t threads) {
  ArrayRef<int64_t> shape = cast<MemRefType>(in.getType()).getShape();
  int64_t batch = shape[0], A = shape[1], B = shape[2], L = kBlock;
  Type elem = cast<MemRefType>(in.getType()).getElementType();
  auto vec = VectorType::get({L}, elem);
  auto maskOf = [&](ImplicitLocOpBuilder &ib, int64_t n) {
    return vector::CreateMaskOp::create(ib,
                                        VectorType::get({L}, ib.getI1Type()),
                                        ValueRange{floatkernels::idx(ib, n)});
  };
  // The block at (n, i0, j0) of in, `ni` × `nj` valid.
  auto block = [&](ImplicitLocOpBuilder &ib, Value n, Value i0, int64_t ni,
                   Value j0, int64_t nj) {
    Value zero = arith::ConstantOp::create(ib, vec, ib.getZeroAttr(vec));
    SmallVector<Value> rows;
    for (int64_t r = 0; r < L; ++r) {
      if (r >= ni) {
        rows.push_back(zero);
        continue;
      }
      Value i = arith::AddIOp::create(ib, i0, floatkernels::idx(ib, r));
      rows.push_back(
          nj == L
              ? Value(vector::LoadOp::create(ib, vec, in, ValueRange{n, i, j0}))
              : Value(vector::MaskedLoadOp::create(
                    ib, vec, in, ValueRange{n, i, j0}, maskOf(ib, nj), zero)));
    }
    SmallVector<Value> cols = floatkernels::transposeBlock(ib, rows);
    for (int64_t c = 0; c < nj; ++c) {
      Value j = arith::AddIOp::create(ib, j0, floatkernels::idx(ib, c));
      if (ni == L)
        vector::StoreOp::create(ib, cols[c], out, ValueRange{n, j, i0});
      else
        vector::MaskedStoreOp::create(ib, out, ValueRange{n, j, i0},
                                      maskOf(ib, ni), cols[c]);
    }
  };
  // All the blocks of the output rows [j0, j0 + nj) of image n.
  auto rowBlocks = [&](ImplicitLocOpBuilder &ib, Value n, Value j0,
                       int64_t nj) {
    if (A / L > 0)
      scf::buildLoopNest(ib, ib.getLoc(), ValueRange{floatkernels::idx(ib, 0)},
                         ValueRange{floatkernels::idx(ib, A / L * L)},
                         ValueRange{floatkernels::idx(ib, L)},
                         [&](OpBuilder &nb, Location l, ValueRange iv) {
                           ImplicitLocOpBuilder lb(l, nb);
                           block(lb, n, iv[0], L, j0, nj);
                         });
    if (A % L != 0)
      block(ib, n, floatkernels::idx(ib, A / L * L), A % L, j0, nj);
  };
  Value zero = floatkernels::idx(b, 0), one = floatkernels::idx(b, 1);
  if (B / L > 0)
    cpu::buildIndependentLoops(
        b, b.getLoc(), ValueRange{zero, zero},
        ValueRange{floatkernels::idx(b, batch), floatkernels::idx(b, B / L)},
        ValueRange{one, one}, threads,
        [&](OpBuilder &nb, Location l, ValueRange iv) {
          ImplicitLocOpBuilder lb(l, nb);
          rowBlocks(lb, iv[0],
                    arith::MulIOp::create(lb, iv[1], floatkernels::idx(lb, L)),
                    L);
        });
  if (B % L != 0)
    cpu::buildIndependentLoops(
        b, b.getLoc(), ValueRange{zero},
        ValueRange{floatkernels::idx(b, batch)}, ValueRange{one}, threads,
        [&](OpBuilder &nb, Location l, ValueRange iv) {
          ImplicitLocOpBuilder lb(l, nb);
          rowBlocks(lb, iv[0], floatkernels::idx(lb, B / L * L), B % L);
        });
}

} // namespace

Value cpu::emitPermute(ImplicitLocOpBuilder &b, Value src,
                       ArrayRef<int64_t> perm, int64_t threads) {
  auto t = cast<MemRefType>(src.getType());
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(t.getShape()[d]);
  Type elem = t.getElementType();
  Value out = cpu::allocBuffer(b, b.getLoc(), shape, elem);
  int64_t width = elem.isIntOrFloat() ? elem.getIntOrFloatBitWidth() : 0;
  if (auto groups = batchedTranspose(perm);
      groups && t.getLayout().isIdentity() && t.hasStaticShape() &&
      (width == 8 || width == 16 || width == 32)) {
    auto [k, s] = *groups;
    ArrayRef<int64_t> in = t.getShape();
    int64_t A = 1, B = 1;
    for (int64_t d = k; d < int64_t(perm.size()); ++d)
      (d < s ? A : B) *= in[d];
    // At least half a block along each side (a tile grid's steps are
    // mostly smaller: they keep the scalar loops and their smaller code).
    if (2 * A >= kBlock && 2 * B >= kBlock) {
      emitBlockedTranspose(b, asBatchOfMatrices(b, src, k, s),
                           asBatchOfMatrices(b, out, k, perm.size() - (s - k)),
                           threads);
      return out;
    }
  }
  // In the output's order: each thread writes its own rows (in the input's
  // order, two threads would write into the same cache lines).
  SmallVector<Value> lbs(shape.size(), floatkernels::idx(b, 0)),
      steps(shape.size(), floatkernels::idx(b, 1)), ubs;
  for (int64_t n : shape)
    ubs.push_back(floatkernels::idx(b, n));
  cpu::buildIndependentLoops(b, b.getLoc(), lbs, ubs, steps, threads,
                             [&](OpBuilder &nb, Location loc, ValueRange idx) {
                               ImplicitLocOpBuilder ib(loc, nb);
                               SmallVector<Value> from(perm.size());
                               for (auto [i, d] : llvm::enumerate(perm))
                                 from[d] = idx[i];
                               memref::StoreOp::create(
                                   ib, memref::LoadOp::create(ib, src, from),
                                   out, idx);
                             });
  return out;
}
