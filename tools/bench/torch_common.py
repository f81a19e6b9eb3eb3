"""What the PyTorch sides of the benchmark (torch_cells.py, torch_mixers.py) report about
the process they run in: the OpenBLAS kernel set torch loaded and the peak RSS."""
import ctypes
import re
import resource


def blas_core():
    """The kernel set of the OpenBLAS torch loaded ("-" if it is not OpenBLAS)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            paths = {line.split()[-1] for line in f if re.search(r"/lib(open)?blas[^/ ]*\.so", line)}
    except OSError:
        return "-"
    for p in sorted(paths):
        try:
            fn = ctypes.CDLL(p).openblas_get_corename
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_char_p
        return fn().decode()
    return "-"


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB
