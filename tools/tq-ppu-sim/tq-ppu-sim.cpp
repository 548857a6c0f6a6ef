//===- tq-ppu-sim.cpp - run a PPU instruction stream ----------------------===//
//
//   tq-ppu-sim STREAM --input x=x.npy [--width n=6] --output y=y.npy
//              [--report=json] [--cost="banks=4 layout=slot overlap=0"]
//
// STREAM is the binary form or the text listing (tq/Target/PPUISA/ISA.h).
// --cost sets the cost model's parameters (tq/Runtime/PPUCost.h).
// Inputs and outputs are .npy arrays bound by name, width inputs (run-time
// bit widths) integers; the statistics
// (reads, writes, MAC operations, cycles) go to stdout or --report-file.
//
//===----------------------------------------------------------------------===//
#include "tq/Runtime/Npy.h"
#include "tq/Runtime/PPUSim.h"
#include "tq/Support/ToolOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace llvm;

static cl::OptionCategory toolOptions("tq-ppu-sim options");
namespace ppu = tq::ppu;
namespace npy = tq::npy;

static cl::opt<std::string> streamPath(cl::cat(toolOptions), cl::Positional,
                                       cl::Required, cl::desc("<stream>"));
static cl::list<std::string> inputs(cl::cat(toolOptions), "input",
                                    cl::desc("NAME=FILE.npy: bind an input"));
static cl::list<std::string>
    widthInputs(cl::cat(toolOptions), "width",
                cl::desc("NAME=BITS: set a width input (2..16)"));
static cl::list<std::string>
    outputs(cl::cat(toolOptions), "output",
            cl::desc("NAME=FILE.npy: write an output"));
static cl::opt<std::string>
    statsFormat(cl::cat(toolOptions), "report",
                cl::desc("statistics report: text, json or none"),
                cl::init("text"));
static cl::opt<std::string> statsFile(cl::cat(toolOptions), "report-file",
                                      cl::desc("write statistics here"),
                                      cl::init("-"));
static cl::opt<std::string> machineOpt(
    cl::cat(toolOptions), "machine",
    cl::desc("the machine to run on, as tq-run --machine (tq-to-ppu "
             "options), e.g. \"v=16 rows=2\": a stream compiled for another "
             "is rejected"));

static cl::opt<std::string>
    costOpt(cl::cat(toolOptions), "cost",
            cl::desc("cost-model parameters: banks=N word-bits=N "
                     "layout=rows|cols|slot overlap=0|1 (docs/PPU.md)"));

static int fail(const Twine &msg) {
  errs() << "tq-ppu-sim: error: " << msg << "\n";
  return 1;
}

static bool splitBinding(StringRef arg, std::string &name, std::string &file) {
  auto [n, f] = arg.split('=');
  name = n.str();
  file = f.str();
  return !name.empty() && !file.empty();
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  tq::initToolOptions({&toolOptions});
  cl::ParseCommandLineOptions(argc, argv, "PPU simulator\n");
  if (statsFormat != "text" && statsFormat != "json" && statsFormat != "none")
    return fail("--report must be text, json or none, got '" + statsFormat +
                "'");
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(streamPath);
  if (!file)
    return fail("cannot open '" + streamPath +
                "': " + file.getError().message());
  StringRef buf = (*file)->getBuffer();
  ppu::Stream stream;
  std::string error;
  bool ok = buf.starts_with(StringRef("TQPPU\0", 6))
                ? ppu::decode(reinterpret_cast<const uint8_t *>(buf.data()),
                              buf.size(), stream, error)
                : ppu::parse(buf.str(), stream, error);
  if (!ok)
    return fail(streamPath + ": " + error);
  if (!machineOpt.empty()) {
    // The syntax of tq-run --machine (tq-to-ppu options): any of v (or V),
    // mac, ub, rows, acc, fmem; each one given must be the stream's.
    const ppu::MachineConfig &m = stream.machine;
    SmallVector<StringRef> fields;
    StringRef(machineOpt).split(fields, ' ', -1, /*KeepEmpty=*/false);
    for (StringRef field : fields) {
      auto [key, value] = field.split('=');
      uint64_t n;
      if (value.empty() || value.getAsInteger(10, n))
        return fail("malformed --machine '" + machineOpt +
                    "': expected KEY=N fields, got '" + field + "'");
      std::optional<uint64_t> have;
      if (key == "v" || key == "V")
        have = m.V;
      else if (key == "mac")
        have = m.macUnits;
      else if (key == "ub")
        have = m.ubTiles;
      else if (key == "rows")
        have = m.dataRows;
      else if (key == "acc")
        have = m.accTiles;
      else if (key == "fmem")
        have = m.fmemTiles;
      else
        return fail("unknown --machine key '" + key +
                    "' (expected v, mac, ub, rows, acc or fmem)");
      if (*have != n)
        return fail("the stream was compiled for the machine (" + m.str() +
                    "): its " + key + " is " + Twine(*have) + ", not " +
                    Twine(n));
    }
  }
  ppu::CostModel cost;
  if (!ppu::parseCostModel(costOpt, cost, error))
    return fail("--cost: " + error);
  ppu::Simulator sim(stream, cost);
  std::set<std::string> bound;
  for (const std::string &arg : inputs) {
    std::string name, path;
    if (!splitBinding(arg, name, path))
      return fail("--input expects NAME=FILE.npy, got '" + arg + "'");
    if (!bound.insert(name).second)
      return fail("input '" + name + "' is bound twice");
    npy::Array a;
    if (!npy::read(path, a, error))
      return fail(error);
    // fmem holds f32: other dtypes would be converted silently (tq-run
    // rejects them too).
    if (a.dtype != npy::DType::F32)
      return fail(path + ": input '" + name + "' must be float32 (<f4), got " +
                  npy::descr(a.dtype));
    std::vector<uint32_t> shape(a.shape.begin(), a.shape.end());
    if (!sim.setInput(name, a.toFloat(), shape, error))
      return fail(path + ": " + error);
  }
  for (const std::string &arg : widthInputs) {
    auto [name, value] = StringRef(arg).split('=');
    int64_t bits;
    if (name.empty() || value.getAsInteger(10, bits))
      return fail("--width expects NAME=BITS, got '" + arg + "'");
    if (!sim.setWidth(name.str(), bits, error))
      return fail(error);
  }
  // An input left unbound would run on zeros.
  for (const ppu::Binding &b : stream.bindings)
    if (!b.output && !b.isWidth() && !bound.count(b.name))
      return fail("input '" + b.name + "' is not bound (--input=" + b.name +
                  "=FILE.npy)");
  if (!sim.run(error))
    return fail(error);
  for (const std::string &arg : outputs) {
    std::string name, path;
    if (!splitBinding(arg, name, path))
      return fail("--output expects NAME=FILE.npy, got '" + arg + "'");
    std::vector<uint32_t> shape;
    std::vector<float> data = sim.output(name, shape);
    if (shape.empty())
      return fail("no output named '" + name + "'");
    std::vector<int64_t> dims(shape.begin(), shape.end());
    if (!npy::write(path, npy::Array::from(npy::DType::F32, dims, data), error))
      return fail(error);
  }
  if (statsFormat != "none") {
    std::error_code ec;
    raw_fd_ostream os(statsFile, ec);
    if (ec)
      return fail("cannot write '" + statsFile + "': " + ec.message());
    os << (statsFormat == "json" ? sim.stats().json() + "\n"
                                 : sim.stats().text());
  }
  return 0;
}
