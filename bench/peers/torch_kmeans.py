#!/usr/bin/env python3
"""PyTorch peer of `sluice bench kmeans` on the GPU (TARGETS.md's reference): one Lloyd
iteration on N float32 points in D dims with K centroids, data in GPU memory, in the
matrix-product form (||x||^2 - 2 x.c + ||c||^2, argmin, sums by index_add_) or with
torch.cdist. Milliseconds per iteration: median of --repeat runs of --iters iterations
after one warm-up run.

usage: bench/peers/torch_kmeans.py --points 2^26 --dims 16 --k 64 [--iters 10]
       [--repeat 5] [--form mm|cdist]
Prints one JSON line.
"""
import argparse
import json
import statistics
import time

import torch


def count(s):
    return 2 ** int(s[2:]) if s.startswith("2^") else int(s)


def step(x, c, form):
    if form == "cdist":
        assign = torch.cdist(x, c).argmin(dim=1)
    else:
        d = (x * x).sum(1, keepdim=True) - 2 * x @ c.T + (c * c).sum(1)
        assign = d.argmin(dim=1)
    sums = torch.zeros_like(c).index_add_(0, assign, x)
    counts = torch.bincount(assign, minlength=c.shape[0]).clamp_(min=1)
    return sums / counts[:, None].to(x.dtype)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", default="2^26")
    ap.add_argument("--dims", type=int, default=16)
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--form", choices=["mm", "cdist"], default="mm")
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    n = count(a.points)
    torch.manual_seed(a.seed)
    dev = torch.device("cuda")
    x = torch.randn(n, a.dims, device=dev)
    c0 = x[torch.randperm(n, device=dev)[:a.k]].clone()
    per_iter = []
    for r in range(a.repeat + 1):
        c = c0.clone()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(a.iters):
            c = step(x, c, a.form)
        torch.cuda.synchronize()
        if r:
            per_iter.append((time.perf_counter() - t0) * 1e3 / a.iters)
    med = statistics.median(per_iter)
    print(json.dumps({"bench": "torch_kmeans", "torch": torch.__version__, "form": a.form,
                      "points": n, "dims": a.dims, "k": a.k, "iters": a.iters,
                      "ms_per_iter": round(med, 3), "min_ms_per_iter": round(min(per_iter), 3),
                      "max_ms_per_iter": round(max(per_iter), 3),
                      "device": torch.cuda.get_device_name()}))


if __name__ == "__main__":
    main()
