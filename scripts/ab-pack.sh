#!/usr/bin/env bash
# A second build beside .gpu/, so that one device call can time two revisions on the same machine (host-time
# figures scatter more from machine to machine than the changes they are meant to show). Run here, after
# ../shared/gpu-host/pack: builds REV in a temporary worktree (offline, no tests, no javadoc) and writes its
# modules' jars and test classes into .gpu-b/ (about 5 MB; .gpu/ and .gpu-b/ must travel together: carry both).
# There, scripts/ab-run.sh runs a command on that build the way .gpu/run runs it on the working tree's.
#   scripts/ab-pack.sh REV
set -euo pipefail
rev=${1:?usage: scripts/ab-pack.sh REV (a commit, branch or tag)}
root=$(git rev-parse --show-toplevel)
cd "$root"
[[ -x .gpu/run ]] || { echo "ab-pack: no .gpu/ here: run ../shared/gpu-host/pack first" >&2; exit 2; }
tmp=$(mktemp -d)
wt=$tmp/b
git worktree add -q --detach "$wt" "$rev"
trap 'git worktree remove --force "$wt"; rm -rf "$tmp"' EXIT
(cd "$wt" && mvn -B -ntp -q -o package -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true)
rm -rf .gpu-b
for m in flexlink-core flexlink-native flexlink-bench; do
  mkdir -p ".gpu-b/$m"
  # the module's own jar only: not its tests, sources or javadoc, and not flexlink-bench's uber-jars, which
  # hold flexlink-core's classes too and would come first on the class path
  for j in "$wt/$m/target/$m-"*.jar; do
    case $j in *-tests.jar | *-sources.jar | *-javadoc.jar) ;; *) cp "$j" ".gpu-b/$m/" ;; esac
  done
  [[ -d $wt/$m/target/test-classes ]] && cp -r "$wt/$m/target/test-classes" ".gpu-b/$m/"
done
git rev-parse --short "$rev" > .gpu-b/REV
echo "ab-pack: .gpu-b holds $(cat .gpu-b/REV) ($(du -sh .gpu-b | cut -f1)); .gpu holds the working tree's build"
