//===- PPUTranspose.cpp - tq-bench ppu-transpose --------------------------===//
//
// The claim of seed 000, measured on what the compiler emits: a layer's
// forward product and both backward products (dX = dY.W^T, dW = X^T.dY),
// written as a float program, quantized by tq-quantize with square VxV
// tiles or with 1xV vectors (granularity=vector), partitioned and compiled
// by tq-to-ppu, and run on the simulator. With square tiles the transposed
// uses read the stored tiles through LOAD's transpose; with vectors,
// tq-fold-transposes shares each quantization and the transposed uses are
// requantized (tq.requantize, REQ in the stream). Every figure comes from
// running the compiled streams.
//
//===----------------------------------------------------------------------===//
#include "tq/Driver/Driver.h"
#include "tq/ExecutionEngine/PPUModule.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <random>
#include <sstream>

using namespace llvm;
namespace ppu = tq::ppu;
namespace cpu = tq::cpu;

cl::SubCommand ppuTransposeCmd(
    "ppu-transpose",
    "Square VxV tiles vs per-vector 1xV scaling in the forward and backward "
    "products the compiler emits for the PPU");
static cl::list<unsigned> tileSizes("tiles", cl::CommaSeparated,
                                    cl::desc("tile sizes V (default 16,32)"),
                                    cl::sub(ppuTransposeCmd));
static cl::opt<std::string>
    costOpt("cost",
            cl::desc("cost-model parameters, as tq-ppu-sim --cost "
                     "(\"banks=4 layout=slot overlap=0\")"),
            cl::init(""), cl::sub(ppuTransposeCmd));
static cl::opt<unsigned> dataRows("rows",
                                  cl::desc("data-buffer rows of the machine "
                                           "(2: double buffering)"),
                                  cl::init(2), cl::sub(ppuTransposeCmd));
static cl::opt<bool> small("small",
                           cl::desc("small layers (a quick check of the "
                                    "benchmark itself)"),
                           cl::init(false), cl::sub(ppuTransposeCmd));

static cl::opt<std::string>
    printPrograms("print-programs",
                  cl::desc("write each quantized program to DIR/<layer>-<V>-"
                           "<granularity>.mlir"),
                  cl::value_desc("DIR"), cl::init(""),
                  cl::sub(ppuTransposeCmd));

namespace {

int fail(const Twine &msg) {
  errs() << "tq-bench: error: " << msg << "\n";
  return 1;
}

std::string tensor(std::initializer_list<int64_t> dims) {
  std::string s = "tensor<";
  for (int64_t d : dims)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

/// `%name = linalg.fill 0` of type `t`.
std::string zeros(const std::string &name, const std::string &t) {
  return "  %" + name + "0 = tensor.empty() : " + t + "\n  %" + name +
         " = linalg.fill ins(%zero : f32) outs(%" + name + "0 : " + t +
         ") -> " + t + "\n";
}

std::string transpose(const std::string &out, const std::string &in,
                      const std::string &inT, const std::string &outT) {
  return "  %" + out + "0 = tensor.empty() : " + outT + "\n  %" + out +
         " = linalg.transpose ins(%" + in + " : " + inT + ") outs(%" + out +
         "0 : " + outT + ") permutation = [1, 0]\n";
}

std::string matmul(const std::string &out, const std::string &a,
                   const std::string &aT, const std::string &b,
                   const std::string &bT, const std::string &outT) {
  return zeros(out + "i", outT) + "  %" + out + " = linalg.matmul ins(%" + a +
         ", %" + b + " : " + aT + ", " + bT + ") outs(%" + out + "i : " + outT +
         ") -> " + outT + "\n";
}

/// Y = X.W, dX = dY.W^T, dW = X^T.dY for X [B, I], W [I, O].
std::string mlpLayer(int64_t B, int64_t I, int64_t O) {
  std::string x = tensor({B, I}), w = tensor({I, O}), y = tensor({B, O}),
              wt = tensor({O, I}), xt = tensor({I, B});
  std::ostringstream os;
  os << "func.func @layer(%x: " << x << ", %w: " << w << ", %dy: " << y
     << ") -> (" << y << ", " << x << ", " << w << ") {\n"
     << "  %zero = arith.constant 0.0 : f32\n"
     << matmul("y", "x", x, "w", w, y) << transpose("wt", "w", w, wt)
     << matmul("dx", "dy", y, "wt", wt, x) << transpose("xt", "x", x, xt)
     << matmul("dw", "xt", xt, "dy", y, w) << "  return %y, %dx, %dw : " << y
     << ", " << x << ", " << w << "\n}\n";
  return os.str();
}

/// A 3x3 convolution (padding 1) of X [N, C, H, W] by W [K, C, 3, 3] and
/// its gradients on the GEMM form (tq-training-step's for strided
/// convolutions): dW = dYm^T . im2col(X) and dXcol = dYm . Wm, where dYm is dY
/// as an [N*H*W, K] matrix and Wm the filter as [K, C*9]. (col2im, a float
/// scatter on the host, is left out: it has no quantized operand.)
std::string convLayer(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K) {
  int64_t rows = N * H * W, cols = C * 9;
  std::string x = tensor({N, C, H, W}), xp = tensor({N, C, H + 2, W + 2}),
              f = tensor({K, C, 3, 3}), y = tensor({N, K, H, W}),
              yNHWC = tensor({N, H, W, K}), ym = tensor({rows, K}),
              ymt = tensor({K, rows}), col6 = tensor({N, H, W, C, 3, 3}),
              col = tensor({rows, cols}), wm = tensor({K, cols});
  std::ostringstream os;
  os << "#in = affine_map<(n, p, q, c, r, s) -> (n, c, p + r, q + s)>\n"
     << "#out = affine_map<(n, p, q, c, r, s) -> (n, p, q, c, r, s)>\n"
     << "func.func @layer(%x: " << x << ", %f: " << f << ", %dy: " << y
     << ") -> (" << y << ", " << wm << ", " << col << ") {\n"
     << "  %zero = arith.constant 0.0 : f32\n"
     << "  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {\n"
     << "  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):\n"
     << "    tensor.yield %zero : f32\n  } : " << x << " to " << xp << "\n"
     << zeros("yi", y)
     << "  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : "
        "tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xp, %f : "
     << xp << ", " << f << ") outs(%yi : " << y << ") -> " << y << "\n"
     << "  %dyt0 = tensor.empty() : " << yNHWC << "\n"
     << "  %dyt = linalg.transpose ins(%dy : " << y
     << ") outs(%dyt0 : " << yNHWC << ") permutation = [0, 2, 3, 1]\n"
     << "  %dym = tensor.collapse_shape %dyt [[0, 1, 2], [3]] : " << yNHWC
     << " into " << ym << "\n"
     << "  %col0 = tensor.empty() : " << col6 << "\n"
     << "  %col6 = linalg.generic {indexing_maps = [#in, #out], "
        "iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
        "\"parallel\", \"parallel\", \"parallel\"]} ins(%xp : "
     << xp << ") outs(%col0 : " << col6 << ") {\n"
     << "  ^bb0(%a: f32, %b: f32):\n    linalg.yield %a : f32\n  } -> " << col6
     << "\n"
     << "  %col = tensor.collapse_shape %col6 [[0, 1, 2], [3, 4, 5]] : " << col6
     << " into " << col << "\n"
     << transpose("dymt", "dym", ym, ymt)
     << matmul("dw", "dymt", ymt, "col", col, wm)
     << "  %wm = tensor.collapse_shape %f [[0], [1, 2, 3]] : " << f << " into "
     << wm << "\n"
     << matmul("dxcol", "dym", ym, "wm", wm, col)
     << "  return %y, %dw, %dxcol : " << y << ", " << wm << ", " << col
     << "\n}\n";
  return os.str();
}

struct Layer {
  std::string name, file, source;
};

struct Result {
  ppu::Stats stats;
  uint64_t launches = 0;
};

/// Quantizes, compiles and runs `source` on the PPU (with the host) once,
/// on random inputs.
bool measure(const Layer &l, unsigned V, const char *granularity,
             const ppu::CostModel &cost, Result &out, std::string &error) {
  tq::driver::ProgramOptions options;
  options.import.function = "layer";
  options.quantizeOptions =
      "tile=" + std::to_string(V) + " granularity=" + granularity;
  tq::driver::Program program;
  if (!tq::driver::buildProgramFromMLIR(l.source, l.name, options, program,
                                        error))
    return false;
  if (!printPrograms.empty()) {
    std::string path = printPrograms + "/" + l.file + "-" + std::to_string(V) +
                       "-" + granularity + ".mlir";
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    if (ec) {
      error = "cannot write '" + path + "': " + ec.message();
      return false;
    }
    os << program.text;
  }
  ppu::PPUCompileOptions ppuOptions;
  ppuOptions.machine = "v=" + std::to_string(V) + " mac=" + std::to_string(V) +
                       " rows=" + std::to_string(dataRows);
  ppuOptions.cost = cost;
  std::unique_ptr<ppu::PPUModule> m =
      ppu::PPUModule::compile(program.text, l.name, ppuOptions, error);
  if (!m)
    return false;
  cpu::Signature sig;
  if (!m->signature("layer", sig, error))
    return false;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  std::vector<std::vector<float>> storage;
  std::vector<cpu::Buffer> ins, outs;
  for (auto [types, buffers] :
       {std::pair{&sig.inputs, &ins}, std::pair{&sig.outputs, &outs}})
    for (const cpu::BufferType &t : *types) {
      if (t.element != cpu::ElementType::F32) {
        error = "unexpected buffer " + t.name;
        return false;
      }
      storage.emplace_back(t.numElements());
      for (float &v : storage.back())
        v = dist(rng);
      buffers->push_back({storage.back().data(), t.element, t.shape});
    }
  if (!m->invoke("layer", ins, outs, error))
    return false;
  out.stats = m->stats();
  out.launches = m->launches();
  return true;
}

std::string percent(double share) {
  std::string s;
  raw_string_ostream(s) << format("%.0f%%", 100 * share);
  return s;
}

} // namespace

int runPPUTranspose() {
  std::vector<unsigned> vs(tileSizes.begin(), tileSizes.end());
  if (vs.empty())
    vs = {16, 32};
  for (unsigned v : vs)
    if (v < 2 || v > 256)
      return fail("tile sizes must be in [2, 256], got " + Twine(v));
  if (dataRows < 1 || dataRows > 256)
    return fail("--rows must be in [1, 256], got " + Twine(dataRows));
  ppu::CostModel cost;
  std::string error;
  if (!ppu::parseCostModel(costOpt, cost, error))
    return fail("--cost: " + error);
  std::vector<Layer> layers;
  if (small) {
    layers.push_back({"MLP 40->24, batch 20", "mlp", mlpLayer(20, 40, 24)});
    layers.push_back(
        {"conv 3x3 8->16 on 2x5x5", "conv", convLayer(2, 8, 5, 5, 16)});
  } else {
    layers.push_back({"MLP 512->256, batch 64", "mlp", mlpLayer(64, 512, 256)});
    layers.push_back(
        {"conv 3x3 64->128 on 4x14x14", "conv", convLayer(4, 64, 14, 14, 128)});
  }
  outs() << "Forward, dX and dW of each layer, 8-bit, compiled by tq-quantize "
            "and tq-to-ppu (rows="
         << dataRows << ", mac=V) and run on the simulator; cost model "
         << (costOpt.empty() ? std::string("defaults") : cost.str()) << ".\n\n"
         << "| layer | V | scaling | kernels | UB reads | UB bytes read | "
            "requantizations | transposed loads | cycles | serial cycles | "
            "load / mac / post / datapath busy |\n"
         << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Layer &l : layers)
    for (unsigned v : vs) {
      Result sq, pv;
      if (!measure(l, v, "tile", cost, sq, error) ||
          !measure(l, v, "vector", cost, pv, error))
        return fail(l.name + " (V=" + Twine(v) + "): " + error);
      for (auto [name, r] :
           {std::pair<const char *, Result &>{"VxV", sq}, {"1xV", pv}}) {
        const ppu::Stats &s = r.stats;
        outs() << "| " << l.name << " | " << v << " | " << name << " | "
               << r.launches << " | " << s.ubReads << " | " << s.ubBytesRead
               << " | " << s.requantizations << " | " << s.transposes << " | "
               << s.cycles << " | " << s.serialCycles << " | "
               << percent(s.utilisation(ppu::Unit::Load)) << " / "
               << percent(s.utilisation(ppu::Unit::Mac)) << " / "
               << percent(s.utilisation(ppu::Unit::Post)) << " / "
               << percent(s.utilisation(ppu::Unit::Datapath)) << " |\n";
      }
      const ppu::Stats &a = sq.stats, &b = pv.stats;
      outs() << "| " << l.name << " | " << v << " | 1xV / VxV | | "
             << format("%.3f", double(b.ubReads) / a.ubReads) << " | "
             << format("%.3f", double(b.ubBytesRead) / a.ubBytesRead) << " | "
             << b.requantizations << " vs " << a.requantizations << " | | "
             << format("%.3f", double(b.cycles) / a.cycles) << " | "
             << format("%.3f", double(b.serialCycles) / a.serialCycles)
             << " | |\n";
    }
  return 0;
}
