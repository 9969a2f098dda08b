"""Each app reads another app only through its `selectors` and writes through its `services`.

The apps are papers, ontology, advisor, knowledge and frontend. An app's module may import, of another
app, only `<app>.selectors` and `<app>.services` (and names from them; never a module below them):
models, parsers, helpers and data files stay private to the app that owns them. Outside the rule:
`infrawiki/` is the project (settings, bootstrap, shared helpers: any app may import it), `inference/`
is a Django-free library (any app may import it, it imports no app), and `tests/` and `benchmarks/` are
tools that look inside apps on purpose.

Three ways round the rule are refused as well: `apps.get_model` (a model reached by name, which no
import statement shows), and a file path into another app's folder (a string literal such as
"ontology/data/techniques.json", or a `path / "ontology"` join). Read statically: no code runs.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

APPS = ("advisor", "frontend", "knowledge", "ontology", "papers")
LIBRARIES = ("inference",)  # Django-free: any app may import it; it may import no app
PUBLIC = ("selectors", "services")


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _owner(module: str) -> str:
    return module.split(".", 1)[0]


def _allowed(target: str, importer_app: str, apps: tuple[str, ...]) -> bool:
    """True when `target` (a dotted module name, or module.name) may be imported from `importer_app`."""
    app = _owner(target)
    if app not in apps or app == importer_app:
        return True
    parts = target.split(".")
    return len(parts) == 2 and parts[1] in PUBLIC


def _imports(tree: ast.AST, module: str, is_package: bool, root: Path) -> list[tuple[int, str]]:
    """(line, dotted target) for every import statement; `from a.b import c` yields a.b.c when c is a
    module (a file or package under root), else a.b (a name defined in a.b)."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                as_path = root / Path(*sub.split("."))
                is_module = as_path.with_suffix(".py").is_file() or (as_path / "__init__.py").is_file()
                found.append((node.lineno, sub if is_module else base))
    return found


def _path_literals(tree: ast.AST, own: str, apps: tuple[str, ...], root: Path) -> list[tuple[int, str]]:
    """(line, text) for each file path into another app: a string naming an existing file or folder
    below another app's folder, or a `/` join with another app's name."""
    found: list[tuple[int, str]] = []
    others = [a for a in apps if a != own]
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.strip().lstrip("./")
            head = text.split("/", 1)[0]
            rest = text.partition("/")[2].strip("/")
            if head in others and rest and (root / text).exists():
                found.append((node.lineno, f"path literal {node.value!r} into {head}/"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            for side in (node.left, node.right):
                if isinstance(side, ast.Constant) and side.value in others:
                    found.append((node.lineno, f"path join with {side.value!r} into {side.value}/"))
    return found


def _get_model_uses(tree: ast.AST) -> list[int]:
    """Lines that reach for `get_model` on anything (django.apps.apps under any name, an AppConfig)."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute | ast.alias) and getattr(node, "attr", getattr(node, "name", "")) == "get_model"]


def violations(root: Path, apps: tuple[str, ...] = APPS, libraries: tuple[str, ...] = LIBRARIES) -> list[Violation]:
    """Every breach of the layer rule in the apps and libraries under `root`."""
    found: list[Violation] = []
    for owner in (*apps, *libraries):
        for path in sorted((root / owner).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            rel = path.relative_to(root)
            parts = list(rel.with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            module = ".".join(parts[:-1] if is_package else parts)
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for line, target in _imports(tree, module, is_package, root):
                if owner in libraries and _owner(target) in apps:
                    found.append(Violation(str(rel), line, f"library {owner} imports app module {target}"))
                elif owner in apps and not _allowed(target, owner, apps):
                    found.append(Violation(str(rel), line, f"imports {target} (only {_owner(target)}.selectors "
                                                           f"and {_owner(target)}.services may be imported)"))
            found.extend(Violation(str(rel), line, "apps.get_model reaches a model past the imports")
                         for line in _get_model_uses(tree))
            found.extend(Violation(str(rel), line, what) for line, what in _path_literals(tree, owner, apps, root))
    return found


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def test_the_checker_finds_each_kind_of_planted_violation(tmp_path: Path):
    root = _tree(tmp_path, {
        "alpha/__init__.py": "", "alpha/models.py": "", "alpha/selectors.py": "", "alpha/services/__init__.py": "",
        "alpha/services/inner.py": "", "alpha/data/x.json": "{}",
        "beta/__init__.py": "",
        "beta/good.py": "from alpha.selectors import a\nfrom alpha import services\nimport alpha.selectors\n"
                        "from . import helpers\nfrom beta.helpers import b\nimport infrawiki.env\n",
        "beta/helpers.py": "",
        "beta/bad_import.py": "from alpha.models import Thing\n",
        "beta/bad_submodule.py": "from alpha.services.inner import f\n",
        "beta/bad_function.py": "def f():\n    from alpha import models\n",
        "beta/bad_get_model.py": "from django.apps import apps\nM = apps.get_model('alpha', 'Thing')\n",
        "beta/bad_get_model_alias.py": "from django.apps import apps as registry\nM = registry.get_model('alpha.Thing')\n",
        "beta/bad_literal.py": "P = 'alpha/data/x.json'\n",
        "beta/bad_join.py": "from pathlib import Path\nP = Path('.') / 'alpha' / 'data'\n",
        "lib/__init__.py": "", "lib/bad.py": "from alpha.selectors import a\n",
    })
    found = violations(root, apps=("alpha", "beta"), libraries=("lib",))
    assert sorted({v.path for v in found}) == sorted([
        "beta/bad_import.py", "beta/bad_submodule.py", "beta/bad_function.py", "beta/bad_get_model.py",
        "beta/bad_get_model_alias.py", "beta/bad_literal.py", "beta/bad_join.py", "lib/bad.py"])
    assert any("alpha.services.inner" in v.what for v in found)
    assert any("get_model" in v.what for v in found)


def test_the_checker_passes_a_clean_tree(tmp_path: Path):
    root = _tree(tmp_path, {
        "alpha/__init__.py": "", "alpha/selectors.py": "", "alpha/services.py": "",
        "beta/__init__.py": "", "beta/views.py": "from alpha.services import s\nURL = 'alpha/<int:pk>/'\n",
    })
    assert violations(root, apps=("alpha", "beta"), libraries=()) == []


def test_apps_reach_each_other_only_through_selectors_and_services():
    found = violations(ROOT)
    assert not found, "layer violations:\n" + "\n".join(map(str, found))
