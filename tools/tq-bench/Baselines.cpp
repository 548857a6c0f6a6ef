//===- Baselines.cpp - peer libraries measured by tq-bench ----------------===//
#include "Baselines.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <immintrin.h>
#include <random>
#include <string_view>
#include <thread>
#include <vector>

extern "C" void omp_set_num_threads(int); // oneDNN's OpenMP (libgomp)

namespace tq::bench {

double timeCall(const std::function<void()> &call, double budget) {
  using clock = std::chrono::steady_clock;
  call(); // warm-up: first-touch, code and caches
  call();
  std::vector<double> t;
  auto start = clock::now();
  while (
      t.size() < 5 ||
      (std::chrono::duration<double>(clock::now() - start).count() < budget &&
       t.size() < 2000)) {
    auto s = clock::now();
    call();
    t.push_back(std::chrono::duration<double>(clock::now() - s).count());
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

static double gops(int64_t M, int64_t N, int64_t K, double seconds) {
  return 2.0 * double(M) * double(N) * double(K) / seconds * 1e-9;
}

double onednnMatmul(bool int8, int64_t M, int64_t N, int64_t K, int threads,
                    std::string &error) {
  using namespace dnnl;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  try {
    omp_set_num_threads(threads);
    engine eng(engine::kind::cpu, 0);
    stream s(eng);
    dt src = int8 ? dt::u8 : dt::f32, wei = int8 ? dt::s8 : dt::f32,
       dst = int8 ? dt::s32 : dt::f32;
    memory::desc a({M, K}, src, tag::ab), bAny({K, N}, wei, tag::any),
        bPlain({K, N}, wei, tag::ab), c({M, N}, dst, tag::ab);
    matmul::primitive_desc pd(matmul::desc(a, bAny, c), eng);
    memory A(a, eng), Bp(bPlain, eng), B(pd.weights_desc(), eng), C(c, eng);
    std::mt19937 rng(1);
    auto fill = [&](memory &m, size_t bytes) {
      auto *p = static_cast<uint8_t *>(m.get_data_handle());
      for (size_t i = 0; i < bytes; ++i)
        p[i] = int8 ? uint8_t(rng() % 100) : 0;
      if (!int8)
        for (size_t i = 0; i < bytes / 4; ++i)
          reinterpret_cast<float *>(p)[i] = float(rng() % 100) / 100.0f;
    };
    size_t e = int8 ? 1 : 4;
    fill(A, M * K * e);
    fill(Bp, K * N * e);
    reorder(Bp, B).execute(s, Bp, B);
    s.wait();
    matmul prim(pd);
    double t = timeCall([&] {
      prim.execute(
          s, {{DNNL_ARG_SRC, A}, {DNNL_ARG_WEIGHTS, B}, {DNNL_ARG_DST, C}});
      s.wait();
    });
    return gops(M, N, K, t);
  } catch (const dnnl::error &e) {
    error = std::string("oneDNN: ") + e.what();
    return -1;
  }
}

double openblasSgemm(int64_t M, int64_t N, int64_t K, int threads,
                     std::string &error) {
  static void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    error = "cannot load libopenblas.so.0 (apt libopenblas0)";
    return -1;
  }
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
  auto sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "cblas_sgemm"));
  auto setThreads =
      reinterpret_cast<void (*)(int)>(dlsym(lib, "openblas_set_num_threads"));
  if (!sgemm || !setThreads) {
    error = "libopenblas.so.0 lacks cblas_sgemm";
    return -1;
  }
  setThreads(threads);
  std::vector<float> a(M * K, 0.5f), b(K * N, 0.25f), c(M * N);
  const int rowMajor = 101, noTrans = 111;
  double t = timeCall([&] {
    sgemm(rowMajor, noTrans, noTrans, int(M), int(N), int(K), 1.0f, a.data(),
          int(K), b.data(), int(N), 0.0f, c.data(), int(N));
  });
  return gops(M, N, K, t);
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static int64_t
peakLoop(int64_t iterations) {
  __m512i acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm512_set1_epi32(i);
  __m512i a = _mm512_set1_epi32(0x01020304), b = _mm512_set1_epi32(0x05060708);
  for (int64_t it = 0; it < iterations; ++it) {
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
    // Keep the operands opaque so the loop is not folded.
    asm volatile("" : "+v"(a), "+v"(b));
  }
  __m512i sum = acc[0];
  for (int i = 1; i < 12; ++i)
    sum = _mm512_add_epi32(sum, acc[i]);
  return _mm512_reduce_add_epi32(sum);
}

__attribute__((target("avx2"))) static int64_t
maddPeakLoop(int64_t iterations) {
  __m256i acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm256_set1_epi32(i);
  __m256i b = _mm256_set1_epi16(5);
  // Each product reads its own accumulator, as the kernel's read their own
  // A and B: with one shared product the compiler computes it once per
  // iteration and the loop times the adds alone.
  for (int64_t it = 0; it < iterations; ++it) {
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(acc[i], b));
    asm volatile("" : "+x"(b));
  }
  __m256i sum = acc[0];
  for (int i = 1; i < 12; ++i)
    sum = _mm256_add_epi32(sum, acc[i]);
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i *>(lanes), sum);
  int64_t total = 0;
  for (int32_t v : lanes)
    total += v;
  return total;
}

const char *int8PeakInstruction() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512vnni"))
    return "vpdpbusd zmm";
  return __builtin_cpu_supports("avx2") ? "vpmaddwd ymm with vpaddd" : nullptr;
}

double int8Peak(int threads, std::string &error) {
  const char *instruction = int8PeakInstruction();
  if (!instruction) {
    error = "this CPU has neither AVX-512 VNNI nor AVX2";
    return -1;
  }
  bool vnni = std::string_view(instruction) == "vpdpbusd zmm";
  const int64_t iterations = 2'000'000;
  volatile int64_t sink = 0;
  auto loop = [&] {
    return vnni ? peakLoop(iterations) : maddPeakLoop(iterations);
  };
  double t = timeCall([&] {
    std::vector<std::thread> pool;
    for (int i = 1; i < threads; ++i)
      pool.emplace_back([&] { sink += loop(); });
    sink += loop();
    for (std::thread &th : pool)
      th.join();
  });
  // Per iteration, 12 instructions of 16 lanes x 4 multiply-adds
  // (vpdpbusd) or 8 lanes x 2 (vpmaddwd), 2 ops each.
  double ops = vnni ? 12 * 16 * 4 * 2 : 12 * 8 * 2 * 2;
  return double(threads) * iterations * ops / t * 1e-9;
}

} // namespace tq::bench
