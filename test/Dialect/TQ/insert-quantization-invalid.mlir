// RUN: tq-opt %s -tq-insert-quantization="act-bits=1" -verify-diagnostics -split-input-file
// RUN: not tq-opt %s -tq-insert-quantization="tile=0" 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not tq-opt %s -tq-insert-quantization="scale=log" 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not tq-opt %s -tq-quantize="min-channels=-1" 2>&1 | FileCheck %s --check-prefix=CHANNELS
// Bad options and unsupported inputs: errors naming the option or the op.

// TILE: error: tile must be positive, got 0

// SCALE: Cannot find option named 'log'

// CHANNELS: error: min-channels must be 0 or more, got -1

// expected-error @+1 {{act-bits must be in [2, 16], got 1}}
module {
  func.func @f() {
    return
  }
}
