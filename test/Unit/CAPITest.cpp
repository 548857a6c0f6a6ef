//===- CAPITest.cpp - the C API of the CPU backend ------------------------===//
//
// Compiles a quantize + transposed matmul program through tq-c/CPU.h, calls
// it, and compares with the C++ reference numerics (tq::ref) bit for bit;
// then the error paths.
//
//===----------------------------------------------------------------------===//
#include "tq-c/CPU.h"
#include "tq/Runtime/Quant.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

namespace {

const char *kProgram = R"mlir(
!X = !tq.tiled<10x24xi8:8, f32, tile = 16x16, dims = [0, 1], scale = f32>
!W = !tq.tiled<20x24xi8:8, f32, tile = 16x16, dims = [0, 1], scale = f32>
func.func @main(%x: tensor<10x24xf32>, %w: tensor<20x24xf32>) -> tensor<10x20xf32> {
  %qx = tq.quantize %x : tensor<10x24xf32> -> !X
  %qw = tq.quantize %w : tensor<20x24xf32> -> !W
  %y = tq.matmul %qx, %qw {transpose_b} : !X, !W -> tensor<10x20xf32>
  return %y : tensor<10x20xf32>
}
)mlir";

struct Module {
  tq_cpu_module *m = nullptr;
  ~Module() { tq_cpu_destroy(m); }
};

TEST(CAPI, MatmulMatchesReference) {
  for (const char *target : {"native", "generic"}) {
    char *error = nullptr;
    Module mod;
    mod.m = tq_cpu_compile(kProgram, target, 2, &error);
    ASSERT_NE(mod.m, nullptr) << error;
    EXPECT_EQ(tq_cpu_num_buffers(mod.m, "main", 0), 2);
    EXPECT_EQ(tq_cpu_num_buffers(mod.m, "main", 1), 1);
    tq_element_type type;
    int32_t rank = 0;
    int64_t shape[4];
    ASSERT_EQ(tq_cpu_buffer_type(mod.m, "main", 1, 0, &type, &rank, shape, 4),
              0);
    EXPECT_EQ(type, TQ_F32);
    ASSERT_EQ(rank, 2);
    EXPECT_EQ(shape[0], 10);
    EXPECT_EQ(shape[1], 20);

    std::mt19937 rng(4);
    std::normal_distribution<float> normal;
    tq::ref::FloatTensor x{{10, 24}, {}}, w{{20, 24}, {}};
    for (int i = 0; i < 240; ++i)
      x.data.push_back(normal(rng));
    for (int i = 0; i < 480; ++i)
      w.data.push_back(normal(rng));
    std::vector<float> y(200);
    int64_t xs[] = {10, 24}, ws[] = {20, 24}, ys[] = {10, 20};
    tq_buffer in[] = {{x.data.data(), TQ_F32, 2, xs},
                      {w.data.data(), TQ_F32, 2, ws}};
    tq_buffer out[] = {{y.data(), TQ_F32, 2, ys}};
    ASSERT_EQ(tq_cpu_invoke(mod.m, "main", in, 2, out, 1, &error), 0) << error;

    tq::ref::TileLayout layout;
    layout.tile[0] = layout.tile[1] = 16;
    tq::ref::BitsSpec bits;
    tq::ref::TiledTensor qx =
        tq::ref::quantizeTiled(x, layout, bits, tq::ref::QuantForm::Scaled);
    tq::ref::TiledTensor qw =
        tq::ref::quantizeTiled(w, layout, bits, tq::ref::QuantForm::Scaled);
    tq::ref::MatmulOperand a{&qx, nullptr, false}, b{&qw, nullptr, true};
    tq::ref::FloatTensor want;
    ASSERT_TRUE(tq::ref::matmulTiled(a, b, false, want).ok);
    EXPECT_EQ(std::memcmp(want.data.data(), y.data(), 200 * sizeof(float)), 0)
        << target;
  }
}

TEST(CAPI, Errors) {
  char *error = nullptr;
  EXPECT_EQ(tq_cpu_compile("func.func @f( {", "native", 1, &error), nullptr);
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("error:"), std::string::npos) << error;
  tq_free_string(error);
  error = nullptr;
  EXPECT_EQ(tq_cpu_compile(kProgram, "native", 0, &error), nullptr);
  ASSERT_NE(error, nullptr);
  tq_free_string(error);

  Module mod;
  mod.m = tq_cpu_compile(kProgram, "native", 1, nullptr);
  ASSERT_NE(mod.m, nullptr);
  EXPECT_EQ(tq_cpu_num_buffers(mod.m, "nope", 0), -1);
  float x[4] = {}, w[480] = {}, y[200];
  int64_t bad[] = {2, 2}, ws[] = {20, 24}, ys[] = {10, 20};
  tq_buffer in[] = {{x, TQ_F32, 2, bad}, {w, TQ_F32, 2, ws}};
  tq_buffer out[] = {{y, TQ_F32, 2, ys}};
  error = nullptr;
  EXPECT_NE(tq_cpu_invoke(mod.m, "main", in, 2, out, 1, &error), 0);
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("expected f32 (10, 24), got f32 (2, 2)"),
            std::string::npos)
      << error;
  tq_free_string(error);
}

} // namespace
