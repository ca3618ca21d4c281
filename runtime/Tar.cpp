// The ustar reader and writer: 512-byte headers, octal fields, contents padded to 512 bytes.
#include "runtime/Tar.h"

#include "runtime/AtomicFile.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "runtime/RuntimeFailure.h"

namespace loom::runtime {

namespace {

uint64_t octal(const char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n && p[i]; ++i) {
    if (p[i] == ' ') continue;
    if (p[i] < '0' || p[i] > '7') return UINT64_MAX;
    v = v * 8 + uint64_t(p[i] - '0');
  }
  return v;
}

void putOctal(char* p, size_t n, uint64_t v) {
  std::string s(n - 1, '0');
  for (size_t i = n - 1; i-- > 0 && v;) {
    s[i] = char('0' + (v & 7));
    v >>= 3;
  }
  std::memcpy(p, s.data(), n - 1);
  p[n - 1] = 0;
}

}  // namespace

std::map<std::string, std::string> readTarBytes(const std::string& bytes, const std::string& name) {
  std::map<std::string, std::string> files;
  size_t pos = 0;
  while (pos + 512 <= bytes.size()) {
    const char* h = bytes.data() + pos;
    bool zero = true;
    for (int i = 0; i < 512 && zero; ++i) zero = h[i] == 0;
    if (zero) break;
    uint64_t sum = 0;
    for (int i = 0; i < 512; ++i) sum += (i >= 148 && i < 156) ? uint8_t(' ') : uint8_t(h[i]);
    if (octal(h + 148, 8) != sum)
      throw RuntimeFailure(name + ": malformed tar header at byte " + std::to_string(pos) + " (bad checksum)");
    std::string fname(h, strnlen(h, 100));
    if (std::memcmp(h + 257, "ustar", 5) == 0 && h[345]) fname = std::string(h + 345, strnlen(h + 345, 155)) + "/" + fname;
    uint64_t size = octal(h + 124, 12);
    if (size == UINT64_MAX || pos + 512 + size > bytes.size())
      throw RuntimeFailure(name + ": tar entry '" + fname + "' is truncated");
    char type = h[156];
    if (type == '0' || type == 0) files[fname] = bytes.substr(pos + 512, size);
    pos += 512 + (size + 511) / 512 * 512;
  }
  return files;
}

std::map<std::string, std::string> readTar(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RuntimeFailure("cannot open package '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return readTarBytes(ss.str(), path);
}

void writeTar(const std::string& path, const std::vector<std::pair<std::string, std::string>>& files) {
  std::string out;
  for (const auto& [fname, data] : files) {
    if (fname.size() > 99) throw RuntimeFailure("tar entry name too long: " + fname);
    char h[512] = {};
    std::memcpy(h, fname.data(), fname.size());
    putOctal(h + 100, 8, 0644);
    putOctal(h + 108, 8, 0);
    putOctal(h + 116, 8, 0);
    putOctal(h + 124, 12, data.size());
    putOctal(h + 136, 12, 0);
    h[156] = '0';
    std::memcpy(h + 257, "ustar", 6);
    h[263] = '0';
    h[264] = '0';
    std::memset(h + 148, ' ', 8);
    uint64_t sum = 0;
    for (int i = 0; i < 512; ++i) sum += uint8_t(h[i]);
    putOctal(h + 148, 7, sum);
    h[155] = ' ';
    out.append(h, 512);
    out += data;
    out.append((512 - data.size() % 512) % 512, '\0');
  }
  out.append(1024, '\0');
  // All or nothing: a full disk or a killed process never leaves half a package under `path`.
  writeFileAtomically(path, out);
}

}  // namespace loom::runtime
