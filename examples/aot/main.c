/* A program that runs two picokernel kernels compiled ahead of time: it
 * links kernels.o and libm, and nothing of MLIR, LLVM or picokernel. */
#include "kernels.h"

#include <math.h>
#include <stdio.h>

enum { N = 4096, ROWS = 8, COLS = 256 };

static float a[N], b[N], c[N], o[N];
static double x[ROWS][COLS], y[ROWS][COLS], sums[ROWS];

int main(void) {
  for (int i = 0; i < N; ++i) {
    a[i] = (float)(i % 17) * 0.25f;
    b[i] = (float)(i % 5) - 2.0f;
    c[i] = (float)i;
  }
  pk_fma(a, b, c, o);
  int wrong = 0;
  for (int i = 0; i < N; ++i) {
    float product = a[i] * b[i]; /* two statements: no contraction to fma */
    float expected = product + c[i];
    wrong += o[i] != expected;
  }

  for (int r = 0; r < ROWS; ++r)
    for (int j = 0; j < COLS; ++j)
      x[r][j] = (j - COLS / 2) * 0.1 + r;
  pk_softplus(&x[0][0], &y[0][0], sums);
  double worst = 0;
  for (int r = 0; r < ROWS; ++r) {
    double sum = 0;
    for (int j = 0; j < COLS; ++j) {
      double v = x[r][j];
      double expected = fmax(v, 0.0) + log1p(exp(-fabs(v)));
      worst = fmax(worst, fabs(y[r][j] - expected) / expected);
      sum += y[r][j];
    }
    worst = fmax(worst, fabs(sums[r] - sum) / sum);
  }

  printf("fma: %d wrong of %d; softplus: worst relative error %.1e\n", wrong,
         N, worst);
  printf("o[4095] = %g, sums[7] = %.6f\n", o[N - 1], sums[ROWS - 1]);
  return wrong == 0 && worst < 1e-14 ? 0 : 1;
}
