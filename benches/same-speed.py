#!/usr/bin/env python3
"""Compares the frame reports benches/same-speed.sh wrote: for each row (backend, mesh, strategy,
shading) the median over rounds of each build's frame time, and new / old. Prints a markdown
table and the largest departure; exits non-zero when a row moves by more than the tolerance.

usage: benches/same-speed.py OUT_DIR [TOLERANCE]   (default 0.03: 3%)
"""
import glob
import json
import os
import statistics
import sys

out = sys.argv[1]
tolerance = float(sys.argv[2]) if len(sys.argv) > 2 else 0.03
times = {}  # (backend, mesh, strategy, shading) -> {"old": [...], "new": [...]}
devices = set()
for path in sorted(glob.glob(os.path.join(out, "*-*-*.json"))):
    which, backend, _ = os.path.basename(path)[:-5].split("-")
    with open(path) as f:
        report = json.load(f)
    devices.add(report.get("device", "?"))
    for row in report["rows"]:
        key = (backend, os.path.basename(row["mesh"]), row["strategy"], row.get("shading", "lit"))
        times.setdefault(key, {"old": [], "new": []})[which].append(row["frame_ms"])

print(f"device: {', '.join(sorted(devices))}\n")
print("| backend | mesh | strategy | shading | old ms | new ms | new / old |")
print("|---|---|---|---|---:|---:|---:|")
worst = (1.0, None)
for key, t in sorted(times.items()):
    if not t["old"] or not t["new"]:
        continue
    old, new = statistics.median(t["old"]), statistics.median(t["new"])
    ratio = new / old
    if abs(ratio - 1) > abs(worst[0] - 1):
        worst = (ratio, key)
    print(f"| {' | '.join(key)} | {old:.4f} | {new:.4f} | {ratio:.3f} |")
print(f"\nlargest departure: {worst[0]:.3f} ({' '.join(worst[1]) if worst[1] else '-'})")
sys.exit(0 if worst[1] is None or abs(worst[0] - 1) <= tolerance else 1)
