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


def safe_load_bounded(text: str) -> Any:
    """``yaml.safe_load`` within the bounds above (ConfigError; a syntax error is ``yaml.YAMLError``)."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{len(text):,} characters, more than the {MAX_CONFIG_BYTES:,} allowed")
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _parse(text: str, where: str, what: str = "") -> Any:
    """:func:`safe_load_bounded`; every error a ConfigError naming ``where``."""
    try:
        return safe_load_bounded(text)
    except yaml.YAMLError as e:
        at = getattr(e, "problem_mark", None)
        at = f"line {at.line + 1}, column {at.column + 1}: " if at is not None else ""
        problem = short_repr(str(getattr(e, "problem", None) or e), 200).strip("'\"")
        raise ConfigError(f"{where}{what} is not valid YAML: {at}{problem}") from None
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None


def load_raw(path: str | Path, variant: str | None = None) -> dict[str, Any]:
    """A config file's ``default`` block, merged with ``variant``'s if given (not validated)."""
    where = f"config file {str(path)!r}"
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
        text = data.decode("utf-8") if len(data) <= MAX_CONFIG_BYTES else ""
    except OSError as e:
        raise ConfigError(f"cannot read {where}: "
                          + ("it is a folder" if Path(path).is_dir() else str(e.strerror or e))) from None
    except UnicodeDecodeError:
        raise ConfigError(f"cannot read {where}: not UTF-8 text") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{where}: more than the {MAX_CONFIG_BYTES:,} allowed bytes")
    doc = _parse(text, where)
    if not isinstance(doc, dict) or "default" not in doc:
        raise ConfigError(f"{where} must be a mapping with a 'default:' block (plus optional named variants)")
    for k, v in doc.items():
        if v is not None and not isinstance(v, dict):
            raise ConfigError(f"{where}: {short_repr(k)} must be a mapping")
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
    return key.split("."), _parse(raw, f"--set {shown}", ": value") if raw else ""


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


def _node(schema: dict[str, Any], loc: tuple[Any, ...]) -> tuple[dict[str, Any], str]:
    """The sub-schema at pydantic's error location ``loc`` (union tags skipped) and its key path."""
    defs, node, path = schema.get("$defs", {}), schema, ""
    for part in loc:
        for o in (_deref(o, defs) for o in _deref(node, defs).get("anyOf", [_deref(node, defs)])):
            sub = o.get("items") if isinstance(part, int) else (
                o.get("properties", {}).get(part) or o.get("additionalProperties"))
            if isinstance(sub, dict):
                node, path = sub, path + (f"[{part}]" if isinstance(part, int) else f".{part}")
                break
    return _deref(node, defs), path.lstrip(".")


def _deref(n: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    return defs[n["$ref"].split("/")[-1]] if "$ref" in n else n


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
    n = int(x) if float(x).is_integer() else None
    if n is None or n < 10**6:
        return repr(x) if n is None else str(n)
    if n == 2**63 - 1 or (n > 2**32 and n & (n - 1) == 0):
        return "2**63 - 1" if n & 1 else f"2**{n.bit_length() - 1}"
    return f"10**{len(str(n)) - 1}" if str(n).rstrip("0") == "1" else str(n)


def bound_text(node: dict[str, Any], defs: dict[str, Any] | None = None) -> str:
    """What a field allows (``"an integer from 1 to 16384"``, ``"a number > 0 or null"``, ``"1 to 8 items,
    each ..."``); "" for a field without bounds."""
    options = [_deref(o, defs or {}) for o in node.get("anyOf", [node])]
    null = " or null" if any(o.get("type") == "null" for o in options) else ""
    for o in options:
        if (hi := o.get("maxItems", o.get("maxProperties"))) is not None:
            each = bound_text(o.get("items") or o.get("additionalProperties") or {}, defs)
            lo = o.get("minItems", o.get("minProperties", 0))
            return f"{lo} to {hi} items" + (f", each {each}" if each else "") + null
        if (lo := o.get("minItems", o.get("minProperties"))) is not None:
            return f"at least {lo} item{'s' * (lo != 1)}{null}"
        lo_x, hi_x = "exclusiveMinimum" in o, "exclusiveMaximum" in o
        lo, hi = o.get("minimum", o.get("exclusiveMinimum")), o.get("maximum", o.get("exclusiveMaximum"))
        kind = "an integer" if o.get("type") == "integer" else "a number"
        if lo is not None and hi is not None:
            if kind == "an integer" and not lo_x and not hi_x:
                return f"{kind} from {_number(lo)} to {_number(hi)}{null}"
            return f"{kind} in {'(['[not lo_x]}{_number(lo)}, {_number(hi)}{')]'[not hi_x]}{null}"
        if lo is not None or hi is not None:
            op = (">" if lo_x else ">=") if lo is not None else ("<" if hi_x else "<=")
            return f"{kind} {op} {_number(lo if lo is not None else hi)}{null}"
    return ""


def validated(cls: type[BaseModel], data: Any, prefix: str = "", keys_text: str | None = None) -> Any:
    """``cls.model_validate(data)``; a ValidationError becomes one ConfigError line naming the key path and
    what it allows (a validator's ValueError keeps its message)."""
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    schema = cls.model_json_schema()
    defs = schema.get("$defs", {})
    node, path = _node(schema, tuple(errors[0]["loc"]))
    same = [e for e in errors if _node(schema, tuple(e["loc"]))[1] == path]
    kinds, first = {e["type"] for e in same}, same[0]
    key, got = (prefix + path).replace(".[", "[") or "config", first.get("input")
    if "extra_forbidden" in kinds:
        parent = _node(schema, tuple(first["loc"][:-1]))[0]
        text = did_you_mean(first["loc"][-1], f"{prefix}{path}." if path else prefix,
                            list(parent.get("properties", {})), keys_text)
        raise text from None
    if kinds & {"greater_than", "greater_than_equal", "less_than", "less_than_equal", "too_long",
                 "too_short"}:
        size = f"{len(got)} items" if isinstance(got, list | dict) else short_repr(got)
        text = f"expected {bound_text(node, defs)}, got {size}"
    elif kinds & {"literal_error", "enum"}:
        options = node.get("enum") or ([node["const"]] if "const" in node else [])
        allowed = ", ".join(map(repr, options)) or first.get("ctx", {}).get("expected", "?")
        text = f"{short_repr(got)} is not one of {allowed}"
    elif "value_error" in kinds:
        text = str(first["ctx"]["error"])
    elif "finite_number" in kinds:
        text = f"expected a finite number, got {short_repr(got)}"
    else:
        text = f"expected {type_text(node, defs)}, got {short_repr(got)} ({type(got).__name__})"
    raise ConfigError(f"config key {key!r}: {text}") from None


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
