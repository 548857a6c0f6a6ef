//===- CPUMatmul.cpp - tq-bench cpu-matmul --------------------------------===//
//
// The tiled int8 matmul that tq-to-cpu generates (A: a tiled argument,
// B: constant weights packed at compile time), against oneDNN's int8 and
// f32 matmuls, OpenBLAS sgemm (OPENBLAS_CORETYPE=SkylakeX on AVX-512
// hosts, set for it alone) and an int8 peak loop (vpdpbusd, or vpmaddwd
// without VNNI), all measured in this run, in rounds: the peers in a child
// process, then tile-quant's configurations. The child exits, and the
// rounds after the first wait for tile-quant's OpenMP threads to stop
// spinning before it starts, so that neither side's threads are busy
// while the other runs: 2-thread figures need the other core idle. Every
// configuration tile-quant times is checked: its product must be the
// reference numerics' (tq::ref::matmulTiled), bit for bit, on the first
// call and on the last timed one of each round.
//
//===----------------------------------------------------------------------===//
#include "Baselines.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"
#include "tq/ExecutionEngine/CPUModule.h"
#include "tq/Runtime/Quant.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace llvm;
namespace cpu = tq::cpu;
namespace bench = tq::bench;

cl::SubCommand cpuMatmulCmd(
    "cpu-matmul",
    "Tiled int8 matmul on the CPU backend vs oneDNN, OpenBLAS and peak");
static cl::list<std::string>
    shapes("shapes", cl::CommaSeparated,
           cl::desc("MxNxK shapes (default 1024x1024x1024,256x4096x4096,"
                    "1x4096x4096)"),
           cl::sub(cpuMatmulCmd));
static cl::list<unsigned> tiles("tiles", cl::CommaSeparated,
                                cl::desc("tile sizes V (default 32,128)"),
                                cl::sub(cpuMatmulCmd));
static cl::list<unsigned> threadCounts("thread-counts", cl::CommaSeparated,
                                       cl::desc("thread counts (default 1,2)"),
                                       cl::sub(cpuMatmulCmd));
static cl::opt<bool> int4("int4",
                          cl::desc("also time 4-bit weights (packed two "
                                   "per byte) against 8-bit at the largest V"),
                          cl::init(true), cl::sub(cpuMatmulCmd));
static cl::opt<std::string> target("target",
                                   cl::desc("tile-quant's instruction set"),
                                   cl::init("native"), cl::sub(cpuMatmulCmd));
static cl::opt<unsigned>
    rounds("rounds",
           cl::desc("rounds of the peers and tq in turn; each figure is the "
                    "fastest of its rounds"),
           cl::init(3), cl::sub(cpuMatmulCmd));
static cl::opt<bool> peers("peers",
                           cl::desc("measure oneDNN, OpenBLAS and the peak"),
                           cl::init(true), cl::sub(cpuMatmulCmd));

namespace {
struct Shape {
  int64_t M, N, K;
  std::string str() const {
    return std::to_string(M) + "x" + std::to_string(N) + "x" +
           std::to_string(K);
  }
};

std::string hex(const void *data, size_t bytes) {
  return "0x" + toHex(StringRef(static_cast<const char *>(data), bytes));
}

/// The operands of one configuration: A (8-bit, tiled, the argument) and
/// B (`bits`-bit weights, the constant), each with random values and steps.
struct Operands {
  std::vector<int8_t> a, w;
  std::vector<float> sa, sw;
};

Operands makeOperands(const Shape &s, unsigned v, unsigned bits) {
  std::mt19937 rng(v * 7919 + s.N);
  auto values = [&](std::vector<int8_t> &x, int64_t n, unsigned width) {
    int qmax = (1 << (width - 1)) - 1;
    x.resize(n);
    for (int8_t &e : x)
      e = int8_t(int(rng() % (2 * qmax + 1)) - qmax);
  };
  auto steps = [&](std::vector<float> &x, int64_t n) {
    x.resize(n);
    for (float &e : x)
      e = 0.001f * float(1 + rng() % 100);
  };
  int64_t gm = (s.M + v - 1) / v, gk = (s.K + v - 1) / v,
          gn = (s.N + v - 1) / v;
  Operands o;
  values(o.w, s.K * s.N, bits);
  steps(o.sw, gk * gn);
  values(o.a, s.M * s.K, 8);
  steps(o.sa, gm * gk);
  return o;
}

/// C = A·B by the reference numerics (tq::ref::matmulTiled).
std::vector<float> referenceProduct(const Shape &s, unsigned v, unsigned bits,
                                    const Operands &o, std::string &error) {
  auto tiled = [&](int64_t rows, int64_t cols, const std::vector<int8_t> &q,
                   const std::vector<float> &steps, int width) {
    tq::ref::TiledTensor t;
    t.shape = {rows, cols};
    t.layout.tile[0] = t.layout.tile[1] = v;
    t.q.assign(q.begin(), q.end());
    for (float step : steps) {
      tq::ref::TileParams p;
      p.bits = width;
      p.factor = step;
      t.params.push_back(p);
    }
    return t;
  };
  tq::ref::TiledTensor a = tiled(s.M, s.K, o.a, o.sa, 8),
                       b = tiled(s.K, s.N, o.w, o.sw, bits);
  tq::ref::MatmulOperand ma, mb;
  ma.tiled = &a;
  mb.tiled = &b;
  tq::ref::FloatTensor c;
  tq::ref::Status st = tq::ref::matmulTiled(ma, mb, false, c);
  if (!st.ok)
    error = "the reference matmul failed: " + st.message;
  return c.data;
}

/// C = A·B with B the constant weights of `o`.
std::string program(const Shape &s, unsigned v, unsigned bits,
                    const Operands &o) {
  int64_t gk = (s.K + v - 1) / v, gn = (s.N + v - 1) / v;
  auto tiled = [&](int64_t r, int64_t c, unsigned n) {
    return formatv("!tq.tiled<{0}x{1}xi8:{3}, f32, tile = {2}x{2}, dims = "
                   "[0, 1], scale = f32>",
                   r, c, v, n)
        .str();
  };
  std::string ta = tiled(s.M, s.K, 8), tb = tiled(s.K, s.N, bits);
  std::string out = formatv("tensor<{0}x{1}xf32>", s.M, s.N).str();
  return formatv("func.func @main(%a: {0}) -> {2} {{\n"
                 "  %b = tq.constant {{values = dense<\"{3}\"> : "
                 "tensor<{4}x{5}xi8>, scales = dense<\"{6}\"> : "
                 "tensor<{7}x{8}xf32>} : {1}\n"
                 "  %c = tq.matmul %a, %b : {0}, {1} -> {2}\n"
                 "  return %c : {2}\n}\n",
                 ta, tb, out, hex(o.w.data(), o.w.size()), s.K, s.N,
                 hex(o.sw.data(), o.sw.size() * 4), gk, gn)
      .str();
}

/// One configuration tile-quant times: its program compiled once, its
/// operands and the reference's product, timed in every round.
class TQCase {
public:
  TQCase(const Shape &s, unsigned v, unsigned threads, unsigned bits)
      : s(s), v(v), threads(threads), bits(bits) {}

  const Shape s;
  const unsigned v, threads, bits;

  /// Compiles the program and checks its first call's product.
  bool prepare(std::map<std::string, std::vector<float>> &references,
               std::string &error) {
    operands = makeOperands(s, v, bits);
    std::string key = formatv("{0}/{1}/{2}", s.str(), v, bits).str();
    if (!references.count(key)) {
      references[key] = referenceProduct(s, v, bits, operands, error);
      if (!error.empty())
        return false;
    }
    want = &references[key];
    cpu::CompileOptions o;
    o.target = target;
    o.threads = threads;
    module = cpu::CPUModule::compile(program(s, v, bits, operands), s.str(), o,
                                     error);
    if (!module)
      return false;
    c.assign(s.M * s.N, std::nanf(""));
    // The weights are in the program now.
    operands.w = {};
    operands.sw = {};
    return call(error) && check("first", error);
  }

  /// GOPS of one round (the median of its calls), or a negative number
  /// with `error`; the last timed call's product is checked.
  double measure(std::string &error) {
    std::fill(c.begin(), c.end(), std::nanf(""));
    bool ok = true;
    double t = bench::timeCall([&] { ok &= call(error); });
    if (!ok || !check("last timed", error))
      return -1;
    return 2.0 * s.M * s.N * s.K / t * 1e-9;
  }

private:
  Operands operands;
  const std::vector<float> *want = nullptr;
  std::unique_ptr<cpu::CPUModule> module;
  std::vector<float> c;

  bool call(std::string &error) {
    int64_t gm = (s.M + v - 1) / v, gk = (s.K + v - 1) / v;
    std::vector<cpu::Buffer> in = {
        {operands.a.data(), cpu::ElementType::I8, {s.M, s.K}},
        {operands.sa.data(), cpu::ElementType::F32, {gm, gk}}};
    std::vector<cpu::Buffer> out = {
        {c.data(), cpu::ElementType::F32, {s.M, s.N}}};
    return module->invoke("main", in, out, error);
  }
  /// Whether the product is the reference's, bit for bit.
  bool check(const char *which, std::string &error) {
    const std::vector<float> &w = *want;
    if (std::memcmp(c.data(), w.data(), c.size() * 4) == 0)
      return true;
    int64_t i = 0;
    while (std::memcmp(&c[i], &w[i], 4) == 0)
      ++i;
    error =
        formatv("{0} V={1} {2}-bit, {3} thread(s): the {4} call's "
                "product differs from the reference at [{5}, {6}]: {7} "
                "vs {8}",
                s.str(), v, bits, threads, which, i / s.N, i % s.N, c[i], w[i])
            .str();
    return false;
  }
};

/// Runs the peers in a child process; returns "key value" results.
std::map<std::string, double> measurePeers(const std::vector<Shape> &shapes,
                                           const std::vector<unsigned> &threads,
                                           bool warn) {
  std::map<std::string, double> r;
  int fd[2];
  if (pipe(fd) != 0)
    return r;
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    FILE *out = fdopen(fd[1], "w");
    // OpenBLAS 0.3.21 takes Zen for Haswell; its AVX-512 kernels are
    // faster where the CPU has AVX-512 (and crash where it has not).
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    std::string error;
    for (unsigned t : threads) {
      fprintf(out, "peak/%u %f\n", t, bench::int8Peak(t, error));
      for (const Shape &s : shapes) {
        std::string k = s.str() + "/" + std::to_string(t);
        fprintf(out, "onednn-int8/%s %f\n", k.c_str(),
                bench::onednnMatmul(true, s.M, s.N, s.K, t, error));
        fprintf(out, "onednn-f32/%s %f\n", k.c_str(),
                bench::onednnMatmul(false, s.M, s.N, s.K, t, error));
        fprintf(out, "openblas-f32/%s %f\n", k.c_str(),
                bench::openblasSgemm(s.M, s.N, s.K, t, error));
      }
    }
    if (warn && !error.empty())
      fprintf(stderr, "tq-bench: warning: %s\n", error.c_str());
    fclose(out);
    _exit(0);
  }
  close(fd[1]);
  FILE *in = fdopen(fd[0], "r");
  char key[256];
  double value;
  while (fscanf(in, "%255s %lf", key, &value) == 2)
    r[key] = value;
  fclose(in);
  waitpid(pid, nullptr, 0);
  return r;
}

std::string cell(double gops) {
  return gops > 0 ? formatv("{0:F0}", gops).str() : "n/a";
}
std::string ratio(double a, double b) {
  return a > 0 && b > 0 ? formatv("{0:F2}", a / b).str() : "n/a";
}
} // namespace

int runCPUMatmul() {
  std::vector<Shape> ss;
  std::vector<std::string> names(shapes.begin(), shapes.end());
  if (names.empty())
    names = {"1024x1024x1024", "256x4096x4096", "1x4096x4096"};
  for (const std::string &n : names) {
    SmallVector<StringRef> d;
    StringRef(n).split(d, 'x');
    Shape s;
    if (d.size() != 3 || d[0].getAsInteger(10, s.M) ||
        d[1].getAsInteger(10, s.N) || d[2].getAsInteger(10, s.K) || s.M < 1 ||
        s.N < 1 || s.K < 1) {
      errs() << "tq-bench: error: shapes are MxNxK, got '" << n << "'\n";
      return 1;
    }
    ss.push_back(s);
  }
  std::vector<unsigned> vs(tiles.begin(), tiles.end());
  if (vs.empty())
    vs = {32, 128};
  for (unsigned v : vs)
    if (v < 1 || v > 1024) {
      errs() << "tq-bench: error: tile sizes must be in [1, 1024], got " << v
             << "\n";
      return 1;
    }
  std::vector<unsigned> ts(threadCounts.begin(), threadCounts.end());
  if (ts.empty())
    ts = {1, 2};
  for (unsigned t : ts)
    if (t < 1 || t > 256) {
      errs() << "tq-bench: error: thread counts must be in [1, 256]\n";
      return 1;
    }
  if (rounds == 0 || rounds > 100) {
    errs() << "tq-bench: error: --rounds must be in [1, 100], got " << rounds
           << "\n";
    return 1;
  }
  if (!mlir::tq::parseCPUTarget(target)) {
    errs() << "tq-bench: error: --target must be " << mlir::tq::cpuTargetNames()
           << "; got '" << target << "'\n";
    return 1;
  }
  if (!cpu::hostSupports(target)) {
    errs() << "tq-bench: error: this host cannot run --target=" << target
           << "\n";
    return 1;
  }
  // Every configuration is compiled once and its first product checked;
  // then each round times the peers (in a child process) and tile-quant's
  // configurations in turn, and each figure is the fastest of its rounds:
  // the clock of this shared machine moves over seconds, and the rounds
  // let each side see the same moments.
  std::map<std::string, std::vector<float>> references;
  std::vector<TQCase> cases;
  for (const Shape &s : ss)
    for (unsigned v : vs)
      for (unsigned t : ts)
        cases.emplace_back(s, v, t, 8);
  if (int4)
    for (const Shape &s : ss)
      for (unsigned t : ts)
        cases.emplace_back(s, vs.back(), t, 4);
  for (TQCase &c : cases) {
    std::string error;
    if (!c.prepare(references, error)) {
      errs() << "tq-bench: error: " << error << "\n";
      return 1;
    }
  }
  auto best = [](std::map<std::string, double> &m, const std::string &k,
                 double g) {
    auto [it, inserted] = m.try_emplace(k, g);
    if (!inserted)
      it->second = std::max(it->second, g);
  };
  std::map<std::string, double> peer, tq, tq4;
  for (unsigned round = 0; round < rounds; ++round) {
    // libgomp's threads spin for a while after a parallel region before
    // they sleep.
    if (peers && round > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (peers)
      for (auto &[k, g] : measurePeers(ss, ts, /*warn=*/round == 0))
        best(peer, k, g);
    for (TQCase &c : cases) {
      std::string error;
      double g = c.measure(error);
      if (g < 0) {
        errs() << "tq-bench: error: " << error << "\n";
        return 1;
      }
      if (c.bits == 8)
        best(tq, formatv("{0}/{1}/{2}", c.s.str(), c.v, c.threads).str(), g);
      else
        best(tq4, c.s.str() + "/" + std::to_string(c.threads), g);
    }
  }

  outs() << "GOPS (2·M·N·K / median time of a round's calls, the fastest "
         << "of " << rounds << (rounds == 1 ? " round" : " rounds")
         << (peers ? " in which the peers and tq run in turn" : "")
         << "), measured in this run; tq: "
            "tiled int8 with per-tile f32 steps, weights packed at compile "
            "time, each configuration's product checked bit for bit against "
            "the reference numerics, target "
         << target << "; int8 peak: "
         << (bench::int8PeakInstruction() ? bench::int8PeakInstruction()
                                          : "none")
         << ".\n\n| M×N×K | threads |";
  for (unsigned v : vs)
    outs() << " tq V=" << v << " |";
  outs() << " oneDNN int8 | oneDNN f32 | OpenBLAS f32 | int8 peak |";
  for (unsigned v : vs)
    outs() << " V=" << v << " / oneDNN int8 |";
  outs() << " V=" << vs.back() << " / oneDNN f32 |\n|---|---|";
  for (size_t i = 0; i < 2 * vs.size() + 5; ++i)
    outs() << "---|";
  outs() << "\n";
  for (const Shape &s : ss)
    for (unsigned t : ts) {
      std::string k = s.str() + "/" + std::to_string(t);
      double i8 = peer["onednn-int8/" + k];
      outs() << "| " << s.str() << " | " << t << " |";
      for (unsigned v : vs)
        outs() << " " << cell(tq[formatv("{0}/{1}/{2}", s.str(), v, t)])
               << " |";
      outs() << " " << cell(i8) << " | " << cell(peer["onednn-f32/" + k])
             << " | " << cell(peer["openblas-f32/" + k]) << " | "
             << cell(peer["peak/" + std::to_string(t)]) << " |";
      for (unsigned v : vs)
        outs() << " " << ratio(tq[formatv("{0}/{1}/{2}", s.str(), v, t)], i8)
               << " |";
      outs() << " "
             << ratio(tq[formatv("{0}/{1}/{2}", s.str(), vs.back(), t)],
                      peer["onednn-f32/" + k])
             << " |\n";
    }
  if (ts.size() > 1) {
    outs() << "\nThread scaling (tq, " << ts.back() << " threads / "
           << ts.front() << "):";
    ListSeparator sep(";");
    for (const Shape &s : ss)
      for (unsigned v : vs)
        outs() << sep << " " << s.str() << " V=" << v << ": "
               << ratio(tq[formatv("{0}/{1}/{2}", s.str(), v, ts.back())],
                        tq[formatv("{0}/{1}/{2}", s.str(), v, ts.front())]);
    outs() << ".\n";
  }
  if (int4) {
    outs() << "\n4-bit weights packed two per byte vs 8-bit, V=" << vs.back()
           << " (time ratio int4 / int8: below 1 is faster)\n\n"
           << "| M×N×K | threads | tq int8 | tq int4 | time int4 / int8 |\n"
           << "|---|---|---|---|---|\n";
    for (const Shape &s : ss)
      for (unsigned t : ts) {
        std::string k = s.str() + "/" + std::to_string(t);
        double g8 = tq[formatv("{0}/{1}/{2}", s.str(), vs.back(), t)];
        double g4 = tq4[k];
        outs() << "| " << s.str() << " | " << t << " | " << cell(g8) << " | "
               << cell(g4) << " | " << ratio(g8, g4) << " |\n";
      }
  }
  return 0;
}
