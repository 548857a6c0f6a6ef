//===- TQEnums.td - tile-quant enums and attributes ---------*- tablegen -*-===//
#ifndef TQ_ENUMS_TD
#define TQ_ENUMS_TD

include "mlir/IR/EnumAttr.td"
include "mlir/IR/AttrTypeBase.td"
include "tq/Dialect/TQ/IR/TQDialect.td"

// How a tile's quantization step is represented (SPEC A2, T3).
def TQ_ScaleKind : I32EnumAttr<"ScaleKind", "scale representation of a tile", [
    I32EnumAttrCase<"f32", 0>,      // step = f (f2 or f4)
    I32EnumAttrCase<"pow2", 1>,     // step = 2^s (point position only)
    I32EnumAttrCase<"pow2_f32", 2>  // step = 2^s * f (f1 or f3)
  ]> {
  let cppNamespace = "::mlir::tq";
  let genSpecializedAttr = 0;
}

// Where the bit width N of a tiled tensor comes from (SPEC A1, A4, T8).
def TQ_BitsKind : I32EnumAttr<"BitsKind", "origin of the bit width", [
    I32EnumAttrCase<"fixed", 0>,     // N is part of the type
    I32EnumAttrCase<"dynamic", 1>,   // N is an SSA value (one per tensor)
    I32EnumAttrCase<"per_tile", 2>   // each tile has its own N
  ]> {
  let cppNamespace = "::mlir::tq";
  let genSpecializedAttr = 0;
}

// Rounding of x / step to an integer (SPEC A2).
def TQ_RoundingMode : I32EnumAttr<"RoundingMode", "rounding mode", [
    I32EnumAttrCase<"nearest_even", 0>,
    I32EnumAttrCase<"up", 1>,
    I32EnumAttrCase<"down", 2>,
    I32EnumAttrCase<"toward_zero", 3>,
    I32EnumAttrCase<"stochastic", 4>
  ]> {
  let cppNamespace = "::mlir::tq";
  let genSpecializedAttr = 0;
}
def TQ_RoundingModeAttr : EnumAttr<TQ_Dialect, TQ_RoundingMode, "rounding"> {
  let assemblyFormat = "$value";
}

// Nonlinearity applied by tq.postprocess (SPEC T6).
def TQ_Activation : I32EnumAttr<"Activation", "post-processing nonlinearity", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"relu", 1>
  ]> {
  let cppNamespace = "::mlir::tq";
  let genSpecializedAttr = 0;
}
def TQ_ActivationAttr : EnumAttr<TQ_Dialect, TQ_Activation, "activation"> {
  let assemblyFormat = "`<` $value `>`";
}

// How the product of two tile scales is formed in a tiled dot product (T5).
def TQ_ScaleProduct : I32EnumAttr<"ScaleProduct", "scale product precision", [
    I32EnumAttrCase<"exact", 0>,  // f32 product
    I32EnumAttrCase<"bf16", 1>    // f32 product rounded to bf16 precision
  ]> {
  let cppNamespace = "::mlir::tq";
  let genSpecializedAttr = 0;
}
def TQ_ScaleProductAttr : EnumAttr<TQ_Dialect, TQ_ScaleProduct, "scale_product"> {
  let assemblyFormat = "`<` $value `>`";
}

// The role of a tensor in a layer's computation (SPEC T2, A1): it chooses
// the split dims and the bit width of the tensor.
def TQ_Role : I32EnumAttr<"Role", "tensor role", [
    I32EnumAttrCase<"activation", 0>,
    I32EnumAttrCase<"weight", 1>,
    I32EnumAttrCase<"bias", 2>,
    I32EnumAttrCase<"output_grad", 3>,      // dY
    I32EnumAttrCase<"activation_grad", 4>,  // dX = dY·Wᵀ
    I32EnumAttrCase<"weight_grad", 5>       // dW = Xᵀ·dY
  ]> {
  let cppNamespace = "::mlir::tq";
  let genSpecializedAttr = 0;
}
def TQ_RoleAttr : EnumAttr<TQ_Dialect, TQ_Role, "role"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // TQ_ENUMS_TD
