// RUN: not tq-tblgen -gen-pipeline-decls -I %mlir_include -I %tq_src/include -DTWICE %s 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not tq-tblgen -gen-pipeline-decls -I %mlir_include -I %tq_src/include -DTYPE %s 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not tq-tblgen -gen-pipeline-decls -I %mlir_include -I %tq_src/include -DUNSHARED %s 2>&1 | FileCheck %s --check-prefix=UNSHARED
// RUN: not tq-tblgen -gen-pipeline-decls -I %mlir_include -I %tq_src/include -DLIST %s 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: not tq-tblgen -gen-pipeline-decls -I %mlir_include -I %tq_src/include -DRENAMED %s 2>&1 | FileCheck %s --check-prefix=RENAMED

// A pipeline whose options would not reach its passes as declared is an
// error at build time, naming the pipeline and the option or pass.

include "tq/Pipelines/PipelineBase.td"

def PassA : Pass<"pass-a"> {
  let options = [Option<"width", "width", "int64_t", /*default=*/"8", "Bits">];
}

#ifdef TWICE
// TWICE: error: option 'width' appears twice
def Twice : Pipeline<"twice"> {
  let options = !listconcat(PassA.options, PassA.options);
  let passes = [PassA];
}
#endif

#ifdef TYPE
// TYPE: error: option 'width' is double here but int64_t in pass PassA
def Type : Pipeline<"type"> {
  let options = [Option<"width", "width", "double", /*default=*/"8.0", "Bits">];
  let passes = [PassA];
}
#endif

#ifdef LIST
// LIST: error: option 'width' is a list of int64_t here but int64_t in pass PassA
def List : Pipeline<"list"> {
  let options = [ListOption<"width", "width", "int64_t", "Bits">];
  let passes = [PassA];
}
#endif

#ifdef RENAMED
// RENAMED: error: option 'bits' fills 'width' of pass PassA (same C++ name, other argument)
def Renamed : Pipeline<"renamed"> {
  let options = [Option<"width", "bits", "int64_t", /*default=*/"8", "Bits">];
  let passes = [PassA];
}
#endif

#ifdef UNSHARED
// UNSHARED: error: pass PassA shares no option with the pipeline
def Unshared : Pipeline<"unshared"> {
  let options = [Option<"depth", "depth", "int64_t", /*default=*/"1", "Depth">];
  let passes = [PassA];
}
#endif
