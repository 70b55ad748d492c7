"""mkdocs hooks: the reference pages and the layer diagram, generated from lakeload's code at build time.

- `reference/configuration.md`: every section and key of the known-keys registry (`lakeload.config.known_keys`),
  with its type, default and description (`lakeload.runtime.key_reference`; credential fields:
  `lakeload.config.key_docs`) and its environment variable (`lakeload.config.resolver.env_name`).
- `reference/errors.md`: every `LakeloadError` subclass (and lakeload's warnings) with its docstring.
- `reference/cli.md`: the `--help` page of `lakeload` and of every subcommand (`lakeload.cli.main.build_parser`).
- `<!-- generated: layers -->` in a page becomes a Mermaid diagram of the import-linter `layers` contract of
  `pyproject.toml`.

Nothing here is written into `docs/`: the pages exist only in the build (`File.generated`).
"""

from __future__ import annotations

import argparse
import html
import inspect
import io
import os
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import tomllib
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parent.parent
LAYERS_MARKER = "<!-- generated: layers -->"


# --- configuration keys ---------------------------------------------------------------------------------------


def _code(text: str) -> str:
    """Inline code for a table cell: HTML, with `|` as an entity so that it does not split the cell."""
    return "<code>" + html.escape(text).replace("|", "&#124;") + "</code>"


def _cell(text: str) -> str:
    """Table cell text: `|` as an entity so that it does not split the cell."""
    return text.replace("|", "&#124;")


def _row(key: str, doc: Any, env: str) -> str:
    """One table row: key, type, default (code, or a computed default in words, or —), env var, description."""
    default = doc.default if doc.default.startswith("(") else _code(doc.default) if doc.default else "—"
    return f"| `{key}` | {_code(doc.type)} | {_cell(default)} | `{env}` | {_cell(doc.doc)} |"


def _walk(sections: tuple[str, ...], spec: Any) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every section spec below `spec` (itself first), with its path; `*` stands for a name you choose."""
    yield sections, spec
    for name, child in sorted(spec.nested.items()):
        if name == "credentials" or name == "working_credentials":
            continue  # credential fields: a table of their own, by protocol
        yield from _walk((*sections, name), child)
    if spec.any_child is not None and sections:
        yield from _walk((*sections, "<name>"), spec.any_child)


def configuration_page() -> str:
    """The configuration reference: every key of `known_keys.root()` with its `KeyDoc`
    (`lakeload.runtime.key_reference`), and the credential fields of the typed credential classes."""
    from lakeload.config.bucket_credentials import credential_classes
    from lakeload.config.key_docs import KeyDoc, credential_key_docs
    from lakeload.config.known_keys import DLT_SECTIONS, USER_SECTIONS, root
    from lakeload.config.resolver import env_name
    from lakeload.runtime.key_reference import key_doc

    out = [
        "# Configuration keys",
        "",
        "Generated from the known-keys registry (`lakeload/config/known_keys.py`) and the key documentation",
        "(`lakeload/runtime/key_reference.py`, defaults read from the code that applies them) when the site is built.",
        "Every key is read from, most specific first: an explicit argument, the environment variable,",
        "`.lakeload/secrets.toml`, `.lakeload/config.toml`, `~/.lakeload/secrets.toml`, `~/.lakeload/config.toml` (see",
        "[Configuration](../configuration.md)). Each key can also be scoped to one pipeline: `[<pipeline>.<section>]`",
        "in TOML, `<PIPELINE>__<SECTION>__<KEY>` in the environment; pipeline-scoped keys win.",
        "",
        "Defaults are written as in TOML; — means unset (the feature is off, or the value comes from elsewhere as the",
        "description says). Type *table* is a TOML table (or a JSON object in an environment variable), passed on as",
        "it is; *table or str* holds credentials: the fields of the bucket's protocol, listed under",
        "[Credentials](#credentials), or one native string.",
        "",
    ]
    for sections, spec in _walk((), root()):
        keys = sorted(spec.keys | set(spec.nested))
        if not sections or not keys:
            continue
        title = ".".join(sections)
        out += [f"## `[{title}]`", ""]
        if spec.any_child is not None:
            out += [f"`<name>` below is any destination name, e.g. `[{title}.filesystem]`; the keys of `[{title}]` "
                    "itself apply to every destination that does not set them.", ""]
        out += ["| key | type | default | environment variable | description |", "|---|---|---|---|---|"]
        for key in keys:
            doc = key_doc(sections, key)
            if doc is None and key in spec.nested:  # a sub-section with keys of its own
                doc = KeyDoc("section", "", f"Keys of its own: see `[{title}.{key}]` below.")
            if doc is None:
                raise ValueError(f"[{title}] {key} has no KeyDoc in lakeload/runtime/key_reference.py")
            out.append(_row(key, doc, env_name((*sections, key))))
        out.append("")
        if spec.dlt_keys:
            out += [f"Read by dlt here and accepted without a warning: {', '.join(f'`{k}`' for k in sorted(spec.dlt_keys))}.", ""]
    out += [
        "## Credentials",
        "",
        "The fields of the typed credential classes (`lakeload/config/bucket_credentials/`), by bucket protocol. They",
        "go under `[destination.filesystem.credentials]` (or `[destination.credentials]`),",
        "`[sources.filesystem.credentials]` and `[spark.working_credentials]`; the environment variables shown are",
        "the destination's, the other sections follow the same rule (`SOURCES__FILESYSTEM__CREDENTIALS__<FIELD>`,",
        "`SPARK__WORKING_CREDENTIALS__<FIELD>`).",
        "",
    ]
    docs = credential_key_docs()
    for cls in credential_classes():
        out += [
            f"### {cls.backend}: `{cls.__name__}` ({', '.join(f'`{p}://`' for p in cls.protocols)})",
            "",
            "| field | type | default | environment variable | description |",
            "|---|---|---|---|---|",
        ]
        for name in cls.field_names():
            out.append(_row(name, docs[name], env_name(("destination", "filesystem", "credentials", name))))
        out.append("")
    patterns = ", ".join("`[" + ".".join(p) + "]`" for p in USER_SECTIONS)
    out += [
        "## Sections that are yours or dlt's",
        "",
        f"Keys under {patterns} are the arguments of your sources and resources (see [Sources](../sources.md)).",
        f"dlt's top-level sections that lakeload does not read, never reported as typos: {', '.join(f'`[{s}]`' for s in sorted(DLT_SECTIONS))}.",
        "",
    ]
    return "\n".join(out)


# --- errors ---------------------------------------------------------------------------------------------------


def _doc(obj: Any) -> str:
    return inspect.cleandoc(obj.__doc__ or "").strip() or "(no docstring)"


def errors_page() -> str:
    """Every `LakeloadError` subclass of `lakeload.errors`, as a tree, with its docstring (what to do)."""
    import lakeload.errors as errors

    classes = {
        name: value for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, (errors.LakeloadError, Warning)) and value.__module__.startswith("lakeload")
    }
    out = [
        "# Errors",
        "",
        "Generated from `lakeload.errors` when the site is built. Every error lakeload raises derives from",
        "`lakeload.LakeloadError`; each class's message names what went wrong and how to fix it. A failed step raises",
        "`PipelineStepFailed`, which is also the step's own error class and its cause's (see",
        "[Operations](../operations.md)).",
        "",
    ]
    for name in sorted(classes, key=lambda n: (not issubclass(classes[n], errors.LakeloadError), n)):
        cls = classes[name]
        bases = ", ".join(f"`{b.__name__}`" for b in cls.__bases__)
        out += [f"## `{name}`", "", f"Derives from {bases}.", "", _doc(cls), ""]
    return "\n".join(out)


# --- command line ---------------------------------------------------------------------------------------------


def _parsers(parser: argparse.ArgumentParser, prog: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, f"{prog} {name}")


def cli_page() -> str:
    """`lakeload --help` and every subcommand's, from the argparse parser the command uses."""
    from lakeload.cli.main import build_parser

    os.environ["COLUMNS"] = "110"
    out = ["# Command line", "", "Generated from `lakeload.cli.main.build_parser()` when the site is built: the",
           "`--help` page of every command. See [Command line and dashboard](../cli.md) for what they are for.", ""]
    for prog, parser in _parsers(build_parser(), "lakeload"):
        buffer = io.StringIO()
        with redirect_stdout(buffer):
            parser.print_help()
        out += [f"## `{prog}`", "", "```text", buffer.getvalue().rstrip(), "```", ""]
    return "\n".join(out)


# --- the layer diagram ----------------------------------------------------------------------------------------


def layers_mermaid() -> str:
    """The `layers` contract of `[tool.importlinter]` as a Mermaid flowchart, top layer first."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(c for c in project["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    lines = ["```mermaid", "flowchart TD"]
    for index, layer in enumerate(contract["layers"]):
        modules = [m.strip() for m in layer.split("|")]
        label = " | ".join(modules)
        lines.append(f'    L{index}["{label}"]')
        if index:
            lines.append(f"    L{index - 1} --> L{index}")
    lines.append("```")
    return "\n".join(lines)


# --- mkdocs events --------------------------------------------------------------------------------------------

GENERATED = {
    "reference/configuration.md": configuration_page,
    "reference/errors.md": errors_page,
    "reference/cli.md": cli_page,
}


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path, make in GENERATED.items():
        files.append(File.generated(config, path, content=make()))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if LAYERS_MARKER in markdown:
        markdown = markdown.replace(LAYERS_MARKER, layers_mermaid())
    return markdown
