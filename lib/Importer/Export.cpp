//===- Export.cpp - trained weights back into an ONNX model ---------------===//
#include "tq/Importer/ONNX.h"

#include <onnx/onnx_pb.h>

#include <set>

/// Parses the binary model `bytes` (the importer also reads the text form;
/// these helpers serve tq-train, which rewrites binary models).
static bool parseModel(const std::string &bytes, onnx::ModelProto &model,
                       std::string &error) {
  if (model.ParseFromString(bytes))
    return true;
  error = "not a binary ONNX model";
  return false;
}

bool mlir::tq::listGraphInputs(const std::string &bytes,
                               std::vector<std::string> &names,
                               std::string &error) {
  onnx::ModelProto model;
  if (!parseModel(bytes, model, error))
    return false;
  std::set<std::string> initializers;
  for (const onnx::TensorProto &t : model.graph().initializer())
    initializers.insert(t.name());
  for (const onnx::ValueInfoProto &v : model.graph().input())
    if (!initializers.count(v.name()))
      names.push_back(v.name());
  return true;
}

bool mlir::tq::listFloatInitializers(const std::string &bytes,
                                     std::vector<std::string> &names,
                                     std::string &error) {
  onnx::ModelProto model;
  if (!parseModel(bytes, model, error))
    return false;
  for (const onnx::TensorProto &t : model.graph().initializer())
    if (t.data_type() == onnx::TensorProto::FLOAT)
      names.push_back(t.name());
  return true;
}

bool mlir::tq::replaceInitializers(
    const std::string &bytes,
    const std::map<std::string, std::vector<float>> &values, std::string &out,
    std::string &error) {
  onnx::ModelProto model;
  if (!parseModel(bytes, model, error))
    return false;
  std::set<std::string> done;
  for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer()) {
    auto it = values.find(t.name());
    if (it == values.end())
      continue;
    int64_t count = 1;
    for (int64_t d : t.dims())
      count *= d;
    if (t.data_type() != onnx::TensorProto::FLOAT ||
        count != int64_t(it->second.size())) {
      error = "initializer '" + t.name() + "' is not an f32 tensor of " +
              std::to_string(it->second.size()) + " elements";
      return false;
    }
    t.clear_float_data();
    t.clear_data_location();
    t.clear_external_data();
    t.set_raw_data(
        std::string(reinterpret_cast<const char *>(it->second.data()),
                    it->second.size() * sizeof(float)));
    done.insert(t.name());
  }
  for (const auto &[name, data] : values)
    if (!done.count(name)) {
      error = "the model has no initializer '" + name + "'";
      return false;
    }
  out = model.SerializeAsString();
  return true;
}
