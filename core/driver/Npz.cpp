// .npy headers (descr, fortran_order, shape) and the zip container (central directory, stored
// and deflate members via zlib).
#include "core/driver/Npz.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <zlib.h>

#include "runtime/AtomicFile.h"
#include "runtime/RuntimeFailure.h"

namespace loom::driver {

namespace {

std::string descrOf(runtime::DType t) {
  char kind = t.code == runtime::DType::Float ? 'f' : t.code == runtime::DType::Bool ? 'b' : t.code == runtime::DType::UInt ? 'u' : 'i';
  if (t.code == runtime::DType::Bool) return "|b1";
  return std::string(t.bits == 8 ? "|" : "<") + kind + std::to_string(t.bits / 8);
}

template <class T> T rd(const std::string& s, size_t pos) {
  T v;
  std::memcpy(&v, s.data() + pos, sizeof(T));
  return v;
}
template <class T> void wr(std::string& s, T v) { s.append(reinterpret_cast<const char*>(&v), sizeof(T)); }

}  // namespace

runtime::NDArray parseNpy(const std::string& b, const std::string& name) {
  if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0) LOOM_THROW(NpzError) << name << ": not an .npy array";
  int major = uint8_t(b[6]);
  if (major < 1 || major > 3) LOOM_THROW(NpzError) << name << ": unsupported .npy format version " << major;
  size_t start = major == 1 ? 10 : 12;
  if (b.size() < start) LOOM_THROW(NpzError) << name << ": truncated .npy header";
  size_t hlen = major == 1 ? rd<uint16_t>(b, 8) : rd<uint32_t>(b, 8);
  if (hlen > b.size() - start) LOOM_THROW(NpzError) << name << ": truncated .npy header";
  std::string h = b.substr(start, hlen);
  std::smatch m;
  if (!std::regex_search(h, m, std::regex("'descr':\\s*'([^']*)'")))
    LOOM_THROW(NpzError) << name << ": .npy header has no descr";
  std::string descr = m[1];
  if (std::regex_search(h, m, std::regex("'fortran_order':\\s*True")))
    LOOM_THROW(NpzError) << name << ": Fortran-ordered arrays are not supported";
  if (!std::regex_search(h, m, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    LOOM_THROW(NpzError) << name << ": .npy header has no shape";
  std::vector<int64_t> shape;
  std::string dims = m[1];
  std::stringstream ss(dims);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    size_t i = tok.find_first_not_of(" \t"), j = tok.find_last_not_of(" \tL");
    if (i == std::string::npos) continue;
    std::string d = tok.substr(i, j + 1 - i);
    // Decimal digits only (no sign): 18 of them fit int64_t.
    if (d.empty() || d.size() > 18 || d.find_first_not_of("0123456789") != std::string::npos)
      LOOM_THROW(NpzError) << name << ": malformed shape (" << dims << ")";
    shape.push_back(std::stoll(d));
  }
  bool digits = descr.size() >= 3 && descr.size() <= 4 && descr.find_first_not_of("0123456789", 2) == std::string::npos;
  if (!digits || descr[0] == '>') LOOM_THROW(NpzError) << name << ": unsupported dtype '" << descr << "'";
  char kind = descr[1];
  int bytes = std::stoi(descr.substr(2));
  runtime::DType t;
  bool sizeOk = bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8;
  if (kind == 'f' && sizeOk && bytes != 1) t = {runtime::DType::Float, uint8_t(bytes * 8), 1};
  else if (kind == 'i' && sizeOk) t = {runtime::DType::Int, uint8_t(bytes * 8), 1};
  else if (kind == 'u' && sizeOk) t = {runtime::DType::UInt, uint8_t(bytes * 8), 1};
  else if (kind == 'b' && bytes == 1) t = {runtime::DType::Bool, 1, 1};
  else LOOM_THROW(NpzError) << name << ": unsupported dtype '" << descr << "'";
  // numpy's rule: the dims other than 0 must multiply to a size that fits (an empty array of
  // shape (10^6, 10^13, 0) is still refused: its element count overflows before the 0).
  unsigned __int128 size = uint64_t(bytes);
  for (int64_t d : shape) {
    if (d == 0) continue;
    size *= uint64_t(d);
    if (size > uint64_t(INT64_MAX))
      LOOM_THROW(NpzError) << name << ": array too big (shape (" << dims << "), dtype '" << descr << "')";
  }
  // The data must be present before anything is allocated for it.
  size_t avail = b.size() - start - hlen;
  unsigned __int128 need = uint64_t(bytes);
  for (int64_t d : shape) {
    need *= uint64_t(d);
    if (need > avail) need = avail + 1;  // keeps the product bounded
  }
  if (need > avail)
    LOOM_THROW(NpzError) << name << ": data truncated (" << avail << " bytes for shape (" << dims << "), dtype '" << descr << "')";
  runtime::NDArray a = runtime::NDArray::empty(shape, t);
  if (a.byteSize()) a.copyFromBytes(b.data() + start + hlen, a.byteSize());
  return a;
}

std::string serializeNpy(const runtime::NDArray& a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.shape().size(); ++i) shape += std::to_string(a.shape()[i]) + ", ";
  if (a.shape().size() > 1) shape.resize(shape.size() - 2);
  else if (a.shape().size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string h = "{'descr': '" + descrOf(a.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  wr<uint16_t>(out, uint16_t(h.size()));
  out += h;
  out.append(static_cast<const char*>(a.data()), a.byteSize());
  return out;
}

std::vector<std::pair<std::string, runtime::NDArray>> readNpz(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) LOOM_THROW(NpzError) << path << ": cannot open file";
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string z = ss.str();
  // End of central directory: the last "PK\5\6".
  size_t eocd = std::string::npos;
  for (size_t i = z.size() >= 22 ? z.size() - 22 : 0; i != std::string::npos && i + 22 <= z.size(); --i) {
    if (rd<uint32_t>(z, i) == 0x06054b50) {
      eocd = i;
      break;
    }
    if (i == 0) break;
  }
  if (eocd == std::string::npos) LOOM_THROW(NpzError) << path << ": not a zip (.npz) file";
  uint16_t count = rd<uint16_t>(z, eocd + 10);
  size_t cd = rd<uint32_t>(z, eocd + 16);
  std::vector<std::pair<std::string, runtime::NDArray>> out;
  for (uint16_t k = 0; k < count; ++k) {
    if (cd + 46 > z.size() || rd<uint32_t>(z, cd) != 0x02014b50) LOOM_THROW(NpzError) << path << ": bad zip directory";
    uint16_t method = rd<uint16_t>(z, cd + 10);
    size_t csize = rd<uint32_t>(z, cd + 20), usize = rd<uint32_t>(z, cd + 24);
    uint16_t nlen = rd<uint16_t>(z, cd + 28), xlen = rd<uint16_t>(z, cd + 30), clen = rd<uint16_t>(z, cd + 32);
    size_t local = rd<uint32_t>(z, cd + 42);
    std::string name = z.substr(cd + 46, nlen);
    cd += 46 + nlen + xlen + clen;
    if (local + 30 > z.size() || rd<uint32_t>(z, local) != 0x04034b50)
      LOOM_THROW(NpzError) << path << ": bad local header of '" << name << "'";
    size_t data = local + 30 + rd<uint16_t>(z, local + 26) + rd<uint16_t>(z, local + 28);
    if (data + csize > z.size()) LOOM_THROW(NpzError) << path << ": member '" << name << "' is truncated";
    std::string bytes;
    if (method == 0) {
      bytes = z.substr(data, csize);
    } else if (method == 8) {
      // Deflate expands at most about 1032:1: a larger stated size is a damaged header, not a
      // reason to allocate up to 4 GiB.
      if (usize > csize * 1032 + 1024)
        LOOM_THROW(NpzError) << path << ": member '" << name << "' claims " << usize << " bytes from " << csize
                             << " compressed";
      bytes.resize(usize);
      z_stream s{};
      s.next_in = reinterpret_cast<Bytef*>(z.data() + data);
      s.avail_in = uInt(csize);
      s.next_out = reinterpret_cast<Bytef*>(bytes.data());
      s.avail_out = uInt(usize);
      if (inflateInit2(&s, -MAX_WBITS) != Z_OK) LOOM_THROW(NpzError) << path << ": zlib init failed";
      int r = inflate(&s, Z_FINISH);
      inflateEnd(&s);
      if (r != Z_STREAM_END) LOOM_THROW(NpzError) << path << ": member '" << name << "' does not inflate";
    } else {
      LOOM_THROW(NpzError) << path << ": member '" << name << "' uses unsupported compression method " << method;
    }
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    out.emplace_back(name, parseNpy(bytes, path + ":" + name));
  }
  return out;
}

void writeNpz(const std::string& path, const std::vector<std::pair<std::string, runtime::NDArray>>& arrays) {
  std::string z, cd;
  for (const auto& [name, a] : arrays) {
    std::string fname = name + ".npy";
    std::string data = serializeNpy(a);
    uint32_t crc = uint32_t(crc32(0, reinterpret_cast<const Bytef*>(data.data()), uInt(data.size())));
    size_t offset = z.size();
    wr<uint32_t>(z, 0x04034b50);
    wr<uint16_t>(z, 20);
    wr<uint16_t>(z, 0);
    wr<uint16_t>(z, 0);
    wr<uint16_t>(z, 0);
    wr<uint16_t>(z, 0x21);
    wr<uint32_t>(z, crc);
    wr<uint32_t>(z, uint32_t(data.size()));
    wr<uint32_t>(z, uint32_t(data.size()));
    wr<uint16_t>(z, uint16_t(fname.size()));
    wr<uint16_t>(z, 0);
    z += fname;
    z += data;
    wr<uint32_t>(cd, 0x02014b50);
    wr<uint16_t>(cd, 20);
    wr<uint16_t>(cd, 20);
    wr<uint16_t>(cd, 0);
    wr<uint16_t>(cd, 0);
    wr<uint16_t>(cd, 0);
    wr<uint16_t>(cd, 0x21);
    wr<uint32_t>(cd, crc);
    wr<uint32_t>(cd, uint32_t(data.size()));
    wr<uint32_t>(cd, uint32_t(data.size()));
    wr<uint16_t>(cd, uint16_t(fname.size()));
    wr<uint16_t>(cd, 0);
    wr<uint16_t>(cd, 0);
    wr<uint16_t>(cd, 0);
    wr<uint16_t>(cd, 0);
    wr<uint32_t>(cd, 0);
    wr<uint32_t>(cd, uint32_t(offset));
    cd += fname;
  }
  size_t cdOffset = z.size();
  z += cd;
  wr<uint32_t>(z, 0x06054b50);
  wr<uint16_t>(z, 0);
  wr<uint16_t>(z, 0);
  wr<uint16_t>(z, uint16_t(arrays.size()));
  wr<uint16_t>(z, uint16_t(arrays.size()));
  wr<uint32_t>(z, uint32_t(cd.size()));
  wr<uint32_t>(z, uint32_t(cdOffset));
  wr<uint16_t>(z, 0);
  try {
    runtime::writeFileAtomically(path, z);  // the previous file stays whole when writing fails
  } catch (const runtime::RuntimeFailure& e) {
    LOOM_THROW(NpzError) << e.what();
  }
}

}  // namespace loom::driver
