#!/usr/bin/env python3
"""PyTorch peer of `sluice bench aggregate` on the GPU (TARGETS.md's reference): count and
sum of an int64 column per group over N rows, with the group ids already given as dense
integers 0..G-1 (sluice hashes unknown 32-bit keys; this peer does not have to), data in
GPU memory. One warm-up, then the median of --repeat runs, each synchronized.

usage: bench/peers/torch_groupby.py --rows 2^28 --groups 1000 [--repeat 5] [--seed 42]
Prints one JSON line.
"""
import argparse
import json
import statistics
import time

import torch


def count(s):
    return 2 ** int(s[2:]) if s.startswith("2^") else int(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="2^28")
    ap.add_argument("--groups", default="1000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    n, g = count(a.rows), count(a.groups)
    torch.manual_seed(a.seed)
    dev = torch.device("cuda")
    ids = torch.randint(0, g, (n,), device=dev)
    vals = torch.randint(0, 1000, (n,), device=dev, dtype=torch.int64)
    times = []
    for r in range(a.repeat + 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        sums = torch.zeros(g, dtype=torch.int64, device=dev).index_add_(0, ids, vals)
        counts = torch.bincount(ids, minlength=g)
        torch.cuda.synchronize()
        if r:
            times.append((time.perf_counter() - t0) * 1e3)
    med = statistics.median(times)
    print(json.dumps({"bench": "torch_groupby", "torch": torch.__version__, "rows": n,
                      "groups": g, "time_ms": round(med, 3), "min_ms": round(min(times), 3),
                      "max_ms": round(max(times), 3), "sum": int(sums.sum()),
                      "count": int(counts.sum()), "device": torch.cuda.get_device_name()}))


if __name__ == "__main__":
    main()
