// RUN: tq-opt %s -split-input-file -tq-training-step -canonicalize -mlir-print-debuginfo=false | FileCheck %s
// RUN: tq-opt %s -split-input-file -tq-training-step="momentum=0 weight-decay=0.5 keep-forward=false" -mlir-print-debuginfo=false | FileCheck %s --check-prefix=PLAIN

// A two-layer perceptron: the constants become named parameters, the step
// takes their momenta, the batch, the labels and the learning rate, and
// returns the new parameters and momenta, the loss and the logits. Each
// backward GEMM is a linalg.matmul on a transposed operand, marked with
// its roles (dX = dY·Wᵀ, dW = Xᵀ·dY) and with the forward GEMM's number
// (tq.gradient_of, tq.layer); the bias gradient reduces dY over
// the batch; ReLU passes dY where its input is positive.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w1 = arith.constant dense<0.5> : tensor<3x4xf32> loc("fc1.weight")
  %b1 = arith.constant dense<0.1> : tensor<4xf32> loc("fc1.bias")
  %w2 = arith.constant dense<0.25> : tensor<4x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<4x3xf32>, tensor<3x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %hb = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%h, %b1 : tensor<4x4xf32>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%hb : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %zero : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x2xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<4x4xf32>, tensor<4x2xf32>) outs(%f2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK: arith.constant dense<5.000000e-01> : tensor<3x4xf32>
// CHECK-LABEL: func.func @initial_parameters() -> (tensor<3x4xf32> {tq.name = "fc1.weight"}, tensor<4xf32> {tq.name = "fc1.bias"}, tensor<4x2xf32> {tq.name = "param2"})
// CHECK-DAG: %[[C1:.*]] = arith.constant dense<5.000000e-01> : tensor<3x4xf32>
// CHECK-DAG: %[[C2:.*]] = arith.constant dense<1.000000e-01> : tensor<4xf32>
// CHECK-DAG: %[[C3:.*]] = arith.constant dense<2.500000e-01> : tensor<4x2xf32>
// CHECK: return %[[C1]], %[[C2]], %[[C3]]
// CHECK-LABEL: func.func @predict(
// CHECK-SAME: %[[W1:[^:]*]]: tensor<3x4xf32> {tq.name = "fc1.weight", tq.parameter}
// CHECK-SAME: tensor<4xf32> {tq.name = "fc1.bias", tq.parameter}
// CHECK-SAME: tensor<4x2xf32> {tq.name = "param2", tq.parameter}
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf32>, %{{[^:]*}}: i32 {tq.epoch, tq.name = "epoch"}) -> tensor<4x2xf32>
// CHECK-NOT: arith.constant dense
// CHECK: linalg.matmul ins(%[[X]], %[[W1]]

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W1:[^:]*]]: tensor<3x4xf32> {tq.name = "fc1.weight", tq.parameter}
// CHECK-SAME: %[[B1:[^:]*]]: tensor<4xf32> {tq.name = "fc1.bias", tq.parameter}
// CHECK-SAME: %[[W2:[^:]*]]: tensor<4x2xf32> {tq.name = "param2", tq.parameter}
// CHECK-SAME: tensor<3x4xf32> {tq.name = "fc1.weight.momentum"}
// CHECK-SAME: tensor<4xf32> {tq.name = "fc1.bias.momentum"}
// CHECK-SAME: tensor<4x2xf32> {tq.name = "param2.momentum"}
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf32> {tq.batch}
// CHECK-SAME: %[[LABELS:[^:]*]]: tensor<4xi64> {tq.batch, tq.name = "labels"}
// CHECK-SAME: %[[LR:[^:]*]]: tensor<f32> {tq.name = "lr"}
// CHECK-SAME: %{{[^:]*}}: i32 {tq.epoch, tq.name = "epoch"}
// CHECK-SAME: %{{[^:]*}}: i32 {tq.iteration, tq.name = "iteration"})
// CHECK-SAME: -> (tensor<3x4xf32> {tq.name = "fc1.weight"}, tensor<4xf32> {tq.name = "fc1.bias"}, tensor<4x2xf32> {tq.name = "param2"}, tensor<3x4xf32> {tq.name = "fc1.weight.momentum"}, tensor<4xf32> {tq.name = "fc1.bias.momentum"}, tensor<4x2xf32> {tq.name = "param2.momentum"}, tensor<f32> {tq.name = "loss"}, tensor<4x2xf32>)
// CHECK: %[[H:.*]] = linalg.matmul {tq.layer = 0 : i64} ins(%[[X]], %[[W1]]
// CHECK: %[[HB:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[B1]]
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[HB]] :
// CHECK: %[[Y:.*]] = linalg.matmul {tq.layer = 1 : i64} ins(%[[R]], %[[W2]]
// The loss: a row max, a row sum of exp(z - max), the label's logit.
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[Y]] :
// CHECK: math.exp
// CHECK: linalg.index 1
// CHECK: %[[LOSS:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK: math.log
// CHECK: } -> tensor<f32>
// dlogits = (softmax - onehot) / 4
// CHECK: %[[DY:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[Y]], {{.*}}, %[[LABELS]] :
// CHECK: arith.divf
// CHECK: arith.mulf {{.*}}, %cst{{.*}} : f32
// dR = dY·W2ᵀ and dW2 = Rᵀ·dY
// CHECK: %[[W2T:.*]] = linalg.transpose ins(%[[W2]] : tensor<4x2xf32>) {{.*}} permutation = [1, 0]
// CHECK: %[[DR:.*]] = linalg.matmul {tq.gradient_of = 1 : i64, tq.roles = [#tq.role<output_grad>, #tq.role<weight>]} ins(%[[DY]], %[[W2T]] :
// CHECK: %[[RT:.*]] = linalg.transpose ins(%[[R]] : tensor<4x4xf32>)
// CHECK: %[[DW2:.*]] = linalg.matmul {tq.gradient_of = 1 : i64, tq.roles = [#tq.role<activation>, #tq.role<output_grad>]} ins(%[[RT]], %[[DY]] :
// ReLU: 0 where its output is at most 0, else dY (a NaN passes it, as in
// torch); the input is then read by the ReLU alone.
// CHECK: %[[DHB:.*]] = linalg.generic {{.*}} ins(%[[DR]], %[[R]] :
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %[[RV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[POS:.*]] = arith.cmpf ugt, %[[RV]], %cst
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[POS]], %[[G]], %cst
// CHECK-NEXT: linalg.yield %[[SEL]]
// The bias add passes dY to its other input as it is; the bias gradient is
// dY summed over the batch (a reduction on d0).
// CHECK-NOT: outs({{.*}} : tensor<4x4xf32>)
// CHECK: %[[DB1:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[DHB]] : tensor<4x4xf32>)
// CHECK: } -> tensor<4xf32>
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<4x3xf32>)
// CHECK: %[[DW1:.*]] = linalg.matmul {tq.gradient_of = 0 : i64, tq.roles = [#tq.role<activation>, #tq.role<output_grad>]} ins(%[[XT]], %[[DHB]] :
// The update: v = 0.9 v + g, p = p - lr v, fused per parameter.
// CHECK: %[[U1:.*]]:2 = linalg.generic {{.*}} ins(%[[W1]], %[[DW1]], %[[LR]]
// CHECK: arith.mulf {{.*}}, %cst
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: arith.subf
// CHECK: %[[U2:.*]]:2 = linalg.generic {{.*}} ins(%[[B1]], %[[DB1]], %[[LR]]
// CHECK: %[[U3:.*]]:2 = linalg.generic {{.*}} ins(%[[W2]], %[[DW2]], %[[LR]]
// CHECK: return %[[U1]]#0, %[[U2]]#0, %[[U3]]#0, %[[U1]]#1, %[[U2]]#1, %[[U3]]#1, %[[LOSS]], %[[Y]]

// Without momentum the step takes and returns no momenta; weight decay
// adds λ·p to the gradient. keep-forward=false drops @main.
// PLAIN-NOT: func.func @main
// PLAIN-LABEL: func.func @train_step(
// PLAIN-SAME: tensor<4x2xf32> {tq.name = "param2", tq.parameter}, %{{[^:]*}}: tensor<4x3xf32>
// PLAIN-SAME: -> (tensor<3x4xf32> {tq.name = "fc1.weight"}, tensor<4xf32> {tq.name = "fc1.bias"}, tensor<4x2xf32> {tq.name = "param2"}, tensor<f32> {tq.name = "loss"}, tensor<4x2xf32>)
// PLAIN: %[[DECAY:.*]] = arith.constant 5.000000e-01 : f32
// PLAIN: arith.mulf %[[DECAY]]
// PLAIN-NEXT: arith.addf
// PLAIN-NEXT: arith.mulf
// PLAIN-NEXT: arith.subf

// -----

// A strided convolution and a max pool. dW = dYᵀ·im2col(X); the input is
// not a parameter, so there is no dX. The pool routes dY to the first
// maximum of each window: one masked tap per window position, each added
// into its strided window of dX.
func.func @main(%x: tensor<2x4x6x6xf32>) -> tensor<2x3xf32> {
  %w = arith.constant dense<0.1> : tensor<3x4x3x3xf32> loc("conv.weight")
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x3x2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x4x6x6xf32>, tensor<3x4x3x3xf32>) outs(%f : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<2x3x1x1xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x3x1x1xf32>) -> tensor<2x3x1x1xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%y, %k : tensor<2x3x2x2xf32>, tensor<2x2xf32>) outs(%pf : tensor<2x3x1x1xf32>) -> tensor<2x3x1x1xf32>
  %c = tensor.collapse_shape %p [[0], [1, 2, 3]] : tensor<2x3x1x1xf32> into tensor<2x3xf32>
  return %c : tensor<2x3xf32>
}

// CHECK: #[[IM2COL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 * 2 + d4, d2 * 2 + d5)>
// CHECK: func.func @train_step(
// CHECK-SAME: %[[W:[^:]*]]: tensor<3x4x3x3xf32> {tq.name = "conv.weight", tq.parameter}
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4x6x6xf32>
// CHECK: %[[Y:.*]] = linalg.conv_2d_nchw_fchw
// CHECK: %[[P:.*]] = linalg.pooling_nchw_max
// CHECK: %[[FOUND:.*]] = linalg.fill ins(%false : i1)
// CHECK: %[[TAP0:.*]] = tensor.extract_slice %[[Y]][0, 0, 0, 0] [2, 3, 1, 1] [1, 1, 1, 1]
// CHECK: %[[R0:.*]]:2 = linalg.generic {{.*}} ins(%[[TAP0]], %[[P]], %{{.*}}, %[[FOUND]] :
// CHECK: arith.cmpf oeq
// CHECK: arith.xori
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK: tensor.insert_slice
// CHECK: tensor.extract_slice %[[Y]][0, 0, 0, 1] [2, 3, 1, 1] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} ins({{.*}}, %[[P]], %{{.*}}, %[[R0]]#1 :
// CHECK: tensor.extract_slice %[[Y]][0, 0, 1, 1]
// CHECK: %[[DYNHWC:.*]] = linalg.transpose {{.*}} permutation = [0, 2, 3, 1]
// CHECK: %[[DYMAT:.*]] = tensor.collapse_shape %[[DYNHWC]] {{\[}}[0, 1, 2], [3]] : tensor<2x2x2x3xf32> into tensor<8x3xf32>
// CHECK: %[[COL:.*]] = linalg.generic {indexing_maps = [#[[IM2COL]], {{.*}}} ins(%[[X]] : tensor<2x4x6x6xf32>)
// CHECK: } -> tensor<2x2x2x4x3x3xf32>
// CHECK: %[[COLMAT:.*]] = tensor.collapse_shape %[[COL]] {{\[}}[0, 1, 2], [3, 4, 5]] : tensor<2x2x2x4x3x3xf32> into tensor<8x36xf32>
// CHECK: %[[DYT:.*]] = linalg.transpose ins(%[[DYMAT]] : tensor<8x3xf32>)
// CHECK: %[[DW:.*]] = linalg.matmul {tq.gradient_of = 0 : i64, tq.roles = [#tq.role<output_grad>, #tq.role<activation>]} ins(%[[DYT]], %[[COLMAT]] : tensor<3x8xf32>, tensor<8x36xf32>)
// CHECK: tensor.expand_shape %[[DW]] {{\[}}[0], [1, 2, 3]] output_shape [3, 4, 3, 3]

// -----

// Two unit-stride convolutions on zero-padded inputs. Their gradients are
// convolutions too: dW = (Xᵀ ⋆ dYᵀ)ᵀ contracts the batch, with Xᵀ the
// transposed source of the padding, padded again; dX = pad(dY, 2 − 1) ⋆
// flip(W)ᵀ is the gradient of the padding's source (4×4, not the padded
// 6×6). The first convolution reads the input, which has no gradient.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: tensor<2x1x4x4xf32>) -> tensor<2x3xf32> {
  %w1 = arith.constant dense<0.1> : tensor<2x1x3x3xf32> loc("c1.weight")
  %w2 = arith.constant dense<0.2> : tensor<3x2x3x3xf32> loc("c2.weight")
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x1x4x4xf32> to tensor<2x1x6x6xf32>
  %e1 = tensor.empty() : tensor<2x2x4x4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xp, %w1 : tensor<2x1x6x6xf32>, tensor<2x1x3x3xf32>) outs(%f1 : tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %y1p = tensor.pad %y1 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x2x4x4xf32> to tensor<2x2x6x6xf32>
  %e2 = tensor.empty() : tensor<2x3x4x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%y1p, %w2 : tensor<2x2x6x6xf32>, tensor<3x2x3x3xf32>) outs(%f2 : tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %k = tensor.empty() : tensor<4x4xf32>
  %pe = tensor.empty() : tensor<2x3x1x1xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<2x3x1x1xf32>) -> tensor<2x3x1x1xf32>
  %p = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%y2, %k : tensor<2x3x4x4xf32>, tensor<4x4xf32>) outs(%pf : tensor<2x3x1x1xf32>) -> tensor<2x3x1x1xf32>
  %c = tensor.collapse_shape %p [[0], [1, 2, 3]] : tensor<2x3x1x1xf32> into tensor<2x3xf32>
  return %c : tensor<2x3xf32>
}

// CHECK: #[[FLIP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2 + 2, -d3 + 2)>
// CHECK: func.func @train_step(
// CHECK-SAME: %[[W1:[^:]*]]: tensor<2x1x3x3xf32> {tq.name = "c1.weight", tq.parameter}
// CHECK-SAME: %[[W2:[^:]*]]: tensor<3x2x3x3xf32> {tq.name = "c2.weight", tq.parameter}
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x1x4x4xf32>
// CHECK: %[[Y1:.*]] = linalg.conv_2d_nchw_fchw
// CHECK: linalg.conv_2d_nchw_fchw
// The second convolution: dW2, then dX2 for the source of its padding.
// CHECK: %[[Y1T:.*]] = linalg.transpose ins(%[[Y1]] : tensor<2x2x4x4xf32>) {{.*}} permutation = [1, 0, 2, 3]
// CHECK: %[[Y1TP:.*]] = tensor.pad %[[Y1T]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[DY2T:.*]] = linalg.transpose ins(%[[DY2:[^ ]*]] : tensor<2x3x4x4xf32>) {{.*}} permutation = [1, 0, 2, 3]
// CHECK: %[[DW2T:.*]] = linalg.conv_2d_nchw_fchw {{{.*}}tq.roles = [#tq.role<activation>, #tq.role<output_grad>]} ins(%[[Y1TP]], %[[DY2T]] : tensor<2x2x6x6xf32>, tensor<3x2x4x4xf32>) {{.*}} -> tensor<2x3x3x3xf32>
// CHECK: %[[DW2:.*]] = linalg.transpose ins(%[[DW2T]] : tensor<2x3x3x3xf32>) {{.*}} permutation = [1, 0, 2, 3]
// CHECK: %[[DY2P:.*]] = tensor.pad %[[DY2]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[FLIPPED:.*]] = linalg.generic {indexing_maps = [#[[FLIP]], {{.*}}} ins(%[[W2]] : tensor<3x2x3x3xf32>) outs({{.*}} : tensor<2x3x3x3xf32>)
// CHECK: %[[DY1:.*]] = linalg.conv_2d_nchw_fchw {{{.*}}tq.roles = [#tq.role<output_grad>, #tq.role<weight>]} ins(%[[DY2P]], %[[FLIPPED]] : tensor<2x3x6x6xf32>, tensor<2x3x3x3xf32>) {{.*}} -> tensor<2x2x4x4xf32>
// The first: dW1 only, from the input's transpose.
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<2x1x4x4xf32>) {{.*}} permutation = [1, 0, 2, 3]
// CHECK: %[[XTP:.*]] = tensor.pad %[[XT]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[DY1T:.*]] = linalg.transpose ins(%[[DY1]] : tensor<2x2x4x4xf32>)
// CHECK: linalg.conv_2d_nchw_fchw {{{.*}}tq.roles = [#tq.role<activation>, #tq.role<output_grad>]} ins(%[[XTP]], %[[DY1T]] : tensor<1x2x6x6xf32>, tensor<2x2x4x4xf32>) {{.*}} -> tensor<1x2x3x3xf32>
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: return

// -----

// A 2×2 max pool of stride 2: its windows do not overlap, so one generic
// routes dY to the first maximum of each window and writes each tap's
// values into its strided view of dX. The windows tile X: dX needs no
// zeros.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @main(%x: tensor<2x3x4x4xf32>) -> tensor<2x12xf32> {
  %b = arith.constant dense<0.5> : tensor<3x1x1xf32> loc("bias")
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x3x4x4xf32>
  %h = linalg.generic {indexing_maps = [#id, #chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %b : tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) outs(%e : tensor<2x3x4x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4x4xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<2x3x2x2xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%h, %k : tensor<2x3x4x4xf32>, tensor<2x2xf32>) outs(%pf : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %c = tensor.collapse_shape %p [[0], [1, 2, 3]] : tensor<2x3x2x2xf32> into tensor<2x12xf32>
  return %c : tensor<2x12xf32>
}

// CHECK: func.func @train_step(%{{[^:]*}}: tensor<3x1x1xf32> {tq.name = "bias", tq.parameter}
// CHECK: %[[H:.*]] = linalg.generic
// CHECK: %[[P:.*]] = linalg.pooling_nchw_max
// CHECK: %[[Z:.*]] = tensor.empty() : tensor<2x3x4x4xf32>
// CHECK: %[[T0:.*]] = tensor.extract_slice %[[H]][0, 0, 0, 0] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[O0:.*]] = tensor.extract_slice %[[Z]][0, 0, 0, 0] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[T1:.*]] = tensor.extract_slice %[[H]][0, 0, 0, 1] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[O1:.*]] = tensor.extract_slice %[[Z]][0, 0, 0, 1] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[T2:.*]] = tensor.extract_slice %[[H]][0, 0, 1, 0] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[O2:.*]] = tensor.extract_slice %[[Z]][0, 0, 1, 0] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[T3:.*]] = tensor.extract_slice %[[H]][0, 0, 1, 1] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[O3:.*]] = tensor.extract_slice %[[Z]][0, 0, 1, 1] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[R:.*]]:4 = linalg.generic {{.*}} ins(%[[T0]], %[[T1]], %[[T2]], %[[T3]], %[[P]], %{{.*}} : {{.*}}) outs(%[[O0]], %[[O1]], %[[O2]], %[[O3]] :
// CHECK-COUNT-4: arith.cmpf oeq
// CHECK: linalg.yield
// CHECK-NOT: linalg.fill
// CHECK: %[[G0:.*]] = tensor.insert_slice %[[R]]#0 into %[[Z]][0, 0, 0, 0] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[G1:.*]] = tensor.insert_slice %[[R]]#1 into %[[G0]][0, 0, 0, 1] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[G2:.*]] = tensor.insert_slice %[[R]]#2 into %[[G1]][0, 0, 1, 0] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[G3:.*]] = tensor.insert_slice %[[R]]#3 into %[[G2]][0, 0, 1, 1] [2, 3, 2, 2] [1, 1, 2, 2]
// The bias gradient sums dX over all but the channels: over the batch
// first (whole rows), then over H and W.
// CHECK: %[[SN:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%[[G3]] : tensor<2x3x4x4xf32>) outs(%{{.*}} : tensor<3x4x4xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[SN]] : tensor<3x4x4xf32>) outs(%{{.*}} : tensor<3xf32>)

// -----

// A ReLU read by a disjoint max pool alone: the routing also applies the
// ReLU's rule (0 unless the tap is > 0, ugt), and the result is the
// gradient of the ReLU's input, with no generic of its own. The zero of
// this ReLU is a constant of its body.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @main(%x: tensor<2x3x4x4xf32>) -> tensor<2x12xf32> {
  %b = arith.constant dense<0.5> : tensor<3x1x1xf32> loc("bias")
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x3x4x4xf32>
  %h = linalg.generic {indexing_maps = [#id, #chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %b : tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) outs(%e : tensor<2x3x4x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%h : tensor<2x3x4x4xf32>) outs(%e : tensor<2x3x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x4xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<2x3x2x2xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%r, %k : tensor<2x3x4x4xf32>, tensor<2x2xf32>) outs(%pf : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %c = tensor.collapse_shape %p [[0], [1, 2, 3]] : tensor<2x3x2x2xf32> into tensor<2x12xf32>
  return %c : tensor<2x12xf32>
}

// CHECK: func.func @train_step(
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%{{[^ ]*}} : tensor<2x3x4x4xf32>) outs
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.maximumf
// CHECK: %[[P:.*]] = linalg.pooling_nchw_max {{.*}} ins(%[[R]],
// CHECK: %[[T0:.*]] = tensor.extract_slice %[[R]][0, 0, 0, 0] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[G:.*]]:4 = linalg.generic {{.*}} ins(%[[T0]], %{{.*}}, %{{.*}}, %{{.*}}, %[[P]], %{{.*}} : {{.*}})
// CHECK-NEXT: ^bb0(%[[A0:[^:]*]]: f32,
// CHECK: %[[EQ0:.*]] = arith.cmpf oeq, %[[A0]]
// CHECK: %[[POS0:.*]] = arith.cmpf ugt, %[[A0]], %cst
// CHECK: %[[TAKE0:.*]] = arith.andi %[[EQ0]], %[[POS0]]
// CHECK: arith.select %[[TAKE0]]
// CHECK-COUNT-3: arith.cmpf ugt
// CHECK: linalg.yield
// CHECK: %[[DX:.*]] = tensor.insert_slice %[[G]]#3
// No ReLU rule of its own: the bias gradient reads the routed taps.
// CHECK-NOT: arith.cmpf ugt
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%[[DX]] : tensor<2x3x4x4xf32>)

// -----

// The same ReLU read by a sum pool too: the max pool routes dY to the
// ReLU's output, and the ReLU takes its own rule on the sum of the two
// pools' gradients.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @main(%x: tensor<2x3x4x4xf32>) -> tensor<2x12xf32> {
  %b = arith.constant dense<0.5> : tensor<3x1x1xf32> loc("bias")
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4x4xf32>
  %h = linalg.generic {indexing_maps = [#id, #chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %b : tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) outs(%e : tensor<2x3x4x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%h : tensor<2x3x4x4xf32>) outs(%e : tensor<2x3x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x4xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<2x3x2x2xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%r, %k : tensor<2x3x4x4xf32>, tensor<2x2xf32>) outs(%pf : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%pe : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %s = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%r, %k : tensor<2x3x4x4xf32>, tensor<2x2xf32>) outs(%sf : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p, %s : tensor<2x3x2x2xf32>, tensor<2x3x2x2xf32>) outs(%pe : tensor<2x3x2x2xf32>) {
  ^bb0(%a: f32, %d: f32, %o: f32):
    %m = arith.addf %a, %d : f32
    linalg.yield %m : f32
  } -> tensor<2x3x2x2xf32>
  %c = tensor.collapse_shape %t [[0], [1, 2, 3]] : tensor<2x3x2x2xf32> into tensor<2x12xf32>
  return %c : tensor<2x12xf32>
}

// CHECK: func.func @train_step(
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%{{[^ ]*}} : tensor<2x3x4x4xf32>) outs
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.maximumf
// CHECK: %[[G:.*]]:4 = linalg.generic
// CHECK-NOT: arith.cmpf ugt
// CHECK: linalg.yield
// CHECK: %[[DR:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[R]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.cmpf ugt
// CHECK: return
