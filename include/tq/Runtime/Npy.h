//===- Npy.h - .npy array reader and writer ---------------------*- C++ -*-===//
//
// NumPy's .npy format, versions 1.0-3.0, little-endian, C order, for the
// dtypes tile-quant exchanges: f32, f64, i8, i16, i32, i64, u8, bool.
// Malformed input is reported through the error string, never by crashing.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_RUNTIME_NPY_H
#define TQ_RUNTIME_NPY_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tq::npy {

enum class DType { F32, F64, I8, I16, I32, I64, U8, Bool };

/// The numpy descr ("<f4", "|i1", ...) and byte size of a dtype.
const char *descr(DType t);
size_t itemSize(DType t);

struct Array {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; // C order, little endian

  int64_t numElements() const;
  /// Element `i` converted to double (any dtype).
  double at(int64_t i) const;
  template <typename T>
  static Array from(DType t, std::vector<int64_t> shape,
                    const std::vector<T> &values) {
    Array a;
    a.dtype = t;
    a.shape = std::move(shape);
    a.bytes.resize(values.size() * sizeof(T));
    if (!values.empty()) // memcpy from a null pointer is undefined
      std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
    return a;
  }
  /// Elements as f32 (converted from any dtype).
  std::vector<float> toFloat() const;
};

/// Parses an in-memory .npy image. Returns false and sets `error` on
/// malformed or unsupported input.
bool parse(const uint8_t *data, size_t size, Array &out, std::string &error);
bool read(const std::string &path, Array &out, std::string &error);

std::vector<uint8_t> serialize(const Array &a);
bool write(const std::string &path, const Array &a, std::string &error);

} // namespace tq::npy

#endif // TQ_RUNTIME_NPY_H
