#!/usr/bin/env bash
# Lists the Debian packages the build and the test suite really use, and
# checks that `scripts/install-deps.sh` (the groups the test suite installs:
# base, node, audio) names each of them (directly, or as a
# dependency of a package it names).
#
#   scripts/list-deps.sh [--tests]
#
# How the list is made:
#   - headers: `ninja -t deps` on build/ (every header each object read);
#   - libraries: the shared objects of build/bin and build/lib (`ldd`) and
#     the libraries on the link lines (`ninja -t commands`);
#   - tools and files used at test time (with --tests): the whole test
#     suite runs under `strace -f -e trace=execve,openat`, and every file
#     under /usr that it executed or opened is kept;
# then `dpkg -S` maps each file to its package. A package counts as covered
# if it is in the closure of Depends/PreDepends of the packages that
# install-deps.sh names, or has priority "required" (always on Debian).
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
[ "${1:-}" = --tests ] && with_tests=1

scripts/install-deps.sh base node audio >/dev/null
[ -f build/build.ninja ] || scripts/build.sh >/dev/null
work=$(mktemp -d -t tq-list-deps.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Headers read by the compiler.
ninja -C build -t deps | grep -E '^ +/usr/' | sed 's/^ *//' >"$work/files"
# Libraries on the link lines and loaded by the binaries.
ninja -C build -t commands | tr ' ' '\n' | grep -E '^/usr/.*\.(so|a)(\.[0-9.]+)?$' \
  >>"$work/files" || true
for f in build/bin/* build/lib/*.so*; do
  [ -f "$f" ] && ldd "$f" 2>/dev/null | grep -oE '/(usr/)?lib[^ ]+' >>"$work/files" || true
done
# The compilers themselves.
echo /usr/bin/clang++-22 /usr/bin/ld.lld-22 /usr/bin/ninja /usr/bin/cmake \
  /usr/bin/ccache | tr ' ' '\n' >>"$work/files"

if [ "$with_tests" = 1 ]; then
  scripts/install-deps.sh trace >/dev/null
  echo "list-deps: running the test suite under strace (a few minutes)" >&2
  # LeakSanitizer cannot run under ptrace: the ASan tests skip leak checks.
  ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=execve,openat \
    -o "$work/trace" scripts/run-tests.sh >"$work/tests.log" 2>&1 || true
  tail -1 "$work/tests.log" >&2
  grep -v ENOENT "$work/trace" | grep -oE '"/usr/[^"]+"' | tr -d '"' >>"$work/files"
fi

# Resolve symlinks so dpkg -S finds the owner; keep the first hit per file.
# Files that programs read only when they exist: glibc's locale aliases,
# OpenSSL's configuration, Python's site hooks (.pth files of whatever is
# installed). Their packages are not dependencies; they are listed apart.
OPTIONAL_FILES='^(/usr/share/locale/locale\.alias|/usr/lib/ssl/openssl\.cnf|/etc/ssl/openssl\.cnf|/usr/lib/python3/dist-packages/[^/]+\.pth)$'
grep -E "$OPTIONAL_FILES" "$work/files" | sort -u >"$work/optional" || true
grep -vE "$OPTIONAL_FILES" "$work/files" >"$work/files.kept" || true
mv "$work/files.kept" "$work/files"

# With the merged /usr of Debian 12, dpkg may know a file as /lib/... or
# /bin/...: ask for both spellings.
sort -u "$work/files" | while read -r f; do
  [ -f "$f" ] || continue # directories belong to many packages
  for p in "$f" "$(readlink -f "$f")"; do
    echo "$p"
    case "$p" in /usr/lib/* | /usr/bin/* | /usr/sbin/*) echo "${p#/usr}" ;; esac
  done
done | sort -u >"$work/paths"
{ xargs -a "$work/paths" -d '\n' dpkg -S 2>/dev/null || true; } |
  grep -v '^diversion' | sed -E 's#: /.*$##' | tr ',' '\n' |
  sed 's/^ *//' | sort -u >"$work/used"

# What install-deps.sh names, and the closure of their dependencies.
named=$(scripts/install-deps.sh --list base node audio | sort -u)
apt-cache depends --recurse --installed --no-recommends --no-suggests \
  --no-conflicts --no-breaks --no-replaces --no-enhances $named 2>/dev/null |
  grep -vE '^ ' | sed 's/:amd64$//' | sort -u >"$work/closure"
dpkg-query -W -f='${Package} ${Priority}\n' | awk '$2=="required"{print $1}' |
  sort -u >"$work/required"

printf '%-28s %s\n' package "how install-deps.sh covers it"
status=0
while read -r p; do
  base=${p%:amd64}
  if grep -qx "$base" <<<"$named"; then how="named"
  elif grep -qx "$base" "$work/closure"; then how="dependency of a named package"
  elif grep -qx "$base" "$work/required"; then how="priority required (always present)"
  else how="MISSING"; status=1
  fi
  printf '%-28s %s\n' "$base" "$how"
done <"$work/used"
while read -r f; do
  printf '%-28s %s\n' "($(dpkg -S "$f" 2>/dev/null | cut -d: -f1))" \
    "read only if present: $f"
done <"$work/optional"
exit $status
