"""Which BLAS this Python process's PyTorch calls: Debian's python3-torch links libblas.so.3, which
the libblas.so.3 alternative serves (OpenBLAS once libopenblas0 is installed, else the reference
netlib libblas3), and LD_LIBRARY_PATH can override it. The torch_*_forward.py scripts report it
so that each PyTorch time printed says which BLAS it was measured with."""
import os


def blas_library():
    """The resolved path of the libblas.so.3 mapped into this process (the file it names), or
    "none"."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith("libblas.so"):
                return os.path.realpath(path)
    return "none"
