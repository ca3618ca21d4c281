// Registers the Studio's compiled-in resources (icons, lexer word lists) from the static library.
#pragma once

namespace loom::views {

/// Call once before creating Studio widgets (the executable and the tests do).
void initResources();

}  // namespace loom::views
