"""The structure of the package: which of its modules import which, and docstrings with
every fragment filled in."""

import ast
import inspect
import re
from pathlib import Path

import pytest

import marginkit

PACKAGE = Path(marginkit.__file__).resolve().parent


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name, path):
    """The marginkit modules that the module ``name`` (at ``path``) imports, wherever the
    import statement stands (at the top, or inside a function)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from . import _checks`: the module _checks; `from .x import f`: x
            targets = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source
                for alias in node.names
            ]
        else:
            continue
        found |= {target for target in targets if target in MODULES and target != name}
    return found


GRAPH = {name: imported(name, path) for name, path in MODULES.items()}


def cycle_from(start):
    """A path of imports from ``start`` back to itself, or None."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(GRAPH[node]):
            if nxt == start:
                return [*path, start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return None


def test_the_graph_is_read():
    """The parse finds the imports it is meant to (so that the checks below check)."""
    assert "marginkit._registry" in GRAPH["marginkit._checks"]
    assert "marginkit._core.linear" in GRAPH["marginkit._linear_base"]
    assert "marginkit._registry" in GRAPH["marginkit._state_checks"]
    assert "marginkit._core.kernel.walk" in GRAPH["marginkit._core.kernel.blocks"]
    assert "marginkit.persistence" in GRAPH["marginkit"]


#: The experiments' runner looks its experiment up in the registry of its package
#: (``marginkit.experiments``, which imports the runner) inside a worker's function, by
#: design: the one circle there is, outside the library the estimators make up.
EXPERIMENTS = "marginkit.experiments"


def test_no_module_imports_itself_through_others():
    """No import circle among marginkit's modules, counting the imports inside functions
    and the package's ``__init__`` (which imports the public modules)."""
    library = [name for name in GRAPH if not name.startswith(EXPERIMENTS)]
    assert [cycle for cycle in map(cycle_from, library) if cycle] == []


def test_only_the_command_line_imports_the_package():
    """Only the command line (with its argument types and parsers) and the tasks behind it import
    the package itself (its ``__init__``, which imports the estimators), and nothing
    else imports them."""
    command_line = {
        "marginkit.cli",
        "marginkit._cli_types",
        "marginkit._cli_models",
        "marginkit.tasks",
    }
    assert {name for name, deps in GRAPH.items() if "marginkit" in deps} <= command_line
    users = {name for name, deps in GRAPH.items() if deps & command_line}
    assert users <= command_line


def test_the_registry_is_a_leaf():
    assert GRAPH["marginkit._registry"] == set()


@pytest.mark.parametrize(
    "lower, upper",
    [
        ("marginkit._core", "marginkit.persistence"),
        ("marginkit._checks", "marginkit.persistence"),
        ("marginkit.persistence", "marginkit._base"),
    ],
)
def test_lower_floors_import_no_upper_one(lower, upper):
    """The engines import no persistence (they declare their classes to the registry),
    the checks of loaded values import no persistence, and persistence no estimator."""

    def reach(name):
        seen, todo = set(), [name]
        while todo:
            for nxt in GRAPH[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    modules = [name for name in GRAPH if name == lower or name.startswith(lower + ".")]
    assert modules
    assert [name for name in modules if upper in reach(name)] == []


def test_the_engines_are_the_bottom_floor():
    """The compiled engines (``marginkit._core``) import none of marginkit's modules but
    their own: the checks of loaded states and the registry of the classes that files
    may hold import them, not the other way."""
    above = {
        name: sorted(dep for dep in GRAPH[name] if not dep.startswith("marginkit._core"))
        for name in GRAPH
        if name.startswith("marginkit._core")
    }
    assert len(above) > 10
    assert {name: deps for name, deps in above.items() if deps} == {}


def test_one_set_of_compiler_options():
    """Every compiled function takes the package's options (``marginkit._core``'s
    ``NUMBA_OPTS`` or ``NUMBA_INLINE``), none its own."""
    spelled = [
        f"{name}:{node.lineno}"
        for name, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "njit"
        and (node.keywords and any(k.arg is not None for k in node.keywords))
    ]
    assert spelled == []


ESTIMATORS = [
    getattr(marginkit, name)
    for name in marginkit.__all__
    if inspect.isclass(getattr(marginkit, name))
]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_docstrings_have_no_unfilled_fragment(cls):
    """A docstring fragment (``{PASSES_DOC}``) shows in no public estimator's docstring,
    nor in those of its public methods and properties."""
    docs = {cls.__name__: cls.__doc__}
    for name, member in inspect.getmembers(cls):
        if not name.startswith("_") and getattr(member, "__doc__", None):
            docs[f"{cls.__name__}.{name}"] = member.__doc__
    unfilled = {
        where: re.findall(r"\{[A-Z][A-Z0-9_]*\}", doc)
        for where, doc in docs.items()
        if re.search(r"\{[A-Z][A-Z0-9_]*\}", doc)
    }
    assert unfilled == {}


CLASSIFIERS = [cls for cls in ESTIMATORS if issubclass(cls, marginkit._base.OnlineClassifier)]

#: The private class attributes an estimator may set: its algorithm's traits (one
#: value, :class:`marginkit._traits.Traits`), the parameters added since files were
#: first written, and two learned attributes' values in models written before them
#: (scikit-learn's ``_parameter_constraints`` aside)
CLASS_ATTRIBUTES = {"_traits", "_added_params", "_exponent", "_max_updates"}


def own_classes(cls):
    return [k for k in cls.__mro__ if k.__module__.startswith("marginkit")]


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda cls: cls.__name__)
def test_an_estimator_is_at_most_four_classes(cls):
    """An estimator's MRO holds at most four of marginkit's classes: its own, one it
    shares with its other form, its family's base and ``OnlineClassifier``."""
    assert len(own_classes(cls)) <= 4, [k.__name__ for k in own_classes(cls)]


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda cls: cls.__name__)
def test_no_class_flag_steers_an_estimator(cls):
    """What an algorithm is comes as one ``Traits`` value, not as flags set on classes
    and overridden down the hierarchy: no other private data on the classes."""
    found = {
        name
        for k in own_classes(cls)
        for name, value in vars(k).items()
        if name.startswith("_")
        and not name.startswith("__")
        and not callable(value)
        and not isinstance(value, property | staticmethod | classmethod)
    }
    assert found - {"_parameter_constraints"} <= CLASS_ATTRIBUTES


#: Private names read on other objects that are conventions of their own: namedtuples'
#: methods, scikit-learn's parameter machinery, dask's metadata, the interpreter's frame
CONVENTIONS = {
    "_replace",
    "_fields",
    "_asdict",
    "_make",
    "_validate_params",
    "_get_param_names",
    "_parameter_constraints",
    "_meta",
    "_getframe",
}


def test_few_reads_of_another_objects_private_members():
    """Modules reach other objects through what those offer (a learner, a schedule,
    explicit values), not through their private members: at most 20 such reads in the
    package (the experiments aside), where there were 65."""
    reads = [
        f"{name}:{node.lineno}: {ast.unparse(node)}"
        for name, path in MODULES.items()
        if ".experiments" not in name
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and node.attr not in CONVENTIONS
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        and not (
            isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "super"
        )
    ]
    assert len(reads) <= 20, "\n".join(reads)
