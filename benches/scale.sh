#!/usr/bin/env bash
# Whole frames at the sizes of the billion-triangle work: bunny grids of 104 M, 403 M and 1.0 G
# triangles at 1920x1080, the 104 M and 1.0 G grids at 3840x2160, and a thousand instances of a mesh of a
# million triangles (one mesh held once, 1.0 G triangles drawn), the hashing strategy, through
# `rxpipe bench frame`, then 2 G triangles instanced and unique (its JSON and markdown reports into OUT_DIR, the 1 G grid in runs of its
# own, with each run's wall time and the host's peak memory in OUT_DIR/wall.txt). With a .gl folder prepared as
# ../shared/anchors/README.md says, the hardware OpenGL pipeline draws grids of as many bunnies
# too, those of $GL_GRIDS (default "50x30 100x58 120x120 240x120": 1,500, 5,800, 14,400 and
# 28,800 copies, laid out otherwise than rxpipe's grids) through benches/gl-grid.py (hw_anchor.py's
# grid, camera and shaders, drawn in chunks of copies: one draw stops at 2^31 indices) into
# OUT_DIR/gl-grid-COLSxROWS.json and .png.
#
# usage: benches/scale.sh RXPIPE OUT_DIR
# Meshes are looked for in $RXPIPE_MESHES (else ../shared/meshes).
set -uo pipefail
exe=$1 out=$2
mkdir -p "$out"
bad=0
run() {
  local name=$1
  shift
  /usr/bin/time -f "$name: wall %e s, host peak %M KB" -a -o "$out/wall.txt" \
    "$exe" bench frame --strategies hash --runs 5 --warmup 2 --json \
    --markdown "$out/$name.md" "$@" >"$out/$name.json" 2>"$out/$name.err" || {
    echo "$name failed: $(tail -1 "$out/$name.err")" >&2
    bad=1
  }
}
run frame-1080p --meshes bunny-grid:1500,bunny-grid:5800
run frame-1g --meshes bunny-grid:14400
run frame-2160p --meshes bunny-grid:1500 --size 3840x2160
run frame-1g-2160p --meshes bunny-grid:14400 --size 3840x2160
run frame-instances --meshes 'rings:1000000*1000'
# two billion triangles: instanced, and unique (a grid of several objects: past 32-bit indices)
run frame-instances-2g --meshes 'rings:1000000*2000'
run frame-2g --meshes bunny-grid:28800
if [[ -d .gl ]]; then
  for grid in ${GL_GRIDS:-50x30 100x58 120x120 240x120}; do
    python3 benches/gl-grid.py --anchors .gl --frames 10 --grid "$grid" \
      --out "$out/gl-grid-$grid.json" --png "$out/gl-grid-$grid.png" >"$out/gl-$grid.log" 2>&1 || {
      echo "OpenGL $grid failed: $(tail -1 "$out/gl-$grid.log")" >&2
      bad=1
    }
  done
fi
exit $bad
