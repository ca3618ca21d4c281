# pytest setup of the loom Python suites: the built package on sys.path, the CLI's path.
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_BUILD = os.environ.get("LOOM_BUILD_DIR", os.path.join(_HERE, "..", "..", "build"))
if os.path.isdir(os.path.join(_BUILD, "python", "loom")) and "loom" not in sys.modules:
    sys.path.insert(0, os.path.join(_BUILD, "python"))

REPO = os.path.abspath(os.path.join(_HERE, "..", ".."))
LOOM_CLI = os.environ.get("LOOM_CLI", os.path.join(_BUILD, "bin", "loom"))
