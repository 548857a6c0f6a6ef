//===- PipelineBase.td - named pass pipelines in ODS --------*- tablegen -*-===//
//
// A `Pipeline` is a named pass pipeline whose options are pass options
// (records of mlir/Pass/PassBase.td's Option): the options of its passes,
// taken from their records, or options of the pipeline alone. tq-tblgen
// -gen-pipeline-decls writes its PassPipelineOptions struct, with a
// `get<Pass>Options()` per listed pass that fills the pass's generated
// options struct from the pipeline's options of the same name, and
// -gen-pipeline-doc its reference page.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_PIPELINES_PIPELINEBASE_TD
#define TQ_PIPELINES_PIPELINEBASE_TD

include "mlir/Pass/PassBase.td"

class Pipeline<string arg> {
  // The name tq-opt takes (`-tq-quantize="..."`).
  string argument = arg;
  // One line, for --help and the reference page.
  string summary = "";
  string description = "";
  // The options, in --help order.
  list<Option> options = [];
  // Passes whose options struct the pipeline fills from its options.
  list<PassBase> passes = [];
}

// The options of `pass` whose argument is in `args`.
class OptionsOf<PassBase pass, list<string> args> {
  list<Option> result = !filter(o, pass.options,
      !foldl(0, args, found, a, !or(found, !eq(a, o.argument))));
}

#endif // TQ_PIPELINES_PIPELINEBASE_TD
