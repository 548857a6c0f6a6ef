//===- Baselines.h - peer libraries measured by tq-bench --------*- C++ -*-===//
//
// Matrix products by other libraries and an int8 peak loop, timed the
// same way as tile-quant's (median of repeated calls after a warm-up), for
// ratios measured in one run. Each returns GOPS (2·M·N·K per call), or a
// negative number with `error` set when the library is missing.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_TOOLS_TQBENCH_BASELINES_H
#define TQ_TOOLS_TQBENCH_BASELINES_H

#include <cstdint>
#include <functional>
#include <string>

namespace tq::bench {

/// Median seconds of `call` over repeats lasting about `budget` seconds.
double timeCall(const std::function<void()> &call, double budget = 0.4);

/// oneDNN matmul, u8 x s8 -> s32 (int8) or f32, weights reordered ahead.
double onednnMatmul(bool int8, int64_t M, int64_t N, int64_t K, int threads,
                    std::string &error);
/// OpenBLAS sgemm (loaded with dlopen; OPENBLAS_CORETYPE is read then).
double openblasSgemm(int64_t M, int64_t N, int64_t K, int threads,
                     std::string &error);
/// The int8 multiply-add peak: 12 independent chains per thread of
/// vpdpbusd zmm (AVX-512 VNNI) or, without VNNI, vpmaddwd + vpaddd ymm
/// (AVX2), no memory traffic.
double int8Peak(int threads, std::string &error);
/// The instruction int8Peak times on this CPU, or null.
const char *int8PeakInstruction();

} // namespace tq::bench

#endif // TQ_TOOLS_TQBENCH_BASELINES_H
