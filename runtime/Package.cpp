// Loading a packaged model: untar, check the metadata, write kernels.so to a temp file, dlopen, build the executor.
#include "runtime/Package.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "runtime/Params.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/Tar.h"

namespace loom::runtime {

namespace {

/// Whether the archive's headers and padded members are followed by a zero block (the end-of-archive
/// marker); a file cut inside the last member's padding or the marker lacks it.
bool hasEndOfArchive(const std::string& bytes) {
  size_t pos = 0;
  while (pos + 512 <= bytes.size()) {
    const char* h = bytes.data() + pos;
    bool zero = true;
    for (int i = 0; i < 512 && zero; ++i) zero = h[i] == 0;
    if (zero) return true;
    uint64_t size = 0;
    for (int i = 124; i < 136 && h[i]; ++i)
      if (h[i] >= '0' && h[i] <= '7') size = size * 8 + uint64_t(h[i] - '0');
    pos += 512 + (size + 511) / 512 * 512;
  }
  return false;
}

std::map<std::string, std::string> readPackageFiles(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RuntimeFailure("cannot open package '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  if (bytes.empty()) throw RuntimeFailure("package '" + path + "' is empty");
  if (bytes.size() < 512)
    throw RuntimeFailure("package '" + path + "' is not a tar archive (" + std::to_string(bytes.size()) +
                         " bytes, less than one tar header)");
  std::map<std::string, std::string> files;
  try {
    files = readTarBytes(bytes, path);
  } catch (const RuntimeFailure& e) {
    std::string what = e.what();
    if (what.find("at byte 0 (bad checksum)") != std::string::npos)
      throw RuntimeFailure("package '" + path + "' is not a tar archive (" + e.what() + ")");
    if (what.rfind(path + ": ", 0) == 0) what = what.substr(path.size() + 2);
    throw RuntimeFailure("package '" + path + "' is damaged or truncated: " + what);
  }
  if (!hasEndOfArchive(bytes))
    throw RuntimeFailure("package '" + path + "' is truncated (" + std::to_string(bytes.size()) +
                         " bytes; it ends before the tar end-of-archive marker)");
  for (const char* need : {"metadata.json", "graph.json", "params.bin", "kernels.so"})
    if (!files.count(need))
      throw RuntimeFailure("package '" + path + "' has no " + need +
                           " (a package holds kernels.so, graph.json, params.bin and metadata.json)");
  return files;
}

void checkMetadata(const std::string& path, const std::string& text, const std::map<std::string, std::string>& files) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeFailure("package '" + path + "': metadata.json is not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw RuntimeFailure("package '" + path + "': metadata.json is not a JSON object");
  // A package written before the field existed is version 1.
  if (j.contains("format_version")) {
    const auto& v = j["format_version"];
    if (!v.is_number_integer() || v.get<int64_t>() != kPackageFormatVersion)
      throw RuntimeFailure("package '" + path + "' has format version " + v.dump() + ", this runtime reads version " +
                           std::to_string(kPackageFormatVersion) + " (recompile the model with a matching `loom compile`)");
  }
  if (!j.contains("members")) return;
  if (!j["members"].is_object()) throw RuntimeFailure("package '" + path + "': metadata.json \"members\" is not an object");
  for (const auto& [name, m] : j["members"].items()) {
    auto it = files.find(name);
    if (it == files.end()) throw RuntimeFailure("package '" + path + "' has no " + name + " (metadata.json lists it)");
    if (!m.is_object() || !m.contains("bytes") || !m.contains("crc32") || !m["bytes"].is_number_unsigned() ||
        !m["crc32"].is_string())
      throw RuntimeFailure("package '" + path + "': metadata.json has a malformed entry for member " + name);
    if (m["bytes"].get<uint64_t>() != it->second.size())
      throw RuntimeFailure("package '" + path + "': " + name + " is damaged (" + std::to_string(it->second.size()) +
                           " bytes, metadata.json says " + m["bytes"].dump() + ")");
    std::string sum = packageChecksum(it->second);
    if (sum != m["crc32"].get<std::string>())
      throw RuntimeFailure("package '" + path + "': " + name + " is damaged (crc32 " + sum + ", metadata.json says " +
                           m["crc32"].get<std::string>() + ")");
  }
}

}  // namespace

std::string packageChecksum(const std::string& bytes) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xff] ^ (c >> 8);
  c ^= 0xFFFFFFFFu;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", c);
  return hex;
}

Package loadPackage(const std::string& path) {
  std::map<std::string, std::string> files = readPackageFiles(path);
  checkMetadata(path, files["metadata.json"], files);
  std::string tmpl = (std::filesystem::temp_directory_path() / "loom-kernels-XXXXXX.so").string();
  int fd = mkstemps(tmpl.data(), 3);
  if (fd < 0) throw RuntimeFailure("cannot create a temporary file for the kernels of '" + path + "'");
  const std::string& so = files["kernels.so"];
  bool ok = ::write(fd, so.data(), so.size()) == ssize_t(so.size());
  ::close(fd);
  if (!ok) {
    std::filesystem::remove(tmpl);
    throw RuntimeFailure("cannot write the kernels of '" + path + "' to " + tmpl);
  }
  Module kernels;
  try {
    kernels = Module::loadFile(tmpl);
  } catch (const std::exception& e) {
    std::filesystem::remove(tmpl);
    throw RuntimeFailure("package '" + path + "': cannot load kernels.so: " + e.what());
  }
  // The library stays mapped after the file is gone.
  std::filesystem::remove(tmpl);
  Package p;
  try {
    p.executor = std::make_unique<GraphExecutor>(files["graph.json"], kernels);
    p.executor->setParams(loadParams(files["params.bin"]));
  } catch (const std::exception& e) {
    throw RuntimeFailure("package '" + path + "': " + e.what());
  }
  p.metadata = files["metadata.json"];
  return p;
}

}  // namespace loom::runtime
