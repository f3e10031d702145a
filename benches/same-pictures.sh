#!/usr/bin/env bash
# Renders every scene (this repository's and the shared glTF scenes) with two builds of the
# program and compares the images byte for byte: a change that should not move a pixel (a
# refactor, a move between crates) is checked with it.
#
# usage: benches/same-pictures.sh OLD_RXPIPE NEW_RXPIPE OUT_DIR [BACKEND...]   (default: cpu cuda)
# Scenes are looked for in $RXPIPE_SCENES, else ../shared/scenes. Prints one line per picture and
# exits non-zero when any differs or fails to render.
set -uo pipefail
old=$1 new=$2 out=$3
shift 3
backends=("${@:-cpu}")
(($# == 0)) && backends=(cpu cuda)
shared=${RXPIPE_SCENES:-../shared/scenes}
scenes=(scenes/default.toml scenes/textured/textured.gltf)
for g in "$shared"/*/*.gltf; do [[ -f $g ]] && scenes+=("$g"); done
mkdir -p "$out"
bad=0
for b in "${backends[@]}"; do
  for s in "${scenes[@]}"; do
    name=$(basename "${s%.*}")-$b
    for which in old new; do
      exe=$old
      [[ $which == new ]] && exe=$new
      if ! "$exe" render "$s" --backend "$b" --width 640 --height 360 --force \
        --out "$out/$name-$which.png" > "$out/$name-$which.log" 2>&1; then
        echo "FAILED  $name ($which): $(tail -1 "$out/$name-$which.log")"
        bad=1
        continue 2
      fi
    done
    if cmp -s "$out/$name-old.png" "$out/$name-new.png"; then
      echo "same    $name"
    else
      echo "DIFFERS $name"
      bad=1
    fi
  done
done
exit $bad
