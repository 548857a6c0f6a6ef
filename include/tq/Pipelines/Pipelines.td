//===- Pipelines.td - named tile-quant pass pipelines -------*- tablegen -*-===//
//
// The pipelines' options are the options of their passes, taken from the
// pass records, so each option is declared once: in the pass that reads it,
// or here when only the pipeline reads it. `tq-tblgen -gen-pipeline-decls`
// writes each pipeline's PassPipelineOptions struct, with a
// `get<Pass>Options()` per listed pass that fills the pass's generated
// options struct from the options of the same name.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_PIPELINES_PIPELINES_TD
#define TQ_PIPELINES_PIPELINES_TD

include "tq/Pipelines/PipelineBase.td"
include "tq/Dialect/TQ/Transforms/Passes.td"
include "tq/Conversion/Passes.td"

def QuantizePipeline : Pipeline<"tq-quantize"> {
  let summary = "Quantize a float program (linalg on tensors) into tiled tq "
                "ops";
  let description = [{
    Runs, in order: `tq-split-grouped-convs`, `tq-choose-split-dims` (roles
    and split dims), `tq-insert-quantization`, canonicalization and CSE
    (which shares one quantization of a tensor between its consumers),
    `tq-fold-transposes`, `tq-fuse-postprocess`, the compile-time width
    search on constants (`tq-adaptive-bit-width`, with `policy=adaptive`
    and no calibration file; its first width is `weight-bits` clamped to
    [`min-bits`, `max-bits`]), `tq-quantize-constants`, canonicalization,
    and `tq-export-calibration` when `calibration-out` is given.
    `weight-bits` with `policy=adaptive` is an error: the widths are
    searched.
  }];
  let options = !listconcat(
      TQInsertQuantization.options,
      OptionsOf<TQAdaptiveBitWidth, ["reuse"]>.result,
      [Option<"calibrationOut", "calibration-out", "std::string",
              /*default=*/"\"\"",
              "Write the per-layer parameters chosen to this file "
              "(tq-export-calibration)">]);
  let passes = [TQSplitGroupedConvs, TQInsertQuantization,
                TQAdaptiveBitWidth];
}

def ToPPUPipeline : Pipeline<"tq-to-ppu"> {
  let summary = "Lower a tq program to a PPU instruction program";
  let description = [{
    Canonicalization, then `convert-tq-to-ppu` for the machine the options
    describe.
  }];
  let options = ConvertTQToPPU.options;
  let passes = [ConvertTQToPPU];
}

def ToCPUPipeline : Pipeline<"tq-to-cpu"> {
  let summary = "Lower a tq program to the LLVM dialect for this CPU (or "
                "another target)";
  let description = [{
    The float layers between quantized convolutions moved to NHWC
    (`tq-cpu-channels-last`); with threads, the batch split into one share
    per thread where the program allows (`tq-cpu-split-batch`), on one
    thread into two shares run in turn where they take the whole program,
    hold a product and at least 32 images each (`whole`), then
    `convert-tq-to-cpu`,
    one-shot bufferization (function results become
    out-parameters), buffer deallocation, the CPU kernels of the float ops
    (`tq-cpu-float-kernels`), one function per distinct loop nest, the
    loops shared among the threads, and the conversions of every remaining
    dialect to LLVM.
  }];
  let options = !listconcat(
      ConvertTQToCPU.options,
      [Option<"outlineKernels", "outline-kernels", "bool", /*default=*/"true",
              "One function per distinct loop nest (tq-cpu-outline-kernels); "
              "off compiles each public function as one">,
       Option<"splitBatch", "split-batch", "bool", /*default=*/"true",
              "With threads, share whole images among them, one parallel "
              "loop per call (tq-cpu-split-batch), where the program "
              "allows; on one thread, two shares in turn where they take "
              "the whole program (tq-cpu-split-batch whole); not with "
              "profile">,
       Option<"channelsLast", "channels-last", "bool", /*default=*/"true",
              "Run the float layers between quantized convolutions in "
              "NHWC (tq-cpu-channels-last)">,
       Option<"profile", "profile", "bool", /*default=*/"false",
              "Time every kernel call (tq-cpu-profile-kinds, "
              "tq-cpu-outline-kernels{profile}); implies outline-kernels. "
              "The program then calls tq_profile_begin/end, which tq-run "
              "provides">]);
  let passes = [ConvertTQToCPU, TQCPUFloatKernels, TQCPUShareLoops];
}

#endif // TQ_PIPELINES_PIPELINES_TD
