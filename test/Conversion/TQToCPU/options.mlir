// Bad convert-tq-to-cpu options are errors.
// RUN: not tq-opt %s --convert-tq-to-cpu=target=sse 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not tq-opt %s --convert-tq-to-cpu=threads=0 2>&1 | FileCheck %s --check-prefix=THREADS
// TARGET: error: tq-to-cpu: unknown target 'sse' (expected native, avx512, avxvnni, avx2 or generic)
// THREADS: error: tq-to-cpu: threads must be at least 1, got 0
func.func @f() {
  return
}
