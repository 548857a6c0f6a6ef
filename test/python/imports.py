# RUN: %python %s | FileCheck %s
# Every module of the tq package imports (the demo, the model scripts, the
# drivers): a name a script uses and another module no longer defines
# fails here, not first on a user's machine.
import importlib
import pkgutil

import tq
import tq.models

names = sorted(m.name for pkg in (tq, tq.models)
               for m in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + "."))
failed = []
for name in names:
    try:
        importlib.import_module(name)
    except Exception as e:  # report every module, then fail
        failed.append(f"{name}: {type(e).__name__}: {e}")
print(f"modules: {len(names)}, failed: {len(failed)}")
for line in failed:
    print("FAILED", line)
# CHECK: modules: {{[1-9][0-9]*}}, failed: 0
# CHECK-NOT: FAILED
