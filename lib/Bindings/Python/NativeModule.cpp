//===- NativeModule.cpp - the Python package's compiled module ------------===//
//
// `_tq_native`, which python/tq/api.py wraps: a pybind11 binding of the C
// API (tq-c/Model.h). Arrays cross as numpy arrays (C order, copied only
// when the caller's are not); errors raise RuntimeError with the C API's
// message. The GIL is released while a model compiles or runs.
//
//===----------------------------------------------------------------------===//
#include "tq-c/Model.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// Raises the C API's error (and releases its string).
[[noreturn]] void raise(char *error, const char *fallback) {
  std::string message = error ? error : fallback;
  tq_free_string(error);
  throw std::runtime_error(message);
}

const char *dtypeName(tq_element_type t) {
  switch (t) {
  case TQ_F32:
    return "float32";
  case TQ_I8:
    return "int8";
  case TQ_I16:
    return "int16";
  case TQ_I32:
    return "int32";
  case TQ_I64:
    return "int64";
  case TQ_BOOL:
    return "bool";
  }
  return "?";
}

struct BufferInfo {
  std::string name;
  tq_element_type type;
  std::vector<int64_t> shape;
};

class Model {
public:
  Model(const std::string &path, const std::string &quantize, bool floatModel,
        const std::string &target, const std::string &machine, int64_t threads,
        bool profile, const std::vector<std::string> &dims,
        const std::vector<std::string> &inputShapes) {
    std::vector<const char *> dimPtrs, shapePtrs;
    for (const std::string &d : dims)
      dimPtrs.push_back(d.c_str());
    for (const std::string &s : inputShapes)
      shapePtrs.push_back(s.c_str());
    tq_model_options o;
    tq_model_options_init(&o);
    o.quantize = quantize.c_str();
    o.float_model = floatModel;
    o.target = target.c_str();
    o.machine = machine.c_str();
    o.threads = threads;
    o.profile = profile;
    o.dims = dimPtrs.data();
    o.num_dims = int64_t(dimPtrs.size());
    o.input_shapes = shapePtrs.data();
    o.num_input_shapes = int64_t(shapePtrs.size());
    char *error = nullptr;
    {
      py::gil_scoped_release release;
      model = tq_model_compile_onnx(path.c_str(), &o, &error);
    }
    if (!model)
      raise(error, "compilation failed");
    for (int outputs = 0; outputs < 2; ++outputs)
      for (int64_t i = 0, n = tq_model_num_buffers(model, outputs); i < n;
           ++i) {
        BufferInfo b;
        int32_t rank = 0;
        const char *name = nullptr;
        tq_model_buffer(model, outputs, i, &b.type, &rank, nullptr, 0, &name);
        b.shape.resize(rank);
        tq_model_buffer(model, outputs, i, nullptr, nullptr, b.shape.data(),
                        rank, nullptr);
        b.name = name;
        (outputs ? outs : ins).push_back(b);
      }
  }
  ~Model() { tq_model_destroy(model); }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  /// [(name, dtype, shape)] of the inputs or the outputs.
  py::list signature(bool outputs) const {
    py::list list;
    for (const BufferInfo &b : outputs ? outs : ins)
      list.append(py::make_tuple(b.name, dtypeName(b.type),
                                 py::tuple(py::cast(b.shape))));
    return list;
  }

  /// Runs on `inputs` (numpy arrays, in signature order, already of the
  /// right dtype and shape: api.py checks) and returns the outputs.
  py::list call(const std::vector<py::array> &inputs) {
    if (inputs.size() != ins.size())
      throw std::runtime_error("expected " + std::to_string(ins.size()) +
                               " inputs, got " + std::to_string(inputs.size()));
    // Each array as it is (C order; the C API checks its shape against the
    // signature). Read-only arrays are fine: inputs are only read.
    std::vector<py::array> held;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<tq_buffer> in, out;
    for (size_t i = 0; i < inputs.size(); ++i) {
      py::array a = py::array::ensure(inputs[i], py::array::c_style);
      if (!a || !a.dtype().is(py::dtype(dtypeName(ins[i].type))))
        throw std::runtime_error("input " + ins[i].name + " must be a " +
                                 dtypeName(ins[i].type) + " array");
      held.push_back(a);
      shapes.emplace_back(a.shape(), a.shape() + a.ndim());
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      in.push_back({const_cast<void *>(held[i].data()), ins[i].type,
                    int32_t(shapes[i].size()), shapes[i].data()});
    py::list results;
    std::vector<py::array> outArrays;
    for (const BufferInfo &b : outs) {
      py::array a(py::dtype(dtypeName(b.type)), b.shape);
      outArrays.push_back(a);
      out.push_back(
          {a.mutable_data(), b.type, int32_t(b.shape.size()), b.shape.data()});
      results.append(a);
    }
    char *error = nullptr;
    int rc;
    {
      py::gil_scoped_release release;
      // One call at a time: the profile and the PPU counters are shared.
      std::lock_guard<std::mutex> lock(mutex);
      rc = tq_model_invoke(model, in.data(), int64_t(in.size()), out.data(),
                           int64_t(out.size()), &error);
    }
    if (rc)
      raise(error, "the call failed");
    return results;
  }

  /// A JSON report (tq_model_report).
  std::string report(const std::string &what) const {
    std::lock_guard<std::mutex> lock(mutex);
    char *error = nullptr;
    char *text = tq_model_report(model, what.c_str(), &error);
    if (!text)
      raise(error, "no such report");
    std::string out = text;
    tq_free_string(text);
    return out;
  }

  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    tq_model_reset(model);
  }
  std::string program() const { return tq_model_program(model); }

private:
  tq_model *model = nullptr;
  std::vector<BufferInfo> ins, outs;
  mutable std::mutex mutex;
};

/// (q, steps, offsets, non-finite count) of the reference quantization.
py::tuple
quantize(py::array_t<float, py::array::c_style | py::array::forcecast> x,
         int64_t tileRows, int64_t tileCols, int bits, const std::string &scale,
         bool offset) {
  if (x.ndim() != 2)
    throw std::runtime_error("quantize takes a 2-D array, got " +
                             std::to_string(x.ndim()) + " dims");
  int64_t rows = x.shape(0), cols = x.shape(1);
  if (tileRows < 1 || tileCols < 1)
    throw std::runtime_error("the tile must be positive");
  int64_t gridRows = (rows + tileRows - 1) / tileRows,
          gridCols = (cols + tileCols - 1) / tileCols;
  py::array_t<int32_t> q({rows, cols});
  py::array_t<float> steps({gridRows, gridCols}), offsets({gridRows, gridCols});
  char *error = nullptr;
  int64_t nonFinite = tq_quantize(
      x.data(), rows, cols, tileRows, tileCols, bits, scale.c_str(), offset,
      q.mutable_data(), steps.mutable_data(), offsets.mutable_data(), &error);
  if (nonFinite < 0)
    raise(error, "quantization failed");
  return py::make_tuple(q, steps, offsets, nonFinite);
}

} // namespace

PYBIND11_MODULE(_tq_native, m) {
  m.doc() = "tile-quant's compiled module (the C API); use the tq package";
  py::class_<Model>(m, "Model")
      .def(py::init<const std::string &, const std::string &, bool,
                    const std::string &, const std::string &, int64_t, bool,
                    const std::vector<std::string> &,
                    const std::vector<std::string> &>(),
           py::arg("path"), py::arg("quantize"), py::arg("float_model"),
           py::arg("target"), py::arg("machine"), py::arg("threads"),
           py::arg("profile"), py::arg("dims"), py::arg("input_shapes"))
      .def("signature", &Model::signature, py::arg("outputs"))
      .def("call", &Model::call)
      .def("report", &Model::report)
      .def("reset", &Model::reset)
      .def("program", &Model::program);
  m.def("quantize", &quantize, py::arg("x"), py::arg("tile_rows"),
        py::arg("tile_cols"), py::arg("bits"), py::arg("scale"),
        py::arg("offset"));
}
