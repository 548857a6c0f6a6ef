//===- tq-train.cpp - train an ONNX model with tile-quant -----------------===//
//
// Imports an ONNX classifier, derives its training step (tq-training-step),
// quantizes it (tq-quantize, unless --float), compiles it for this CPU and
// trains it on a dataset: SGD with momentum on f32 master weights, seeded
// data order. Prints the loss and accuracies per epoch, writes a JSON log
// and the trained model as ONNX with float weights.
//
//===----------------------------------------------------------------------===//
#include "tq/Dialect/TQ/IR/TQ.h"
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Roles.h"
#include "tq/ExecutionEngine/CPUModule.h"
#include "tq/Importer/ONNX.h"
#include "tq/Pipelines/Pipelines.h"
#include "tq/Runtime/Dataset.h"
#include "tq/Runtime/Interval.h"
#include "tq/Support/ToolOptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>

using namespace llvm;
namespace cpu = tq::cpu;
namespace data = tq::data;

static cl::OptionCategory toolOptions("tq-train options");
static cl::opt<std::string> modelPath(cl::cat(toolOptions), cl::Positional,
                                      cl::Required, cl::desc("<model.onnx>"));
static cl::opt<std::string>
    dataSpec(cl::cat(toolOptions), "data", cl::Required,
             cl::desc("digits, fashion-mnist, or a .npz file with x_train, "
                      "y_train, x_test and y_test"));
static cl::opt<unsigned> epochs(cl::cat(toolOptions), "epochs",
                                cl::desc("passes over the training set"),
                                cl::init(5));
static cl::opt<int64_t> batch(cl::cat(toolOptions), "batch",
                              cl::desc("samples per step"), cl::init(64));
static cl::opt<double> learningRate(cl::cat(toolOptions), "lr",
                                    cl::desc("SGD learning rate"),
                                    cl::init(0.05));
static cl::opt<double> momentum(cl::cat(toolOptions), "momentum",
                                cl::desc("SGD momentum in [0, 1)"),
                                cl::init(0.9));
static cl::opt<double> weightDecay(cl::cat(toolOptions), "weight-decay",
                                   cl::desc("L2 weight decay"), cl::init(0.0));
static cl::opt<std::string>
    quantize(cl::cat(toolOptions), "quantize",
             cl::desc("tq-quantize options of the step (\"tile=8 "
                      "act-bits=8\"); the default quantizes with tile=32. "
                      "Gradients are rounded stochastically, seeded with "
                      "--seed, unless the options name grad-rounding"),
             cl::init(""));
static cl::opt<bool> floatStep(cl::cat(toolOptions), "float",
                               cl::desc("train in f32 (no quantization)"));
static cl::opt<std::string>
    init(cl::cat(toolOptions), "init",
         cl::desc("model: start from the model's initializers; seeded: "
                  "weights U(±1/√fan_in) and zero biases from --seed"),
         cl::init("model"));
static cl::opt<uint64_t> seed(cl::cat(toolOptions), "seed",
                              cl::desc("seed of the data order, of "
                                       "--init=seeded and of the gradients' "
                                       "stochastic rounding"),
                              cl::init(0));
static cl::opt<int64_t> limitTrain(cl::cat(toolOptions), "limit-train",
                                   cl::desc("use only the first N training "
                                            "samples (0: all)"),
                                   cl::init(0));
static cl::opt<int64_t> limitTest(cl::cat(toolOptions), "limit-test",
                                  cl::desc("use only the first N test samples "
                                           "(0: all)"),
                                  cl::init(0));
static cl::opt<std::string> target(cl::cat(toolOptions), "target",
                                   cl::desc("instruction set (see tq-run)"),
                                   cl::init("native"));
static cl::opt<int64_t>
    threads(cl::cat(toolOptions), "num-threads",
            cl::desc("threads sharing the compiled loops, one per core "
                     "(see tq-run)"),
            cl::init(1));
static cl::opt<std::string> outputPath(cl::cat(toolOptions), "o",
                                       cl::desc("write the trained model "
                                                "(ONNX, float weights) here"),
                                       cl::value_desc("file.onnx"),
                                       cl::init(""));
static cl::opt<std::string> saveInit(cl::cat(toolOptions), "save-init",
                                     cl::desc("write the initial model (ONNX) "
                                              "here, for a reference run"),
                                     cl::value_desc("file.onnx"), cl::init(""));
static cl::opt<std::string> logPath(cl::cat(toolOptions), "log",
                                    cl::desc("write a JSON log here"),
                                    cl::value_desc("file.json"), cl::init(""));
static cl::opt<std::string> emitStep(cl::cat(toolOptions), "emit-step",
                                     cl::desc("write the compiled training "
                                              "step (MLIR) here"),
                                     cl::value_desc("file.mlir"), cl::init(""));

static cl::OptionCategory intervalOptions(
    "tq-train update interval (SPEC A6; defaults in docs/Training.md)");
static cl::opt<bool> updateInterval(
    cl::cat(intervalOptions), "update-interval",
    cl::desc("keep each operand's quantization parameters for a target "
             "iteration interval instead of recomputing them every step"));
static cl::opt<std::string> intervalOperands(
    cl::cat(intervalOptions), "interval-operands",
    cl::desc("whose parameters are kept: weights (the default), or all "
             "(activations and gradients too)"),
    cl::init("weights"));
static tq::IntervalOptions intervalDefaults;
static cl::opt<double>
    intervalAlpha(cl::cat(intervalOptions), "interval-alpha",
                  cl::desc("weight of the newest point position in the "
                           "moving average, in (0, 1]"),
                  cl::init(intervalDefaults.alpha));
static cl::opt<double> intervalBeta(cl::cat(intervalOptions), "interval-beta",
                                    cl::desc("I = beta / max(diff1, diff2) - "
                                             "gamma"),
                                    cl::init(intervalDefaults.beta));
static cl::opt<double> intervalGamma(cl::cat(intervalOptions), "interval-gamma",
                                     cl::desc("see beta"),
                                     cl::init(intervalDefaults.gamma));
static cl::opt<double> intervalDelta(cl::cat(intervalOptions), "interval-delta",
                                     cl::desc("diff2 = delta * diff_bit^2"),
                                     cl::init(intervalDefaults.delta));
static cl::opt<int64_t> intervalWarmup(
    cl::cat(intervalOptions), "interval-warmup",
    cl::desc("iterations at the start that recompute every time"),
    cl::init(intervalDefaults.warmup));
static cl::opt<int64_t>
    intervalMax(cl::cat(intervalOptions), "interval-max",
                cl::desc("the longest interval, in iterations"),
                cl::init(intervalDefaults.maxInterval));
static cl::opt<unsigned> intervalStableEpoch(
    cl::cat(intervalOptions), "interval-stable-epoch",
    cl::desc("from this epoch on (from 1; 0: never), recompute once per "
             "epoch"),
    cl::init(0));

static int fail(const Twine &msg) {
  errs() << "tq-train: error: " << msg << "\n";
  return 1;
}

using Clock = std::chrono::steady_clock;
static double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

namespace {

/// One parameter of the step: its name and shape, and its values.
struct Parameter {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values, momentum;
};

cpu::Buffer buffer(std::vector<float> &v, const std::vector<int64_t> &shape) {
  return {v.data(), cpu::ElementType::F32, shape};
}

/// The tq-quantize options of the step: --quantize, and, unless it names
/// grad-rounding, stochastic rounding of the gradients (with --seed, unless
/// it names a seed). Nearest rounding loses the gradients' small values to
/// 0 at low widths: the 4-bit epochs of a 4->8-bit schedule fell 2 to 5
/// points behind on the Fashion CNN (docs/Training.md).
std::string quantizeOptions() {
  SmallVector<StringRef> words;
  StringRef(quantize).split(words, ' ', -1, /*KeepEmpty=*/false);
  auto names = [&](StringRef option) {
    return llvm::any_of(words, [&](StringRef w) {
      return w.split('=').first.trim() == option;
    });
  };
  std::string options = quantize;
  if (!names("grad-rounding")) {
    options += " grad-rounding=stochastic";
    if (!names("seed"))
      options += formatv(" seed={0}", seed.getValue()).str();
  }
  return StringRef(options).trim().str();
}

/// Imports the model with the batch of `rows` samples of `sampleShape`,
/// derives the step and quantizes it. Returns the module or null.
mlir::OwningOpRef<mlir::ModuleOp>
buildStep(mlir::MLIRContext &ctx, const std::string &bytes,
          const std::vector<int64_t> &sampleShape, std::string &error) {
  // The first graph input is the batch of samples.
  std::vector<std::string> inputs;
  if (!mlir::tq::listGraphInputs(bytes, inputs, error))
    return nullptr;
  if (inputs.empty()) {
    error = "the model has no graph input";
    return nullptr;
  }
  mlir::tq::ONNXImportOptions options;
  std::vector<int64_t> shape{batch};
  shape.insert(shape.end(), sampleShape.begin(), sampleShape.end());
  options.inputShapes[inputs.front()] = shape;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::tq::importONNX(bytes, modelPath, &ctx, options, error);
  if (!module)
    return nullptr;
  mlir::PassManager pm(&ctx);
  // The model's f32 initializers are its parameters; constants the
  // importer makes (pooling divisors, folded tables) stay constant.
  std::vector<std::string> initializers;
  if (!mlir::tq::listFloatInitializers(bytes, initializers, error))
    return nullptr;
  std::string pipeline =
      formatv("tq-training-step{{momentum={0:e17} weight-decay={1:e17} "
              "keep-forward=false parameters={2}}",
              double(momentum), double(weightDecay),
              llvm::join(initializers, ","))
          .str();
  if (!floatStep)
    pipeline += ",tq-quantize{" + quantizeOptions() + "}";
  if (updateInterval)
    pipeline += formatv(",tq-update-interval{{weights-only={0}}",
                        intervalOperands == "weights")
                    .str();
  std::string pipelineError;
  raw_string_ostream os(pipelineError);
  if (failed(mlir::parsePassPipeline(pipeline, pm, os))) {
    error = "bad --quantize options: " + pipelineError;
    return nullptr;
  }
  if (failed(pm.run(*module))) {
    error = "the training step could not be built (see above)";
    return nullptr;
  }
  return module;
}

/// Makes @train_step also return the widths the run-time search chose
/// (tq.adaptive_bit_width, SPEC A4) as a tensor<Nxi32>. Returns a label
/// for each: its layer (the ONNX node) and whether it is a parameter's.
std::vector<std::string> returnWidths(mlir::func::FuncOp step) {
  llvm::SmallVector<mlir::Value> widths;
  std::vector<std::string> labels;
  step.walk([&](mlir::tq::AdaptiveBitWidthOp op) {
    std::string layer = "width" + std::to_string(labels.size());
    mlir::Location loc = op.getLoc();
    if (auto fused = dyn_cast<mlir::FusedLoc>(loc);
        fused && !fused.getLocations().empty())
      loc = fused.getLocations().front();
    if (auto name = dyn_cast<mlir::NameLoc>(loc))
      layer = name.getName().str();
    auto arg = dyn_cast<mlir::BlockArgument>(op.getInput());
    bool param =
        arg && step.getArgAttr(arg.getArgNumber(), mlir::tq::kParameterArgAttr);
    labels.push_back(layer + (param ? " (weight)" : ""));
    widths.push_back(op.getResult());
  });
  if (widths.empty())
    return labels;
  auto ret = cast<mlir::func::ReturnOp>(step.getBody().front().getTerminator());
  mlir::OpBuilder b(ret);
  mlir::Value packed = mlir::tensor::FromElementsOp::create(
      b, ret.getLoc(),
      mlir::RankedTensorType::get({int64_t(widths.size())}, b.getI32Type()),
      widths);
  ret->insertOperands(ret->getNumOperands(), packed);
  (void)step.insertResult(
      step.getNumResults(), packed.getType(),
      b.getDictionaryAttr(
          b.getNamedAttr(mlir::tq::kNameArgAttr, b.getStringAttr("widths"))));
  return labels;
}

/// The quantization parameters the step keeps across iterations
/// (tq-update-interval): the refresh flags, the steps of each operand, and
/// its target iteration interval (SPEC A6).
struct KeptParameters {
  struct Operand {
    std::string name;
    std::vector<int64_t> shape;
    std::vector<float> steps, used;
    tq::UpdateInterval interval;
  };
  std::vector<Operand> operands;
  std::vector<int32_t> refresh;
  int64_t done = 0, due = 0;

  /// The operands of `step` after tq-update-interval: the arguments after
  /// the one named "refresh".
  void find(mlir::func::FuncOp step, const tq::IntervalOptions &options) {
    for (unsigned i = 0; i < step.getNumArguments(); ++i) {
      auto name =
          step.getArgAttrOfType<mlir::StringAttr>(i, mlir::tq::kNameArgAttr);
      if (!name || name.getValue() != "refresh")
        continue;
      for (unsigned j = i + 1; j < step.getNumArguments(); ++j) {
        auto type = cast<mlir::RankedTensorType>(step.getArgument(j).getType());
        Operand o{
            step.getArgAttrOfType<mlir::StringAttr>(j, mlir::tq::kNameArgAttr)
                .str(),
            {type.getShape().begin(), type.getShape().end()},
            std::vector<float>(type.getNumElements(), 0.0f),
            std::vector<float>(type.getNumElements(), 0.0f),
            tq::UpdateInterval(options)};
        operands.push_back(std::move(o));
      }
      refresh.assign(operands.size(), 0);
      return;
    }
  }
  /// Before iteration `t`: which operands recompute, and their buffers.
  void inputs(int64_t t, std::vector<cpu::Buffer> &ins) {
    if (operands.empty())
      return;
    for (size_t i = 0; i < operands.size(); ++i)
      refresh[i] = operands[i].interval.due(t);
    ins.push_back(
        {refresh.data(), cpu::ElementType::I32, {int64_t(refresh.size())}});
    for (Operand &o : operands)
      ins.push_back(buffer(o.steps, o.shape));
  }
  void outputs(std::vector<cpu::Buffer> &outs) {
    for (Operand &o : operands)
      outs.push_back(buffer(o.used, o.shape));
  }
  /// After iteration `t`: the new intervals of those that recomputed.
  void update(int64_t t) {
    for (size_t i = 0; i < operands.size(); ++i) {
      Operand &o = operands[i];
      ++due;
      if (refresh[i]) {
        ++done;
        o.interval.recomputed(
            t, tq::pointPosition(o.used.data(), int64_t(o.used.size())));
      }
      std::swap(o.steps, o.used);
    }
  }
};

/// Accuracy of `predict` over `d` (the last partial batch padded).
double evaluate(cpu::CPUModule &m, std::vector<Parameter> &params,
                const data::Dataset &d, int64_t classes, int32_t epoch,
                std::string &error, bool &ok) {
  int64_t n = d.count(), size = d.sampleSize(), correct = 0;
  std::vector<float> x(batch * size), logits(batch * classes);
  std::vector<int64_t> xShape{batch};
  xShape.insert(xShape.end(), d.sampleShape.begin(), d.sampleShape.end());
  std::vector<cpu::Buffer> inputs;
  for (Parameter &p : params)
    inputs.push_back(buffer(p.values, p.shape));
  inputs.push_back(buffer(x, xShape));
  inputs.push_back({&epoch, cpu::ElementType::I32, {}});
  for (int64_t start = 0; start < n; start += batch) {
    int64_t rows = std::min<int64_t>(batch, n - start);
    std::fill(x.begin(), x.end(), 0.0f);
    std::copy(d.x.begin() + start * size, d.x.begin() + (start + rows) * size,
              x.begin());
    if (!m.invoke("predict", inputs, {buffer(logits, {batch, classes})},
                  error)) {
      ok = false;
      return 0;
    }
    for (int64_t r = 0; r < rows; ++r) {
      const float *row = &logits[r * classes];
      if (std::max_element(row, row + classes) - row == d.y[start + r])
        ++correct;
    }
  }
  return n ? 100.0 * double(correct) / double(n) : 0.0;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM initLLVM(argc, argv);
  tq::initToolOptions({&toolOptions, &intervalOptions});
  mlir::tq::registerTQPasses();
  mlir::tq::registerTQPipelines();
  cl::ParseCommandLineOptions(
      argc, argv,
      "tile-quant trainer: trains an ONNX classifier with quantized "
      "forward and backward passes (softmax cross-entropy, SGD)\n");

  if (batch < 1)
    return fail("--batch must be positive, got " + Twine(batch));
  if (momentum < 0 || momentum >= 1)
    return fail("--momentum must be in [0, 1)");
  if (weightDecay < 0)
    return fail("--weight-decay must be >= 0");
  if (!(learningRate > 0))
    return fail("--lr must be positive");
  if (init != "model" && init != "seeded")
    return fail("--init must be model or seeded, got '" + init + "'");
  if (floatStep && !quantize.empty())
    return fail("--float and --quantize exclude each other");
  if (updateInterval && floatStep)
    return fail("--update-interval needs a quantized step (not --float)");
  if (intervalOperands != "weights" && intervalOperands != "all")
    return fail("--interval-operands must be weights or all, got '" +
                intervalOperands + "'");
  if (!(intervalAlpha > 0 && intervalAlpha <= 1))
    return fail("--interval-alpha must be in (0, 1]");
  if (!(intervalBeta > 0) || !(intervalGamma >= 0) || !(intervalDelta >= 0))
    return fail("--interval-beta must be positive, --interval-gamma and "
                "--interval-delta >= 0");
  if (intervalWarmup < 0 || intervalMax < 1)
    return fail("--interval-warmup must be >= 0 and --interval-max >= 1");

  data::Split split;
  std::string error;
  auto t0 = Clock::now();
  if (!data::load(dataSpec, split, error))
    return fail(error);
  if (limitTrain > 0 && limitTrain < split.train.count()) {
    split.train.y.resize(limitTrain);
    split.train.x.resize(limitTrain * split.train.sampleSize());
  }
  if (limitTest > 0 && limitTest < split.test.count()) {
    split.test.y.resize(limitTest);
    split.test.x.resize(limitTest * split.test.sampleSize());
  }
  if (split.train.count() < batch)
    return fail("the training set has " + Twine(split.train.count()) +
                " samples, fewer than one batch of " + Twine(batch));

  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(modelPath);
  if (!file)
    return fail("cannot open '" + modelPath +
                "': " + file.getError().message());
  std::string bytes = (*file)->getBuffer().str();

  mlir::DialectRegistry registry;
  registry.insert<mlir::tq::TQDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                  mlir::tensor::TensorDialect, mlir::math::MathDialect>();
  mlir::MLIRContext ctx(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildStep(ctx, bytes, split.train.sampleShape, error);
  if (!module)
    return fail(modelPath + ": " + error);
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  if (!step)
    return fail(modelPath + ": no training step was built");
  std::vector<Parameter> params;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    if (!step.getArgAttr(i, mlir::tq::kParameterArgAttr))
      continue;
    Parameter p;
    p.name = step.getArgAttrOfType<mlir::StringAttr>(i, mlir::tq::kNameArgAttr)
                 .str();
    auto type = cast<mlir::RankedTensorType>(step.getArgument(i).getType());
    p.shape.assign(type.getShape().begin(), type.getShape().end());
    params.push_back(std::move(p));
  }
  KeptParameters kept;
  int64_t stepsPerEpoch = split.train.count() / batch;
  if (updateInterval) {
    tq::IntervalOptions o;
    o.alpha = intervalAlpha;
    o.beta = intervalBeta;
    o.gamma = intervalGamma;
    o.delta = intervalDelta;
    o.warmup = intervalWarmup;
    o.maxInterval = intervalMax;
    o.stable = int64_t(intervalStableEpoch) > 0
                   ? (int64_t(intervalStableEpoch) - 1) * stepsPerEpoch
                   : -1;
    o.period = stepsPerEpoch;
    kept.find(step, o);
    if (kept.operands.empty())
      errs() << "tq-train: warning: --update-interval: the step has no "
                "quantization of a fixed width to keep (all are chosen at "
                "run time)\n";
  }
  // The logits come last, before the steps tq-update-interval returns.
  auto logitsType = cast<mlir::RankedTensorType>(
      step.getResultTypes()[step.getNumResults() - 1 - kept.operands.size()]);
  std::vector<std::string> widthLabels = returnWidths(step);
  int64_t classes = logitsType.getDimSize(1);
  if (split.classes > classes)
    return fail("the dataset has " + Twine(split.classes) +
                " classes but the model " + Twine(classes) + " outputs");

  std::string text;
  raw_string_ostream os(text);
  module->print(os);
  if (!emitStep.empty()) {
    std::error_code ec;
    ToolOutputFile out(emitStep, ec, sys::fs::OF_None);
    if (ec)
      return fail("cannot write '" + emitStep + "': " + ec.message());
    out.os() << text;
    out.keep();
  }
  cpu::CompileOptions options;
  options.target = target;
  options.threads = threads;
  cpu::keepFreedMemory();
  if (threads > 1)
    cpu::bindThreadsToCores();
  std::unique_ptr<cpu::CPUModule> compiled =
      cpu::CPUModule::compile(text, modelPath, options, error);
  if (!compiled)
    return fail(error);
  double buildSeconds = since(t0);

  // Initial values: the model's, or seeded.
  {
    std::vector<cpu::Buffer> outs;
    for (Parameter &p : params) {
      int64_t n = 1;
      for (int64_t d : p.shape)
        n *= d;
      p.values.assign(n, 0.0f);
      p.momentum.assign(n, 0.0f);
      outs.push_back(buffer(p.values, p.shape));
    }
    if (!compiled->invoke("initial_parameters", {}, outs, error))
      return fail(error);
    if (init == "seeded") {
      data::SplitMix64 rng(seed ^ 0x5EEDull);
      for (Parameter &p : params) {
        if (p.shape.size() < 2) {
          std::fill(p.values.begin(), p.values.end(), 0.0f);
          continue;
        }
        int64_t fanIn = int64_t(p.values.size()) / p.shape[0];
        float bound = 1.0f / std::sqrt(float(fanIn));
        for (float &v : p.values)
          v = (2.0f * rng.uniform() - 1.0f) * bound;
      }
    }
  }
  auto writeModel = [&](const std::string &path) -> bool {
    std::map<std::string, std::vector<float>> values;
    for (const Parameter &p : params)
      values[p.name] = p.values;
    std::string out;
    if (!mlir::tq::replaceInitializers(bytes, values, out, error))
      return false;
    std::error_code ec;
    ToolOutputFile f(path, ec, sys::fs::OF_None);
    if (ec) {
      error = "cannot write '" + path + "': " + ec.message();
      return false;
    }
    f.os() << out;
    f.keep();
    return true;
  };
  if (!saveInit.empty() && !writeModel(saveInit))
    return fail(error);

  int64_t size = split.train.sampleSize();
  int64_t steps = stepsPerEpoch;
  outs() << "tq-train: " << modelPath << ", " << params.size()
         << " parameters, " << (floatStep ? "f32" : "quantized") << " step; "
         << dataSpec << ": " << split.train.count() << " training and "
         << split.test.count() << " test samples; " << steps << " steps of "
         << batch << " per epoch; built in " << format("%.2f", buildSeconds)
         << " s\n";

  std::vector<int64_t> xShape{batch};
  xShape.insert(xShape.end(), split.train.sampleShape.begin(),
                split.train.sampleShape.end());
  std::vector<float> x(batch * size), logits(batch * classes), loss(1);
  std::vector<int64_t> labels(batch);
  std::vector<int32_t> widths(widthLabels.size());
  std::vector<float> lr{float(learningRate)};
  std::vector<Parameter> next = params;
  data::SplitMix64 order(seed);
  bool tty = sys::Process::StandardErrIsDisplayed();
  json::Array epochLog;
  double testAccuracy = 0;
  for (unsigned epoch = 1; epoch <= epochs; ++epoch) {
    auto te = Clock::now();
    int32_t epochIndex = int32_t(epoch - 1);
    std::vector<int64_t> perm = data::shuffle(split.train.count(), order);
    double lossSum = 0;
    int64_t correct = 0;
    std::vector<double> widthSums(widths.size(), 0.0);
    std::vector<double> stepSeconds;
    for (int64_t s = 0; s < steps; ++s) {
      auto ts = Clock::now();
      for (int64_t r = 0; r < batch; ++r) {
        int64_t i = perm[s * batch + r];
        std::copy(split.train.x.begin() + i * size,
                  split.train.x.begin() + (i + 1) * size, x.begin() + r * size);
        labels[r] = split.train.y[i];
      }
      std::vector<cpu::Buffer> ins, outsB;
      for (Parameter &p : params)
        ins.push_back(buffer(p.values, p.shape));
      if (momentum != 0)
        for (Parameter &p : params)
          ins.push_back(buffer(p.momentum, p.shape));
      ins.push_back(buffer(x, xShape));
      ins.push_back({labels.data(), cpu::ElementType::I64, {batch}});
      ins.push_back({lr.data(), cpu::ElementType::F32, {}});
      ins.push_back({&epochIndex, cpu::ElementType::I32, {}});
      int64_t iteration = int64_t(epochIndex) * steps + s;
      // Stochastic rounding offsets its seeds by it (modulo 2^32).
      int32_t iteration32 = int32_t(uint32_t(uint64_t(iteration)));
      ins.push_back({&iteration32, cpu::ElementType::I32, {}});
      kept.inputs(iteration, ins);
      for (Parameter &p : next)
        outsB.push_back(buffer(p.values, p.shape));
      if (momentum != 0)
        for (Parameter &p : next)
          outsB.push_back(buffer(p.momentum, p.shape));
      outsB.push_back({loss.data(), cpu::ElementType::F32, {}});
      outsB.push_back(buffer(logits, {batch, classes}));
      kept.outputs(outsB);
      if (!widthLabels.empty())
        outsB.push_back(
            {widths.data(), cpu::ElementType::I32, {int64_t(widths.size())}});
      if (!compiled->invoke("train_step", ins, outsB, error))
        return fail(error);
      stepSeconds.push_back(since(ts));
      std::swap(params, next);
      kept.update(iteration);
      lossSum += loss[0];
      for (size_t w = 0; w < widths.size(); ++w)
        widthSums[w] += widths[w];
      for (int64_t r = 0; r < batch; ++r) {
        const float *row = &logits[r * classes];
        if (std::max_element(row, row + classes) - row == labels[r])
          ++correct;
      }
      if (tty) {
        int filled = int(30 * (s + 1) / steps);
        errs() << "\repoch " << epoch << "/" << epochs << " ["
               << std::string(filled, '=') << std::string(30 - filled, ' ')
               << "] " << (s + 1) << "/" << steps << " loss "
               << format("%.4f", lossSum / double(s + 1));
      }
    }
    if (tty)
      errs() << "\r" << std::string(72, ' ') << "\r";
    double trainSeconds = since(te);
    // The median step: the first ones pay one-time costs (the threads'
    // start-up, first touches of memory), which a short epoch would spread
    // over its few steps.
    std::sort(stepSeconds.begin(), stepSeconds.end());
    double msPerStep =
        stepSeconds.empty() ? 0.0 : 1e3 * stepSeconds[stepSeconds.size() / 2];
    if (!std::isfinite(lossSum))
      return fail("epoch " + Twine(epoch) +
                  ": the loss is not finite (lower --lr?)");
    bool ok = true;
    testAccuracy =
        evaluate(*compiled, params, split.test, classes, epochIndex, error, ok);
    if (!ok)
      return fail(error);
    double meanLoss = lossSum / double(steps);
    double trainAccuracy = 100.0 * double(correct) / double(steps * batch);
    outs() << "epoch " << epoch << "/" << epochs << ": loss "
           << format("%.4f", meanLoss) << ", train accuracy "
           << format("%.2f", trainAccuracy) << "%, test accuracy "
           << format("%.2f", testAccuracy) << "%, "
           << format("%.2f", trainSeconds) << " s ("
           << format("%.2f", msPerStep) << " ms/step)";
    json::Object entry{
        {"epoch", int64_t(epoch)},         {"loss", meanLoss},
        {"train_accuracy", trainAccuracy}, {"test_accuracy", testAccuracy},
        {"seconds", trainSeconds},         {"ms_per_step", msPerStep}};
    if (!widths.empty()) {
      // The mean width of each run-time choice over the epoch's steps.
      json::Object perWidth;
      double bitsSum = 0;
      for (size_t w = 0; w < widths.size(); ++w) {
        double mean = widthSums[w] / double(steps);
        bitsSum += mean;
        perWidth[widthLabels[w] + " #" + std::to_string(w)] = mean;
      }
      double averageBits = bitsSum / double(widths.size());
      outs() << ", adaptive widths " << format("%.2f", averageBits)
             << " bits on average";
      entry["average_bits"] = averageBits;
      entry["widths"] = std::move(perWidth);
    }
    if (!kept.operands.empty()) {
      // SPEC A6: parameter recomputations done, of those due every step.
      outs() << ", parameters recomputed " << kept.done << " of " << kept.due
             << " times ("
             << format("%.1f", double(kept.due) /
                                   double(std::max<int64_t>(kept.done, 1)))
             << "x fewer)";
      entry["recomputations"] = kept.done;
      entry["recomputations_saved"] = kept.due - kept.done;
      json::Object intervals;
      for (const KeptParameters::Operand &o : kept.operands)
        intervals[o.name] = o.interval.interval();
      entry["intervals"] = std::move(intervals);
    }
    outs() << "\n";
    epochLog.push_back(std::move(entry));
  }

  if (!outputPath.empty()) {
    if (!writeModel(outputPath))
      return fail(error);
    outs() << "tq-train: wrote " << outputPath << "\n";
  }
  if (!logPath.empty()) {
    json::Object log{{"model", modelPath.getValue()},
                     {"data", dataSpec.getValue()},
                     {"step", floatStep ? "f32" : "quantized"},
                     {"quantize", floatStep ? "" : quantizeOptions()},
                     {"batch", batch.getValue()},
                     {"lr", learningRate.getValue()},
                     {"momentum", momentum.getValue()},
                     {"weight_decay", weightDecay.getValue()},
                     {"init", init.getValue()},
                     {"seed", int64_t(seed)},
                     {"train_samples", split.train.count()},
                     {"test_samples", split.test.count()},
                     {"build_seconds", buildSeconds},
                     {"update_interval",
                      updateInterval ? json::Value(intervalOperands.getValue())
                                     : json::Value(false)},
                     {"epochs", std::move(epochLog)},
                     {"test_accuracy", testAccuracy}};
    std::error_code ec;
    ToolOutputFile f(logPath, ec, sys::fs::OF_None);
    if (ec)
      return fail("cannot write '" + logPath + "': " + ec.message());
    f.os() << formatv("{0:2}", json::Value(std::move(log))) << "\n";
    f.keep();
  }
  return 0;
}
