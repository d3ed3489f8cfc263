"""Load any policy object from ``module:attr`` or ``file.py:attr`` (modes by name: ``registry.py``)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

from replay_tui.policies.base import FunctionPolicy


class PolicyLoadError(Exception):
    """A ``--policy`` spec that cannot be loaded; the message is one line."""


def _import_target(target: str) -> Any:
    if target.endswith(".py") or "/" in target or "\\" in target:
        path = Path(target)
        if not path.is_file():
            raise PolicyLoadError(f"policy file {target!r} does not exist")
        module_name = f"replay_tui_user_policy_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise PolicyLoadError(f"cannot import {target!r} as a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(module_name, None)
            raise PolicyLoadError(f"importing {target!r} failed: {type(exc).__name__}: {exc}") from exc
        return module
    try:
        return importlib.import_module(target)
    except Exception as exc:
        raise PolicyLoadError(f"cannot import module {target!r}: {type(exc).__name__}: {exc}") from exc


def split_spec(spec: str, default_attr: str) -> tuple[str, str]:
    """(module or file, dotted attribute) of ``module:attr`` / ``file.py:attr``; ``default_attr``
    ("policy", "graph") when there is no colon, and also names the spec in the error."""
    target, _, attr = spec.rpartition(":") if ":" in spec else (spec, ":", default_attr)
    if not target:
        raise PolicyLoadError(f"{default_attr} spec {spec!r} must look like 'module:attr' or 'file.py:attr'")
    return target, attr


def resolve_attr(module: Any, target: str, attr: str) -> Any:
    """``module.a.b`` for ``attr`` "a.b", with a one-line error naming the missing attribute."""
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise PolicyLoadError(f"{target!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def load_policy(spec: str) -> Any:
    """Load a policy from ``package.module:attr`` or ``path/to/file.py:attr``.

    ``attr`` may be a policy object, a class (instantiated without arguments), a zero-argument
    factory returning a policy, or a plain ``predict_action``-shaped function. ``attr`` defaults
    to ``policy`` when the spec has no colon.
    """
    target, attr = split_spec(spec, "policy")
    obj = resolve_attr(_import_target(target), target, attr)
    if inspect.isclass(obj):
        try:
            obj = obj()
        except Exception as exc:
            raise PolicyLoadError(f"cannot instantiate {spec!r}: {type(exc).__name__}: {exc}") from exc
    elif callable(obj) and not hasattr(obj, "predict_action"):
        parameters = _parameter_count(obj)
        if parameters == 0:
            try:
                obj = obj()
            except Exception as exc:
                raise PolicyLoadError(f"factory {spec!r} failed: {type(exc).__name__}: {exc}") from exc
        else:
            obj = FunctionPolicy(obj)
    if not callable(getattr(obj, "predict_action", None)):
        raise PolicyLoadError(f"{spec!r} is a {type(obj).__name__} without a predict_action method")
    return obj


def _parameter_count(function: Any) -> int:
    try:
        return len(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return -1
