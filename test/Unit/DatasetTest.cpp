//===- DatasetTest.cpp - tq-train's data order and archive reader ---------===//
#include "tq/Runtime/Dataset.h"
#include "tq/Runtime/Npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

using namespace tq::data;

// The published splitmix64 outputs for seed 0 (Vigna's reference code).
TEST(Dataset, SplitMix64KnownValues) {
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(rng.next(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(rng.next(), 0x06C45D188009454Full);
  SplitMix64 u(7);
  for (int i = 0; i < 1000; ++i) {
    float v = u.uniform();
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}

TEST(Dataset, ShuffleIsASeededPermutation) {
  SplitMix64 a(3), b(3), c(4);
  std::vector<int64_t> p = shuffle(1000, a), q = shuffle(1000, b),
                       r = shuffle(1000, c);
  EXPECT_EQ(p, q);
  EXPECT_NE(p, r);
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i)
    EXPECT_EQ(sorted[i], i);
  SplitMix64 d(0);
  EXPECT_EQ(shuffle(1, d), std::vector<int64_t>{0});
  EXPECT_TRUE(shuffle(0, d).empty());
}

namespace {
void put(std::string &s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    s.push_back(char((v >> (8 * i)) & 0xFF));
}

/// A zip archive of stored entries, written field by field from the
/// format's description (not by the reader's code).
std::string
storedZip(const std::vector<std::pair<std::string, std::string>> &files) {
  std::string zip, central;
  for (const auto &[name, data] : files) {
    uint64_t offset = zip.size();
    put(zip, 0x04034b50, 4);
    put(zip, 20, 2); // version
    put(zip, 0, 2);  // flags
    put(zip, 0, 2);  // stored
    put(zip, 0, 4);  // time, date
    put(zip, 0, 4);  // crc (not checked)
    put(zip, data.size(), 4);
    put(zip, data.size(), 4);
    put(zip, name.size(), 2);
    put(zip, 0, 2);
    zip += name + data;
    put(central, 0x02014b50, 4);
    put(central, 20, 2);
    put(central, 20, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 4);
    put(central, 0, 4);
    put(central, data.size(), 4);
    put(central, data.size(), 4);
    put(central, name.size(), 2);
    put(central, 0, 2); // extra
    put(central, 0, 2); // comment
    put(central, 0, 2); // disk
    put(central, 0, 2); // internal attributes
    put(central, 0, 4); // external attributes
    put(central, offset, 4);
    central += name;
  }
  uint64_t cdOffset = zip.size();
  zip += central;
  put(zip, 0x06054b50, 4);
  put(zip, 0, 4);
  put(zip, files.size(), 2);
  put(zip, files.size(), 2);
  put(zip, central.size(), 4);
  put(zip, cdOffset, 4);
  put(zip, 0, 2);
  return zip;
}

std::string writeTemp(const std::string &name, const std::string &bytes) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string npy(const tq::npy::Array &a) {
  std::vector<uint8_t> b = tq::npy::serialize(a);
  return std::string(b.begin(), b.end());
}
} // namespace

TEST(Dataset, ReadsAStoredZip) {
  std::string path =
      writeTemp("two.zip", storedZip({{"a.txt", "hello"}, {"b", ""}}));
  std::vector<std::pair<std::string, std::string>> files;
  std::string error;
  ASSERT_TRUE(readZip(path, files, error)) << error;
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].first, "a.txt");
  EXPECT_EQ(files[0].second, "hello");
  EXPECT_EQ(files[1].first, "b");
  EXPECT_EQ(files[1].second, "");
}

TEST(Dataset, RejectsTruncatedArchives) {
  std::string zip = storedZip({{"a.txt", "hello world"}});
  // Every truncation is an error, never a crash or a short read.
  for (size_t n = 0; n < zip.size(); n += 3) {
    std::string path = writeTemp("cut.zip", zip.substr(0, n));
    std::vector<std::pair<std::string, std::string>> files;
    std::string error;
    EXPECT_FALSE(readZip(path, files, error)) << n;
    EXPECT_NE(error.find("is not a readable zip archive"), std::string::npos)
        << error;
  }
}

TEST(Dataset, LoadsAnNpzSplit) {
  using tq::npy::Array;
  using tq::npy::DType;
  std::string zip = storedZip(
      {{"x_train.npy", npy(Array::from(DType::U8, {2, 1, 2},
                                       std::vector<uint8_t>{0, 255, 51, 102}))},
       {"y_train.npy",
        npy(Array::from(DType::I64, {2}, std::vector<int64_t>{1, 3}))},
       {"x_test.npy",
        npy(Array::from(DType::U8, {1, 1, 2}, std::vector<uint8_t>{255, 0}))},
       {"y_test.npy",
        npy(Array::from(DType::I32, {1}, std::vector<int32_t>{0}))}});
  Split split;
  std::string error;
  ASSERT_TRUE(loadNpz(writeTemp("split.npz", zip), split, error)) << error;
  EXPECT_EQ(split.classes, 4);
  EXPECT_EQ(split.train.sampleShape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(split.train.y, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(split.train.x, (std::vector<float>{0.0f, 1.0f, 0.2f, 0.4f}));
  EXPECT_EQ(split.test.y, (std::vector<int64_t>{0}));

  std::string bad = storedZip(
      {{"x_train.npy",
        npy(Array::from(DType::F32, {1, 1}, std::vector<float>{0.5f}))},
       {"y_train.npy",
        npy(Array::from(DType::F32, {1}, std::vector<float>{1.0f}))},
       {"x_test.npy",
        npy(Array::from(DType::F32, {1, 1}, std::vector<float>{0.5f}))},
       {"y_test.npy",
        npy(Array::from(DType::I64, {1}, std::vector<int64_t>{-1}))}});
  Split s2;
  EXPECT_FALSE(loadNpz(writeTemp("bad.npz", bad), s2, error));
  EXPECT_NE(error.find("y_train must be a 1-D integer array"),
            std::string::npos)
      << error;
}
