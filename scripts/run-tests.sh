#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, then runs
#   1. the unit tests and documentation checks (ctest, build/),
#   2. the lit suite (IR round trips, diagnostics, passes, numpy cross-check,
#      real models against onnxruntime),
#   3. both again with every tool and library built with ASan + UBSan
#      (build-asan/), including the corrupt-model importer test.
# Ends with one line "N passed, N failed" counting every test.
set -uo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh base node audio train || exit 1
scripts/build.sh || exit 1
# The published models of the real-model tests (cached, sha256-pinned).
# Without them those tests are reported as unsupported, and lit says why.
scripts/fetch-models.sh >/dev/null ||
  echo "run-tests: warning: scripts/fetch-models.sh failed; real-model tests are skipped"
TQ_SANITIZE=1 scripts/build.sh || exit 1

passed=0
failed=0
log=$(mktemp)

count_ctest() { # ctest's "N% tests passed, F tests failed out of T"
  local line total fails
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1)
  if [ -z "$line" ]; then failed=$((failed + 1)); return; fi
  total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
  fails=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")
  passed=$((passed + total - fails))
  failed=$((failed + fails))
}

echo "== unit tests and doc checks =="
ctest --test-dir build -E '^lit$' --output-on-failure 2>&1 | tee "$log"
count_ctest

# A test that hangs (a crash handler blocked on a corrupted heap, say)
# fails after 25 minutes instead of taking the whole run's time; the
# slowest takes about 5. lit's --timeout needs python3-psutil (base).
lit_timeout=1500

count_lit() { # lit -v prints one PASS:/FAIL: ... line per test
  local lp lf
  lp=$(grep -cE '^PASS: ' "$log")
  lf=$(grep -cE '^(FAIL|XPASS|UNRESOLVED|TIMEOUT): ' "$log")
  if [ "$lp" -eq 0 ] && [ "$lf" -eq 0 ]; then lf=1; fi
  passed=$((passed + lp))
  failed=$((failed + lf))
}

echo "== lit =="
/usr/lib/llvm-22/bin/lit -v --timeout=$lit_timeout build/test 2>&1 | tee "$log"
count_lit

# The ONNX conformance count (the lit test Integration/ONNX/conformance).
report=build/test/Integration/ONNX/Output/conformance.test.tmp
if [ -f "$report" ]; then tail -1 "$report"; fi

# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons memory it owns
# inline (in headers, so in our instrumented code too) and the
# uninstrumented libMLIR then touches it; those reports are false.
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
echo "== unit tests and doc checks under ASan + UBSan =="
ctest --test-dir build-asan -E '^lit$' --output-on-failure 2>&1 | tee "$log"
count_ctest

echo "== lit under ASan + UBSan =="
/usr/lib/llvm-22/bin/lit -v --timeout=$lit_timeout build-asan/test 2>&1 | tee "$log"
count_lit

rm -f "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
