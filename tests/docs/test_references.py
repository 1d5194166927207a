"""A path named in a docstring, a comment or a doc page is a path of this
repository: `core/stream.py`, `a2a_grpc/app/serve.py`, `docs/replicas.md`,
`tests/integration/test_drain.py`. A path with a folder resolves from the
repository's root or from the package (`a2a_grpc/`); a bare file name
(`journal.py`) is some file's name in the tree. A rename that leaves a
reference behind fails here."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUFFIXES = r"(?:py|md|proto|js|cjs|html|css|toml|yml|go|cc)"
# a token that names a file: folders (optional) and a name with one of SUFFIXES
PATH = re.compile(rf"(?<![\w./:@-])((?:[\w-]+/)*[\w-]+\.{SUFFIXES})(?![\w/-])")
# where references are written (peers and examples of other languages are theirs)
READ = (".py", ".md", ".js", ".html", "Makefile", ".toml", ".yml")
# names that are not this repository's: other projects' files, file kinds
FOREIGN = {"a2a.proto", "a2a_v03.proto", "specification.md", "multi-tenancy.md", "setup.py",
           "conftest.py", "__init__.py", "index.md", "README.md", "go.mod", "package.json",
           "instruction.proto", "main.py", "app.py", "server.py", "client.py", "agent.py",
           "mkdocs.yml", "pyproject.toml", "run_tck.py", "__main__.py", "foo.py",
           "docs/topics/multi-tenancy.md", "specification/a2a.proto", "x.py", "CHANGELOG.md",
           "Node.js", "http.proto", "client.proto", "field_behavior.proto", "launch_stage.proto",
           "error_details.proto", "code.proto", "Ma2a.proto",
           "bridge.py"}  # a user's own, in test_wheel
# folders that are other projects' (googleapis, the conformance kit) or the reader's own
FOREIGN_FOLDERS = ("google/", "tests/mandatory/", "tests/optional/", "tck/", "protos/",
                   "Protos/", "DIR/", "sut/")
# pages that list another project's files (the conformance kits' tests)
ABOUT_OTHERS = ("conformance.md", "conformance-1.0-dev.md", "itk.md")


def tracked() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout
    return [ROOT / name for name in listed.split("\0") if name]


def prose(path: Path) -> str:
    """What a person wrote about the code: a page whole; of a module, its
    docstrings and comments (not its code, whose strings name files it makes)."""
    text = path.read_text(errors="replace")
    if path.suffix != ".py":
        return text
    kept: list[str] = []
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                kept.append(doc)
    kept += [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
             if t.type == tokenize.COMMENT]
    return "\n".join(kept)


def test_every_path_named_exists() -> None:
    files = [p for p in tracked() if p.exists()]
    names = {p.name for p in files}
    stale = []
    for path in files:
        if (not path.name.endswith(READ) or path.name in ABOUT_OTHERS
                or {"peers", "clients", "generated"} & set(path.parts)):
            continue
        text = prose(path)
        for match in PATH.finditer(text):
            ref = match.group(1)
            if ref in FOREIGN or ref.startswith(FOREIGN_FOLDERS):
                continue
            if "/" in ref:
                found = any((base / ref).exists() for base in
                            (ROOT, ROOT / "a2a_grpc", path.parent, ROOT / "docs"))
            else:
                found = ref in names
            if not found:
                stale.append(f"{path.relative_to(ROOT)}: {ref}")
    assert not stale, "paths that do not exist:\n" + "\n".join(stale)
