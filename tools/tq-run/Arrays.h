//===- Arrays.h - tq-run's inputs and outputs -------------------*- C++ -*-===//
//
// How tq-run binds its --input files to a function's buffers (in order, by
// name, from an .npz, from stdin), prints its outputs and compares them
// with expected ones.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_TOOLS_TQRUN_ARRAYS_H
#define TQ_TOOLS_TQRUN_ARRAYS_H

#include "tq/ExecutionEngine/CPUModule.h"
#include "tq/Runtime/Npy.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace tq::run {

std::optional<npy::DType> dtypeOf(cpu::ElementType t);
/// "<f4 (2, 3)".
std::string describe(npy::DType t, const std::vector<int64_t> &shape);
/// What a buffer is called in messages: its label (the ONNX name) and its
/// position, "image (arg0)", or its position alone.
std::string bufferName(const cpu::BufferType &b);

/// Reads the arrays the --input `specs` name into `in` (one per buffer of
/// `want`, checked against its dtype and shape). A spec is FILE.npy (the
/// next unbound buffer, in order), NAME=FILE.npy (the buffer whose label or
/// position name is NAME), FILE.npz (every array by name) or `-` (a .npy
/// on stdin). `entry` names the function in messages.
bool bindInputs(const std::string &entry,
                const std::vector<cpu::BufferType> &want,
                const std::vector<std::string> &specs,
                std::vector<npy::Array> &in, std::string &error);

/// Prints each output: its name, dtype, shape and values (the first and
/// last ones of a long array).
void printOutputs(llvm::raw_ostream &os,
                  const std::vector<cpu::BufferType> &types,
                  const std::vector<npy::Array> &out);

/// Compares the outputs with those in `path` (an .npz by output name, or a
/// .npy for a function with one output), printing per output the largest
/// absolute and relative error. Sets `withinTolerance` to whether every
/// element has |got - want| <= atol + rtol * |want| (NaN only against NaN).
/// Fails on a missing or misshaped expected array.
bool compareOutputs(llvm::raw_ostream &os, const std::string &path,
                    const std::vector<cpu::BufferType> &types,
                    const std::vector<npy::Array> &out, double atol,
                    double rtol, bool &withinTolerance, std::string &error);

} // namespace tq::run

#endif // TQ_TOOLS_TQRUN_ARRAYS_H
