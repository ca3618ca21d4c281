// Writing a file all at once: the reader sees the old contents or the new, never a part.
#pragma once
#include <string>
#include <string_view>

namespace loom::runtime {

/// Writes `bytes` to `path` so that `path` always holds either its previous contents or all of
/// `bytes`: they go to a temporary file in the same directory (".NAME.XXXXXX.tmp"), are flushed
/// to the disk, then renamed over `path`. On a failure (a full disk, a file size limit, a
/// read-only directory) the temporary file is removed and RuntimeFailure names the path, the
/// system's reason and that the previous file is unchanged. A process killed meanwhile leaves at
/// most the temporary file, never a half-written `path`. A new file gets mode 0644 (less the
/// umask); a replaced one keeps its mode.
void writeFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace loom::runtime
