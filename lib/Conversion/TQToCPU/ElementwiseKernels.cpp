//===- ElementwiseKernels.cpp - f32 elementwise generics as vector loops --===//
//
// See the description of tq-cpu-float-kernels in tq/Conversion/Passes.td.
//
// The all-parallel generics left once the kernels have taken their
// epilogues (a bias add on rows of 32, a residual add, a layer norm's
// steps) become loops over their leading dims around vectors along their
// trailing ones. Given the scalar loops of such an op with a short
// innermost dim, LLVM's loop vectorizer unrolls that dim and vectorizes the
// outer one, with a gather and a scatter per element.
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

/// An elementwise generic on an f32 buffer: loops over its leading dims
/// (shared among the threads), and along the trailing dims that every
/// operand reads contiguously, flattened, vectors of L lanes, the last one
/// masked. Each element gets the body's ops on the same values, in vector
/// form: the same bits as the scalar loops.
struct ElementwiseKernel : FloatKernelPattern<linalg::GenericOp> {
  using FloatKernelPattern::FloatKernelPattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rw) const override {
    if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1)
      return rw.notifyMatchFailure(op, "not on buffers");
    Value out = op.getDpsInits()[0];
    auto type = dyn_cast<MemRefType>(out.getType());
    if (!type || type.getRank() == 0)
      return rw.notifyMatchFailure(op, "no dims to vectorize");
    // A vector of the output is written after all its inputs are read:
    // only an input that is the output itself, element for element, may
    // share its buffer.
    for (OpOperand *in : op.getDpsInputOperands())
      if (isa<MemRefType>(in->get().getType()) &&
          rootOf(in->get()) == rootOf(out) &&
          (in->get() != out || !op.getMatchingIndexingMap(in).isIdentity()))
        return rw.notifyMatchFailure(op, "an input aliases the output");
    // As many trailing dims as every operand reads contiguously; with
    // threads, the leading dim stays a loop to share.
    int64_t rank = type.getRank();
    int64_t most = o.threads > 1 && rank > 1 ? rank - 1 : rank;
    std::optional<VectorEpilogue> epi;
    int64_t dims = most;
    for (; dims >= 1 && !epi; --dims)
      epi = VectorEpilogue::matchElementwise(op, dims);
    if (!epi)
      return rw.notifyMatchFailure(op, "not an elementwise f32 body");
    ++dims;

    ArrayRef<int64_t> shape = type.getShape();
    int64_t outer = rank - dims, extent = 1;
    for (int64_t d = outer; d < rank; ++d)
      extent *= shape[d];
    int64_t L = rowLanes(o.lanes, extent);
    bool readsOut =
        !op.getBody()->getArgument(op.getNumDpsInputs()).use_empty();

    ImplicitLocOpBuilder b(op.getLoc(), rw);
    epi->prepare(b);
    Value dst = out;
    if (dims > 1)
      dst = collapse(b, out, cpu::mergeTrailingDims(rank, outer));
    auto vF32 = VectorType::get({L}, b.getF32Type());
    auto vMask = VectorType::get({L}, b.getI1Type());
    // One vector at `col` of the row at `ivs`; `mask` (or null) marks the
    // lanes in range.
    auto vectorAt = [&](ImplicitLocOpBuilder &vb, ValueRange ivs, Value col,
                        Value mask) {
      SmallVector<Value> at(ivs);
      at.push_back(col);
      Value zero = zeros(vb, vF32);
      Value acc = zero;
      if (readsOut)
        acc = mask ? vector::MaskedLoadOp::create(vb, vF32, dst, at, mask, zero)
                         .getResult()
                   : vector::LoadOp::create(vb, vF32, dst, at).getResult();
      Value v = epi->apply(vb, acc, ivs, col, mask);
      if (mask)
        vector::MaskedStoreOp::create(vb, dst, at, mask, v);
      else
        vector::StoreOp::create(vb, v, dst, at);
    };
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t d = 0; d < outer; ++d) {
      lbs.push_back(idx(b, 0));
      ubs.push_back(idx(b, shape[d]));
      steps.push_back(idx(b, 1));
    }
    cpu::buildIndependentLoops(
        b, b.getLoc(), lbs, ubs, steps, o.threads,
        [&](OpBuilder &nb, Location l, ValueRange ivs) {
          ImplicitLocOpBuilder rb(l, nb);
          int64_t whole = extent / L * L;
          if (whole > 0)
            scf::buildLoopNest(rb, l, ValueRange{idx(rb, 0)},
                               ValueRange{idx(rb, whole)},
                               ValueRange{idx(rb, L)},
                               [&](OpBuilder &cb, Location cl, ValueRange c) {
                                 ImplicitLocOpBuilder vb(cl, cb);
                                 vectorAt(vb, ivs, c[0], Value());
                               });
          if (whole < extent)
            vectorAt(rb, ivs, idx(rb, whole),
                     vector::CreateMaskOp::create(
                         rb, vMask, ValueRange{idx(rb, extent - whole)}));
        });
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tq::floatkernels::populateElementwiseKernelPatterns(
    RewritePatternSet &patterns, KernelOptions o) {
  patterns.add<ElementwiseKernel>(patterns.getContext(), o);
}
