//===- Npy.cpp - .npy array reader and writer -----------------------------===//
#include "tq/Runtime/Npy.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>

namespace tq::npy {

namespace {
struct DTypeInfo {
  DType type;
  const char *descr;
  size_t size;
};
const DTypeInfo kTypes[] = {
    {DType::F32, "<f4", 4}, {DType::F64, "<f8", 8},  {DType::I8, "|i1", 1},
    {DType::I16, "<i2", 2}, {DType::I32, "<i4", 4},  {DType::I64, "<i8", 8},
    {DType::U8, "|u1", 1},  {DType::Bool, "|b1", 1},
};
const char kMagic[] = "\x93NUMPY";
} // namespace

const char *descr(DType t) {
  for (const DTypeInfo &i : kTypes)
    if (i.type == t)
      return i.descr;
  return "?";
}

size_t itemSize(DType t) {
  for (const DTypeInfo &i : kTypes)
    if (i.type == t)
      return i.size;
  return 0;
}

int64_t Array::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double Array::at(int64_t i) const {
  const uint8_t *p = bytes.data() + i * itemSize(dtype);
  auto load = [&](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return static_cast<double>(v);
  };
  switch (dtype) {
  case DType::F32:
    return load(float());
  case DType::F64:
    return load(double());
  case DType::I8:
    return load(int8_t());
  case DType::I16:
    return load(int16_t());
  case DType::I32:
    return load(int32_t());
  case DType::I64:
    return load(int64_t());
  case DType::U8:
  case DType::Bool:
    return load(uint8_t());
  }
  return 0.0;
}

std::vector<float> Array::toFloat() const {
  std::vector<float> out(numElements());
  for (int64_t i = 0; i < numElements(); ++i)
    out[i] = static_cast<float>(at(i));
  return out;
}

namespace {
/// A tiny cursor over the header dict: {'descr': '<f4', 'fortran_order':
/// False, 'shape': (2, 3), }
struct HeaderParser {
  const std::string &s;
  size_t pos = 0;
  std::string &error;

  void skipSpace() {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos])))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool expect(char c) {
    if (consume(c))
      return true;
    error = std::string("malformed .npy header: expected '") + c +
            "' at offset " + std::to_string(pos);
    return false;
  }
  bool parseString(std::string &out) {
    skipSpace();
    if (pos >= s.size() || (s[pos] != '\'' && s[pos] != '"')) {
      error = "malformed .npy header: expected a string at offset " +
              std::to_string(pos);
      return false;
    }
    char q = s[pos++];
    size_t end = s.find(q, pos);
    if (end == std::string::npos) {
      error = "malformed .npy header: unterminated string";
      return false;
    }
    out = s.substr(pos, end - pos);
    pos = end + 1;
    return true;
  }
  bool parseWord(std::string &out) {
    skipSpace();
    size_t start = pos;
    while (pos < s.size() && std::isalpha(static_cast<unsigned char>(s[pos])))
      ++pos;
    out = s.substr(start, pos - start);
    return !out.empty();
  }
  bool parseShape(std::vector<int64_t> &shape) {
    if (!expect('('))
      return false;
    shape.clear();
    while (!consume(')')) {
      skipSpace();
      int64_t v = 0;
      size_t start = pos;
      while (pos < s.size() &&
             std::isdigit(static_cast<unsigned char>(s[pos]))) {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) {
          error = "malformed .npy header: dimension too large";
          return false;
        }
        v = v * 10 + (s[pos++] - '0');
      }
      if (pos == start) {
        error = "malformed .npy header: expected a dimension at offset " +
                std::to_string(pos);
        return false;
      }
      shape.push_back(v);
      if (!consume(',')) {
        if (!expect(')'))
          return false;
        break;
      }
    }
    return true;
  }
};
} // namespace

bool parse(const uint8_t *data, size_t size, Array &out, std::string &error) {
  if (size < 10 || std::memcmp(data, kMagic, 6) != 0) {
    error = "not a .npy file (bad magic)";
    return false;
  }
  int major = data[6];
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = data[8] | (size_t(data[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) {
      error = "truncated .npy header";
      return false;
    }
    headerLen = data[8] | (size_t(data[9]) << 8) | (size_t(data[10]) << 16) |
                (size_t(data[11]) << 24);
    offset = 12;
  } else {
    error = "unsupported .npy version " + std::to_string(major);
    return false;
  }
  if (headerLen > size - offset) {
    error = "truncated .npy header";
    return false;
  }
  std::string header(reinterpret_cast<const char *>(data + offset), headerLen);
  HeaderParser p{header, 0, error};
  std::string descrStr;
  bool fortran = false, haveDescr = false, haveShape = false, haveOrder = false;
  if (!p.expect('{'))
    return false;
  while (!p.consume('}')) {
    std::string key;
    if (!p.parseString(key) || !p.expect(':'))
      return false;
    if (key == "descr") {
      if (!p.parseString(descrStr))
        return false;
      haveDescr = true;
    } else if (key == "fortran_order") {
      std::string w;
      p.parseWord(w);
      if (w != "True" && w != "False") {
        error = "malformed .npy header: fortran_order must be True or False";
        return false;
      }
      fortran = w == "True";
      haveOrder = true;
    } else if (key == "shape") {
      if (!p.parseShape(out.shape))
        return false;
      haveShape = true;
    } else {
      error = "malformed .npy header: unknown key '" + key + "'";
      return false;
    }
    if (!p.consume(',')) {
      if (!p.expect('}'))
        return false;
      break;
    }
  }
  if (!haveDescr || !haveShape || !haveOrder) {
    error = "malformed .npy header: missing descr, fortran_order or shape";
    return false;
  }
  if (fortran) {
    error = "unsupported .npy array: Fortran order";
    return false;
  }
  bool found = false;
  for (const DTypeInfo &i : kTypes) {
    // '<' and '|' are equivalent for one-byte types; '=' is native (little).
    std::string alt = descrStr;
    if (!alt.empty() && (alt[0] == '=' || (i.size == 1 && alt[0] == '<')))
      alt[0] = i.descr[0];
    if (alt == i.descr) {
      out.dtype = i.type;
      found = true;
      break;
    }
  }
  if (!found) {
    error = "unsupported .npy dtype '" + descrStr +
            "' (expected f4, f8, i1, i2, i4, i8, u1 or b1, little-endian)";
    return false;
  }
  // Element count with overflow checks.
  uint64_t n = 1;
  for (int64_t d : out.shape) {
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / 16 / d) {
      error = "malformed .npy header: shape too large";
      return false;
    }
    n *= d;
  }
  uint64_t bytes = n * itemSize(out.dtype);
  size_t dataStart = offset + headerLen;
  if (bytes != size - dataStart) {
    error = "malformed .npy file: expected " + std::to_string(bytes) +
            " data bytes for the shape, found " +
            std::to_string(size - dataStart);
    return false;
  }
  out.bytes.assign(data + dataStart, data + size);
  return true;
}

bool read(const std::string &path, Array &out, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return false;
  }
  std::vector<uint8_t> buf((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
  if (!parse(buf.data(), buf.size(), out, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

std::vector<uint8_t> serialize(const Array &a) {
  std::string header = std::string("{'descr': '") + descr(a.dtype) +
                       "', 'fortran_order': False, 'shape': (";
  for (int64_t d : a.shape)
    header += std::to_string(d) + ", ";
  if (!a.shape.empty() && a.shape.size() != 1)
    header.erase(header.size() - 2); // "(2, 3)", but "(4, )" for rank 1
  header += "), }";
  // Pad with spaces so that the data starts on a 64-byte boundary.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(header.size() & 0xff);
  out.push_back(header.size() >> 8);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), a.bytes.begin(), a.bytes.end());
  return out;
}

bool write(const std::string &path, const Array &a, std::string &error) {
  std::vector<uint8_t> buf = serialize(a);
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    error = "cannot open '" + path + "' for writing";
    return false;
  }
  bool ok = std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok)
    error = "cannot write '" + path + "'";
  return ok;
}

} // namespace tq::npy
