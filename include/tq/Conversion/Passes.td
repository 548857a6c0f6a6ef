//===- Passes.td - tile-quant conversion passes -------------*- tablegen -*-===//
#ifndef TQ_CONVERSION_PASSES_TD
#define TQ_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTQToPPU : Pass<"convert-tq-to-ppu", "::mlir::ModuleOp"> {
  let summary = "Lower tq functions to PPU instruction programs";
  let description = [{
    Turns each `func.func` computing on `tq` values into a `ppu.program`
    for the machine given by the options (recorded in the stream header):

    - f32 arguments become input bindings `arg<i>` in host memory (fmem),
      returned f32 tensors output bindings `result<i>`;
    - `tq.quantize` becomes one `QUANT` per tile into unified-buffer slots,
      `tq.requantize` one `REQ` per tile;
    - `tq.matmul` becomes, for each output tile, a loop over K-tiles of
      `LOAD a` / `LOAD b` (transposed operands read through the datapath
      unit's transpose, scales reused) and `MAC`, alternating data-buffer
      rows (double buffering when `rows` >= 2); the accumulated tile is
      `POST`ed into the unified buffer for a `tq.postprocess` (a constant
      per-layer scale, ReLU and requantization, T6), `STORE`d for a returned result, and applied
      in place to the weight of a `tq.weight_update` (`WUPD`, T7; constant
      learning rate);
    - a returned tiled value goes back to the host dequantized (`DEQ`).

    Unified-buffer slots are released after a value's last use and reused
    first-fit, so the buffer holds the live values only. A quantized lhs of
    a matmul that does not fit is quantized inside the matmul one row panel
    at a time (tiling to the buffer's capacity; every tile is still
    quantized once). A program whose live values exceed `ub` otherwise is an
    error naming the op (no spilling yet).

    Host functions of a partitioned module (`tq.device = "cpu"`, and the
    `tq.schedule` that calls them; see `tq-partition-ppu`) are left as they
    are.

    Supported: static 2-D shapes split on [0, 1], tiles V×V, 1×V or V×1
    with the machine's V, fixed widths, `f32` or `pow2` scales without
    offsets, nearest-even rounding. Anything else is an error naming the op
    and the reason, as is a program that does not fit the machine.
  }];
  let options = [
    Option<"v", "v", "int64_t", /*default=*/"16", "Tile size V">,
    Option<"mac", "mac", "int64_t", /*default=*/"0",
           "Vector MAC units (0: V)">,
    Option<"ub", "ub", "int64_t", /*default=*/"0",
           "Unified buffer capacity, in tiles (0: what the program needs)">,
    Option<"rows", "rows", "int64_t", /*default=*/"2",
           "Tile slots per data buffer">,
    Option<"acc", "acc", "int64_t", /*default=*/"64",
           "Accumulator tiles">,
    Option<"fmem", "fmem", "int64_t", /*default=*/"0",
           "Host memory, in tiles (0: what the program needs)">
  ];
  let dependentDialects = ["::mlir::ppu::PPUDialect"];
}

def ConvertTQToCPU : Pass<"convert-tq-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Lower tq ops to loops, vectors and x86 dot products";
  let description = [{
    Rewrites every `tq` op into upstream dialects on tensors, ready for
    one-shot bufferization and the conversion to LLVM that `tq-to-cpu`
    runs after it:

    - a `!tq.tiled` value becomes two tensors: its integer data in the
      narrowest container (`i8` up to 8 bits, else `i16`) and its steps
      (`f32`, in the tile-grid shape); function signatures, calls and
      returns are converted with it (a tiled argument or result becomes
      two);
    - `tq.quantize` becomes a loop nest over the tile grid: the tile's
      `max|x|` over its finite elements, its step, then its values, with
      the reference numerics (T3; NaN to 0, ±Inf saturated); an NCHW
      tensor split on (N, C) whose only user is a `tq.transpose` to NHWC
      (a `tq.conv2d`'s input) is written in NHWC directly, 16 channels ×
      16 pixels at a time transposed in registers (the same bits);
    - `tq.transpose` copies the data and the steps permuted: a
      permutation that swaps two groups of trailing dims (NCHW to NHWC,
      or the batch moved last for a weight gradient) as a batch of 2-D
      transposes in 16 × 16 blocks transposed in registers, each thread
      taking whole blocks of output rows (the tile grid's steps, under
      half a block along a side, element by element);
    - `tq.dequantize` multiplies each value by its tile's step;
    - `tq.constant` becomes two `arith.constant`s;
    - `tq.matmul` becomes a packed, register-blocked kernel (see
      `docs/CPU.md`): on `avx512` / `avxvnni` the int8 partial sums of
      each K-tile come from `vpdpbusd` (`llvm.x86.avx512.vpdpbusd.{512,256}`)
      with the weights in offset binary on its unsigned side, packed at
      compile time when constant; on `avx2` (and for i16 containers on
      every x86 target) from `vpmaddwd` on int16 pairs (`tq.dot_i16`); on
      `generic` from portable vector code. Each K-tile's int32 sums are converted,
      multiplied by `sA·sB` and added in f32, bit-exact with the reference.
      When a 2-D product's only user is an elementwise `linalg.generic`
      (directly, or through an `expand_shape` of its rows), the kernel
      applies it to each vector of C before the store: a bias (a vector
      along the columns), a residual (a tensor of the result's shape), a
      0-d value, and the body's arith and math ops. The generic must not
      read its init, and what it reads must be defined before the product.
      Each element gets the same ops on the same values: the same bits.

    With `threads` above 1, every loop nest whose iterations are
    independent is an `scf.parallel` (the kernels' row blocks and column
    panels, the tiles of `tq.quantize`, the elements of `tq.dequantize`
    and `tq.transpose`, the im2col rows of `tq.conv2d` or the rows of its
    bordered input);
    `tq-cpu-share-loops` then chooses how many of its dims are shared. A
    loop that reduces into tiles' maxima is shared a whole tile at a time
    (the tile rows of an NCHW tensor's N), or not at all. Each element
    is computed by one thread in the same order: the results do not depend
    on the thread count.

    The module gets a `tq.cpu_target` attribute naming the target. Ops or
    types the CPU lowering does not take yet are errors naming the op and
    the reason.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"native\"",
           "Instruction set: native (the host's best), avx512, avxvnni, avx2 or "
           "generic">,
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "Threads sharing the independent loops (more than 1: scf.parallel, "
           "run by OpenMP)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect"
  ];
}

def ConvertTQCPUIntrinsics : Pass<"convert-tq-cpu-intrinsics"> {
  let summary = "Lower the tq.dot_* products to the x86 intrinsics";
  let description = [{
    Replaces each `tq.dot_u8s8` with `llvm.call_intrinsic
    "llvm.x86.avx512.vpdpbusd.512"` (16 lanes) or `.256` (8 lanes);
    each `tq.dot_i16` with `llvm.x86.avx2.pmadd.wd` (8 lanes) or
    `llvm.x86.avx512.pmaddw.d.512` (16 lanes) followed by an add; and
    each `tq.dot_u8s8_pairs` with `llvm.x86.avx2.pmadd.ub.sw` (or
    `llvm.x86.avx512.pmaddubs.w.512`), the same `pmaddwd` with ones and an
    add. Runs
    in `tq-to-cpu` after buffer deallocation, which does not accept the
    intrinsic call (its memory effects are unknown to MLIR).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def TQCPUChannelsLast : Pass<"tq-cpu-channels-last"> {
  let summary = "Run the float layers between quantized convolutions in NHWC";
  let description = [{
    A quantized convolution (`tq.conv2d`) reads and writes NHWC, and the
    importer's float layers are NCHW: after `tq-quantize` each
    convolution's result is transposed to NCHW (`linalg.transpose`), and
    the next one's quantized input back to NHWC (`tq.transpose`). In a
    network of 1x1 and depthwise convolutions (MobileNet), the float layers
    in between (bias adds, activations, depthwise convolutions, squeeze and
    excitation, residual adds) moved each tensor through two transposes.

    On tensors, this pass moves each NHWC-to-NCHW `linalg.transpose` down
    past the ops that read it, each then reading the NHWC value:
    - a `linalg.generic` reading it through the identity map runs over
      NHWC loops, its other operands' maps composed with the change of
      loops; an output written through the identity map (whose init is
      not read) becomes NHWC and is transposed after it, one written
      through another map (a reduction such as a global average pooling)
      keeps its layout. The reduction loops keep their order, so each sum
      adds in the same order;
    - a `tensor.pad` with a constant pads the NHWC value;
    - a depthwise `linalg.conv_2d_ngchw_gfchw` (one channel and one filter
      per group) becomes `linalg.depthwise_conv_2d_nhwc_hwc` from the same
      fill, the filter transposed to (R, S, C), when the padded image
      fits the NHWC kernel's scratch buffer (its pad moves only then);
    - a max or sum pooling from a fill becomes `linalg.pooling_nhwc_max`
      or `_sum`, and its smaller output is transposed;
    - a network's first convolution, a `linalg.conv_2d_nchw_fchw` on an
      image of one channel (the same bytes in NHWC) with a constant filter
      of at most 49 taps, from a fill, becomes `linalg.conv_2d_nhwc_hwcf`
      on the image reshaped, the filter reordered to (R, S, 1, F) at
      compile time (a constant pad of H and W in front of it is moved to
      NHWC with it), and its output is transposed: the layers after it
      start in NHWC;
    - a `tq.quantize` quantizes the NHWC value with the same tiles (its
      split dims move with the data) and is followed by a `tq.transpose`,
      which folds with the `tq.transpose` back to NHWC after it. Not with
      given scales or stochastic rounding.

    Each element's arithmetic is unchanged: the same bits. A transpose
    that reaches an op none of these takes (a flatten, a larger
    depthwise convolution) stays in front of it, where `tq-cpu-fuse-elementwise` fuses
    it into its consumer as before. A training step (a function whose
    samples are marked `tq.batch`) is left as it is: its backward pass
    (the weight and bias gradients' sums, the max-pool gradient's routing)
    has NCHW kernels, and the Fashion CNN's step took 3.57 ms in NHWC
    against 2.66 ms. `tq-to-cpu` runs it first, unless
    `channels-last=false`.

    ```mlir
    %t = linalg.transpose ins(%y : tensor<1x7x7x24xf32>)
           outs(%e : tensor<1x24x7x7xf32>) permutation = [0, 3, 1, 2]
    %r = linalg.generic {indexing_maps = [(n, c, h, w) -> (n, c, h, w),
                                          (n, c, h, w) -> (c, 0, 0),
                                          (n, c, h, w) -> (n, c, h, w)], ...}
           ins(%t, %bias : ...)  // + bias, ReLU
    %q = tq.quantize %r : ... dims = [0, 1] ...
    %n = tq.transpose %q [0, 2, 3, 1] : ... -> ... dims = [0, 3] ...
    // becomes a generic over (n, h, w, c) reading %y and %bias through
    // (n, h, w, c) -> (c, 0, 0), and tq.quantize of its NHWC result with
    // dims = [0, 3], used as %n.
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TQCPUFuseElementwise : Pass<"tq-cpu-fuse-elementwise"> {
  let summary = "Fuse chains of elementwise linalg ops on tensors into one loop nest";
  let description = [{
    Between the layers an imported network has chains of elementwise ops
    on the same tensor: a layout transpose, the bias add, the activation.
    Each is a loop nest that reads and writes the whole tensor. Run on
    tensors before bufferization, this pass turns `linalg.transpose` into
    a `linalg.generic` and fuses each elementwise `linalg.generic` into
    its consumer when the consumer is its only use (upstream
    `populateElementwiseOpsFusionPatterns`), so that a chain becomes one
    loop nest and its intermediate tensors are never stored. Each op's
    arithmetic is kept, in the same order: the results are the same bits.
    `tq-to-cpu` runs it before `convert-tq-to-cpu` too, so that a
    `tq.matmul` applies the whole chain after it as its epilogue.

    A `linalg.fill` with several users (CSE merges the fills of outputs of
    the same shape) is replaced by a clone before each user, on a
    `tensor.empty` of its own, so that bufferization does not fill one
    buffer and copy it for the others: a float kernel takes the fill just
    before it as its initial value.

    A `linalg.transpose` of an f32 constant (a Gemm's `transB` weight in an
    f32 program) becomes the constant of the permuted values, computed at
    compile time instead of on every call; a large one stays a dense
    resource.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TQCPUMarkNonNegative : Pass<"tq-cpu-mark-nonnegative"> {
  let summary =
      "Mark the max poolings of ReLU outputs, and the products of their bytes";
  let description = [{
    `arith.maximumf` orders -0 below +0 and propagates NaN; x86 has no
    instruction for it, and LLVM expands each one into six. A ReLU's
    output (`maximumf(x, +0)`, or a clip of one from above by `minimumf`
    with another such value or a positive constant) holds no -0: every
    value is NaN or at least +0. On tensors, this pass marks each
    `linalg.pooling_nchw_max` or `pooling_nhwc_max` whose input is such a
    `linalg.generic`'s result with `tq.nonnegative_input`. `tq-to-cpu`
    runs it before `convert-tq-to-cpu` too, where a `tq.conv2d` then takes
    the ReLU as its epilogue. `tq-cpu-float-kernels` then
    combines its window, filled with a value other than -0, as
    `x > acc ? x : acc` (one `vmaxps`) and takes `x` where it is NaN: the
    same bits as `maximumf` on such values, in three instructions. In the
    Fashion CNN (8-bit, batch 64, 1 thread) the model went from 0.94 to
    0.87 ms.

    It also marks each `tq.conv2d` and `tq.matmul` whose input (the lhs) is
    the `tq.quantize` of such a tensor (a ReLU's output, or a max pooling,
    a transpose or a reshape of one: NaN quantizes to 0), so that none of
    its quantized values is negative. Without VNNI (`avx2`), the kernel then
    multiplies its bytes as they are with `vpmaddubsw` (`tq.dot_u8s8_pairs`),
    four values per int32 lane where `vpmaddwd` takes two, and needs no
    int16 copy of them. The attribute is a promise: a marked product whose
    input holds a negative value computes wrong sums on AVX2.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TQCPUFloatKernels : Pass<"tq-cpu-float-kernels"> {
  let summary = "Register-blocked f32 kernels for float matmuls, convolutions, pooling and layout transposes";
  let description = [{
    The float layers left between the quantized ones (the first and last
    layers, `keep-float`, a whole f32 model) are `linalg.matmul`,
    `linalg.batch_matmul` and `linalg.conv_2d_nchw_fchw` on buffers. This
    pass replaces each one on static f32 memrefs with a register-blocked
    kernel: C's columns in panels of two vectors (the last, partial panel
    one vector when its columns fit in one), 6 rows × 2 vectors of
    accumulators held in registers for the whole reduction, B's vectors
    loaded once per k for the rows, A's values broadcast. With a reduction
    of 32 or more, the rows per tile are chosen (4 to 6, up to 12 in the 32
    registers of AVX-512) to waste the fewest rows in the last tile: 32
    rows take 4 tiles of 8 instead of 6 tiles of 6. Each output's
    sum is taken in the op's order (increasing k; c, kh, kw for a
    convolution), each step one fused multiply-add (`math.fma`, a single
    rounding, as onnxruntime's kernels do) on the x86 targets; on the
    `generic` target, which may lack FMA, a multiply then an add, as the
    loops of `convert-linalg-to-loops` do (the same bits as those). Where
    the products are exact the two give the same bits. The depthwise
    kernel below does the same.

    A convolution is one product per image, F × (C·KH·KW) by
    (C·KH·KW) × (OH·OW), on the image's columns (im2col into a buffer of
    one image), or on the image itself when the filter is 1×1 with unit
    strides. With few taps (C·KH·KW at most 16, and 3 fewer than the
    vector registers) and a unit W stride there is no im2col: each vector
    of an output row loads the input vectors under its taps once, and each
    filter sums them weighted by its taps in (c, kh, kw) order, as the
    product would, with the same bits (the (image, output row) pairs
    shared among the threads, one fork and join per call); the Fashion
    CNN's first convolution at batch 64 went from 0.177 to 0.149 ms, and
    to 0.082 ms on 2 threads. When a `linalg.pooling_nchw_max` (and the fill of its output)
    follows the convolution (and its elementwise generic) and is the last
    reader of its output, each image's output goes to a buffer of one
    image and is pooled right away, while it is in cache: the whole output
    is never allocated. The convolutions are rewritten before the other
    ops for this. With `threads` > 1 the column panels are shared among the
    threads (`scf.parallel`). A convolution whose output image has few
    pixels (at most two vectors' lanes), and at most a vector of filters
    that fill more lanes than its pixels would (a weight gradient, whose
    "image" is the forward's filter taps), is the product the other way
    round: each pixel's filters in one vector held over the whole
    reduction, each filter row read a vector of taps at a time and
    transposed in registers, one broadcast of the image per pixel and tap;
    no im2col. When the filter is a permuted copy of another buffer that
    keeps the last dim last (the training step's `dYᵀ`) and that buffer is
    not used in between, the kernel reads that buffer and the copy is not
    made (when that buffer is an allocation or an argument of the
    function, which neither the image nor the output views and which
    nothing frees in between). The pixels are split into groups that fit
    the registers; the threads share the (image, group) pairs when there
    are several, but not one image's pixels, since each group reads and
    transposes the whole filter (split in two, the Fashion CNN's first
    weight gradient took 0.30 ms on 2 threads, against 0.21 on one). With
    one image they share its filters instead, half a vector of them each,
    in vectors of half the width. A depthwise `linalg.conv_2d_ngchw_gfchw`
    (one channel and one filter per group) gets a kernel of its own:
    vectors of an output row held over the window, narrower ones (down to
    4 lanes) for rows shorter than a vector. When its input is a padded
    copy (the bufferized `tensor.pad`: a buffer filled with the pad value,
    the source copied into its interior) and the source is not written
    between the copy and the convolution, the kernel reads the source
    instead: a scratch plane per thread (allocated once, outside the image
    loop) whose border holds the pad value, each group's plane copied into
    its interior, then its rows computed. The padded tensor, written and read
    in full, is gone; the kernel reads the same values. Its epilogue may
    also be a generic that reads the output as NCHW through the
    `collapse_shape` dropping the unit group dim (how the importer's
    grouped convolutions end), stored at (n, g, p, q); one that writes the
    padded source's buffer in place (bufferization reuses it) is taken
    only where it writes the plane just copied. Planes whose rows hold at
    most 4 outputs, with at least half a vector of channels and a fill
    before the convolution, are computed image by image in channels-last
    order instead: the image's planes transposed in registers into an
    H × W × C scratch buffer (its border the pad value), each output pixel
    a vector of channels over the window in the same order, and the result
    transposed back, the epilogue applied along each channel's flattened
    plane. Its 4×4 planes of 120 channels took 0.24 ms at batch 64 in rows
    of 4 lanes, and take 0.10 ms. So do
    `linalg.pooling_nchw_max` and `pooling_nchw_sum` (windows of up to 64
    taps). The NHWC forms `tq-cpu-channels-last` makes
    (`linalg.depthwise_conv_2d_nhwc_hwc`, `pooling_nhwc_max` and `_sum`)
    take vectors of channels per output pixel instead, the last one
    masked: a depthwise convolution reads a padded input's source where
    it is (the padded tensor is never made), the pixels whose window
    reaches into the border checking each tap and taking the pad value
    outside; where more than 40% of the pixels do, or where the output is
    stored in place into the source, each image is copied into a scratch
    buffer whose border is the pad value instead.
    Per tap one vector load, or for a W stride s one load of s·L
    contiguous inputs with every s-th lane picked, combined as the op's
    body does (`mulf` then `addf`, `maximumf`, `addf`) in the window's
    order. Vectors that could read past their row are masked.
    A `linalg.conv_2d_nhwc_hwcf` of at most 64 taps (C·R·S; the first
    convolution `tq-cpu-channels-last` moves) computes each output pixel
    as vectors of L filters, up to 24 accumulators (blocks of pixels) in
    registers, each tap one broadcast input per pixel times the filter
    vectors, summed in the op's (kh, kw, c) order (for one channel, the
    order of the NCHW kernels: the same bits). With a max pooling of its
    output next, each image goes to a scratch buffer, pooled at once (the
    whole output is never written); when the pooling's windows do not
    overlap down the rows (a 2×2 window of stride 2), the scratch holds
    one window's rows, pooled into one output row while they are in L1
    (the Fashion CNN's first convolution with its pooling: 0.122 → 0.103
    ms at batch 64). A max pooling of a ReLU's output (marked
    `tq.nonnegative_input`) combines each tap as `x > acc ? x : acc`, or x
    where x is NaN; on x86, with vectors of 8 or 16 lanes, the first half
    is the `max` instruction (`llvm.x86.avx512.max.ps.512`,
    `llvm.x86.avx.max.ps.256`), which is exactly that for every input,
    NaN included: LLVM would merge the compare into the NaN select's mask,
    which puts it on the chain through acc. A padded input whose source is a whole
    buffer is padded image by image into a scratch buffer (the padded
    tensor is never made). With fewer images than threads (batch 1) the
    output rows are shared among the threads instead.
    Each kernel also takes the elementwise `linalg.generic` right after
    it (bias, activation, residual add; arith and math ops) that reads its
    output through the identity map: the body is applied to each vector
    before it is stored, into the output in place or into the generic's
    own buffer (the kernel's buffer is then never written). An operand of
    the generic is read per vector when it runs along the stored vector's
    dims, or once per row when it depends only on the outer dims (a bias
    per channel). The same scalar ops on each lane: the same bits.
    An elementwise generic that reads an NHWC buffer as NCHW and writes an
    NCHW one (the layout transpose after `tq.conv2d`, with the bias,
    activation and a residual add fused into it; the residual may be the
    target itself, read element for element) becomes a blocked transpose:
    per image,
    blocks of L channels × L pixels, L row loads transposed in registers
    by log2(L) rounds of shuffles, then the body on each channel's L
    pixels and one store (masked past the last channel or pixel).
    A `memref.copy` into or out of a strided view (a padded tensor's
    interior) becomes a `linalg.copy`, loops whose innermost one has unit
    stride, instead of the runtime's element-by-element `memrefCopy`.
    Last, each elementwise generic that no kernel took (all parallel, an
    f32 buffer written through the identity, operands as for an epilogue)
    becomes loops over its leading dims around vectors along the trailing
    dims that every operand reads contiguously, flattened (all of them
    for same-shape operands; with threads, the leading dim stays a loop to
    share), the last vector masked. Left to LLVM, the scalar loops of such
    an op with a short innermost dim (a bias add on rows of 32) had that
    dim unrolled and the outer one vectorized, with a gather and a scatter
    per element. An input that shares the output's buffer other than
    element for element keeps the generic. The same ops per element: the
    same bits. So does a reduction over the last dim into the leading ones
    (layer norm's means, softmax's maximum and sum, an NCHW global average
    pooling once `tq-cpu-collapse-dims` has merged H and W, which it does
    on 1 thread): L rows at a time, one per lane, each step L row loads
    transposed in registers and the body applied to the L columns in
    order, so that each row keeps its order; rows past the last repeat it
    and are not stored. A reduction over the first dim into the others (a
    bias gradient's sums over the batch) takes blocks of 8 vectors of the
    output, held in registers while the rows go by in order, then stored:
    the output is read and written once, not once per row (the Fashion
    CNN's first bias gradient, 64 × 16 × 28 × 28, 0.071 → 0.041 ms); a
    reduction over the middle dims (an NHWC global average pooling: the
    sums over each image's pixels, with a bias per channel read along the
    columns) does the same once per index of the dims before them, shared
    among the threads (the MobileNet-style CNN's 14 × 14 × 16 pooling,
    64 images: 0.044 → 0.009 ms). An
    all-parallel generic with several f32 outputs
    (an update that also reads a transposed gradient), or with a view at a
    stride of 2 along its innermost dim (a max-pool gradient's routing,
    which reads and writes the four taps of each 2×2 window that way),
    becomes loops over its leading dims around vectors along the
    innermost one, each operand through a flat view of its buffer: two views
    at a stride of 2 one element apart (a window's even and odd taps) are
    one load of 2L contiguous values split into even and odd lanes by
    shuffles, or, written, one store of both interleaved; a lone view at a
    stride of 2 is the even lanes of such a load, the last value masked;
    any other stride is a gather, and an operand without the innermost dim
    one scalar load per vector. A buffer both read and written must be read
    where each iteration writes it (a routing done in place), and all of a
    vector's operands are loaded before its results are stored. Outputs at
    a stride of 2 must come in pairs. Rows of at most half a vector go two
    to a vector, each operand's two rows merged by one shuffle (one load
    when they are contiguous), the last row alone when their number is odd.
    In the Fashion CNN's training step, the two routings went from 0.53 and
    0.26 ms to 0.25 and 0.21 ms at batch 64, with the same bits, and the
    second (rows of 7) to 0.145 ms two rows to a vector. Other linalg ops
    are left alone.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"native\"",
           "Instruction set: native, avx512 (16 lanes), avxvnni, avx2 or "
           "generic (8 lanes)">,
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "Threads sharing each kernel's column panels">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"
  ];
}

def TQCPUShareLoops : Pass<"tq-cpu-share-loops"> {
  let summary = "Share the loop nests of the float ops among the threads";
  let description = [{
    With more than one thread, `tq-to-cpu` lowers the linalg ops left
    (elementwise chains, pooling, fills, transposes) with
    `convert-linalg-to-parallel-loops`: each becomes an `scf.parallel` over
    its parallel dims, as are the independent loops `convert-tq-to-cpu`
    emits (quantization, tile transposes, im2col). This pass keeps that loop parallel over just enough
    leading dims for several iterations per thread, and turns the other
    dims into an `scf.for` nest inside it, so that the innermost loop stays
    a plain loop that LLVM vectorizes. A nest that executes fewer than
    about 16384 ops, or one inside another parallel loop, becomes
    sequential (sharing it costs more than it saves); the kernels' own
    parallel loops, with far more work, are kept as they are. An inner
    loop's iterations are counted from its bounds' ops where they are not
    constants (`ValueBoundsOpInterface`, and the least of a minimum's
    operands: a tile's loop from `i` to `min(i + 32, n)` makes at most 32);
    a loop whose extent they do not bound counts once.

    The shares of a batch split by `tq-cpu-split-batch` (an `scf.forall`
    after bufferization) become one `scf.parallel`, kept parallel however
    little it holds; the loops of the kernels called only from inside it
    become sequential, since each share already has its thread.
    `convert-scf-to-openmp` then runs the parallel loops on the OpenMP
    threads. Each iteration computes what it did before: the results are
    the same bits.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"2",
           "Threads the loops are shared among">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def TQCPUSplitMaskedStores : Pass<"tq-cpu-split-masked-stores"> {
  let summary = "1-D masked stores as unmasked stores of their active lanes";
  let description = [{
    Without AVX-512, a masked store of f32 or i32 lanes is `vmaskmovps`
    (or `vpmaskmovd`), which some cores run as microcode: on AMD Zen 3
    one takes about 12 cycles where a plain store takes one. Masked stores
    of i8 lanes have no instruction at all, and LLVM stores them a lane at
    a time behind a branch each. The kernels' tails store this way (the
    last columns of a panel, an im2col row shorter than a vector).

    A `vector.maskedstore` whose mask is a 1-D `vector.constant_mask`
    of n lanes becomes the stores of its first n lanes as unmasked
    vectors of powers of two lanes, the largest first: 6 lanes of 8 are a
    store of 4 and one of 2. One whose mask is a 1-D `vector.create_mask`
    of a run-time count becomes an `scf.index_switch` on the count
    clamped to [0, lanes], with one such sequence per case. The same
    lanes are written with the same values; no other byte is touched.
    `tq-to-cpu` runs this pass on every target but `avx512`, whose
    masked stores take one instruction. For example,

    ```mlir
    %m = vector.constant_mask [6] : vector<8xi1>
    vector.maskedstore %buf[%i], %m, %v : memref<?xf32>, vector<8xi1>, vector<8xf32>
    ```

    becomes

    ```mlir
    %lo = vector.extract_strided_slice %v {offsets = [0], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>
    vector.store %lo, %buf[%i] : memref<?xf32>, vector<4xf32>
    %hi = vector.extract_strided_slice %v {offsets = [4], sizes = [2], strides = [1]} : vector<8xf32> to vector<2xf32>
    %i4 = arith.addi %i, %c4 : index
    vector.store %hi, %buf[%i4] : memref<?xf32>, vector<2xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def TQCPUSelectClamps : Pass<"tq-cpu-select-clamps"> {
  let summary = "A maximumf or minimumf with a constant as a compare and a select";
  let description = [{
    `arith.maximumf` and `arith.minimumf` propagate NaN and order -0 below
    +0. With a constant operand, LLVM lowers one into three x86
    instructions: a `vmaxps` (or `vminps`), a NaN compare and a blend. For
    a constant c that is not NaN the same bits take two, a compare and a
    select:

    - `maximumf(x, c)` is `x > c or x unordered ? x : c` when c is not -0
      (where x == c both give c: with c = +0 and x = -0, +0);
    - `minimumf(x, c)` is `x < c or x unordered ? x : c` when c is not +0.

    ReLU, Clip, HardSigmoid and HardSwish clamp this way in the kernels'
    epilogues. `tq-to-cpu` runs this pass once every linalg op is loops,
    as the passes before it read the clamps (tq-cpu-mark-nonnegative).
    For example,

    ```mlir
    %r = arith.maximumf %x, %zero : vector<16xf32>
    ```

    becomes

    ```mlir
    %gt = arith.cmpf ugt, %x, %zero : vector<16xf32>
    %r = arith.select %gt, %x, %zero : vector<16xi1>, vector<16xf32>
    ```
  }];
}

def TQCPUInlineAllocaScopes : Pass<"tq-cpu-inline-alloca-scopes"> {
  let summary = "Inline the allocation scopes around the OpenMP loop bodies";
  let description = [{
    `convert-scf-to-openmp` wraps the body of each parallel loop in a
    `memref.alloca_scope`, so that the stack it allocates per iteration is
    freed per iteration. Upstream's canonicalization inlines a scope only
    when nothing in it may allocate on the stack, and takes a call for
    one; but what a call allocates is freed when it returns. The shares of
    `tq-cpu-split-batch` call the outlined kernels, so their scopes stayed,
    and a loop inside one became several blocks, which a scope may not
    hold. This pass inlines every scope with no `memref.alloca` of its own
    (outside scopes nested in it), into the region around it:

    ```mlir
    memref.alloca_scope {
      func.call @main_kernel_3(%a) : (memref<32x16xf32>) -> ()
    }
    // becomes
    func.call @main_kernel_3(%a) : (memref<32x16xf32>) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TQCPULoopOrder : Pass<"tq-cpu-loop-order"> {
  let summary = "Put the contiguous output loop innermost in float convolutions, pooling and matmuls";
  let description = [{
    The float code between the quantized layers (convolutions or matmuls
    left in float, pooling) is lowered to loops by
    `convert-linalg-to-loops`, in the order of the op's iteration domain:
    for `linalg.conv_2d_nchw_fchw` that is (n, f, oh, ow, c, kh, kw), a
    3-trip reduction innermost that LLVM cannot vectorize. This pass
    generalizes such ops and interchanges their loops so that the
    innermost output dim comes last, (n, f, oh, c, kh, kw, ow): a
    unit-stride loop over contiguous outputs and inputs, which LLVM's loop
    vectorizer turns into SIMD code. Each output's reduction keeps its
    order, so the results are the same bits.

    It applies to a linalg op with a reduction loop innermost whose first
    output's last index is a parallel loop that also indexes the last dim
    of an input. When that input is read with a stride along the loop (a
    pooling window with stride 2), the innermost reduction loop stays
    innermost behind it, (n, c, oh, kh, ow, kw): once LLVM unrolls the
    window's loop, one output's loads are neighbours, an interleaved group
    that it vectorizes.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TQCPUSplitBatch : Pass<"tq-cpu-split-batch", "::mlir::func::FuncOp"> {
  let summary = "Share whole images among the threads: one parallel loop per call";
  let description = [{
    With more than one thread, sharing each layer's loops among the threads
    costs a fork and a join per loop nest, and at batch 64 the layers of a
    small network are too short for that to pay. This pass instead splits
    the batch of a public function into `chunks` equal shares and runs the
    whole network once per share, in an `scf.forall` whose iterations the
    threads share (one fork and join per call):

    ```mlir
    func.func @main(%x: tensor<64x1x28x28xf32>) -> tensor<64x10xf32> {
      ...                                    // the network on 64 images
    }
    // becomes
    func.func @main(%x: tensor<64x1x28x28xf32>) -> tensor<64x10xf32> {
      %0 = scf.forall (%t) in (2) shared_outs(%o = ...) -> tensor<64x10xf32> {
        %s = tensor.extract_slice %x[%t * 32, 0, 0, 0] [32, 1, 28, 28] ...
        ...                                  // the network on 32 images
        scf.forall.in_parallel { tensor.parallel_insert_slice ... }
      }
      return %0 : tensor<64x10xf32>
    }
    ```

    The batch is the first dim of the arguments marked `tq.batch` (a
    training step's images and labels), or where none is, of every tensor
    argument of rank 1 or more but those marked `tq.parameter`; they must
    agree on its size. The pass follows each value's batch dim op by op.
    Ops that do not read the batch (the weights' quantization) run once,
    before the shares, which read their results. Ops the shares cannot run
    run once after them on the whole batch, and so do the ops that read
    their results: a sum over the images (the loss, a weight or bias
    gradient), an op the pass does not know, a quantization whose
    parameters are given or whose width is chosen at run time, or one whose
    tiles would straddle two shares. The values they read from the shares
    are assembled whole (`tensor.parallel_insert_slice`); a tiled value as
    its values and tile steps, the tensors `convert-tq-to-cpu` lowers it to,
    put together again by an `unrealized_conversion_cast` that
    `convert-tq-to-cpu` removes:

    ```mlir
    %l = scf.forall (%t) in (2) shared_outs(%o = %e, %s = %f) -> (...) {
      ...
      %q = tq.quantize %dy rounding stochastic seed_offset(%off) ...
      %v, %st = builtin.unrealized_conversion_cast %q
          : !tq.tiled<32x10xi8:8, ...> to tensor<32x10xi8>, tensor<1x1xf32>
      scf.forall.in_parallel { ... }
    }
    %dy_q = builtin.unrealized_conversion_cast %l#0, %l#1
        : tensor<64x10xi8>, tensor<2x1xf32> to !tq.tiled<64x10xi8:8, ...>
    %dw = tq.matmul %dy_q, %x_q {transpose_a} ...   // over the images
    ```

    The results are the same bits as without the pass: every op runs on
    whole images and whole tiles. A stochastic rounding in a share draws
    the noise of its elements' places in the whole tensor (its seed offset
    grows by the share's first element, scaled so that the hash reads that
    element's index). When nothing can be shared, or when ops are left
    after the shares and the shares hold no matmul or convolution (too
    little to pay for the fork), the function is left as it is.

    With `whole`, the function is split only when nothing is left after
    the shares, they hold a product (a matmul or a convolution, not a
    pooling) and at least 32 images each. `tq-to-cpu` uses this on one
    thread, with 2 shares run one
    after the other: each share's activations are half the size and stay
    nearer the core (at batch 64, 8-bit, V=32: the MobileNet-style CNN
    1.50 → 1.38 ms, the Fashion CNN 0.46 → 0.43 ms; the digits CNN and
    the transformer unchanged). A batch of one tile's rows (32 at V=32)
    leaves the quantizations after the shares, and a training step its
    gradients' sums, so neither is split: at batch 32 a split of the
    Fashion CNN took 0.26 ms against 0.22.
  }];
  let options = [
    Option<"chunks", "chunks", "int64_t", /*default=*/"2",
           "Shares of the batch (the threads; 2 on one thread)">,
    Option<"whole", "whole", "bool", /*default=*/"false",
           "Split only when the shares run the whole function (nothing "
           "left after them), hold a product and at least 32 images each">
  ];
  let statistics = [
    Statistic<"numSplit", "num-split", "Functions whose batch was split">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TQCPUDistinctResults : Pass<"tq-cpu-distinct-results", "::mlir::func::FuncOp"> {
  let summary = "Give each tensor result of a function its own value";
  let description = [{
    A function may return the same tensor twice, for example when an ONNX
    graph's second output is an `Identity` of its first. After
    bufferization both results would be one buffer, and
    `buffer-results-to-out-params` needs one buffer per result (it crashes
    on a repeated one). This pass replaces every repeated tensor operand of
    `func.return` by a copy (`bufferization.alloc_tensor ... copy(...)`),
    so that each out-parameter is written on its own. Function arguments
    returned as they are keep working without a copy.

    ```mlir
    return %y, %y : tensor<2x3xf32>, tensor<2x3xf32>
    // becomes
    %c = bufferization.alloc_tensor() copy(%y) : tensor<2x3xf32>
    return %y, %c : tensor<2x3xf32>, tensor<2x3xf32>
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def TQCPUCollapseDims : Pass<"tq-cpu-collapse-dims", "::mlir::func::FuncOp"> {
  let summary = "Merge the contiguous loops of float element-wise ops and "
                "reductions into one";
  let description = [{
    `convert-linalg-to-loops` lowers a `linalg.generic` to one loop per
    dim, and LLVM vectorizes the innermost one. For an NCHW tensor that is
    W, often 7 to 28 elements: a bias add and ReLU on a 64×16×28×28 tensor
    took 0.50 ms, and 0.16 ms with its H and W merged into one loop of 784;
    a sum over the batch of the same tensor took 0.57 ms, and 0.08 ms with
    (C, H, W) merged into one loop of 12544.

    This pass merges each run of neighbouring loops of a `linalg.generic`
    that every operand reads contiguously, in the same order (upstream's
    `collapseOpIterationDims`, with reshapes of the operands and results),
    and have the same iterator type. The loops still visit the elements in
    the same order, so each reduction adds in the same order and the
    results are the same bits.

    It leaves alone:
    - generics whose maps are not projected permutations in increasing
      order (transposes, constant indices) or whose body reads
      `linalg.index`;
    - generics reading a slice (`tensor.extract_slice`, which may be
      strided, also through reshapes) or the result of another linalg op
      than a generic (the epilogues that `tq-cpu-float-kernels` fuses into
      its convolutions);
    - generics whose result the function returns (a reshape of the buffer
      would be copied into the out-parameter);
    - generics inside loops, and dynamic shapes.

    With threads, a merged parallel loop is shared out as one range per
    thread (OpenMP's static schedule), and LLVM vectorizes each thread's
    range. On 2 threads the training step of the Fashion CNN went from
    3.55 to 3.2 ms with the merge (its batch sums: 0.59 to 0.14 ms), and
    the inference programs did not move.

    ```mlir
    %r = linalg.generic {indexing_maps = [(n, c, h, w) -> (n, c, h, w),
                                          (n, c, h, w) -> (c, h, w)],
                         iterator_types = ["reduction", "parallel",
                                           "parallel", "parallel"]}
        ins(%x : tensor<64x16x28x28xf32>) outs(%z : tensor<16x28x28xf32>)
    // becomes a generic over (n, chw) on tensor<64x12544xf32> and
    // tensor<12544xf32>, with collapse_shape and expand_shape around it.
    ```
  }];
  let statistics = [
    Statistic<"numCollapsed", "num-collapsed", "Generics whose loops were merged">
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def TQCPUFreeBuffers : Pass<"tq-cpu-free-buffers", "::mlir::ModuleOp"> {
  let summary = "Free each buffer after its last use";
  let description = [{
    After bufferization an imported network is one function with one
    allocation or a few per layer, each used only in the block that makes
    it. Upstream `buffer-deallocation-pipeline` frees such a buffer at the
    end of its block, so every intermediate of the network stays alive
    until the end of the call, and its simplification pass compares every
    allocation of a block with every other, a time quadratic in the
    number of allocations.

    This pass frees a buffer right after the last op of its block that
    uses it or a view of it. It does so in every function whose
    allocations are all *local*: each `memref.alloc`, and every view or
    cast of it, is used only by ops that neither return, yield or branch
    with it nor make a value that could alias it (a memref or tensor result
    that is not a view, a pointer, a cast to another type system). A
    function with any other allocation (a buffer carried by a loop, chosen
    by `scf.if` or returned) goes through the upstream ownership-based
    deallocation as before (`expand-realloc`, `canonicalize`,
    `ownership-based-buffer-deallocation`, `canonicalize`,
    `buffer-deallocation-simplification`); `lower-deallocations` runs after
    this pass.

    ```mlir
    %a = memref.alloc() : memref<8xf32>
    linalg.exp ins(%x : memref<8xf32>) outs(%a : memref<8xf32>)
    %v = memref.expand_shape %a [[0, 1]] output_shape [2, 4] : ...
    linalg.copy ins(%v : memref<2x4xf32>) outs(%y : memref<2x4xf32>)
    memref.dealloc %a : memref<8xf32>      // inserted here
    "work.on"(%y) : (memref<2x4xf32>) -> ()
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def TQCPUForwardCopies : Pass<"tq-cpu-forward-copies", "::mlir::func::FuncOp"> {
  let summary = "Write a linalg op's result where a copy would put it";
  let description = [{
    One-shot bufferization gives a `linalg.generic` whose results are
    inserted into strided slices of one tensor a buffer per result, then
    copies each buffer into its slice: it cannot tell that the slices do
    not meet. The training step's max-pool gradient is such a generic,
    routing dY to each of the window's taps: for the Fashion CNN's first
    pool, four 0.8 MB buffers and four strided copies into dX, 0.26 ms of
    the step on 1 thread, and 0.13 ms more for the second pool.

    This pass makes the generic write into the copy's target and removes
    the copy and the buffer, when all of these hold:
    - the buffer is a `memref.alloc` in the generic's block, used only as
      that generic's output and as the source of one `memref.copy` after
      it in the block (and deallocations);
    - the generic's body reads neither that output nor any memory of its
      own (no loads: a gather's body could read the target);
    - the target is a `memref.subview` whose operands are defined before
      the generic (it moves before the generic when it is in its block);
    - the target's buffer is a `memref.alloc` whose every alias is a view
      of it, used by ops that neither pass it on nor make another value
      that could alias it (as `tq-cpu-free-buffers` requires): so no
      argument, global or selected buffer can be the same memory;
    - of that buffer, the generic reads and writes only slices that
      provably do not meet the target, or reads the target itself with the
      output's indexing map, a permutation, and no reduction loop (in
      place: each iteration reads the element it writes, before writing
      it, as bufferization itself does for element-wise ops);
    - every op between the generic and the copy either has no memory
      effects, frees another buffer, or is another copy of the same
      generic's results into a slice of the same buffer that provably
      does not meet the target.

    Two slices of one identity-layout buffer provably do not meet when,
    along some dim with static positive strides, their offsets differ
    modulo a common stride or their ranges are apart. The
    max-pool gradient's generic reads the window's taps of X and writes dX
    into the same buffer, tap by tap: on the Fashion CNN's training step
    the pass removes 8 copies and the step went from 4.8 to 4.2 ms on 1
    thread.

    It also makes the linalg ops that write a fresh buffer, the first of
    them a `linalg.fill`, write the slice that buffer is then copied into
    (a pooling's output copied into the interior of the buffer a
    bufferized `tensor.pad` made for the next convolution), when:
    - the buffer is used only as those ops' output, by the copy and by
      deallocations, and those ops read nothing of the slice's buffer;
    - the slice's buffer is a fresh `memref.alloc` whose every alias is a
      view of it, and between the first writer and the copy it is only
      allocated, viewed, or written by ops that read nothing and touch no
      other buffer (its `linalg.fill`, or the `linalg.map` of the pad
      value); they keep their order relative to the writers.
    Those ops then move before the first writer, as early as their
    operands allow (before the layer whose kernel pools in place), and
    the buffer and the copy go. In the Fashion CNN in f32 (batch 64, 1
    thread) the pad before the second convolution went from 0.07 to
    0.013 ms and the model from 1.77 to 1.69 ms.

    First, though, it makes the shares of a split batch
    (`tq-cpu-split-batch`) compute what they hand out in place. Bufferized,
    a share computes its part of a value in a fresh buffer and copies it
    into its slice of the whole, allocated before the `scf.forall`. When
    the slice is a run of dim 0 of the whole (the rest of each dim, unit
    strides), the share's buffer is used only before the copy, and nothing
    else in the loop touches the whole, the whole becomes a `memref.view`
    of an allocation of bytes, and the share's buffer a `memref.view` of
    its slice of those bytes (at its first image times the bytes of one):
    the same identity-layout type, so the kernels take it as they took the
    buffer. The copy and the buffer go. On the Fashion CNN's training step
    (2 threads) this removes 3.1 MB of copies per share, 1.6 MB of them
    the first pool's gradient.

    Each element is computed as before and ends where the copy put it: the
    same bits.

    ```mlir
    %b = memref.alloc() : memref<64x16x14x14xf32>
    linalg.generic ... outs(%b : memref<64x16x14x14xf32>)
    %v = memref.subview %dx[0, 0, 0, 1] [64, 16, 14, 14] [1, 1, 2, 2]
    memref.copy %b, %v
    // becomes
    %v = memref.subview %dx[0, 0, 0, 1] [64, 16, 14, 14] [1, 1, 2, 2]
    linalg.generic ... outs(%v : memref<64x16x14x14xf32, strided<...>>)
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TQCPUPlanBuffers : Pass<"tq-cpu-plan-buffers", "::mlir::func::FuncOp"> {
  let summary = "Place a function's short-lived buffers in one allocation";
  let description = [{
    After `tq-cpu-free-buffers` an imported network allocates each
    intermediate buffer with `malloc` just before its first use and frees it
    after its last. The wake-word embedding network at batch 1 makes 211
    such calls per inference, most of them for buffers of a few KiB, and
    glibc's `malloc` took about a tenth of its time walking its bins.

    This pass gives the buffers of the function body's block one
    allocation (an *arena*), made at the start of the block and freed
    before its terminator; and likewise the buffers of each share of
    `tq-cpu-split-batch` (the body of an `scf.forall`), one arena per share,
    so that the threads do not share one. Each buffer becomes a `memref.view` of it at a
    fixed offset. Two buffers share bytes only when their lifetimes, from
    the `memref.alloc` to the `memref.dealloc` in the same block, do not
    overlap. The offsets are chosen greedily by size: the largest buffer
    first, each at the lowest 64-byte-aligned offset that meets no buffer
    already placed whose lifetime overlaps its own (as TensorFlow Lite's
    arena planner does).

    A buffer is planned when it is allocated at the top of the block with
    a static shape, the identity layout, an element type of 1, 2, 4 or 8
    bytes and an alignment of at most 64, is freed by one `memref.dealloc`
    in that block, and is at most
    `max-buffer-bytes` long (1 MiB), and placed in the arena only if it
    ends within `max-arena-bytes` (16 MiB). The other buffers keep their
    own allocation: the work on a large buffer costs much more than its
    `malloc`, and an arena past glibc's threshold for `mmap` (32 MiB at
    most) would be mapped and its pages faulted in on every call. The
    buffers' contents are not touched, so the results are the same bits.

    ```mlir
    %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    "use"(%a) : (memref<16xf32>) -> ()
    memref.dealloc %a : memref<16xf32>
    %b = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
    "use"(%b) : (memref<8xf32>) -> ()
    memref.dealloc %b : memref<8xf32>
    // becomes
    %arena = memref.alloc() {alignment = 64 : i64} : memref<64xi8>
    %a = memref.view %arena[%c0][] : memref<64xi8> to memref<16xf32>
    "use"(%a) : (memref<16xf32>) -> ()
    %b = memref.view %arena[%c0][] : memref<64xi8> to memref<8xf32>
    "use"(%b) : (memref<8xf32>) -> ()
    memref.dealloc %arena : memref<64xi8>
    ```
  }];
  let options = [
    Option<"maxBufferBytes", "max-buffer-bytes", "int64_t",
           /*default=*/"1048576",
           "Largest buffer placed in the arena, in bytes">,
    Option<"maxArenaBytes", "max-arena-bytes", "int64_t",
           /*default=*/"16777216",
           "Largest arena, in bytes: a buffer that would end past it keeps "
           "its own allocation">
  ];
  let statistics = [
    Statistic<"numPlanned", "num-planned", "Buffers placed in an arena">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def TQCPUOutlineKernels : Pass<"tq-cpu-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Give each loop nest its own function, one per distinct nest";
  let description = [{
    After bufferization an imported network is one public function: a
    long block of loop nests, one or a few per layer. LLVM optimizes and
    generates code one function at a time, and several of its loop
    analyses cost more than linearly in the size of the function, so
    compile time grew faster than the model.

    This pass moves every op with regions at the top level of a public
    function (a loop nest, a linalg op) into a private function that LLVM
    may not inline (`passthrough = ["noinline"]`), and calls it. Control
    flow of the program stays where it is and its nests are outlined one
    by one: the branches of an `scf.if` (an ONNX If on a run-time
    condition), and a loop whose body holds four or more nests other than
    `scf.if`s (the time loop of an LSTM or GRU, a share of
    `tq-cpu-split-batch`; a convolution's row loop, which stores each row
    of its tile under an `scf.if`, is one kernel). What stays in the public function is glue that runs once
    per layer (allocations, calls, reshapes); it is marked `optnone`, since
    optimizing it gains nothing and, for a network of hundreds of layers,
    cost more than all the kernels. The values the op uses from
    outside become arguments, except constants, which are cloned into the
    new function so that loop bounds and sizes stay constant. The op's
    results become the function's results.

    Ops that are the same once outlined (the same ops, types, attributes
    and constants; only the arguments differ) share one function, so the
    layers of a network that have the same shape are compiled once and
    called many times. Each function is called with the same buffers, in
    the same order, as the inline code used, so results are the same bits.

    ```mlir
    func.func @main(%x: memref<8xf32>, %y: memref<8xf32>) {
      scf.for %i = %c0 to %c8 step %c1 { ... %x ... %y ... }
      return
    }
    // becomes
    func.func private @main_kernel(%x: memref<8xf32>, %y: memref<8xf32>)
        attributes {passthrough = ["noinline"]} {
      %c0 = arith.constant 0 : index ...
      scf.for %i = %c0 to %c8 step %c1 { ... }
      return
    }
    func.func @main(%x: memref<8xf32>, %y: memref<8xf32>)
        attributes {passthrough = ["noinline", "optnone"]} {
      call @main_kernel(%x, %y) : (memref<8xf32>, memref<8xf32>) -> ()
      return
    }
    ```
  }];
  let options = [
    Option<"profile", "profile", "bool", /*default=*/"false",
           "Time every kernel call: calls to tq_profile_begin(id) and "
           "tq_profile_end(id) around it, the kernels' names in the "
           "module's tq.profile attribute (see tq-cpu-profile-kinds)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def TQCPUProfileKinds : Pass<"tq-cpu-profile-kinds", "::mlir::ModuleOp"> {
  let summary = "Record each layer's op kind in its location, for the profiler";
  let description = [{
    Run on tensors, before the lowering: the location of each op at the
    top level of a public function becomes a fused location whose
    metadata is the op's name (`tq.matmul`, `linalg.conv_2d_nchw_fchw`,
    `linalg.generic`, ...) and which keeps the original location (the
    ONNX node's name) inside. The lowering keeps locations, so
    `tq-cpu-outline-kernels{profile=true}` can name every kernel call by
    its node and its kind:

    ```mlir
    %0 = tq.matmul %a, %w ... loc("fc1")
    // becomes
    %0 = tq.matmul %a, %w ... loc(fused<"tq.matmul">["fc1"])
    ```

    `tq-run --profile` turns both passes on and reports the time per
    layer and per kind.
  }];
}

#endif // TQ_CONVERSION_PASSES_TD
