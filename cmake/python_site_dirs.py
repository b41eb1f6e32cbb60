"""Prints the site-packages folders where CMake looks for the nvidia-* wheels (cuDNN, cuBLAS),
';'-separated: those of an importable `nvidia` namespace package first, then the interpreter's
own. Under pip's build isolation the wheels are not importable, but they sit in the target
environment's site-packages, which sysconfig still names."""
import os
import site
import sysconfig

dirs = []
try:
    import nvidia

    dirs += [os.path.dirname(p) for p in nvidia.__path__]
except ImportError:
    pass
dirs += [sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
try:
    dirs += site.getsitepackages()
except AttributeError:  # an old virtualenv's site module
    pass
print(";".join(dict.fromkeys(d for d in dirs if d)))
