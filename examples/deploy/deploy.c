/* Runs a Loom package in plain C, linked only with libloom_runtime: input from a file, top-5 classes out. */
/*
 * Build from the repository root (after building Loom into build/):
 *   cc -O2 -I runtime/include examples/deploy/deploy.c -L build/lib -lloom_runtime \
 *      -Wl,-rpath,"$PWD/build/lib" -o deploy
 * Run (a package from `loom compile`: one shared library NAME.so, or a NAME.tar):
 *   ./deploy small_cnn.so input.raw [K]
 * The only Loom call sites are loom_package_* and loom_get_last_error (runtime/include/loom_runtime.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom_runtime.h"

/* Reads the whole file; NULL (with a message) on failure. */
static unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "deploy: cannot open '%s'\n", path);
    return NULL;
  }
  size_t cap = 1 << 16, n = 0, got;
  unsigned char* buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      unsigned char* bigger = realloc(buf, cap * 2);
      if (!bigger) free(buf);
      buf = bigger;
      cap *= 2;
    }
  }
  fclose(f);
  if (!buf) fprintf(stderr, "deploy: out of memory reading '%s'\n", path);
  *size = n;
  return buf;
}

/* The float32 data of a .npy file (version 1-3, '<f4', C order): a pointer into `file` and its
   size, or NULL with a message. */
static const unsigned char* npy_data(const unsigned char* file, size_t size, const char* path, size_t* nbytes) {
  if (size < 10 || memcmp(file, "\x93NUMPY", 6) != 0) return NULL;
  size_t header_len, start;
  if (file[6] == 1) {
    header_len = (size_t)file[8] | ((size_t)file[9] << 8);
    start = 10;
  } else {
    if (size < 12) return NULL;
    header_len = (size_t)file[8] | ((size_t)file[9] << 8) | ((size_t)file[10] << 16) | ((size_t)file[11] << 24);
    start = 12;
  }
  if (start + header_len > size) {
    fprintf(stderr, "deploy: '%s' has a truncated .npy header\n", path);
    return NULL;
  }
  char header[4096];
  size_t copy = header_len < sizeof header - 1 ? header_len : sizeof header - 1;
  memcpy(header, file + start, copy);
  header[copy] = 0;
  if (!strstr(header, "'<f4'") || strstr(header, "'fortran_order': True")) {
    fprintf(stderr, "deploy: '%s' must hold float32 ('<f4') data in C order; its header is %s\n", path, header);
    return NULL;
  }
  *nbytes = size - start - header_len;
  return file + start + header_len;
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr,
            "usage: deploy PACKAGE INPUT [K]\n"
            "  PACKAGE is a model from `loom compile`: NAME.so (one shared library) or NAME.tar.\n"
            "  Runs the package on INPUT (raw little-endian float32, or a float32 .npy) and prints\n"
            "  the K (default 5) highest scores of the first output.\n");
    return 2;
  }
  int k = argc == 4 ? atoi(argv[3]) : 5;
  if (k <= 0) k = 5;

  LoomPackageHandle pkg = NULL;
  if (loom_package_load(argv[1], &pkg) != 0) {
    fprintf(stderr, "deploy: %s\n", loom_get_last_error());
    return 1;
  }
  int status = 1;
  unsigned char* file = NULL;
  float* scores = NULL;
  int* order = NULL;

  const char* in_name;
  const int64_t* shape;
  int ndim;
  LoomDataType dtype;
  size_t in_bytes, out_bytes;
  if (loom_package_input_name(pkg, 0, &in_name) || loom_package_input_shape(pkg, 0, &shape, &ndim) ||
      loom_package_input_dtype(pkg, 0, &dtype) || loom_package_input_nbytes(pkg, 0, &in_bytes)) {
    fprintf(stderr, "deploy: %s\n", loom_get_last_error());
    goto done;
  }
  printf("input '%s': shape [", in_name);
  for (int d = 0; d < ndim; ++d) printf("%s%lld", d ? ", " : "", (long long)shape[d]);
  printf("]\n");
  if (dtype.code != kLoomDTypeFloat || dtype.bits != 32 || dtype.lanes != 1) {
    fprintf(stderr, "deploy: input '%s' is not float32; this example feeds float32 only\n", in_name);
    goto done;
  }

  size_t size;
  file = read_file(argv[2], &size);
  if (!file) goto done;
  const unsigned char* data = file;
  size_t nbytes = size;
  if (size >= 6 && memcmp(file, "\x93NUMPY", 6) == 0) {
    data = npy_data(file, size, argv[2], &nbytes);
    if (!data) goto done;
  }
  /* The runtime checks the size and says what it expected. */
  if (loom_package_set_input(pkg, 0, data, nbytes) != 0 || loom_package_run(pkg) != 0) {
    fprintf(stderr, "deploy: %s\n", loom_get_last_error());
    goto done;
  }

  const char* out_name;
  if (loom_package_output_name(pkg, 0, &out_name) || loom_package_output_dtype(pkg, 0, &dtype) ||
      loom_package_output_nbytes(pkg, 0, &out_bytes)) {
    fprintf(stderr, "deploy: %s\n", loom_get_last_error());
    goto done;
  }
  if (dtype.code != kLoomDTypeFloat || dtype.bits != 32 || dtype.lanes != 1) {
    fprintf(stderr, "deploy: output '%s' is not float32\n", out_name);
    goto done;
  }
  size_t count = out_bytes / sizeof(float);
  scores = malloc(out_bytes ? out_bytes : 1);
  order = malloc((count ? count : 1) * sizeof(int));
  if (!scores || !order) {
    fprintf(stderr, "deploy: out of memory\n");
    goto done;
  }
  if (loom_package_get_output(pkg, 0, scores, out_bytes) != 0) {
    fprintf(stderr, "deploy: %s\n", loom_get_last_error());
    goto done;
  }
  /* Partial selection sort: the k best first, ties to the lower class. */
  for (size_t i = 0; i < count; ++i) order[i] = (int)i;
  if ((size_t)k > count) k = (int)count;
  for (int r = 0; r < k; ++r) {
    size_t best = (size_t)r;
    for (size_t i = (size_t)r + 1; i < count; ++i)
      if (scores[order[i]] > scores[order[best]]) best = i;
    int t = order[r];
    order[r] = order[best];
    order[best] = t;
  }
  printf("output '%s': %zu scores, top %d:\n", out_name, count, k);
  for (int r = 0; r < k; ++r) printf("  %d. class %d  score %.6f\n", r + 1, order[r], scores[order[r]]);
  status = 0;

done:
  free(order);
  free(scores);
  free(file);
  loom_package_free(pkg);
  return status;
}
