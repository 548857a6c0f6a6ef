// RUN: not tq-opt %s -tq-insert-quantization="policy=schedule schedule=0-75:4,70-86:8" 2>&1 | FileCheck %s --check-prefix=OVERLAP
// RUN: not tq-opt %s -tq-insert-quantization="policy=schedule schedule=0-75" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not tq-opt %s -tq-insert-quantization="policy=schedule schedule=0-75:20" 2>&1 | FileCheck %s --check-prefix=BITS
// RUN: not tq-opt %s -tq-insert-quantization="policy=schedule" 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not tq-opt %s -tq-insert-quantization="policy=adaptive low=0.1 high=0.01" 2>&1 | FileCheck %s --check-prefix=THRESH
// RUN: not tq-opt %s -tq-insert-quantization="policy=schedule schedule=0-9:4" 2>&1 | FileCheck %s --check-prefix=EPOCH
// RUN: not tq-opt %s -tq-insert-quantization="policy=adaptive max-bits=16 tile=16" 2>&1 | FileCheck %s --check-prefix=RUNTIME
// RUN: not tq-opt %s -tq-insert-quantization="run-time-search=false" 2>&1 | FileCheck %s --check-prefix=SEARCH

// OVERLAP: error: invalid schedule '0-75:4,70-86:8': epoch ranges must be increasing and not overlap, got '70-86:8'
// FORMAT: error: invalid schedule '0-75': expected FIRST-LAST:BITS, got '0-75'
// BITS: error: invalid schedule '0-75:20': bit widths must be in [2, 16], got '0-75:20'
// EMPTY: error: policy=schedule needs a 'schedule' such as 0-75:4,76-86:8
// THRESH: error: policy=adaptive needs 0 <= low < high and 2 <= min-bits <= max-bits <= 16
// Two run-time widths of up to 16 bits: the partial sum bound is checked
// against max-bits (recorded in the types as ?(M) when below the container;
// max-bits=12 with these 16-wide K-tiles is accepted, bit-width-policies.mlir).
// RUNTIME: error: 'linalg.matmul' op a K-tile of 16 with 16-bit and 16-bit operands may overflow the int32 partial sum (at most 2)
// SEARCH: error: run-time-search=false needs policy=adaptive
// EPOCH: error: 'linalg.matmul' op policy=schedule needs an integer argument marked {tq.epoch} in function @no_epoch

func.func @no_epoch(%x: tensor<64x256xf32>, %w: tensor<256x128xf32>, %i: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %y = linalg.matmul ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%i : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}
