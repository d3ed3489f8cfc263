"""YAML documents read with PyYAML's safe loader and a cap on what aliases expand to.

``safe_load`` never runs code, but an alias is a reference: nine anchors of nine aliases each
(a "billion laughs", 1 KB) load as a few shared lists that expand to 9**9 strings the moment
anything walks them (a ``str()``, a JSON dump), and an anchor used inside its own node loads as a
cycle. So the composed node graph is measured first, in one iterative pass that counts each shared
node once: what it expands to (nodes plus scalar characters) may exceed the document's own size by
at most :data:`ALIAS_EXPANSION_LIMIT`, and a cycle is refused. Only then is it constructed.
"""

from __future__ import annotations

import importlib
from typing import Any

ALIAS_EXPANSION_LIMIT = 1_000_000
"""Nodes and scalar characters that aliases may add to a document (a real cassette adds few)."""


class YamlLimit(ValueError):
    """A document whose aliases expand past the cap or form a cycle (the message is one line)."""


def _children(node: Any) -> list[Any]:
    """A sequence's items, a mapping's keys and values (``(key, value)`` pairs), a scalar's none."""
    value = node.value
    if not isinstance(value, list):
        return []
    children: list[Any] = []
    for item in value:
        if isinstance(item, tuple):
            children.extend(item)
        else:
            children.append(item)
    return children


def _own(node: Any) -> int:
    return 1 + (len(node.value) if isinstance(node.value, str) else 0)


def check_expansion(root: Any, limit: int = ALIAS_EXPANSION_LIMIT) -> int:
    """What the node graph under ``root`` expands to (nodes + scalar characters); raises YamlLimit
    past the document's own size plus ``limit``, or on a cycle. Iterative: any depth."""
    expanded: dict[int, int] = {}
    own = 0
    open_nodes: set[int] = set()  # the path from the root to the node being measured
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, measured = stack.pop()
        key = id(node)
        if measured:
            open_nodes.discard(key)
            size = _own(node) + sum(expanded[id(child)] for child in _children(node))
            expanded[key] = size
            own += _own(node)
            if size - own > limit:
                raise YamlLimit(f"aliases expand the document past {limit:,} more nodes and characters; not read")
            continue
        if key in expanded:
            continue
        open_nodes.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_nodes:
                raise YamlLimit("an alias refers to the node that contains it (aliases form a cycle); not read")
            if id(child) not in expanded:
                stack.append((child, False))
    return expanded[id(root)]


def load(data: bytes | str) -> Any:
    """The one YAML document in ``data`` (None when empty), like ``yaml.safe_load`` but refusing
    alias bombs and cycles with :class:`YamlLimit`. ImportError without PyYAML; yaml.YAMLError on
    bad YAML."""
    yaml = importlib.import_module("yaml")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(data)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_expansion(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()
