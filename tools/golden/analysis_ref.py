"""Information measures over attention rows (float64 inside).

entropy(att)      [L,H,T,T] -> [L,H,T]: -sum_k p ln p (nats), 0 ln 0 = 0, every query row
                  (padded query rows included: they are ordinary softmax rows in HF).
jsd_adjacent(att) [L,H,T,T] -> [L-1,H,T]: Jensen-Shannon divergence in bits between the row of
                  (l, h, t) and the row of (l+1, h, t): 1/2 KL(P||M) + 1/2 KL(Q||M), M = (P+Q)/2,
                  0 log 0 = 0, over all keys.
"""
import numpy as np


def _xlogy(x, y, log):
    out = np.zeros_like(x, dtype=np.float64)
    nz = x > 0
    out[nz] = x[nz] * log(y[nz])
    return out


def entropy(att):
    p = np.asarray(att, dtype=np.float64)
    return -_xlogy(p, p, np.log).sum(axis=-1)


def jsd_bits(p, q):
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    m = 0.5 * (p + q)
    kl_pm = (_xlogy(p, p, np.log2) - _xlogy(p, m, np.log2)).sum(axis=-1)
    kl_qm = (_xlogy(q, q, np.log2) - _xlogy(q, m, np.log2)).sum(axis=-1)
    return 0.5 * kl_pm + 0.5 * kl_qm


def jsd_adjacent(att):
    a = np.asarray(att, dtype=np.float64)
    if a.shape[0] < 2:
        return np.zeros((0,) + a.shape[1:3])
    return jsd_bits(a[:-1], a[1:])
