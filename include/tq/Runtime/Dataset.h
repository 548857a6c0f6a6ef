//===- Dataset.h - labelled image datasets for training ---------*- C++ -*-===//
//
// Plain C++ (no MLIR): the datasets tq-train reads, as f32 samples and
// int64 class labels, split into a training and a test set.
//
// - `.npz` archives (numpy.savez or savez_compressed) with the arrays
//   x_train, y_train, x_test, y_test;
// - scikit-learn's digits (Debian's python3-sklearn ships them as a CSV):
//   1797 8×8 images scaled to [0, 1], every fifth one held out for testing;
// - Fashion-MNIST (Debian's dataset-fashion-mnist, IDX files): 60000 +
//   10000 28×28 images scaled to [0, 1].
//
//===----------------------------------------------------------------------===//
#ifndef TQ_RUNTIME_DATASET_H
#define TQ_RUNTIME_DATASET_H

#include "tq/Runtime/Npy.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tq::data {

/// `count()` samples of shape `sampleShape`, C order, one label each.
struct Dataset {
  std::vector<int64_t> sampleShape;
  std::vector<float> x;
  std::vector<int64_t> y;
  int64_t count() const { return int64_t(y.size()); }
  int64_t sampleSize() const;
};

struct Split {
  Dataset train, test;
  /// Labels are in [0, classes).
  int64_t classes = 0;
};

/// The arrays x_train (f32, f64 or u8 — u8 scaled by 1/255), y_train
/// (integers), x_test and y_test of a `.npz` archive.
bool loadNpz(const std::string &path, Split &out, std::string &error);
/// scikit-learn's digits, from `csvGz` (digits.csv.gz); empty: Debian's
/// python3-sklearn copy.
bool loadDigits(Split &out, std::string &error, std::string csvGz = "");
/// Fashion-MNIST from the IDX files in `directory`; empty: Debian's
/// /usr/share/datasets/fashion-mnist.
bool loadFashionMNIST(Split &out, std::string &error,
                      std::string directory = "");
/// The dataset named `spec`: "digits", "fashion-mnist" or a `.npz` path.
bool load(const std::string &spec, Split &out, std::string &error);

/// The files of a zip archive (stored or deflated entries), by name.
bool readZip(const std::string &path,
             std::vector<std::pair<std::string, std::string>> &files,
             std::string &error);
/// The arrays of a `.npz` archive (numpy.savez, savez_compressed) by name
/// (the member's name without `.npy`).
bool readNpz(const std::string &path,
             std::map<std::string, tq::npy::Array> &arrays, std::string &error);
/// The contents of a gzip file.
bool readGzip(const std::string &path, std::string &out, std::string &error);

/// A small deterministic generator (splitmix64), so that other programs
/// (the torch reference) can reproduce tq-train's data order and
/// initialization exactly.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, 1) with 24 random bits.
  float uniform();

private:
  uint64_t state;
};

/// A permutation of [0, n): Fisher–Yates, swapping i with next() % (i + 1)
/// for i from n − 1 down to 1.
std::vector<int64_t> shuffle(int64_t n, SplitMix64 &rng);

} // namespace tq::data

#endif // TQ_RUNTIME_DATASET_H
