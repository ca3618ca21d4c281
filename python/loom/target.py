"""Targets (TVM's ``tvm.target.Target``): "llvm", "llvm -mcpu=znver4 -mattr=+avx2", ..."""


class Target:
    def __init__(self, target, host=None):
        self.text = str(target)
        self.kind = self.text.split()[0] if self.text else "llvm"

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Target({self.text!r})"
