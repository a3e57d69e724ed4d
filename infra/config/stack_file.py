"""Reading a ``Pulumi.<stack>.yaml`` stack file the way a user wrote it, line by line.

The offline preview reads stack files itself, and the Pulumi program reads the one Pulumi
used (found through ``stackConfigDir``) to point its errors at a line. PyYAML alone would
silently keep the last of two duplicate keys, report a tab as a traceback and lose every
line number; this module composes the YAML node tree instead, so that:

- a syntax error is ``FILE:LINE:COL: what is wrong``;
- a duplicate key, at any depth, is an error naming both lines;
- a top level or ``config:`` that is not a mapping is an error at its line;
- a key without a namespace (``deletionProtection: false``) is an error that suggests the
  namespaced key. The Pulumi CLI refuses such a key too, when it loads the stack ("could
  not parse ... as a configuration key (configuration keys should be of the form
  `<namespace>:<name>`)", pulumi/pulumi sdk/go/common/resource/config/key.go), but the
  offline preview would otherwise drop it silently;
- keys of provider namespaces (``gcp:project``, ``kubernetes:*``, ``pulumi:*``) are left to
  Pulumi and the providers, which read them; any other namespace is reported, since nothing
  in this stack reads it;
- ``secure:`` values (Pulumi secrets) are accepted only under the keys listed in
  ``SECRET_KEYS``, replaced by documentation stand-ins offline (the preview cannot decrypt
  them) and never printed.

Every value keeps the line of its key, so a config problem (``slices[1].count: ...``) can be
reported as ``stacks/Pulumi.dev.yaml:14: slices[1].count: ...``. Pure: PyYAML only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

import yaml

from infra.config.stack import TOP_LEVEL_KEYS
from infra.config.errors import did_you_mean
from infra.config.secrets import SECRET_KEYS, SecretStr, hide
from infra.record import field, record

NAMESPACE = "accelstack"
# Namespaces Pulumi or the stack's providers read from a stack file: the gcp and kubernetes
# providers' settings (such as gcp:project) and Pulumi's own (pulumi:tags).
PROVIDER_NAMESPACES = ("gcp", "kubernetes", "pulumi")
_MERGE = "tag:yaml.org,2002:merge"
_STACK_FILE = re.compile(r"^Pulumi\.(?P<stack>[A-Za-z0-9][-A-Za-z0-9_.]*)\.yaml\Z")

# Offline stand-ins for secret leaves, by key name: documentation values (RFC 5737) that
# pass the checks, so the rest of the stack can be previewed; printed as [secret].
_STAND_INS = {"cidr": "192.0.2.0/24", "name": "secret"}
_WHOLE_STAND_INS: dict[str, Any] = {
    "masterAuthorizedNetworks": [{"cidr": "192.0.2.0/24", "name": "secret"}],
}


class StackFileError(ValueError):
    """Problems in a stack file, each one line that names FILE:LINE."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@record
class StackFile:
    path: str  # as given, for messages
    stack: str
    raw: dict[str, Any]  # the accelstack: keys, namespace removed
    lines: dict[str, int] = field(default_factory=dict)  # config key path -> line
    secret_keys: frozenset[str] = frozenset()  # top-level keys given as Pulumi secrets
    config_line: int = 1

    def line_of(self, key_path: str) -> int:
        """The line of ``key_path`` (``slices[0].capacity.mode``), or of its nearest parent."""
        path = key_path
        while path:
            if path in self.lines:
                return self.lines[path]
            path = _parent(path)
        return self.config_line

    def locate(self, problem: str) -> str:
        """``problem`` (``key.path: message``) prefixed with ``FILE:LINE: ``."""
        return f"{self.path}:{self.line_of(problem.split(': ', 1)[0])}: {problem}"


def _parent(path: str) -> str:
    if path.endswith("]"):
        return path[:path.rindex("[")]
    return path.rpartition(".")[0]


def stack_name(path: str | Path) -> str:
    """The stack a ``Pulumi.<stack>.yaml`` file configures; ValueError for any other name."""
    m = _STACK_FILE.match(Path(path).name)
    if not m:
        raise ValueError(f"{path}: a stack file is named Pulumi.<stack>.yaml (the name Pulumi "
                         f"looks for in stackConfigDir), not {Path(path).name!r}")
    return m.group("stack")


def load(path: str | Path, *, text: str | None = None) -> StackFile:
    """Read and check a stack file; raise StackFileError listing every problem."""
    where = str(path)
    try:
        stack = stack_name(path)
    except ValueError as e:
        raise StackFileError([str(e)]) from None
    if text is None:
        try:
            text = Path(path).read_bytes().decode("utf-8")
        except UnicodeDecodeError as e:
            raise StackFileError([f"{where}: byte {e.start} is not UTF-8 text; a stack file "
                                  "is YAML text"]) from None
        except OSError as e:
            raise StackFileError([f"{where}: cannot read the file ({e.strerror})"]) from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        raise StackFileError([_syntax_error(where, e)]) from None
    except yaml.YAMLError as e:  # not marked: reader errors such as control characters
        raise StackFileError([f"{where}: {e}"]) from None
    try:
        return _Reader(where).read(root, stack)
    except yaml.MarkedYAMLError as e:  # a value YAML cannot construct (an unknown !tag)
        raise StackFileError([_syntax_error(where, e)]) from None


# PyYAML's messages for the usual indentation slips, said in plain words beside them.
_PLAIN_WORDS = (
    ("expected <block end>", "the indentation does not line up here; the keys of one "
     "mapping (and the items of one list) start in the same column, each level indented "
     "deeper than its parent key"),
    ("mapping values are not allowed here", "a 'key: value' where only a value can be; this "
     "line may be indented deeper than the key above it, or an unquoted value holds ': ' "
     "(quote it)"),
)


def _syntax_error(where: str, e: yaml.MarkedYAMLError) -> str:
    mark = e.problem_mark or e.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = e.problem or e.context or "invalid YAML"
    if "'\\t'" in problem:
        problem += " (YAML indents with spaces, never tabs)"
    for start, plain in _PLAIN_WORDS:
        if problem.startswith(start):
            problem += f": {plain}"
    if e.context and e.context_mark and e.problem_mark and e.context_mark != e.problem_mark:
        problem += (f" ({e.context} at line {e.context_mark.line + 1}, column "
                    f"{e.context_mark.column + 1})")
    return f"{where}:{line}:{col}: {problem}"


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if isinstance(node, yaml.ScalarNode):
        return "a single value"
    return "a mapping"


class _Reader:
    def __init__(self, where: str) -> None:
        self.where = where
        self.problems: list[str] = []
        self.lines: dict[str, int] = {}
        self.secret_keys: set[str] = set()
        self._constructor = yaml.SafeLoader("")
        self._open: set[int] = set()  # nodes being read: an alias may point back to one

    def fail(self, line: int, message: str, col: int | None = None) -> None:
        at = f"{line}:{col}" if col is not None else f"{line}"
        self.problems.append(f"{self.where}:{at}: {message}")

    def read(self, root: yaml.Node | None, stack: str) -> StackFile:
        raw: dict[str, Any] = {}
        config_line = 1
        if root is not None and not isinstance(root, yaml.MappingNode):
            self.fail(_line(root), f"the top level is {_kind(root)}; a stack file is a mapping "
                      "with a config: key", int(root.start_mark.column) + 1)
        elif root is not None:
            top = self._pairs(root, "")
            if "config" in top:
                key_node, node = top["config"]
                config_line = _line(key_node)
                if isinstance(node, yaml.MappingNode):
                    raw = self._config(node)
                elif not (isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null")):
                    self.fail(_line(node), f"config: is {_kind(node)}; expected a mapping of "
                              "namespace:key entries such as accelstack:project",
                              int(node.start_mark.column) + 1)
        if self.problems:
            raise StackFileError(sorted(self.problems, key=_line_of_problem))
        return StackFile(self.where, stack, raw, dict(self.lines), frozenset(self.secret_keys),
                         config_line)

    def _pairs(self, node: yaml.MappingNode, path: str) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """The mapping's entries by key; a key given twice is reported with both lines."""
        out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        merged: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:  # "<<: *anchor" takes the anchor's keys, then ours
                sources = (value_node.value if isinstance(value_node, yaml.SequenceNode)
                           else [value_node])
                for source in sources:
                    if id(source) in self._open or source is node:
                        self.fail(_line(key_node), f"{_join(path, '<<')}: merges a mapping "
                                  "into itself; write the keys out")
                    elif isinstance(source, yaml.MappingNode):
                        added = id(node) not in self._open
                        self._open.add(id(node))
                        try:
                            for k, v in self._pairs(source, path).items():
                                merged.setdefault(k, v)
                        finally:
                            if added:
                                self._open.discard(id(node))
                continue
            key = str(self._scalar(key_node)) if isinstance(key_node, yaml.ScalarNode) else "?"
            if key in out:
                first = _line(out[key][0])
                self.fail(_line(key_node), f"{_join(path, key)}: the key is given twice (lines "
                          f"{first} and {_line(key_node)}); YAML would keep only the second, "
                          "so merge them or remove one")
                continue
            out[key] = (key_node, value_node)
        return {**{k: v for k, v in merged.items() if k not in out}, **out}

    def _scalar(self, node: yaml.ScalarNode) -> Any:
        return self._constructor.construct_object(node, deep=True)

    def _config(self, node: yaml.MappingNode) -> dict[str, Any]:
        raw: dict[str, Any] = {}
        for key, (key_node, value_node) in self._pairs(node, "config").items():
            line = _line(key_node)
            ns, sep, name = key.partition(":")
            if name.startswith("config:"):  # Pulumi's older <namespace>:config:<name> form
                name = name[len("config:"):]
            if sep and not name:
                self.fail(line, f"{key}: names no key; write <namespace>:<name> such as "
                          f"{NAMESPACE}:project")
                continue
            if not sep:
                hint = (f"did you mean {NAMESPACE}:{key}?" if key in TOP_LEVEL_KEYS else
                        f"did you mean {NAMESPACE}:{_closest(key, TOP_LEVEL_KEYS) or key}?")
                self.fail(line, f"{key}: a config key needs a namespace, and this one is not "
                          f"read; {hint} (Pulumi reads stack config as <namespace>:<name>)")
                continue
            if ns != NAMESPACE:
                if ns not in PROVIDER_NAMESPACES:
                    self.fail(line, f"{key}: nothing in this stack reads the {ns!r} namespace "
                              f"(read: {NAMESPACE}, and the providers' "
                              f"{', '.join(PROVIDER_NAMESPACES)}); did you mean "
                              f"{NAMESPACE}:{_closest(name, TOP_LEVEL_KEYS) or name}?")
                continue
            self.lines[name] = line
            raw[name] = self._value(value_node, name, name)
        return raw

    def _value(self, node: yaml.Node, path: str, top: str) -> Any:
        if id(node) in self._open:
            self.fail(_line(node), f"{path}: contains itself (a YAML alias to an enclosing "
                      "anchor); write the value out")
            return None
        self._open.add(id(node))
        try:
            return self._node_value(node, path, top)
        finally:
            self._open.discard(id(node))

    def _node_value(self, node: yaml.Node, path: str, top: str) -> Any:
        if isinstance(node, yaml.MappingNode):
            pairs = self._pairs(node, path)
            if list(pairs) == ["secure"]:
                return self._secret(pairs["secure"][1], path, top)
            out: dict[Any, Any] = {}
            for key, (key_node, value_node) in pairs.items():
                sub = _join(path, key)
                self.lines[sub] = _line(key_node)
                value = self._scalar(key_node) if isinstance(key_node, yaml.ScalarNode) else key
                out[value] = self._value(value_node, sub, top)
            return out
        if isinstance(node, yaml.SequenceNode):
            items = []
            for i, item in enumerate(node.value):
                sub = f"{path}[{i}]"
                self.lines[sub] = _line(item)
                items.append(self._value(item, sub, top))
            return items
        return self._scalar(node)

    def _secret(self, node: yaml.Node, path: str, top: str) -> Any:
        line = _line(node)
        if not isinstance(node, yaml.ScalarNode) or not isinstance(self._scalar(node), str):
            self.fail(line, f"{path}: secure: takes the ciphertext Pulumi wrote (pulumi config "
                      "set --secret)")
            return None
        if top not in SECRET_KEYS:
            self.fail(line, f"{path}: a Pulumi secret is not supported for this key (secrets "
                      f"are supported for: {', '.join(SECRET_KEYS)}); its value appears in "
                      "resource names, labels or the outputs, so keep it in plain text")
            return None
        self.secret_keys.add(top)
        # The preview runs without the stack's secrets provider: a stand-in takes the place
        # of the ciphertext and is printed as [secret].
        if path == top:
            return hide(_WHOLE_STAND_INS[top])
        leaf = path.rsplit(".", 1)[-1]
        return SecretStr(_STAND_INS.get(leaf, "secret"))


def _line_of_problem(problem: str) -> int:
    m = re.match(r"^.*?:(\d+)(:\d+)?: ", problem)
    return int(m.group(1)) if m else 0


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _closest(word: str, allowed: Iterable[str]) -> str | None:
    hint = did_you_mean(word, allowed)
    return hint[len("; did you mean "):-1] if hint else None
