//===- NpyTest.cpp - .npy reader/writer tests -----------------------------===//
#include "tq/Runtime/Npy.h"

#include <gtest/gtest.h>

#include <random>

using namespace tq::npy;

TEST(Npy, RoundTripEveryDType) {
  Array f =
      Array::from(DType::F32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, -6.5f});
  Array i8 = Array::from(DType::I8, {4}, std::vector<int8_t>{-128, 0, 1, 127});
  Array i16 = Array::from(DType::I16, {1, 2}, std::vector<int16_t>{-300, 300});
  Array i32 = Array::from(DType::I32, {}, std::vector<int32_t>{-7});
  Array i64 = Array::from(DType::I64, {0, 5}, std::vector<int64_t>{});
  Array f64 = Array::from(DType::F64, {2}, std::vector<double>{0.25, 1e300});
  Array u8 = Array::from(DType::U8, {1, 1, 2}, std::vector<uint8_t>{0, 255});
  for (const Array &a : {f, i8, i16, i32, i64, f64, u8}) {
    std::vector<uint8_t> buf = serialize(a);
    EXPECT_EQ((buf.size() - a.bytes.size()) % 64, 0u); // aligned data
    Array b;
    std::string err;
    ASSERT_TRUE(parse(buf.data(), buf.size(), b, err)) << err;
    EXPECT_EQ(b.dtype, a.dtype);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.bytes, a.bytes);
  }
  EXPECT_EQ(f.at(5), -6.5);
  EXPECT_EQ(i8.at(0), -128);
  EXPECT_EQ(u8.at(1), 255);
}

namespace {
std::vector<uint8_t> withHeader(const std::string &header, size_t dataBytes,
                                int version = 1) {
  std::vector<uint8_t> buf = {
      0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(version), 0};
  if (version == 1) {
    buf.push_back(header.size() & 0xff);
    buf.push_back(header.size() >> 8);
  } else {
    for (int i = 0; i < 4; ++i)
      buf.push_back((header.size() >> (8 * i)) & 0xff);
  }
  buf.insert(buf.end(), header.begin(), header.end());
  buf.resize(buf.size() + dataBytes, 0);
  return buf;
}
std::string parseError(const std::vector<uint8_t> &buf) {
  Array a;
  std::string err;
  EXPECT_FALSE(parse(buf.data(), buf.size(), a, err));
  return err;
}
} // namespace

TEST(Npy, MalformedInputIsAnError) {
  const std::string ok =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n";
  {
    Array a;
    std::string err;
    std::vector<uint8_t> buf = withHeader(ok, 16, 2);
    EXPECT_TRUE(parse(buf.data(), buf.size(), a, err)) << err;
  }
  EXPECT_EQ(parseError({'x', 'y'}), "not a .npy file (bad magic)");
  EXPECT_EQ(
      parseError(withHeader(ok, 15)),
      "malformed .npy file: expected 16 data bytes for the shape, found 15");
  EXPECT_EQ(
      parseError(withHeader(ok, 17)),
      "malformed .npy file: expected 16 data bytes for the shape, found 17");
  std::vector<uint8_t> truncated = withHeader(ok, 16);
  truncated.resize(30);
  EXPECT_EQ(parseError(truncated), "truncated .npy header");
  EXPECT_EQ(parseError(withHeader(ok, 16, 9)), "unsupported .npy version 9");
  EXPECT_EQ(
      parseError(withHeader(
          "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8)),
      "unsupported .npy dtype '>f4' (expected f4, f8, i1, i2, i4, i8, u1 "
      "or b1, little-endian)");
  EXPECT_EQ(parseError(withHeader(
                "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8)),
            "unsupported .npy array: Fortran order");
  EXPECT_EQ(parseError(withHeader("{'descr': '<f4', 'shape': (2,), }", 8)),
            "malformed .npy header: missing descr, fortran_order or shape");
  EXPECT_EQ(
      parseError(withHeader(
          "{'descr': '<f4', 'fortran_order': False, 'shape': (2,x), }", 8)),
      "malformed .npy header: expected a dimension at offset 53");
  EXPECT_EQ(parseError(withHeader("{'descr': '<f4', 'color': 1}", 8)),
            "malformed .npy header: unknown key 'color'");
  EXPECT_EQ(
      parseError(withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                            "(99999999999, 99999999999, 99999999999), }",
                            0)),
      "malformed .npy header: shape too large");
  Array a;
  std::string err;
  EXPECT_FALSE(read("/nonexistent/x.npy", a, err));
  EXPECT_EQ(err, "cannot open '/nonexistent/x.npy'");
}

TEST(Npy, MutatedFilesNeverCrash) {
  // Fuzz-style: random byte flips, truncations and extensions of a valid
  // file must parse or fail cleanly (run under ASan/UBSan in CI).
  Array f = Array::from(DType::F32, {3, 5}, std::vector<float>(15, 1.0f));
  std::vector<uint8_t> good = serialize(f);
  std::mt19937 rng(1234);
  int parsed = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> buf = good;
    int flips = 1 + rng() % 4;
    for (int k = 0; k < flips; ++k)
      buf[rng() % std::min<size_t>(buf.size(), 80)] = rng() & 0xff;
    if (rng() % 4 == 0)
      buf.resize(rng() % (buf.size() + 8));
    Array a;
    std::string err;
    if (parse(buf.data(), buf.size(), a, err)) {
      ++parsed;
      EXPECT_EQ(a.bytes.size(),
                static_cast<size_t>(a.numElements()) * itemSize(a.dtype));
    } else {
      EXPECT_FALSE(err.empty());
    }
  }
  EXPECT_GT(parsed, 0);
}
