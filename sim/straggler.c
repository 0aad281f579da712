/* straggler -- see straggler.h. */
#include "straggler.h"

#include <math.h>

/* Simpson's rule over [-12, 12] (the integrand is below 1e-30 outside for n up to 1e6), 24000 intervals. */
double straggler_expected_max(int n)
{
  if (n <= 1) return 0;
  const int steps = 24000;
  const double lo = -12, hi = 12, h = (hi - lo) / steps;
  double sum = 0;
  for (int i = 0; i <= steps; i++) {
    double x = lo + i * h;
    double phi = exp(-0.5 * x * x) / sqrt(2 * M_PI);
    double cdf = 0.5 * erfc(-x / sqrt(2));
    double f = x * n * phi * pow(cdf, n - 1);
    sum += f * (i == 0 || i == steps ? 1 : i % 2 ? 4 : 2);
  }
  return sum * h / 3;
}

double straggler_slowdown(double sigma, int n)
{
  if (sigma <= 0 || n <= 1) return 1;
  return 1 + sigma * straggler_expected_max(n);
}
