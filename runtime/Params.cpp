// The params blob format: a magic, a count, then name + dtype + shape + bytes per tensor.
#include "runtime/Params.h"

#include <cstring>

#include "runtime/RuntimeFailure.h"

namespace loom::runtime {

namespace {
constexpr char kMagic[9] = "LOOMPRM1";

template <class T> void put(std::string& s, T v) { s.append(reinterpret_cast<const char*>(&v), sizeof(T)); }

struct Reader {
  const std::string& s;
  size_t pos = 0;
  template <class T> T get() {
    if (pos + sizeof(T) > s.size()) throw RuntimeFailure("params blob truncated at byte " + std::to_string(pos));
    T v;
    std::memcpy(&v, s.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  std::string bytes(uint64_t n) {
    if (n > s.size() - pos) throw RuntimeFailure("params blob truncated at byte " + std::to_string(pos));
    std::string r = s.substr(pos, n);
    pos += n;
    return r;
  }
};
}  // namespace

std::string saveParams(const std::map<std::string, NDArray>& params) {
  std::string s(kMagic, 8);
  put<uint64_t>(s, params.size());
  for (const auto& [name, a] : params) {
    put<uint32_t>(s, uint32_t(name.size()));
    s += name;
    put<uint8_t>(s, a.dtype().code);
    put<uint8_t>(s, a.dtype().bits);
    put<uint16_t>(s, a.dtype().lanes);
    put<uint32_t>(s, uint32_t(a.shape().size()));
    for (int64_t d : a.shape()) put<int64_t>(s, d);
    put<uint64_t>(s, a.byteSize());
    s.append(static_cast<const char*>(a.data()), a.byteSize());
  }
  return s;
}

std::map<std::string, NDArray> loadParams(const std::string& blob) {
  if (blob.size() < 16 || blob.compare(0, 8, kMagic) != 0) throw RuntimeFailure("not a Loom params blob (bad magic)");
  Reader r{blob, 8};
  uint64_t n = r.get<uint64_t>();
  std::map<std::string, NDArray> out;
  for (uint64_t i = 0; i < n; ++i) {
    std::string name = r.bytes(r.get<uint32_t>());
    DType t;
    t.code = r.get<uint8_t>();
    t.bits = r.get<uint8_t>();
    t.lanes = r.get<uint16_t>();
    uint32_t nd = r.get<uint32_t>();
    if (nd > 32) throw RuntimeFailure("params blob: tensor '" + name + "' has rank " + std::to_string(nd));
    std::vector<int64_t> shape;
    for (uint32_t d = 0; d < nd; ++d) shape.push_back(r.get<int64_t>());
    uint64_t nbytes = r.get<uint64_t>();
    // Check the header against the bytes present before allocating: a damaged dim must not ask
    // for 64 GiB (or wrap around).
    // Bits 1 is bool (a byte per element, as NDArray stores it: a causal mask's Where condition
    // folds to one); any other width is whole bytes.
    if ((t.bits != 1 && (t.bits == 0 || t.bits % 8 != 0)) || t.lanes == 0)
      throw RuntimeFailure("params blob: tensor '" + name + "' has element type bits " + std::to_string(t.bits) +
                           ", lanes " + std::to_string(t.lanes));
    unsigned __int128 expect = uint64_t(t.bytes());
    for (int64_t d : shape) {
      if (d < 0) throw RuntimeFailure("params blob: tensor '" + name + "' has a negative dimension");
      expect *= uint64_t(d);
      if (expect > blob.size()) expect = uint64_t(blob.size()) + 1;  // keeps the product bounded
    }
    if (expect != nbytes)
      throw RuntimeFailure("params blob: tensor '" + name + "' holds " + std::to_string(nbytes) +
                           " bytes, its shape needs " + (expect > blob.size() ? "more than the blob holds" : std::to_string(uint64_t(expect))));
    if (nbytes > blob.size() - r.pos) throw RuntimeFailure("params blob truncated at byte " + std::to_string(r.pos));
    NDArray a = NDArray::empty(shape, t);
    std::string data = r.bytes(nbytes);
    a.copyFromBytes(data.data(), nbytes);
    out[name] = a;
  }
  return out;
}

}  // namespace loom::runtime
