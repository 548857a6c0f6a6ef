//===- Arrays.cpp - tq-run's inputs and outputs ---------------------------===//
#include "Arrays.h"
#include "tq/Runtime/Dataset.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <map>

using namespace llvm;
using namespace tq;

std::optional<npy::DType> run::dtypeOf(cpu::ElementType t) {
  switch (t) {
  case cpu::ElementType::F32:
    return npy::DType::F32;
  case cpu::ElementType::I8:
    return npy::DType::I8;
  case cpu::ElementType::I16:
    return npy::DType::I16;
  case cpu::ElementType::I32:
    return npy::DType::I32;
  case cpu::ElementType::I64:
    return npy::DType::I64;
  case cpu::ElementType::Bool:
    return npy::DType::Bool;
  }
  return std::nullopt;
}

std::string run::describe(npy::DType t, const std::vector<int64_t> &shape) {
  std::string s = std::string(npy::descr(t)) + " (";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string run::bufferName(const cpu::BufferType &b) {
  return b.label.empty() ? b.name : b.label + " (" + b.name + ")";
}

/// The buffer named `name` (its label or its position name), or -1.
static int64_t findBuffer(const std::vector<cpu::BufferType> &buffers,
                          StringRef name) {
  for (auto [i, b] : enumerate(buffers))
    if (b.label == name || b.name == name)
      return int64_t(i);
  return -1;
}

static std::string names(const std::vector<cpu::BufferType> &buffers) {
  return join(map_range(buffers,
                        [](const cpu::BufferType &b) {
                          return b.label.empty() ? b.name : b.label;
                        }),
              ", ");
}

bool run::bindInputs(const std::string &entry,
                     const std::vector<cpu::BufferType> &want,
                     const std::vector<std::string> &specs,
                     std::vector<npy::Array> &in, std::string &error) {
  in.assign(want.size(), {});
  std::vector<std::string> source(want.size());
  bool named = false, stdinUsed = false;
  size_t next = 0;
  auto bind = [&](size_t i, npy::Array a, const std::string &from) {
    if (!source[i].empty()) {
      error = "input " + bufferName(want[i]) + " is given twice ('" +
              source[i] + "' and '" + from + "')";
      return false;
    }
    in[i] = std::move(a);
    source[i] = from;
    return true;
  };
  for (const std::string &spec : specs) {
    StringRef s(spec);
    npy::Array a;
    std::string why;
    if (s.ends_with(".npz") && s.contains('=') &&
        !s.split('=').first.contains('/')) {
      error = "--input " + spec +
              ": an .npz holds inputs by name; give it without NAME=";
      return false;
    }
    if (s.ends_with(".npz")) {
      std::map<std::string, npy::Array> arrays;
      if (!data::readNpz(spec, arrays, why)) {
        error = "--input " + spec + ": " + why;
        return false;
      }
      for (auto &[key, value] : arrays) {
        int64_t i = findBuffer(want, key);
        if (i < 0) {
          error = "--input " + spec + ": array '" + key +
                  "' names no input of @" + entry + " (" + names(want) + ")";
          return false;
        }
        if (!bind(i, std::move(value), spec + ":" + key))
          return false;
      }
      named = true;
      continue;
    }
    auto [name, path] = s.split('=');
    int64_t target = -1;
    if (!path.empty() && !name.contains('/')) {
      target = findBuffer(want, name);
      if (target < 0) {
        error = "--input " + spec + ": @" + entry + " has no input '" +
                name.str() + "' (" + names(want) + ")";
        return false;
      }
      named = true;
    } else {
      path = s;
      while (next < want.size() && !source[next].empty())
        ++next;
      if (next == want.size()) {
        error = "@" + entry + " takes " + std::to_string(want.size()) +
                " input buffers, got more --input (see --print-signature)";
        return false;
      }
      target = int64_t(next);
    }
    if (path == "-") {
      if (stdinUsed) {
        error = "only one --input can be - (stdin)";
        return false;
      }
      stdinUsed = true;
      ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getSTDIN();
      if (!buffer || !npy::parse(reinterpret_cast<const uint8_t *>(
                                     (*buffer)->getBufferStart()),
                                 (*buffer)->getBufferSize(), a, why)) {
        error = "--input - (stdin): " +
                (buffer ? why : buffer.getError().message());
        return false;
      }
    } else if (!npy::read(path.str(), a, why)) {
      error = "input " + bufferName(want[target]) + " ('" + path.str() +
              "'): " + why;
      return false;
    }
    if (!bind(target, std::move(a), path.str()))
      return false;
  }
  size_t bound =
      count_if(source, [](const std::string &s) { return !s.empty(); });
  if (bound != want.size()) {
    if (!named) {
      error = "@" + entry + " takes " + std::to_string(want.size()) +
              " input buffers, got " + std::to_string(bound) +
              " --input (see --print-signature)";
      return false;
    }
    for (auto [i, b] : enumerate(want))
      if (source[i].empty()) {
        error = "input " + bufferName(b) + " of @" + entry +
                " is not given (see --print-signature)";
        return false;
      }
  }
  for (auto [i, b] : enumerate(want)) {
    npy::DType dt = *dtypeOf(b.element);
    if (in[i].dtype != dt || in[i].shape != b.shape) {
      error = "input " + bufferName(b) + " ('" + source[i] + "'): expected " +
              describe(dt, b.shape) + ", got " +
              describe(in[i].dtype, in[i].shape);
      return false;
    }
  }
  return true;
}

void run::printOutputs(raw_ostream &os,
                       const std::vector<cpu::BufferType> &types,
                       const std::vector<npy::Array> &out) {
  for (auto [b, a] : zip(types, out)) {
    os << bufferName(b) << ": " << describe(a.dtype, a.shape) << ":";
    int64_t n = a.numElements();
    bool isFloat = a.dtype == npy::DType::F32 || a.dtype == npy::DType::F64;
    for (int64_t i = 0; i < n; ++i) {
      if (n > 16 && i == 8) {
        os << " ...";
        i = n - 8;
      }
      if (isFloat)
        os << " " << format("%.7g", a.at(i));
      else
        os << " " << int64_t(a.at(i));
    }
    os << "\n";
  }
}

bool run::compareOutputs(raw_ostream &os, const std::string &path,
                         const std::vector<cpu::BufferType> &types,
                         const std::vector<npy::Array> &out, double atol,
                         double rtol, bool &withinTolerance,
                         std::string &error) {
  std::map<std::string, npy::Array> expected;
  std::string why;
  if (StringRef(path).ends_with(".npz")) {
    if (!data::readNpz(path, expected, why)) {
      error = "--compare: " + why;
      return false;
    }
  } else {
    if (types.size() != 1) {
      error = "--compare " + path + ": the function has " +
              std::to_string(types.size()) +
              " outputs; give an .npz with one array per output name";
      return false;
    }
    npy::Array a;
    if (!npy::read(path, a, why)) {
      error = "--compare: " + why;
      return false;
    }
    expected[types[0].label.empty() ? types[0].name : types[0].label] = a;
  }
  withinTolerance = true;
  for (auto [b, got] : zip(types, out)) {
    auto it = expected.find(b.label);
    if (it == expected.end())
      it = expected.find(b.name);
    if (it == expected.end()) {
      error = "--compare " + path + ": no array for output " + bufferName(b);
      return false;
    }
    const npy::Array &want = it->second;
    if (want.shape != got.shape) {
      error = "--compare " + path + ": output " + bufferName(b) + " is " +
              describe(got.dtype, got.shape) + ", the expected array " +
              describe(want.dtype, want.shape);
      return false;
    }
    double maxAbs = 0, maxRel = 0;
    int64_t bad = 0, n = got.numElements();
    for (int64_t i = 0; i < n; ++i) {
      double g = got.at(i), w = want.at(i);
      if (std::isnan(g) || std::isnan(w)) {
        if (std::isnan(g) != std::isnan(w)) {
          ++bad;
          maxAbs = maxRel = INFINITY;
        }
        continue;
      }
      if (g == w) // equal infinities too
        continue;
      double d = std::fabs(g - w);
      maxAbs = std::max(maxAbs, d);
      if (w != 0)
        maxRel = std::max(maxRel, d / std::fabs(w));
      if (!(d <= atol + rtol * std::fabs(w)))
        ++bad;
    }
    os << "compare " << bufferName(b) << ": max abs error "
       << format("%.3g", maxAbs) << ", max relative error "
       << format("%.3g", maxRel);
    if (bad) {
      os << ": " << bad << " of " << n
         << " elements past atol=" << format("%g", atol)
         << " rtol=" << format("%g", rtol) << "\n";
      withinTolerance = false;
    } else {
      os << ": within atol=" << format("%g", atol)
         << " rtol=" << format("%g", rtol) << "\n";
    }
  }
  return true;
}
