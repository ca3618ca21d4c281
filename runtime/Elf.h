// Reading an ELF file's header, extent and exported symbols without loading it (packages, `loom inspect`).
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace loom::runtime {

/// A defined symbol of .dynsym.
struct ElfSymbol {
  bool function = false;
  uint64_t size = 0;        ///< st_size
  /// Where its bytes are in the file; UINT64_MAX when they are not in the file (.bss, or a
  /// section that lies outside it).
  uint64_t fileOffset = UINT64_MAX;
};

/// What the headers of a 64-bit little-endian ELF file say.
struct ElfInfo {
  uint16_t type = 0;        ///< ET_REL 1, ET_EXEC 2, ET_DYN 3
  uint16_t machine = 0;     ///< EM_X86_64 62, EM_AARCH64 183, ...
  /// The bytes the file must have: the end of the furthest header table, segment or section it
  /// describes. A file shorter than this is truncated.
  uint64_t requiredBytes = 0;
  /// Defined global or weak symbols of .dynsym (functions and data), by name.
  std::set<std::string> dynamicSymbols;
  /// The defined global/weak function symbols among them.
  std::set<std::string> dynamicFunctions;
  /// The same symbols with their size and file offset.
  std::map<std::string, ElfSymbol> symbols;
};

/// The bytes of data symbol `name` of a model library as the file holds them (no loading): the
/// symbol's `<name>_size` (a uint64) bytes at its file offset. False when either symbol is missing
/// or outside the file.
bool elfSymbolBytes(const std::string& bytes, const ElfInfo& info, const std::string& name, std::string* out);

/// True when `bytes` starts with the ELF magic.
bool isElf(const std::string& bytes);
/// Parses the headers of `bytes`; every read is bounds-checked, so a damaged or truncated file
/// gives a smaller symbol set and an honest requiredBytes, never a crash. Returns false with
/// `*why` set for a file that is not a 64-bit little-endian ELF file.
bool readElf(const std::string& bytes, ElfInfo* info, std::string* why);
/// "x86_64", "aarch64", "riscv64", ... or "machine N".
std::string elfMachineName(uint16_t machine);
/// The ELF machine of this process (EM_X86_64 on x86-64, EM_AARCH64 on AArch64, ...).
uint16_t hostElfMachine();

}  // namespace loom::runtime
