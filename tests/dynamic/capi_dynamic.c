/* A dynamic package through the C API, in plain C (linked with libloom_runtime only): the
   package of `z = x + y` with x, y float32[2, W] (W <= 512) from test_capi_dynamic.cpp. Sets the
   inputs at two widths with loom_package_set_input_shaped, runs, reads the output's shape with
   loom_package_output_shape and checks every value against the sums computed here; then the
   errors: a width above the bound, inputs that disagree on W, a wrong byte count. Prints "ok" and
   exits 0, or names the first failure and exits 1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom_runtime.h"

static int fail(const char* what) {
  fprintf(stderr, "capi_dynamic: %s (last error: %s)\n", what, loom_get_last_error());
  return 1;
}

static void fill(float* v, int n, float scale) {
  for (int i = 0; i < n; ++i) v[i] = scale * (float)((i * 37) % 101) / 101.0f - 0.5f;
}

/* Runs at width w; 0 when the output is x + y of shape [2, w]. */
static int run_at(LoomPackageHandle pkg, int64_t w) {
  int64_t shape[2] = {2, w};
  int n = (int)(2 * w);
  float* x = malloc(sizeof(float) * (size_t)n);
  float* y = malloc(sizeof(float) * (size_t)n);
  float* z = malloc(sizeof(float) * (size_t)n);
  fill(x, n, 1.0f);
  fill(y, n, 3.0f);
  int rc = 0;
  if (loom_package_set_input_shaped(pkg, 0, x, sizeof(float) * (size_t)n, shape, 2) != 0 ||
      loom_package_set_input_shaped(pkg, 1, y, sizeof(float) * (size_t)n, shape, 2) != 0) {
    rc = fail("set_input_shaped");
    goto done;
  }
  if (loom_package_run(pkg) != 0) {
    rc = fail("run");
    goto done;
  }
  const int64_t* out = NULL;
  int ndim = 0;
  if (loom_package_output_shape(pkg, 0, &out, &ndim) != 0 || ndim != 2 || out[0] != 2 || out[1] != w) {
    rc = fail("output shape is not [2, W]");
    goto done;
  }
  size_t nbytes = 0;
  if (loom_package_output_nbytes(pkg, 0, &nbytes) != 0 || nbytes != sizeof(float) * (size_t)n) {
    rc = fail("output nbytes");
    goto done;
  }
  if (loom_package_get_output(pkg, 0, z, nbytes) != 0) {
    rc = fail("get_output");
    goto done;
  }
  for (int i = 0; i < n; ++i)
    if (fabsf(z[i] - (x[i] + y[i])) > 1e-6f) {
      fprintf(stderr, "capi_dynamic: W = %lld: z[%d] = %g, want %g\n", (long long)w, i, z[i], x[i] + y[i]);
      rc = 1;
      goto done;
    }
done:
  free(x);
  free(y);
  free(z);
  return rc;
}

/* The call failed with a message that contains `want`. */
static int refused(int rc, const char* want) {
  if (rc == 0) return fail("a bad call succeeded");
  if (!strstr(loom_get_last_error(), want)) {
    fprintf(stderr, "capi_dynamic: the message '%s' lacks '%s'\n", loom_get_last_error(), want);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: capi_dynamic PACKAGE\n");
    return 2;
  }
  LoomPackageHandle pkg = NULL;
  if (loom_package_load(argv[1], &pkg) != 0) return fail("load");
  int dynamic = 0;
  if (loom_package_is_dynamic(pkg, &dynamic) != 0 || !dynamic) return fail("the package is not dynamic");
  const char* text = NULL;
  int64_t bound = 0;
  if (loom_package_input_dim(pkg, 0, 1, &text, &bound) != 0 || strcmp(text, "W") != 0 || bound != 512)
    return fail("input 0 dimension 1 is not W <= 512");
  if (loom_package_input_dim(pkg, 0, 0, &text, &bound) != 0 || strcmp(text, "2") != 0 || bound != -1)
    return fail("input 0 dimension 0 is not 2");
  /* Two widths, the second at the bound, then a small one again. */
  if (run_at(pkg, 7) || run_at(pkg, 512) || run_at(pkg, 1)) return 1;

  float buf[2 * 600];
  memset(buf, 0, sizeof buf);
  int64_t big[2] = {2, 600};
  if (refused(loom_package_set_input_shaped(pkg, 0, buf, sizeof(float) * 1200, big, 2),
              "input 'x': dimension 1 (W) is 600, above its bound W <= 512"))
    return 1;
  int64_t five[2] = {2, 5}, six[2] = {2, 6};
  if (loom_package_set_input_shaped(pkg, 0, buf, sizeof(float) * 10, five, 2) != 0 ||
      loom_package_set_input_shaped(pkg, 1, buf, sizeof(float) * 12, six, 2) != 0)
    return fail("set_input_shaped of 5 and 6");
  if (refused(loom_package_run(pkg), "input 'y': dimension 1 is 6, but it must equal W (W = 5 from dimension 1 of input 'x')"))
    return 1;
  if (refused(loom_package_set_input_shaped(pkg, 0, buf, sizeof(float) * 11, five, 2),
              "input 'x' expects float32[2, 5] = 40 bytes, got 44 bytes"))
    return 1;
  /* The executor is still usable after the errors. */
  if (run_at(pkg, 33)) return 1;
  loom_package_free(pkg);
  printf("ok\n");
  return 0;
}
