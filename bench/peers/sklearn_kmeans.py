#!/usr/bin/env python3
"""scikit-learn reference for `sluice bench kmeans` (docs/BENCH_PROTOCOL.md, "k-means").

N float32 points in D dims around K blob centres (uniform in [-10, 10], noise +-1, as
the sluice bench generates them; not the same random numbers), starting centroids K
distinct points chosen with a fixed seed, then
KMeans(n_clusters=K, init=those centroids, n_init=1, max_iter=I, tol=0, algorithm="lloyd")
with `threads` OpenMP/BLAS threads (threadpoolctl). One warm-up fit, then the median of
`repeat` fits; time per iteration = fit time / n_iter_ (sklearn may stop early when the
labels stop changing even with tol=0, so n_iter_ is reported).

usage: bench/peers/sklearn_kmeans.py --points 2^22 --dims 16 --k 64 --iters 10 [--threads 2] [--repeat 3]

Where this Python has no scikit-learn (PyPI has none for some interpreters), the script
runs itself again under Debian's /usr/bin/python3 (packages python3-sklearn and
libopenblas0-pthread) when that one has it. The JSON names the BLAS found (`blas`):
sklearn's Lloyd iteration is a BLAS matrix product per chunk, and with Debian's reference
BLAS alone (libblas3) it takes 3-4x as long (2-core EPYC, 2026-11-26: 1,162 against 343
ms an iteration with OpenBLAS 0.3.21), which is no fair peer; a warning says so.
"""
import argparse, json, os, statistics, subprocess, sys, time, warnings

try:
    import numpy as np
    import sklearn
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_info, threadpool_limits
except ImportError:
    alt = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(alt) and os.path.exists(alt) and \
            subprocess.run([alt, "-c", "import sklearn, threadpoolctl"],
                           capture_output=True).returncode == 0:
        os.execv(alt, [alt] + sys.argv)
    raise


def blas_name():
    """The BLAS threadpoolctl finds ('openblas 0.3.21'), or 'reference' where it finds
    none it knows (Debian's libblas3)."""
    for i in threadpool_info():
        if i.get("user_api") == "blas":
            return f"{i.get('internal_api')} {i.get('version') or ''}".strip()
    return "reference"


def count(s):
    return 2 ** int(s[2:]) if s.startswith("2^") else int(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", default="2^22")
    ap.add_argument("--dims", type=int, default=16)
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    n, d, k = count(a.points), a.dims, a.k
    rng = np.random.default_rng(a.seed)
    centres = rng.uniform(-10, 10, (k, d)).astype(np.float32)
    x = centres[rng.integers(0, k, n)] + rng.uniform(-1, 1, (n, d)).astype(np.float32)
    x = np.ascontiguousarray(x, dtype=np.float32)
    init = x[rng.choice(n, k, replace=False)].copy()
    per_iter, iters = [], []
    with threadpool_limits(limits=a.threads), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(a.repeat + 1):
            km = KMeans(n_clusters=k, init=init, n_init=1, max_iter=a.iters, tol=0,
                        algorithm="lloyd")
            t0 = time.perf_counter()
            km.fit(x)
            ms = (time.perf_counter() - t0) * 1e3
            if r:
                per_iter.append(ms / km.n_iter_)
                iters.append(km.n_iter_)
    med = statistics.median(per_iter)
    blas = blas_name()
    if blas == "reference":
        print("sklearn_kmeans: warning: no optimized BLAS (reference BLAS: 3-4x slower); "
              "install libopenblas0-pthread for a fair peer", file=sys.stderr)
    print(json.dumps({"bench": "sklearn_kmeans", "sklearn": sklearn.__version__, "blas": blas,
                      "ms_per_iter": round(med, 3), "min_ms_per_iter": round(min(per_iter), 3),
                      "max_ms_per_iter": round(max(per_iter), 3), "n_iter": iters,
                      "points": n, "dims": d, "k": k, "threads": a.threads,
                      "inertia": float(km.inertia_), "repeat": a.repeat}))


if __name__ == "__main__":
    main()
