// RUN: tq-tblgen -gen-pass-option-getters -I %mlir_include %s | FileCheck %s

// Each pass with options gets getOptions(), to include in its class body:
// every option, scalars assigned and lists copied, into the pass's
// generated options struct. A pass without options gets none.

include "mlir/Pass/PassBase.td"

def PassA : Pass<"pass-a"> {
  let options = [
    Option<"width", "width", "int64_t", /*default=*/"8", "Bits">,
    ListOption<"names", "names", "std::string", "Layer names">
  ];
}
def PassB : Pass<"pass-b">;

// CHECK:      #ifdef GEN_PASS_OPTIONS_GETTER_PASSA
// CHECK-NEXT: /// The values of this pass's options (`pass-a`).
// CHECK-NEXT: PassAOptions getOptions() const {
// CHECK-NEXT:   PassAOptions result;
// CHECK-NEXT:   result.width = width;
// CHECK-NEXT:   result.names.assign(names.begin(), names.end());
// CHECK-NEXT:   return result;
// CHECK-NEXT: }
// CHECK-NEXT: #undef GEN_PASS_OPTIONS_GETTER_PASSA
// CHECK-NEXT: #endif // GEN_PASS_OPTIONS_GETTER_PASSA
// CHECK-NOT:  PASSB
