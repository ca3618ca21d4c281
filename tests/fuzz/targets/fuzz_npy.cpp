// Fuzz target: NumPy .npy (parseNpy) and .npz (readNpz: zip members, stored or deflated) reading;
// what parses must serialize and parse back to the same array.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "FuzzCommon.h"
#include "core/driver/Npz.h"

using namespace loom;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1024 * 1024) return -1;
  std::string bytes = fuzz::bytesOf(data, size);
  if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
    fuzz::MemFile file(bytes, "fuzz.npz");
    if (!file.ok()) return 0;
    fuzz::refusesCleanly([&] { (void)driver::readNpz(file.path()); });
    return 0;
  }
  runtime::NDArray a;
  try {
    a = driver::parseNpy(bytes, "fuzz.npy");
  } catch (const InternalError&) {
    throw;
  } catch (const Error&) {
    return 0;
  }
  std::string again = driver::serializeNpy(a);
  runtime::NDArray b = driver::parseNpy(again, "again.npy");
  if (a.shape() != b.shape() || a.byteSize() != b.byteSize() ||
      (a.byteSize() && std::memcmp(a.data(), b.data(), a.byteSize()) != 0)) {
    std::fprintf(stderr, "an .npy does not survive serializeNpy -> parseNpy\n");
    std::abort();
  }
  return 0;
}
