# REQUIRES: onnxruntime
# RUN: %python -m tq.models.mobilenet compare %tq_build --images 1000 | FileCheck %s
# The MobileNetV3-style CNN kept in models/ (depthwise 3x3, squeeze-
# excitation, HardSwish and HardSigmoid, BatchNorm, residual Adds; trained
# on Fashion-MNIST by tq.models.mobilenet) on 1000 test images, against
# onnxruntime fp32: f32 logits within 1e-4 of max|ORT|, and the top-1 of
# 8-bit (V=32) and adaptive agreeing with ORT's on at least 99% of images;
# the adaptive weights' widths each end with their error in the band.
# CHECK: | f32 |
# CHECK: | 8-bit V=32 |
# CHECK: | adaptive V=32 |
# CHECK: f32 within 1e-4 of max|ORT|: True
# CHECK: 8-bit V=32 top-1 agrees with ORT on >= 99%: True
# CHECK: adaptive V=32: weight widths: all in the band: True
# CHECK: adaptive V=32: some weight below 8 bits: True
# CHECK: adaptive V=32 top-1 agrees with ORT on >= 99%: True
