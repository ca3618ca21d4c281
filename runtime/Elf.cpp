// ELF header, extent and .dynsym reading with bounds-checked reads (no dlopen, no crash on bad bytes).
#include "runtime/Elf.h"

#include <algorithm>
#include <cstring>

namespace loom::runtime {

namespace {

/// Bounds-checked little-endian reads from the file's bytes.
struct Reader {
  const std::string& bytes;
  template <class T> bool get(uint64_t off, T* out) const {
    if (off > bytes.size() || sizeof(T) > bytes.size() - off) return false;
    std::memcpy(out, bytes.data() + off, sizeof(T));
    return true;
  }
};

constexpr uint32_t kShtDynsym = 11, kShtNobits = 8;
constexpr uint32_t kPtLoad = 1;

}  // namespace

bool isElf(const std::string& bytes) { return bytes.size() >= 4 && std::memcmp(bytes.data(), "\x7f" "ELF", 4) == 0; }

bool readElf(const std::string& bytes, ElfInfo* info, std::string* why) {
  *info = ElfInfo{};
  if (!isElf(bytes)) {
    *why = "not an ELF file";
    return false;
  }
  if (bytes.size() < 64) {
    *why = "an ELF file cut inside its 64-byte header (" + std::to_string(bytes.size()) + " bytes)";
    info->requiredBytes = 64;
    return false;
  }
  if (bytes[4] != 2 || bytes[5] != 1) {
    *why = "not a 64-bit little-endian ELF file";
    return false;
  }
  Reader r{bytes};
  uint64_t phoff = 0, shoff = 0;
  uint16_t phentsize = 0, phnum = 0, shentsize = 0, shnum = 0;
  r.get(0x10, &info->type);
  r.get(0x12, &info->machine);
  r.get(0x20, &phoff);
  r.get(0x28, &shoff);
  r.get(0x36, &phentsize);
  r.get(0x38, &phnum);
  r.get(0x3a, &shentsize);
  r.get(0x3c, &shnum);
  uint64_t need = 64;
  auto extend = [&](uint64_t off, uint64_t size) {
    // Saturate instead of wrapping on absurd values.
    uint64_t end = off > UINT64_MAX - size ? UINT64_MAX : off + size;
    need = std::max(need, end);
  };
  if (phnum) extend(phoff, uint64_t(phnum) * phentsize);
  if (shnum) extend(shoff, uint64_t(shnum) * shentsize);
  // Segments (what the loader maps).
  if (phentsize >= 56)
    for (uint16_t k = 0; k < phnum; ++k) {
      uint64_t h = phoff + uint64_t(k) * phentsize;
      uint32_t type = 0;
      uint64_t off = 0, filesz = 0;
      if (!r.get(h, &type) || !r.get(h + 8, &off) || !r.get(h + 32, &filesz)) break;
      if (type == kPtLoad) extend(off, filesz);
    }
  // Sections, and the symbols of .dynsym.
  if (shentsize >= 64)
    for (uint16_t s = 0; s < shnum; ++s) {
      uint64_t h = shoff + uint64_t(s) * shentsize;
      uint32_t type = 0, link = 0;
      uint64_t off = 0, size = 0, entsize = 0;
      if (!r.get(h + 4, &type) || !r.get(h + 0x18, &off) || !r.get(h + 0x20, &size)) break;
      if (type != kShtNobits) extend(off, size);
      if (type != kShtDynsym) continue;
      r.get(h + 0x28, &link);
      r.get(h + 0x38, &entsize);
      uint64_t sh = shoff + uint64_t(link) * shentsize, stroff = 0, strsize = 0;
      if (!r.get(sh + 0x18, &stroff) || !r.get(sh + 0x20, &strsize) || entsize < 24) continue;
      for (uint64_t e = 0; e + entsize <= size; e += entsize) {
        uint32_t nameOff = 0;
        uint8_t stInfo = 0;
        uint16_t shndx = 0;
        uint64_t value = 0, stSize = 0;
        if (!r.get(off + e, &nameOff) || !r.get(off + e + 4, &stInfo) || !r.get(off + e + 6, &shndx) ||
            !r.get(off + e + 8, &value) || !r.get(off + e + 16, &stSize))
          break;
        int bind = stInfo >> 4, kind = stInfo & 0xf;
        if ((bind != 1 && bind != 2) || shndx == 0 || nameOff >= strsize) continue;
        uint64_t p = stroff + nameOff;
        if (p >= bytes.size()) continue;
        uint64_t maxLen = std::min<uint64_t>(strsize - nameOff, bytes.size() - p);
        std::string name(bytes.data() + p, strnlen(bytes.data() + p, size_t(maxLen)));
        info->dynamicSymbols.insert(name);
        if (kind == 2) info->dynamicFunctions.insert(name);
        ElfSymbol sym;
        sym.function = kind == 2;
        sym.size = stSize;
        // The file offset through the symbol's section (value is an address inside it).
        uint64_t sec = shoff + uint64_t(shndx) * shentsize, secType = 0, secAddr = 0, secOff = 0, secSize = 0;
        uint32_t secType32 = 0;
        if (shndx < shnum && r.get(sec + 4, &secType32) && r.get(sec + 0x10, &secAddr) && r.get(sec + 0x18, &secOff) &&
            r.get(sec + 0x20, &secSize)) {
          secType = secType32;
          if (secType != kShtNobits && value >= secAddr && value - secAddr <= secSize) sym.fileOffset = secOff + (value - secAddr);
        }
        info->symbols[name] = sym;
      }
    }
  info->requiredBytes = need;
  return true;
}

bool elfSymbolBytes(const std::string& bytes, const ElfInfo& info, const std::string& name, std::string* out) {
  auto data = info.symbols.find(name), size = info.symbols.find(name + "_size");
  if (data == info.symbols.end() || size == info.symbols.end()) return false;
  uint64_t n = 0;
  Reader r{bytes};
  if (size->second.fileOffset == UINT64_MAX || !r.get(size->second.fileOffset, &n)) return false;
  uint64_t at = data->second.fileOffset;
  if (at == UINT64_MAX || at > bytes.size() || n > bytes.size() - at) return false;
  *out = bytes.substr(size_t(at), size_t(n));
  return true;
}

std::string elfMachineName(uint16_t machine) {
  switch (machine) {
  case 3: return "i386";
  case 8: return "mips";
  case 20: return "ppc";
  case 21: return "ppc64";
  case 40: return "arm";
  case 62: return "x86_64";
  case 183: return "aarch64";
  case 243: return "riscv64";
  default: return "machine " + std::to_string(machine);
  }
}

uint16_t hostElfMachine() {
#if defined(__x86_64__)
  return 62;
#elif defined(__aarch64__)
  return 183;
#elif defined(__riscv) && __riscv_xlen == 64
  return 243;
#elif defined(__powerpc64__)
  return 21;
#else
  return 0;
#endif
}

}  // namespace loom::runtime
