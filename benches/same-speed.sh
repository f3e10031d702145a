#!/usr/bin/env bash
# Times two builds of the program with the same frame benchmark, in alternation (A B A B ...),
# so that a change that should cost nothing (a refactor, a move between crates) is checked
# against the build before it on the same machine in the same run. Writes each run's JSON report
# as OUT_DIR/{old,new}-{gpu,cpu}-K.json; benches/same-speed.py compares them.
#
# usage: benches/same-speed.sh OLD_RXPIPE NEW_RXPIPE OUT_DIR [ROUNDS] [BACKEND...]
#        (default: 2 rounds; backends cuda cpu)
# Meshes are looked for in $RXPIPE_MESHES, scenes in $RXPIPE_SCENES (else ../shared/...).
set -uo pipefail
old=$1 new=$2 out=$3 rounds=${4:-2}
shift $(($# < 4 ? $# : 4))
backends=("$@")
((${#backends[@]} == 0)) && backends=(cuda cpu)
scenes=${RXPIPE_SCENES:-../shared/scenes}
sponza=$scenes/sponza/Sponza.gltf
mkdir -p "$out"
bad=0
for b in "${backends[@]}"; do
  case $b in
    cuda) args=(--backend cuda --meshes "bunny,ogre,icosphere:9,bunny-grid:104,$sponza"
            --strategies naive,warp,hash,phash --runs 20) ;;
    cpu) args=(--backend cpu --meshes "bunny,$sponza" --strategies warp --shading lit,normals
           --size 1280x720 --runs 10) ;;
    *) echo "unknown backend $b" >&2; exit 2 ;;
  esac
  for ((k = 1; k <= rounds; k++)); do
    for which in old new; do
      exe=$old
      [[ $which == new ]] && exe=$new
      f=$out/$which-${b/cuda/gpu}-$k.json
      if ! "$exe" bench frame "${args[@]}" --json > "$f" 2> "$f.log"; then
        echo "FAILED $which $b round $k: $(tail -1 "$f.log")"
        bad=1
      fi
    done
  done
done
exit $bad
