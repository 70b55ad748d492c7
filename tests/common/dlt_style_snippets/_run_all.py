"""Runs the snippets named on the command line one after another in this process, each as `__main__`."""
import runpy
import sys
import traceback

for name in sys.argv[1:]:
    print(f"SNIPPET {name}", flush=True)
    try:
        runpy.run_path(f"{name}.py", run_name="__main__")
    except BaseException:
        print(f"FAILED {name}: " + traceback.format_exc().replace("\n", " | "), flush=True)
