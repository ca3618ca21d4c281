// Q_INIT_RESOURCE must run outside any namespace; this wraps it for callers.
#include "views/Resources.h"

#include <QtCore/qglobal.h>

static void initStudioResources() { Q_INIT_RESOURCE(studio); }

namespace loom::views {

void initResources() { initStudioResources(); }

}  // namespace loom::views
