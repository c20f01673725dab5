"""Config files in and out: bounded YAML reading, variants, ``--set``, one-line errors, the JSON Schema and
``--help-config`` of the pydantic models of :mod:`training.config` (and of :mod:`training.stages`).

Files are parsed with a bound: at most :data:`MAX_CONFIG_BYTES` read (of any file: a pipe or ``/dev/zero``
too), nesting at most :data:`MAX_YAML_DEPTH` levels, no aliases (``*name``: a few nested ones expand to
gigabytes), no duplicate keys (the line of both is named), no integer longer than :data:`MAX_INT_DIGITS`
digits, only the safe loader's tags. A validation error is one line naming the key path and what it allows
(the closest valid key for a misspelt one); error messages echo at most a short prefix of a bad value.
"""

from __future__ import annotations

import difflib
import json
import textwrap
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError, create_model

from smear_env.actions import short_repr

from .algorithms.config_base import ConfigError

MAX_CONFIG_BYTES = 1_000_000
"""Largest config file (or ``--set`` value) read."""
MAX_YAML_DEPTH = 20
"""Deepest nesting of mappings / lists in a config (the real ones nest 3 levels)."""
MAX_INT_DIGITS = 40
"""Longest integer literal read (the largest bound of any field, 2**63 - 1, has 19 digits)."""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader without aliases, long integers and duplicate keys, with a nesting bound."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ConfigError(f"line {event.start_mark.line + 1}: YAML aliases (*{str(event.anchor)[:40]}) "
                              "are not allowed in config files; write the values out")
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise ConfigError(f"line {self.peek_event().start_mark.line + 1}: nested deeper than "
                                  f"{MAX_YAML_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node: Any) -> Any:
        if len(str(node.value).lstrip("+-").replace("_", "")) > MAX_INT_DIGITS:
            raise ConfigError(f"line {node.start_mark.line + 1}: an integer of {len(node.value):,} digits; "
                              f"at most {MAX_INT_DIGITS} are read")
        return super().construct_yaml_int(node)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<:` merges are overrides by design
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: PyYAML's own error follows
                    continue
                line = key_node.start_mark.line + 1
                if first is not None:
                    raise ConfigError(f"line {line}: duplicate key {short_repr(key, 60)} (first given at "
                                      f"line {first}); give each key once")
                seen[key] = line
        return super().construct_mapping(node, deep)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)


def safe_load_bounded(text: str) -> Any:
    """``yaml.safe_load`` with the bounds of the module docstring; a violation raises ConfigError (without
    the file name: callers add it), a syntax error ``yaml.YAMLError``."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{len(text):,} characters, more than the {MAX_CONFIG_BYTES:,} allowed")
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _yaml_error(e: yaml.YAMLError) -> str:
    """A YAML syntax error in one short line (PyYAML quotes the offending line, which may be huge)."""
    mark = getattr(e, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + short_repr(str(getattr(e, "problem", None) or e), 200).strip("'\"")


def read_text_bounded(path: Path, what: str, limit: int = MAX_CONFIG_BYTES) -> str:
    """The UTF-8 text of ``path``, reading at most ``limit`` bytes whatever the file is; ConfigError naming
    ``what`` when it is larger, unreadable or not UTF-8."""
    try:
        if path.is_dir():
            raise ConfigError(f"cannot read {what}: it is a folder")
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise ConfigError(f"cannot read {what}: {e.strerror or e}") from None
    if len(data) > limit:
        raise ConfigError(f"{what}: more than the {limit:,} allowed bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"cannot read {what}: not UTF-8 text") from None


def load_document(path: str | Path) -> dict[str, Any]:
    """A config file's mapping of blocks (``default`` and the variants), bounded and checked."""
    where = f"config file {str(path)!r}"
    try:
        doc = safe_load_bounded(read_text_bounded(Path(path), where))
    except yaml.YAMLError as e:
        raise ConfigError(f"{where} is not valid YAML: {_yaml_error(e)}") from None
    except ConfigError as e:
        raise ConfigError(str(e) if str(e).startswith(("cannot", where)) else f"{where}: {e}") from None
    if not isinstance(doc, dict) or "default" not in doc:
        raise ConfigError(f"{where} must be a mapping with a 'default:' block (plus optional named variants)")
    for k, v in doc.items():
        if v is not None and not isinstance(v, dict):
            raise ConfigError(f"{where}: {short_repr(k)} must be a mapping")
    return doc


def load_raw(path: str | Path, variant: str | None = None) -> dict[str, Any]:
    """The raw mapping of a config file: its ``default`` block, merged with ``variant`` if given."""
    doc = load_document(path)
    data = doc["default"] or {}
    if variant is not None:
        if variant not in doc or variant == "default":
            variants = [str(k) for k in doc if k != "default"]
            close = difflib.get_close_matches(variant, variants, n=1)
            raise ConfigError(f"config file {str(path)!r} has no variant {short_repr(variant)}"
                              + (f"; did you mean {close[0]!r}?" if close else "")
                              + f" (variants: {', '.join(variants)[:300] or 'none'})")
        data = deep_merge(data, doc[variant] or {})
    return data


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def parse_override(item: str) -> tuple[list[str], Any]:
    """``"algorithm.learning_rate=1e-4"`` -> (["algorithm", "learning_rate"], 1e-4); values are YAML
    scalars (or flow collections such as ``[64, 64]``)."""
    shown = short_repr(item)
    if "=" not in item:
        raise ConfigError(f"--set {shown}: expected key=value (e.g. algorithm.learning_rate=1.0e-4)")
    key, raw = (s.strip() for s in item.split("=", 1))
    if not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--set {shown}: bad key {short_repr(key)}")
    try:
        value = safe_load_bounded(raw) if raw else ""
    except yaml.YAMLError as e:
        raise ConfigError(f"--set {shown}: value is not valid YAML: {_yaml_error(e)}") from None
    except ConfigError as e:
        raise ConfigError(f"--set {shown}: {e}") from None
    return key.split("."), value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    for item in overrides:
        path, patch = parse_override(item)
        for part in reversed(path):
            patch = {part: patch}
        data = deep_merge(data, patch)
    return data


# --------------------------------------------------------------------------------------------- errors
def did_you_mean(key: Any, prefix: str, valid: list[str], valid_text: str | None = None) -> ConfigError:
    """"unknown config key ..." with the closest valid key and ``valid_text`` (default: the valid keys)."""
    close = difflib.get_close_matches(str(key)[:100], valid, n=1, cutoff=0.5)
    hint = f"; did you mean {prefix + close[0]!r}?" if close else ""
    where = f" in {prefix.rstrip('.')}" if prefix else ""
    valid_text = valid_text or f"valid keys{where}: {', '.join(valid)}"
    return ConfigError(f"unknown config key {short_repr(f'{prefix}{key}')}{hint} ({valid_text})")


def _node(schema: dict[str, Any], loc: tuple[Any, ...]) -> tuple[dict[str, Any], list[str]]:
    """The sub-schema at ``loc`` (pydantic's error location; union tags are skipped) and the key path."""
    defs, node, path = schema.get("$defs", {}), schema, []

    def deref(n: dict[str, Any]) -> dict[str, Any]:
        return defs[n["$ref"].split("/")[-1]] if "$ref" in n else n

    for part in loc:
        node = deref(node)
        options = [deref(o) for o in node.get("anyOf", [node])]
        for o in options:
            if isinstance(part, str) and part in o.get("properties", {}):
                node = o["properties"][part]
            elif isinstance(part, int) and "items" in o:
                node = o["items"]
            elif isinstance(part, str) and isinstance(o.get("additionalProperties"), dict):
                node = o["additionalProperties"]
            else:
                continue
            path.append(f"[{part}]" if isinstance(part, int) else f".{part}")
            break
    return deref(node), path


_TYPES = {"integer": "int", "number": "float", "boolean": "bool", "string": "str", "null": "null"}


def type_text(node: dict[str, Any], defs: dict[str, Any]) -> str:
    """``"int"``, ``"float or null"``, ``"list of int"``, ``"mapping of str to float"``: a schema's type."""
    node = defs.get(node.get("$ref", "").split("/")[-1], node)
    if "anyOf" in node:
        return " or ".join(type_text(o, defs) for o in node["anyOf"])
    if "enum" in node or "const" in node:
        return "str"
    kind = node.get("type")
    if kind == "array":
        return f"list of {type_text(node.get('items', {}), defs)}"
    if kind == "object" and "properties" not in node:
        return f"mapping of str to {type_text(node.get('additionalProperties', {}), defs)}"
    return _TYPES.get(kind, "a mapping (section)")


def bound_text(node: dict[str, Any], defs: dict[str, Any] | None = None) -> str:
    """What a number field allows (``"an integer from 1 to 16384"``, ``"a number > 0 or null"``), what a
    list or mapping field holds (``"1 to 8 items, each ..."``); "" for a field without bounds."""
    defs = defs or {}
    options = [defs.get(o.get("$ref", "").split("/")[-1], o) for o in node.get("anyOf", [node])]
    null = " or null" if any(o.get("type") == "null" for o in options) else ""
    for o in options:
        if o.get("type") in ("array", "object") and ("maxItems" in o or "maxProperties" in o):
            inner = bound_text(o.get("items") or o.get("additionalProperties") or {}, defs)
            lo, hi = o.get("minItems", o.get("minProperties", 0)), o.get("maxItems", o.get("maxProperties"))
            return f"{lo} to {hi} items" + (f", each {inner}" if inner else "") + null
        lo, hi = o.get("minimum", o.get("exclusiveMinimum")), o.get("maximum", o.get("exclusiveMaximum"))
        if lo is None and hi is None:
            continue
        kind = "an integer" if o.get("type") == "integer" else "a number"
        fmt = [_number(x) for x in (lo, hi)]
        if lo is not None and hi is not None:
            if kind == "an integer" and "exclusiveMinimum" not in o and "exclusiveMaximum" not in o:
                return f"{kind} from {fmt[0]} to {fmt[1]}{null}"
            return (f"{kind} in {'(' if 'exclusiveMinimum' in o else '['}{fmt[0]}, {fmt[1]}"
                    f"{')' if 'exclusiveMaximum' in o else ']'}{null}")
        if lo is not None:
            return f"{kind} {'>' if 'exclusiveMinimum' in o else '>='} {fmt[0]}{null}"
        return f"{kind} {'<' if 'exclusiveMaximum' in o else '<='} {fmt[1]}{null}"
    return ""


def _number(x: float | None) -> str:
    if x is None or not float(x).is_integer():
        return "" if x is None else repr(x)
    n = int(x)
    if n >= 10**6 and str(n).rstrip("0") == "1":
        return f"10**{len(str(n)) - 1}"
    if n > 2**32 and n & (n - 1) == 0:
        return f"2**{n.bit_length() - 1}"
    return "2**63 - 1" if n == 2**63 - 1 else str(n)


_BOUND_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal", "too_long", "too_short"}


def validated(cls: type[BaseModel], data: Any, prefix: str = "", keys_text: str | None = None) -> Any:
    """``cls.model_validate(data)``; a ValidationError becomes one ConfigError line naming the key path and
    what it allows (a ValueError of a validator keeps its message)."""
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    schema = cls.model_json_schema()
    defs = schema.get("$defs", {})
    node, path = _node(schema, tuple(errors[0]["loc"]))
    key = (prefix + "".join(path).lstrip(".")).replace(".[", "[") or "config"
    same = [e for e in errors if _node(schema, tuple(e["loc"]))[1] == path]
    kinds = {e["type"] for e in same}
    first = same[0]
    if "extra_forbidden" in kinds:
        parent, _ = _node(schema, tuple(first["loc"][:-1]))
        where = (prefix + "".join(path).lstrip(".") + ".") if path else prefix
        return _raise(did_you_mean(first["loc"][-1], where, list(parent.get("properties", {})), keys_text))
    got = first.get("input")
    if kinds & _BOUND_ERRORS:
        size = f"{len(got)} items" if isinstance(got, list | dict) else short_repr(got)
        return _raise(ConfigError(f"config key {key!r}: expected {bound_text(node, defs)}, got {size}"))
    if "literal_error" in kinds or "enum" in kinds:
        allowed = ", ".join(map(repr, node.get("enum") or [node.get("const")]))
        return _raise(ConfigError(f"config key {key!r}: {short_repr(got)} is not one of {allowed}"))
    if "value_error" in kinds:
        return _raise(ConfigError(f"config key {key!r}: {first['ctx']['error']}"))
    if "finite_number" in kinds:
        return _raise(ConfigError(f"config key {key!r}: expected a finite number, got {short_repr(got)}"))
    return _raise(ConfigError(f"config key {key!r}: expected {type_text(node, defs)}, got {short_repr(got)} "
                              f"({type(got).__name__})"))


def _raise(e: ConfigError) -> Any:
    raise e from None


# ------------------------------------------------------------------------------------------ schema and help
def schema_of(model: type[BaseModel], algorithm: Any, rules: type, stages: dict[str, type]) -> dict[str, Any]:
    """The JSON Schema of a config file: ``default`` and every variant are blocks of ``model`` (every key is
    optional), with the ``algorithm:`` section as ``algorithm`` and the pipeline's ``stages:`` as a mapping of
    stage sections."""
    fields: dict[str, Any] = {"algorithm": (algorithm, None), "rules": (rules, None)}
    if stages:
        from typing import Union

        fields["stages"] = (dict[str, Union[tuple(stages.values())] | None] | None, None)  # noqa: UP007
    block = _any_of(create_model("ConfigBlock", __base__=model, **fields).model_json_schema())
    defs = block.pop("$defs", {})
    if rules.__name__ in defs:
        defs[rules.__name__]["additionalProperties"] = False
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "smear-train config file",
            "type": "object", "required": ["default"], "$defs": {**defs, "ConfigBlock": block},
            "additionalProperties": {"anyOf": [{"$ref": "#/$defs/ConfigBlock"}, {"type": "null"}]}}


def _any_of(node: Any) -> Any:
    """``oneOf`` as ``anyOf``, without discriminators: a variant's partial section (no ``name``) may fit
    several algorithms."""
    if isinstance(node, list):
        return [_any_of(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {("anyOf" if k == "oneOf" else k): _any_of(v) for k, v in node.items() if k != "discriminator"}


def help_text_of(model: type[BaseModel], algorithms: dict[str, type[BaseModel]],
                 stages: dict[str, type[BaseModel]] | None = None) -> str:
    """Every field of ``model`` (and of each algorithm's and stage's section) with its type, default,
    bounds and description."""
    lines = ["Config file: YAML with a 'default:' block (plus optional variants, chosen with --variant).",
             "Override any field with --set dotted.key=value (value parsed as YAML).", ""]
    printed: dict[tuple[str, str], str] = {}

    def walk(cls: type[BaseModel], prefix: str, owner: str = "") -> None:
        schema = cls.model_json_schema()
        defs = schema.get("$defs", {})
        for name, info in cls.model_fields.items():
            sub = getattr(info.annotation, "model_fields", None)
            if name in ("algorithm", "rules") and cls is model:
                continue
            if sub is not None:
                lines.append(f"[{prefix}{name}]  {info.description or ''}")
                walk(info.annotation, f"{prefix}{name}.")
                lines.append("")
                continue
            node = schema["properties"][name]
            default = info.get_default(call_default_factory=True)
            bounds = bound_text(node, defs)
            choices = f" (one of {', '.join(map(str, node['enum']))})" if "enum" in node else ""
            head = (f"  {prefix}{name}: {type_text(node, defs)} = {default!r}{choices}"
                    + (f" [{bounds}]" if bounds else ""))
            doc = [f"      {ln}" for ln in textwrap.wrap(" ".join((info.description or "").split()), 100)]
            first = printed.setdefault((head, "\n".join(doc)), owner)
            lines.extend([head + f"  (as in [algorithm: {first}])"] if first != owner else [head, *doc])

    for name, cls in algorithms.items():
        lines.append(f"[algorithm: {name}]  " + " ".join((cls.__doc__ or "").split()))
        lines.append("      Supports: " + ", ".join(f[9:] for f in dir(cls) if f.startswith("supports_")
                                                     and getattr(cls, f)) + ".")
        walk(cls, "algorithm.", name)
        lines.append("")
    walk(model, "")
    for name, cls in (stages or {}).items():
        lines.append(f"[stages.<id> with kind: {name}]  " + " ".join((cls.__doc__ or "").split()))
        walk(cls, f"stages.{name}.", f"stage {name}")
        lines.append("")
    return "\n".join(lines)


def schema_json(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=1)
