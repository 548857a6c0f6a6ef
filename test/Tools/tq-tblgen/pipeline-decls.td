// RUN: tq-tblgen -gen-pipeline-decls -I %mlir_include -I %tq_src/include %s | FileCheck %s
// RUN: tq-tblgen -gen-pipeline-doc -I %mlir_include -I %tq_src/include %s | FileCheck %s --check-prefix=DOC

// A pipeline takes its options from its passes' records, and fills each
// listed pass's options struct from the options of the same name: the ones
// it lacks keep the pass's defaults, and a pipeline-only option reaches no
// pass.

include "tq/Pipelines/PipelineBase.td"

def PassA : Pass<"pass-a"> {
  let options = [
    Option<"width", "width", "int64_t", /*default=*/"8", "Bits">,
    Option<"hidden", "hidden", "bool", /*default=*/"false", "Not exposed">,
    ListOption<"names", "names", "std::string", "Layer names">
  ];
}
def PassB : Pass<"pass-b"> {
  let options = [
    Option<"width", "width", "int64_t", /*default=*/"8", "Bits">,
    Option<"mode", "mode", "std::string", /*default=*/"\"x\"", "Mode">,
    Option<"kind", "kind", "Kind", /*default=*/"fast", "Kind",
           [{::llvm::cl::values(clEnumValN(veryfast, "veryfast", "v"),
                                clEnumValN(fast, "fast", "f"))}]>
  ];
}

def DemoPipeline : Pipeline<"demo"> {
  let summary = "A demo";
  let description = [{
    Runs pass-a, then pass-b.
  }];
  let options = !listconcat(
      OptionsOf<PassA, ["width", "names"]>.result,
      OptionsOf<PassB, ["mode", "kind"]>.result,
      [Option<"verbose", "verbose", "bool", /*default=*/"false", "Talk">]);
  let passes = [PassA, PassB];
}

// CHECK:      #ifdef GEN_PIPELINE_DECL_DEMOPIPELINEOPTIONS
// CHECK:      struct DemoPipelineOptions : public ::mlir::PassPipelineOptions<DemoPipelineOptions> {
// CHECK-NEXT:   static constexpr ::llvm::StringLiteral argument = "demo";
// CHECK-NEXT:   static constexpr ::llvm::StringLiteral summary = R"PO(A demo)PO";
// CHECK-NEXT:   Option<int64_t> width{*this, "width", ::llvm::cl::desc(R"PO(Bits)PO"), ::llvm::cl::init(8)};
// CHECK-NEXT:   ListOption<std::string> names{*this, "names", ::llvm::cl::desc(R"PO(Layer names)PO")};
// CHECK-NEXT:   Option<std::string> mode{*this, "mode", ::llvm::cl::desc(R"PO(Mode)PO"), ::llvm::cl::init("x")};
// CHECK-NEXT:   Option<Kind> kind{*this, "kind", ::llvm::cl::desc(R"PO(Kind)PO"), ::llvm::cl::init(fast), ::llvm::cl::values(clEnumValN(veryfast, "veryfast", "v"),
// CHECK:        Option<bool> verbose{*this, "verbose", ::llvm::cl::desc(R"PO(Talk)PO"), ::llvm::cl::init(false)};
// CHECK:        PassAOptions getPassAOptions() const {
// CHECK-NEXT:     PassAOptions result;
// CHECK-NEXT:     result.width = width;
// CHECK-NEXT:     result.names.assign(names.begin(), names.end());
// CHECK-NEXT:     return result;
// CHECK:        PassBOptions getPassBOptions() const {
// CHECK-NEXT:     PassBOptions result;
// CHECK-NEXT:     result.width = width;
// CHECK-NEXT:     result.mode = mode;
// CHECK-NEXT:     result.kind = kind;
// CHECK-NEXT:     return result;
// CHECK:      #endif // GEN_PIPELINE_DECL_DEMOPIPELINEOPTIONS

// DOC:      ### `-demo`
// DOC:      _A demo_
// DOC:      Runs pass-a, then pass-b.
// DOC:      #### Options
// DOC:      -width   : Bits (default: 8)
// DOC-NEXT: -names   : Layer names{{$}}
// DOC-NEXT: -mode    : Mode (default: x)
// DOC-NEXT: -kind    : Kind (default: fast)
// DOC-NEXT: -verbose : Talk (default: false)
// DOC:      Each option is the option of the same name of `-pass-a`, `-pass-b` where that pass has one.
