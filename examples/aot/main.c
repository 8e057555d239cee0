/* A program that runs three picokernel kernels compiled ahead of time: it
 * links kernels.o and libm, and nothing of MLIR, LLVM or picokernel. */
#include "kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

enum { N = 4096, ROWS = 8, COLS = 256 };

static float a[N], b[N], c[N], o[N];
static double x[ROWS][COLS], y[ROWS][COLS], sums[ROWS];
static float m[1000], w[100], out[1000];

/* scale_rows (dynamic sizes) on rows x cols: the wrong elements. */
static int scaleRows(int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows * cols; ++i)
    m[i] = (float)((i * 7) % 23) - 11.0f;
  for (int64_t j = 0; j < cols; ++j)
    w[j] = 0.5f * (float)j - 3.0f;
  if (pk_scale_rows(rows, cols, m, w, out) != 0)
    return (int)(rows * cols) + 1;
  int wrong = 0;
  for (int64_t r = 0; r < rows; ++r) {
    float most = -INFINITY;
    for (int64_t j = 0; j < cols; ++j)
      most = fmaxf(most, m[r * cols + j] * w[j]);
    for (int64_t j = 0; j < cols; ++j)
      wrong += out[r * cols + j] != m[r * cols + j] * w[j] - most;
  }
  return wrong;
}

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

  int dynamicWrong = 0;
  const int64_t shapes[][2] = {{1, 1}, {3, 7}, {10, 100}, {33, 30}, {0, 5}};
  for (int s = 0; s < 5; ++s)
    dynamicWrong += scaleRows(shapes[s][0], shapes[s][1]);
  /* Invalid sizes are refused, nothing written. */
  int refused = pk_scale_rows(-1, 4, m, w, out) == 1 &&
                pk_scale_rows(INT64_MAX, 2, m, w, out) == 1;

  printf("fma: %d wrong of %d; softplus: worst relative error %.1e; "
         "scale_rows: %d wrong over 5 shapes, invalid sizes %s\n",
         wrong, N, worst, dynamicWrong, refused ? "refused" : "ACCEPTED");
  printf("o[4095] = %g, sums[7] = %.6f\n", o[N - 1], sums[ROWS - 1]);
  return wrong == 0 && worst < 1e-14 && dynamicWrong == 0 && refused ? 0 : 1;
}
