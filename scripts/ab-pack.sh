#!/usr/bin/env bash
# A second build beside .gpu/, so that one device call can time two revisions on the same machine (host-time
# figures scatter more from machine to machine than the changes they are meant to show). Run here, after
# ../shared/gpu-host/pack: builds REV in a temporary worktree (offline, no tests, no javadoc) and writes its
# modules' jars and test classes into .gpu-b/ (about 2 MB; .gpu/ and .gpu-b/ must travel together: carry both).
# There, scripts/ab-run.sh runs a command on that build the way .gpu/run runs it on the working tree's.
# AB_DIR names another folder than .gpu-b, for a third build beside the two (AB_DIR=.gpu-c scripts/ab-pack.sh
# main); give the same AB_DIR to ab-run.sh and host-cost-ab.sh there, and carry that folder too.
# FILEs (paths from the project root, test sources) are copied from the working tree into REV's tree before
# it is built: a harness written later than REV then runs on both builds, for example
#   scripts/ab-pack.sh 7412700 flexlink-native/src/test/java/io/flexlink/cuda/bench/{PathRate,HostGate}.java
# A revision whose build plugins this machine has not cached yet is built online.
#   scripts/ab-pack.sh REV [FILE...]
set -euo pipefail
dir=${AB_DIR:-.gpu-b}
[[ $dir == .gpu-* && $dir != */* ]] || { echo "ab-pack: AB_DIR=$dir: a folder .gpu-NAME in the project root" >&2; exit 2; }
rev=${1:?usage: scripts/ab-pack.sh REV [FILE...] (a commit, branch or tag; test sources to add)}
shift
root=$(git rev-parse --show-toplevel)
cd "$root"
[[ -x .gpu/run ]] || { echo "ab-pack: no .gpu/ here: run ../shared/gpu-host/pack first" >&2; exit 2; }
tmp=$(mktemp -d)
wt=$tmp/b
git worktree add -q --detach "$wt" "$rev"
trap 'git worktree remove --force "$wt"; rm -rf "$tmp"' EXIT
for f in "$@"; do
  [[ $f != /* ]] || { echo "ab-pack: $f: give the path from the project root" >&2; exit 2; }
  [[ -f $f ]] || { echo "ab-pack: no file $f in the working tree" >&2; exit 2; }
  mkdir -p "$wt/$(dirname "$f")" && cp "$f" "$wt/$f"
done
build=(package -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true)
(cd "$wt" && { mvn -B -ntp -q -o "${build[@]}" || mvn -B -ntp -q "${build[@]}"; })
rm -rf "$dir"
for m in flexlink-core flexlink-native flexlink-bench; do
  mkdir -p "$dir/$m"
  # the module's own jar only: not its tests, sources or javadoc, and not flexlink-bench's uber-jars, which
  # hold flexlink-core's classes too and would come first on the class path
  for j in "$wt/$m/target/$m-"*.jar; do
    case $j in *-tests.jar | *-sources.jar | *-javadoc.jar) ;; *) cp "$j" "$dir/$m/" ;; esac
  done
  [[ -d $wt/$m/target/test-classes ]] && cp -r "$wt/$m/target/test-classes" "$dir/$m/"
done
git rev-parse --short "$rev" > "$dir/REV"
if [[ $# -gt 0 ]]; then
  echo "ab-pack: added to $(cat "$dir/REV"): $*"
fi
echo "ab-pack: $dir holds $(cat "$dir/REV") ($(du -sh "$dir" | cut -f1)); .gpu holds the working tree's build"
