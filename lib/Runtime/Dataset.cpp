//===- Dataset.cpp - labelled image datasets for training -----------------===//
#include "tq/Runtime/Dataset.h"
#include "tq/Runtime/Npy.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

using namespace tq::data;

int64_t Dataset::sampleSize() const {
  int64_t n = 1;
  for (int64_t d : sampleShape)
    n *= d;
  return n;
}

uint64_t SplitMix64::next() {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float SplitMix64::uniform() { return float(next() >> 40) * 0x1.0p-24f; }

std::vector<int64_t> tq::data::shuffle(int64_t n, SplitMix64 &rng) {
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i)
    order[i] = i;
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[rng.next() % uint64_t(i + 1)]);
  return order;
}

static bool readFile(const std::string &path, std::string &out,
                     std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return false;
  }
  std::stringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

/// Inflates `in`: raw deflate (windowBits −15) or gzip (31), at most
/// `limit` bytes.
static bool inflateAll(const std::string &in, int windowBits, std::string &out,
                       std::string &error, uint64_t limit = uint64_t(1) << 32) {
  if (in.size() > UINT32_MAX) {
    error = "compressed data too large";
    return false;
  }
  z_stream z{};
  if (inflateInit2(&z, windowBits) != Z_OK) {
    error = "zlib initialization failed";
    return false;
  }
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
  z.avail_in = uInt(in.size());
  char chunk[1 << 16];
  int rc;
  do {
    z.next_out = reinterpret_cast<Bytef *>(chunk);
    z.avail_out = sizeof(chunk);
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      error = "corrupt compressed data";
      return false;
    }
    out.append(chunk, sizeof(chunk) - z.avail_out);
    if (out.size() > limit) {
      inflateEnd(&z);
      error = "compressed data larger than stated";
      return false;
    }
  } while (rc != Z_STREAM_END);
  inflateEnd(&z);
  return true;
}

bool tq::data::readGzip(const std::string &path, std::string &out,
                        std::string &error) {
  std::string raw;
  if (!readFile(path, raw, error))
    return false;
  out.clear();
  if (!inflateAll(raw, 16 + MAX_WBITS, out, error)) {
    error = "'" + path + "': " + error;
    return false;
  }
  return true;
}

namespace {
/// Whether `n` bytes at `at` lie inside a buffer of `size` bytes (with no
/// overflow for offsets read from a malformed file).
bool fits(uint64_t at, uint64_t n, uint64_t size) {
  return at <= size && size - at >= n;
}

uint64_t le(const std::string &s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | uint8_t(s[at + i]);
  return v;
}
} // namespace

bool tq::data::readZip(const std::string &path,
                       std::vector<std::pair<std::string, std::string>> &files,
                       std::string &error) {
  std::string z;
  if (!readFile(path, z, error))
    return false;
  auto bad = [&](const std::string &why) {
    error = "'" + path + "' is not a readable zip archive: " + why;
    return false;
  };
  // The end of central directory record, and its zip64 form.
  if (z.size() < 22)
    return bad("too short");
  size_t eocd = std::string::npos;
  for (size_t i = z.size() - 22 + 1; i-- > 0 && z.size() - i <= 65557;)
    if (le(z, i, 4) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos)
    return bad("no end of central directory");
  uint64_t entries = le(z, eocd + 10, 2), cdOffset = le(z, eocd + 16, 4);
  if ((entries == 0xFFFF || cdOffset == 0xFFFFFFFF) && eocd >= 20 &&
      le(z, eocd - 20, 4) == 0x07064b50) {
    uint64_t at = le(z, eocd - 20 + 8, 8);
    if (!fits(at, 56, z.size()) || le(z, at, 4) != 0x06064b50)
      return bad("bad zip64 end of central directory");
    entries = le(z, at + 32, 8);
    cdOffset = le(z, at + 48, 8);
  }
  size_t at = cdOffset;
  for (uint64_t e = 0; e < entries; ++e) {
    if (!fits(at, 46, z.size()) || le(z, at, 4) != 0x02014b50)
      return bad("bad central directory entry");
    uint64_t method = le(z, at + 10, 2), csize = le(z, at + 20, 4),
             usize = le(z, at + 24, 4), nameLen = le(z, at + 28, 2),
             extraLen = le(z, at + 30, 2), commentLen = le(z, at + 32, 2),
             local = le(z, at + 42, 4);
    if (!fits(at, 46 + nameLen + extraLen, z.size()))
      return bad("truncated central directory");
    std::string name = z.substr(at + 46, nameLen);
    // The zip64 extra field holds the sizes and offset that did not fit.
    for (size_t x = at + 46 + nameLen; x + 4 <= at + 46 + nameLen + extraLen;) {
      uint64_t id = le(z, x, 2), len = le(z, x + 2, 2);
      if (x + 4 + len > at + 46 + nameLen + extraLen)
        return bad("bad extra field of '" + name + "'");
      if (id == 1) {
        size_t f = x + 4;
        if (usize == 0xFFFFFFFF && f + 8 <= x + 4 + len)
          usize = le(z, f, 8), f += 8;
        if (csize == 0xFFFFFFFF && f + 8 <= x + 4 + len)
          csize = le(z, f, 8), f += 8;
        if (local == 0xFFFFFFFF && f + 8 <= x + 4 + len)
          local = le(z, f, 8);
      }
      x += 4 + len;
    }
    if (!fits(local, 30, z.size()) || le(z, local, 4) != 0x04034b50)
      return bad("bad local header of '" + name + "'");
    uint64_t data = local + 30 + le(z, local + 26, 2) + le(z, local + 28, 2);
    if (!fits(data, csize, z.size()))
      return bad("truncated data of '" + name + "'");
    std::string content;
    if (method == 0) {
      content = z.substr(data, csize);
    } else if (method == 8) {
      if (!inflateAll(z.substr(data, csize), -MAX_WBITS, content, error, usize))
        return bad("'" + name + "': " + error);
    } else {
      return bad("'" + name + "' uses compression method " +
                 std::to_string(method) + " (stored and deflate only)");
    }
    if (content.size() != usize)
      return bad("'" + name + "' has the wrong size");
    files.emplace_back(name, std::move(content));
    at += 46 + nameLen + extraLen + commentLen;
  }
  return true;
}

/// Labels as int64, checked to be in [0, 2^16); updates `classes`.
static bool takeLabels(const tq::npy::Array &a, const std::string &what,
                       Dataset &d, int64_t &classes, std::string &error) {
  if (a.dtype == tq::npy::DType::F32 || a.dtype == tq::npy::DType::F64 ||
      a.shape.size() != 1) {
    error = what + " must be a 1-D integer array";
    return false;
  }
  for (int64_t i = 0; i < a.numElements(); ++i) {
    double v = a.at(i);
    if (v < 0 || v >= 65536) {
      error = what + "[" + std::to_string(i) + "] = " + std::to_string(v) +
              " is not a class index";
      return false;
    }
    d.y.push_back(int64_t(v));
    classes = std::max(classes, int64_t(v) + 1);
  }
  return true;
}

bool tq::data::readNpz(const std::string &path,
                       std::map<std::string, tq::npy::Array> &arrays,
                       std::string &error) {
  std::vector<std::pair<std::string, std::string>> files;
  if (!readZip(path, files, error))
    return false;
  for (auto &[name, bytes] : files) {
    tq::npy::Array a;
    if (!tq::npy::parse(reinterpret_cast<const uint8_t *>(bytes.data()),
                        bytes.size(), a, error)) {
      error = "'" + path + "': " + name + ": " + error;
      return false;
    }
    std::string key = name.size() > 4 && name.substr(name.size() - 4) == ".npy"
                          ? name.substr(0, name.size() - 4)
                          : name;
    arrays[key] = std::move(a);
  }
  return true;
}

bool tq::data::loadNpz(const std::string &path, Split &out,
                       std::string &error) {
  std::map<std::string, tq::npy::Array> arrays;
  if (!readNpz(path, arrays, error))
    return false;
  for (const char *split : {"train", "test"}) {
    std::string xk = std::string("x_") + split, yk = std::string("y_") + split;
    if (!arrays.count(xk) || !arrays.count(yk)) {
      error = "'" + path +
              "' needs the arrays x_train, y_train, x_test and "
              "y_test; it has no '" +
              (arrays.count(xk) ? yk : xk) + "'";
      return false;
    }
    const tq::npy::Array &x = arrays[xk];
    Dataset &d = std::string(split) == "train" ? out.train : out.test;
    if (!takeLabels(arrays[yk], "'" + path + "': " + yk, d, out.classes, error))
      return false;
    if (x.shape.empty() || x.shape[0] != d.count()) {
      error = "'" + path + "': " + xk + " must have one sample per label (" +
              std::to_string(d.count()) + ")";
      return false;
    }
    d.sampleShape.assign(x.shape.begin() + 1, x.shape.end());
    d.x = x.toFloat();
    if (x.dtype == tq::npy::DType::U8)
      for (float &v : d.x)
        v /= 255.0f;
  }
  if (out.train.sampleShape != out.test.sampleShape) {
    error = "'" + path + "': x_train and x_test samples differ in shape";
    return false;
  }
  return true;
}

bool tq::data::loadDigits(Split &out, std::string &error, std::string csvGz) {
  if (csvGz.empty())
    csvGz =
        "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";
  std::string text;
  if (!readGzip(csvGz, text, error)) {
    error += " (the digits come with Debian's python3-sklearn: "
             "scripts/install-deps.sh train)";
    return false;
  }
  std::istringstream lines(text);
  std::string line;
  int64_t index = 0;
  for (Dataset *d : {&out.train, &out.test})
    d->sampleShape = {1, 8, 8};
  while (std::getline(lines, line)) {
    if (line.empty())
      continue;
    std::vector<float> values;
    std::stringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) {
      char *end = nullptr;
      float v = std::strtof(cell.c_str(), &end);
      if (cell.empty() || *end != '\0' || !std::isfinite(v)) {
        error = "'" + csvGz + "': row " + std::to_string(index) +
                " has a cell that is not a number: '" + cell + "'";
        return false;
      }
      values.push_back(v);
    }
    if (values.size() == 65 &&
        (values[64] < 0 || values[64] > 9 || values[64] != int(values[64]))) {
      error = "'" + csvGz + "': row " + std::to_string(index) +
              " has a label that is not a digit";
      return false;
    }
    if (values.size() != 65) {
      error = "'" + csvGz + "': row " + std::to_string(index) + " has " +
              std::to_string(values.size()) + " values, not 65";
      return false;
    }
    Dataset &d = index % 5 == 0 ? out.test : out.train;
    for (int i = 0; i < 64; ++i)
      d.x.push_back(values[i] / 16.0f);
    d.y.push_back(int64_t(values[64]));
    ++index;
  }
  out.classes = 10;
  return true;
}

static bool readIdx(const std::string &path, int dims,
                    std::vector<int64_t> &shape, std::string &data,
                    std::string &error) {
  if (!readGzip(path, data, error)) {
    error += " (Fashion-MNIST comes with Debian's dataset-fashion-mnist)";
    return false;
  }
  if (data.size() < size_t(4 + 4 * dims) || le(data, 0, 2) != 0 ||
      uint8_t(data[2]) != 0x08 || uint8_t(data[3]) != dims) {
    error = "'" + path + "' is not an IDX file of unsigned bytes";
    return false;
  }
  size_t total = 1;
  shape.clear();
  for (int i = 0; i < dims; ++i) {
    // IDX sizes are big-endian.
    int64_t n = 0;
    for (int b = 0; b < 4; ++b)
      n = (n << 8) | uint8_t(data[4 + 4 * i + b]);
    shape.push_back(n);
    if (n != 0 && total > data.size() / size_t(n)) {
      error = "'" + path + "' declares more data than it holds";
      return false;
    }
    total *= size_t(n);
  }
  if (data.size() != 4 + 4 * dims + total) {
    error = "'" + path + "' has the wrong size";
    return false;
  }
  data.erase(0, 4 + 4 * dims);
  return true;
}

bool tq::data::loadFashionMNIST(Split &out, std::string &error,
                                std::string directory) {
  if (directory.empty())
    directory = "/usr/share/datasets/fashion-mnist";
  for (auto [prefix, d] :
       {std::pair<const char *, Dataset *>{"train", &out.train},
        {"t10k", &out.test}}) {
    std::vector<int64_t> imageShape, labelShape;
    std::string images, labels;
    if (!readIdx(directory + "/" + prefix + "-images-idx3-ubyte.gz", 3,
                 imageShape, images, error) ||
        !readIdx(directory + "/" + prefix + "-labels-idx1-ubyte.gz", 1,
                 labelShape, labels, error))
      return false;
    if (imageShape[0] != labelShape[0]) {
      error = directory + ": " + prefix + " images and labels differ in count";
      return false;
    }
    d->sampleShape = {1, imageShape[1], imageShape[2]};
    d->x.resize(images.size());
    for (size_t i = 0; i < images.size(); ++i)
      d->x[i] = float(uint8_t(images[i])) / 255.0f;
    for (char c : labels) {
      if (uint8_t(c) > 9) {
        error = directory + ": " + prefix + " labels must be in [0, 9], got " +
                std::to_string(uint8_t(c));
        return false;
      }
      d->y.push_back(uint8_t(c));
    }
  }
  out.classes = 10;
  return true;
}

bool tq::data::load(const std::string &spec, Split &out, std::string &error) {
  if (spec == "digits")
    return loadDigits(out, error);
  if (spec == "fashion-mnist")
    return loadFashionMNIST(out, error);
  if (spec.size() > 4 && spec.substr(spec.size() - 4) == ".npz")
    return loadNpz(spec, out, error);
  error = "unknown dataset '" + spec +
          "': use digits, fashion-mnist or a .npz file (x_train, y_train, "
          "x_test, y_test)";
  return false;
}
