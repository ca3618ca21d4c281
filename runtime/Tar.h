// A minimal ustar archive reader and writer (regular files only), for packaged models.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace loom::runtime {

/// The regular files of the tar archive at `path`, by name. Throws RuntimeFailure naming the
/// path for an unreadable file or a malformed header.
std::map<std::string, std::string> readTar(const std::string& path);
/// The same from archive bytes; `name` is used in messages.
std::map<std::string, std::string> readTarBytes(const std::string& bytes, const std::string& name);
/// Writes `files` (name, contents; names up to 99 characters) as a ustar archive.
void writeTar(const std::string& path, const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace loom::runtime
