/* Classifies 28x28 images with the Fashion CNN, compiled by tq-compile:
     tq-compile models/fashion_cnn.onnx --dim=batch=1 -o fashion_cnn.so
     clang classify.c -I. ./fashion_cnn.so -Wl,-rpath,. -o classify
     ./classify < images.f32     (float pixels in [0, 1], image after image)
   It prints each image's class. */
#include "fashion_cnn.h"
#include <stdio.h>

int main(void) {
  static float image[FASHION_CNN_IMAGE_SIZE], logits[FASHION_CNN_LOGITS_SIZE];
  while (fread(image, sizeof image, 1, stdin) == 1) {
    fashion_cnn_run(image, logits);
    int best = 0;
    for (int k = 1; k < FASHION_CNN_LOGITS_SIZE; ++k)
      if (logits[k] > logits[best])
        best = k;
    printf("%d\n", best);
  }
  return 0;
}
