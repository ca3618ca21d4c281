"""The model driver (TVM's ``tvm.driver``): ``tvmc`` load / tune / compile / run."""
from . import tvmc  # noqa: F401
