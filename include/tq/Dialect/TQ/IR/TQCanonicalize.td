//===- TQCanonicalize.td - DRR canonicalizations ------------*- tablegen -*-===//
#ifndef TQ_CANONICALIZE_TD
#define TQ_CANONICALIZE_TD

include "mlir/IR/PatternBase.td"
include "tq/Dialect/TQ/IR/TQOps.td"

// transpose(transpose(x, p1), p2) -> transpose(x, p1∘p2). The identity case
// is handled by TransposeOp::fold.
def ComposePermutations : NativeCodeCall<
    "::mlir::tq::composePermutations($_builder, $0, $1)">;
def MergeTransposes : Pat<
    (TQ_TransposeOp (TQ_TransposeOp $x, $inner), $outer),
    (TQ_TransposeOp $x, (ComposePermutations $inner, $outer))>;

#endif // TQ_CANONICALIZE_TD
