#!/usr/bin/env python3
"""Checks the floors `sluice bench` reports (docs/BENCH_PROTOCOL.md, "Floors"):
- a tiny sort probes 64 MiB, not 1 GiB (it took 3.6 s for 2^10 rows before);
- CPU runs use the host memory floor; k-means never reaches more GFLOP/s than the FMA
  peak it measured, and no run beats its floor;
- with a usable GPU also: host-resident input gets the link floor (a sort's: up + down),
  GPU-resident input the device copy floor, and host-resident k-means adds the upload to its floor.

usage: check_floors.py SLUICE
"""
import json
import subprocess
import sys

SLUICE = sys.argv[1]
MiB = 1 << 20


def bench(*args):
    p = subprocess.run([SLUICE, "bench", *args, "--json"], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        sys.exit(f"sluice bench {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def expect(cond, what, line):
    if not cond:
        sys.exit(f"check_floors: {what}: {json.dumps(line)}")


def floor_ok(j, kind):
    expect(j.get("floor") == kind, f"floor is {j.get('floor')!r}, expected {kind!r}", j)
    expect(j["floor_ms"] > 0, "no floor measured", j)
    expect(j["time_ms"] >= j["floor_ms"], "a run beat its floor", j)


def main():
    j = bench("sort", "--rows", "2^10", "--repeat", "1")
    expect(j["probe_bytes"] == 64 * MiB, "a 2^10-row sort must probe 64 MiB", j)
    floor_ok(j, "memory")
    j = bench("sort", "--rows", "2^24", "--repeat", "1", "--payloads", "0")
    expect(j["probe_bytes"] == 256 * MiB, "2^24 4-byte keys: probe twice the 128 MiB moved", j)
    floor_ok(bench("aggregate", "--rows", "2^14", "--repeat", "1"), "memory")
    floor_ok(bench("join", "--build-rows", "2^14", "--probe-rows", "2^14", "--repeat", "1"),
             "memory")
    floor_ok(bench("partition", "--rows", "2^14", "--repeat", "1"), "memory")
    # The FMA peak is one short measurement: on a loaded machine it can come out below
    # the k-means' best repeat. A miscounted floor is above it every time, so only three
    # misses in a row fail.
    for attempt in range(3):
        k = bench("kmeans", "--points", "2^15", "--k", "64", "--iters", "3", "--repeat", "3")
        if k["fma_gflops"] <= 0 or k["gflops"] <= k["fma_gflops"]:  # 0: no AVX2 + FMA
            break
    if k["fma_gflops"] > 0:
        expect(k["gflops"] <= k["fma_gflops"], "k-means above the FMA peak (3 tries)", k)
        floor_ok(k, "fma")
    devs = json.loads(subprocess.run([SLUICE, "devices", "--json"], capture_output=True,
                                     text=True, timeout=60).stdout)["devices"]
    if not any(d["kind"] != "cpu" and d["usable"] for d in devs):
        print("check_floors: CPU floors right; no usable GPU, GPU floors not checked")
        return
    gpu = ("--placement", "gpu", "--repeat", "1")
    s = bench("sort", "--rows", "2^20", *gpu)
    floor_ok(s, "link")
    # a sort's first row needs its last input row: up, then down
    b = s["rows"] * s["key_bytes"] * (1 + s["payloads"])
    serial = b / (s["floor_in_gbps"] * 1e6) + b / (s["floor_out_gbps"] * 1e6)
    expect(abs(s["floor_ms"] - serial) <= 0.01 * serial + 1e-3, "sort link floor is not up + down", s)
    floor_ok(bench("sort", "--rows", "2^20", "--resident", "device", *gpu), "device_copy")
    floor_ok(bench("aggregate", "--rows", "2^20", "--resident", "pinned", *gpu), "link")
    floor_ok(bench("aggregate", "--rows", "2^20", "--resident", "device", *gpu), "device_copy")
    join = ("join", "--build-rows", "2^20", "--probe-rows", "2^20")
    floor_ok(bench(*join, *gpu), "link")
    floor_ok(bench(*join, "--resident", "device", *gpu), "device_copy")
    k = bench("kmeans", "--points", "2^20", "--iters", "3", *gpu)
    expect(k["upload_floor_ms"] > 0, "host-resident k-means: no upload in the floor", k)
    expect(k["time_ms"] >= k["floor_ms"], "a run beat its floor", k)
    k = bench("kmeans", "--points", "2^20", "--iters", "3", "--resident", "device", *gpu)
    expect(k["upload_floor_ms"] == 0, "GPU-resident k-means: an upload in the floor", k)
    print("check_floors: CPU and GPU floors right")


if __name__ == "__main__":
    main()
