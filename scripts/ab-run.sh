#!/usr/bin/env bash
# On the GPU host: runs a command of .gpu/run (test | java MAIN [args] | jar PATH [args]) on the second build
# that scripts/ab-pack.sh wrote into .gpu-b/ (or AB_DIR): the same runtime, libraries and launcher, that build's
# modules.
# Alternate it with .gpu/run in one device call to compare two revisions on one machine, e.g.
#   for t in 1 2 3; do bash .gpu/run java io.flexlink.cuda.EightByteLayers 1.5 1
#                      bash scripts/ab-run.sh java io.flexlink.cuda.EightByteLayers 1.5 1; done
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/${AB_DIR:-.gpu-b}
[[ -f $dir/REV ]] || { echo "ab-run: no $dir/REV (scripts/ab-pack.sh REV, then carry that folder)" >&2; exit 2; }
b=${TMPDIR:-/tmp}/$(basename "$dir")-$(cat "$dir/REV")
if [[ ! -x $b/run ]]; then
  rm -rf "$b" && mkdir -p "$b"
  for f in lib console jre.tar.xz; do ln -s "$root/.gpu/$f" "$b/$f"; done
  cp "$root/.gpu/run" "$b/run"
fi
# the modules every time (a few MB): one REV may be packed again with other harness files added
rm -rf "$b/modules" && mkdir -p "$b/modules"
for m in "$dir"/*/; do cp -r "$m" "$b/modules/"; done
exec bash "$b/run" "$@"
