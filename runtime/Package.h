// Packaged models, loaded by the runtime alone: a .tar (kernels.so + graph.json + params.bin +
// metadata.json) or one shared library with the graph, params and metadata embedded as data.
#pragma once
#include <memory>
#include <string>

#include "runtime/GraphExecutor.h"

namespace loom::runtime {

/// The package format this runtime reads and `loom compile` writes ("format_version" in
/// metadata.json; a package without the field is version 1).
inline constexpr int kPackageFormatVersion = 1;

/// The checksum of a package member as metadata.json records it ("members": {"kernels.so":
/// {"bytes": N, "crc32": "1a2b3c4d"}, ...}): CRC-32 (zlib's, so `zlib.crc32` agrees) as 8 lowercase
/// hex digits.
std::string packageChecksum(const std::string& bytes);

/// The exported data symbols of a model library (`loom compile ... --output model.so`): each is a
/// read-only byte array (NUL-terminated) with its length in bytes, without the NUL, as the
/// exported uint64 `<symbol>_size`.
inline constexpr const char* kLibraryMetadataSymbol = "__loom_metadata";  ///< metadata.json's text
inline constexpr const char* kLibraryGraphSymbol = "__loom_graph_json";   ///< graph.json's text
inline constexpr const char* kLibraryParamsSymbol = "__loom_params";      ///< params.bin's bytes
/// The CRC-32 of the whole library file (8 lowercase hex digits), computed with these 8 bytes
/// holding kLibraryChecksumPlaceholder: written by stampLibraryChecksum after linking, checked
/// before the library is loaded, so a damaged file (code included) is refused, not run. A library
/// still holding the placeholder (linked by hand from `loom compile`'s object) is not checked.
inline constexpr const char* kLibraryChecksumSymbol = "__loom_checksum";
inline constexpr const char* kLibraryChecksumPlaceholder = "LOOMCRC0";

/// Writes the file checksum into the library at `path` (its kLibraryChecksumSymbol must hold the
/// placeholder). Throws RuntimeFailure naming the file when it cannot.
void stampLibraryChecksum(const std::string& path);
/// Checks the file checksum of a library's bytes: "ok", "not stamped" (placeholder), "missing"
/// (no checksum symbol), or "damaged (crc32 X of the file, it was written with Y)".
std::string libraryChecksumStatus(const std::string& bytes);

/// A loaded package: the executor (params bound) and the metadata text (JSON: format version,
/// target, inputs and outputs with names, shapes and dtypes, Loom version).
struct Package {
  std::unique_ptr<GraphExecutor> executor;
  std::string metadata;
  std::string kind = "tar";  ///< "tar" or "so" (one shared library)
};

/// Loads the package at `path`, a .tar or a model library (told apart by their bytes, not the
/// name). A .tar: untars `path`, checks metadata.json (valid JSON, a format version this runtime reads, and the
/// size and checksum of every member it lists, so a damaged kernels.so is refused, not run), loads
/// kernels.so (written to a private temporary file and dlopen'ed), builds the executor from
/// graph.json (every kernel it calls must be in kernels.so) and binds params.bin.
/// RuntimeFailure names the package and what is missing or malformed: an empty, truncated or
/// non-tar file, a missing member, an unsupported format version, a missing kernel symbol.
/// A library: checks its ELF headers before loading it (a truncated file, a library for another
/// machine ("built for aarch64, this machine is x86_64"), a library without the symbols above are
/// refused unloaded), dlopens it, checks the embedded metadata like metadata.json (format version,
/// size and checksum of the graph and params) and builds the executor from the embedded data.
/// Kernels built for another machine, and packages holding only kernels.o or kernels.c, are
/// refused with what to do instead.
Package loadPackage(const std::string& path);

}  // namespace loom::runtime
