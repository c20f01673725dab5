"""Config files in and out: bounded YAML reading, variants and ``--set``, one-line errors, the JSON Schema and
``--help-config`` of the pydantic models of :mod:`training.config` and :mod:`training.stages`.

Reading is bounded: at most :data:`MAX_CONFIG_BYTES`, nesting at most :data:`MAX_YAML_DEPTH`, no aliases (a
few nested ones expand to gigabytes), no duplicate keys, no integer of more than :data:`MAX_INT_DIGITS`
digits, only the safe loader's tags. A validation error is one line naming the key path and what it allows.
"""

from __future__ import annotations

import difflib
import textwrap
from pathlib import Path
from typing import Any, Union

import yaml
from pydantic import BaseModel, ValidationError, create_model

from smear_env.core.actions import short_repr

from .configs.base import ConfigError

MAX_CONFIG_BYTES, MAX_YAML_DEPTH, MAX_INT_DIGITS = 1_000_000, 20, 40  # the largest bound (2**63 - 1) has 19


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader without aliases, long integers and duplicate keys, with a nesting bound."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent):
            raise ConfigError(f"line {line}: YAML aliases (*{str(event.anchor)[:40]}) are not allowed in "
                              "config files; write the values out")
        if self._depth >= MAX_YAML_DEPTH:
            raise ConfigError(f"line {line}: nested deeper than {MAX_YAML_DEPTH} levels")
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node: Any) -> Any:
        if len(str(node.value).lstrip("+-").replace("_", "")) > MAX_INT_DIGITS:
            raise ConfigError(f"line {node.start_mark.line + 1}: an integer of {len(node.value):,} digits; "
                              f"at most {MAX_INT_DIGITS} are read")
        return super().construct_yaml_int(node)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value if isinstance(node, yaml.MappingNode) else ():
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<:` merges are overrides by design
            key, line = self.construct_object(key_node, deep=True), key_node.start_mark.line + 1
            if getattr(key, "__hash__", None) is None:
                continue  # an unhashable key: PyYAML's own error follows
            if key in seen:
                raise ConfigError(f"line {line}: duplicate key {short_repr(key, 60)} (first given at line "
                                  f"{seen[key]}); give each key once")
            seen[key] = line
        return super().construct_mapping(node, deep)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)


def safe_load_bounded(text: str, where: str = "config") -> Any:
    """``yaml.safe_load`` within the bounds above; every error a one-line ConfigError naming ``where``."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{where}: {len(text):,} characters, more than the {MAX_CONFIG_BYTES:,} allowed")
    try:
        return _BoundedLoader(text).get_single_data()
    except yaml.YAMLError as e:
        at = getattr(e, "problem_mark", None)
        at = f"line {at.line + 1}, column {at.column + 1}: " if at is not None else ""
        problem = short_repr(str(getattr(e, "problem", None) or e), 200).strip("'\"")
        raise ConfigError(f"{where} is not valid YAML: {at}{problem}") from None
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None


def load_raw(path: str | Path, variant: str | None = None) -> dict[str, Any]:
    """A config file's ``default`` block, merged with ``variant``'s if given (not validated)."""
    where = f"config file {str(path)!r}"
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(f"{where}: more than the {MAX_CONFIG_BYTES:,} allowed bytes")
        doc = safe_load_bounded(data.decode("utf-8"), where)
    except (OSError, UnicodeDecodeError) as e:
        why = "not UTF-8 text" if isinstance(e, UnicodeDecodeError) else str(e.strerror or e)
        why = "it is a folder" if Path(path).is_dir() else why
        raise ConfigError(f"cannot read {where}: {why}") from None
    if not isinstance(doc, dict) or "default" not in doc:
        raise ConfigError(f"{where} must be a mapping with a 'default:' block (plus optional named variants)")
    if bad := [k for k, v in doc.items() if v is not None and not isinstance(v, dict)]:
        raise ConfigError(f"{where}: {short_repr(bad[0])} must be a mapping")
    if variant is not None and (variant not in doc or variant == "default"):
        variants = [str(k) for k in doc if k != "default"]
        raise did_you_mean(variant, "", variants, f"variants: {', '.join(variants)[:300] or 'none'}",
                           f"{where} has no variant")
    return deep_merge(doc["default"] or {}, (doc[variant] or {}) if variant else {})


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def parse_override(item: str) -> tuple[list[str], Any]:
    """``"algorithm.learning_rate=1e-4"`` -> (["algorithm", "learning_rate"], 1e-4): a YAML value."""
    shown, (key, eq, raw) = short_repr(item), (s.strip() for s in item.partition("="))
    if not eq:
        raise ConfigError(f"--set {shown}: expected key=value (e.g. algorithm.learning_rate=1.0e-4)")
    if not all(key.split(".")):
        raise ConfigError(f"--set {shown}: bad key {short_repr(key)}")
    return key.split("."), safe_load_bounded(raw, f"--set {shown}: the value") if raw else ""


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    for path, patch in map(parse_override, overrides):
        for part in reversed(path):
            patch = {part: patch}
        data = deep_merge(data, patch)
    return data


# --------------------------------------------------------------------------------------------- errors
def did_you_mean(key: Any, prefix: str, valid: list[str], valid_text: str | None = None,
                 head: str = "unknown config key") -> ConfigError:
    """``head`` ``prefix+key``, the closest valid key and ``valid_text`` (default: the valid keys)."""
    close = difflib.get_close_matches(str(key)[:100], valid, n=1, cutoff=0.5)
    where = f" in {prefix.rstrip('.')}" if prefix else ""
    return ConfigError(f"{head} {short_repr(f'{prefix}{key}')}"
                       + (f"; did you mean {prefix + close[0]!r}?" if close else "")
                       + f" ({valid_text or f'valid keys{where}: ' + ', '.join(valid)})")


def _deref(n: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    return defs[n["$ref"].split("/")[-1]] if "$ref" in n else n


def _options(node: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    """A schema's alternatives (``anyOf``; ``null`` last), or the schema itself."""
    return sorted((_deref(o, defs) for o in node.get("anyOf", [node])), key=lambda o: o == {"type": "null"})


def _node(schema: dict[str, Any], loc: list[Any]) -> dict[str, Any]:
    """The sub-schema at pydantic's error location ``loc`` (keys and list indexes)."""
    defs, node = schema.get("$defs", {}), schema
    for part in loc:
        node = _options(node, defs)[0]
        sub = node.get("items") if isinstance(part, int) else (
            node.get("properties", {}).get(part) or node.get("additionalProperties"))
        node = sub if isinstance(sub, dict) else {}
    return _deref(node, defs)


_TYPES = {"integer": "int", "number": "float", "boolean": "bool", "string": "str", "null": "null"}


def type_text(node: dict[str, Any], defs: dict[str, Any]) -> str:
    """``"int"``, ``"float or null"``, ``"list of int"``, ``"mapping of str to float"``: a schema's type."""
    node = _deref(node, defs)
    if "anyOf" in node:
        return " or ".join(type_text(o, defs) for o in node["anyOf"])
    if node.get("type") == "array":
        return f"list of {type_text(node.get('items', {}), defs)}"
    if node.get("type") == "object" and "properties" not in node:
        return f"mapping of str to {type_text(node.get('additionalProperties', {}), defs)}"
    return "str" if "enum" in node or "const" in node else _TYPES.get(node.get("type"), "a mapping (section)")


def _number(x: float) -> str:
    """A bound as YAML reads it: a whole number as an int (with ``_`` between thousands from a million)."""
    return repr(x) if not float(x).is_integer() else f"{int(x):_}" if abs(x) >= 10**6 else str(int(x))


def bound_text(node: dict[str, Any], defs: dict[str, Any] | None = None) -> str:
    """What a field allows (``"an integer from 1 to 16384"``, ``"a number > 0 and <= 1 or null"``, ``"1 to 8
    items, each ..."``); "" for a field without bounds."""
    options = _options(node, defs or {})
    o, null = options[0], " or null" if {"type": "null"} in options else ""
    lo, hi = o.get("minItems", o.get("minProperties")), o.get("maxItems", o.get("maxProperties"))
    if hi is not None:
        each = bound_text(o.get("items") or o.get("additionalProperties") or {}, defs)
        return f"{lo or 0} to {hi} items" + (f", each {each}" if each else "") + null
    if lo is not None:
        return f"at least {lo} item{'s' * (lo != 1)}{null}"
    lo, hi = o.get("minimum", o.get("exclusiveMinimum")), o.get("maximum", o.get("exclusiveMaximum"))
    ops = (">" if "exclusiveMinimum" in o else ">=", "<" if "exclusiveMaximum" in o else "<=")
    kind = "an integer" if o.get("type") == "integer" else "a number"
    if ops == (">=", "<=") and lo is not None and hi is not None:
        return f"{kind} from {_number(lo)} to {_number(hi)}{null}"
    parts = [f"{op} {_number(v)}" for op, v in zip(ops, (lo, hi), strict=True) if v is not None]
    return f"{kind} {' and '.join(parts)}{null}" if parts else ""


_BOUND_ERRORS = ("greater_than", "greater_than_equal", "less_than", "less_than_equal", "too_long",
                 "too_short")


def validated(cls: type[BaseModel], data: Any, prefix: str = "", keys_text: str | None = None) -> Any:
    """``cls.model_validate(data)``; a ValidationError becomes one ConfigError line naming the key path and
    what it allows (a validator's ConfigError is raised as it is, another ValueError keeps its message)."""
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        e = exc.errors(include_url=False)[0]
    schema, kind, got = cls.model_json_schema(), e["type"], e.get("input")
    loc = [p for p in e["loc"] if p != "[key]"]  # a mapping key's error is the key's
    key = prefix + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    if kind == "extra_forbidden":
        keys = list(_node(schema, loc[:-1]).get("properties", {}))
        raise did_you_mean(loc[-1], key[:len(key) - len(str(loc[-1]))], keys, keys_text) from None
    if kind == "value_error" and isinstance(e["ctx"]["error"], ConfigError):
        raise e["ctx"]["error"] from None
    node, defs = _node(schema, loc), schema.get("$defs", {})
    shown = f"{len(got)} items" if isinstance(got, list | dict) else short_repr(got)
    if kind in _BOUND_ERRORS and (bounds := bound_text(node, defs)):
        text = f"expected {bounds}, got {shown}"
    elif kind == "literal_error":
        text = f"{short_repr(got)} is not one of {e['ctx']['expected']}"
    elif kind.endswith("_type"):
        text = f"expected {type_text(node, defs)}, got {short_repr(got)} ({type(got).__name__})"
    else:  # a finite number, a string's length, a validator's ValueError, a missing key: pydantic's words
        text = e["msg"].replace("Input should be", "expected").removeprefix("Value error, ")
        text += "" if kind in ("value_error", "missing") else f", got {short_repr(got)}"
    raise ConfigError(f"config key {key!r}: {text}" if key else f"config: {text}") from None


# ------------------------------------------------------------------------------------------ schema and help
def schema_of(model: type[BaseModel], algorithm: Any, rules: type, stages: dict[str, type]) -> dict[str, Any]:
    """The JSON Schema of a config file: ``default`` and each variant are a block of ``model`` (every key is
    optional), with ``algorithm`` as the ``algorithm:`` section's type and ``stages:`` of the stage models."""
    fields: dict[str, Any] = {"algorithm": (algorithm, None), "rules": (rules, None)}
    stages = {k: create_model(m.__name__, __base__=m, **fields) if "algorithm" in m.model_fields else m
              for k, m in stages.items()}  # a training stage's section holds the training keys
    if stages:
        fields["stages"] = (dict[str, Union[tuple(stages.values())] | None] | None, None)  # noqa: UP007
    block = create_model("ConfigBlock", __base__=model, **fields).model_json_schema()
    defs = block.pop("$defs", {})
    defs.get(rules.__name__, {})["additionalProperties"] = False
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "smear-train config file",
            "type": "object", "required": ["default"], "$defs": {**defs, "ConfigBlock": block},
            "additionalProperties": {"anyOf": [{"$ref": "#/$defs/ConfigBlock"}, {"type": "null"}]}}


def help_text_of(model: type[BaseModel], algorithms: dict[str, type[BaseModel]],
                 stages: dict[str, type[BaseModel]]) -> str:
    """Every field of each algorithm's section, of ``model`` and of each stage's section: its type, default,
    bounds and description (a field printed before with the same text is named, not repeated)."""
    lines = ["Config file: YAML with a 'default:' block (plus optional variants, chosen with --variant).",
             "Override any field with --set dotted.key=value (value parsed as YAML).", ""]
    printed: dict[tuple[str, str], str] = {}

    def walk(cls: type[BaseModel], prefix: str, owner: str = "") -> None:
        schema = cls.model_json_schema()
        defs = schema.get("$defs", {})
        for name, info in cls.model_fields.items():
            if hasattr(info.annotation, "model_fields"):
                lines.append(f"[{prefix}{name}]  {info.description}")
                walk(info.annotation, f"{prefix}{name}.")
                lines.append("")
            elif cls is not model or name not in ("algorithm", "rules"):
                node, choices = schema["properties"][name], schema["properties"][name].get("enum")
                bounds = bound_text(node, defs)
                head = (f"  {prefix}{name}: {type_text(node, defs)} = "
                        f"{info.get_default(call_default_factory=True)!r}"
                        + (f" (one of {', '.join(map(str, choices))})" if choices else "")
                        + (f" [{bounds}]" if bounds else ""))
                doc = [f"      {ln}" for ln in textwrap.wrap(" ".join((info.description or "").split()), 100)]
                first = printed.setdefault((head, "\n".join(doc)), owner)
                lines.extend([head + f"  (as in [algorithm: {first}])"] if first != owner else [head, *doc])

    for name, cls in algorithms.items():
        supports = [f[9:] for f in dir(cls) if f.startswith("supports_") and getattr(cls, f)]
        lines += [f"[algorithm: {name}]  " + " ".join((cls.__doc__ or "").split()),
                  "      Supports: " + ", ".join(supports) + "."]
        walk(cls, "algorithm.", name)
        lines.append("")
    walk(model, "")
    for name, cls in stages.items():
        lines.append(f"[stages.<id> with kind: {name}]  " + " ".join((cls.__doc__ or "").split()))
        walk(cls, f"stages.{name}.", f"stage {name}")
        lines.append("")
    return "\n".join(lines)
