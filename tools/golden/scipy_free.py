"""erf without scipy: math.erf applied elementwise (exact to double precision)."""
import math

import numpy as np

_erf = np.frompyfunc(math.erf, 1, 1)


def erf(x):
    return _erf(np.asarray(x, dtype=np.float64)).astype(np.float64)
