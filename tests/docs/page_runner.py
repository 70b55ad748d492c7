"""Runs the examples of one documentation page in order, in this process, like the cells of a notebook.

    python page_runner.py blocks.json

`blocks.json` is a list of `{"where": "docs/x.md:12", "kind": "python" | "shell", "code": "..."}`. Python blocks run
in one namespace (a block uses what the blocks before it defined; `lakeload` is imported up front, as a page's
reader would have it); each line of a shell block that starts with `lakeload ` runs as `python -m lakeload.cli ...`
in the same folder. The first failing block ends the run with exit code 1, naming the block.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import traceback
from typing import Any


def shell_commands(code: str) -> list[list[str]]:
    """The `lakeload ...` command lines of a shell block, as argument lists (comments dropped, `$ ` prompts too)."""
    commands = []
    for line in code.splitlines():
        line = line.strip().removeprefix("$ ")
        if line.startswith("lakeload "):
            commands.append(shlex.split(line, comments=True))
    return commands


def run_shell(where: str, code: str) -> None:
    for command in shell_commands(code):
        print(f"--- {where}: $ {shlex.join(command)}", flush=True)
        result = subprocess.run([sys.executable, "-m", "lakeload.cli", *command[1:]], stdin=subprocess.DEVNULL,
                                timeout=300)
        if result.returncode != 0:
            raise RuntimeError(f"`{shlex.join(command)}` exited with {result.returncode}")


def main(path: str) -> int:
    with open(path, encoding="utf-8") as file:
        blocks: list[dict[str, str]] = json.load(file)
    import lakeload

    namespace: dict[str, Any] = {"__name__": "__main__", "lakeload": lakeload}
    for block in blocks:
        where = block["where"]
        print(f"--- {where} ({block['kind']})", flush=True)
        try:
            if block["kind"] == "python":
                exec(compile(block["code"], where, "exec"), namespace)  # noqa: S102 - running the docs is the point
            else:
                run_shell(where, block["code"])
        except BaseException:
            traceback.print_exc()
            print(f"DOCS EXAMPLE FAILED: {where}", flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
