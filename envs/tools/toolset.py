"""Tools as typed Python callables, and toolsets: registries of tools over one stateful backend.

A tool's signature is the single source of truth: pydantic builds a strict argument model from the type hints,
which gives both the JSON schema shown to the model (OpenAI function format) and the validation at call time.
The first parameter of every tool function is the backend state (`world`) and is not part of the schema.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable, Iterable
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

_PARAM_ERRORS = frozenset({"missing", "extra_forbidden"})


class ToolError(Exception):
    """Raised by a tool for a failure the model should see (unknown city, no such flight, ...)."""


class ToolOutcome(BaseModel):
    """What executing one call produced: a result, or a structured error."""

    ok: bool
    result: Any = None
    error_kind: str | None = None  # unknown_tool / schema / runtime / unresolved_reference
    error: str | None = None
    field: str | None = None
    arguments: dict[str, Any] | None = None  # the validated arguments, defaults filled in (when they validated)
    param_errors: int = 0  # missing or undeclared parameters (TIER's parameter count)
    type_errors: int = 0  # values of the wrong type or outside the allowed values (TIER's type count)

    def as_content(self) -> str:
        """The tool message content the model sees."""
        if self.ok:
            return json.dumps({"result": self.result}, ensure_ascii=False)
        body = {"kind": self.error_kind, "message": self.error}
        if self.field:
            body["field"] = self.field
        return json.dumps({"error": body}, ensure_ascii=False)


class Tool:
    """One typed tool. `meta` carries generator hints (return tag, parameter tags, phrase template)."""

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None, **meta: Any) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        doc = inspect.getdoc(fn) or ""
        self.description = doc.split("\n\n")[0].replace("\n", " ").strip()
        self.meta = meta
        hints = get_type_hints(fn, include_extras=True)
        params = list(inspect.signature(fn).parameters.values())[1:]  # drop the backend argument
        fields: dict[str, Any] = {}
        for param in params:
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (hints.get(param.name, Any), default)
        self.args_model: type[BaseModel] = create_model(  # type: ignore[call-overload]
            f"{self.name}_arguments", __config__=ConfigDict(extra="forbid", strict=True), **fields
        )
        self.parameters = _clean_schema(self.args_model.model_json_schema())

    @property
    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def run(self, world: Any, arguments: dict[str, Any]) -> ToolOutcome:
        """Validate strictly, then call. Never raises."""
        try:
            parsed = self.args_model.model_validate(arguments)
        except ValidationError as exc:
            errors = exc.errors()
            params = sum(1 for e in errors if e["type"] in _PARAM_ERRORS)
            first = errors[0]
            field = ".".join(str(p) for p in first.get("loc", ())) or None
            return ToolOutcome(
                ok=False,
                error_kind="schema",
                field=field,
                param_errors=params,
                type_errors=len(errors) - params,
                error=f"{field or 'arguments'}: {first.get('msg', 'invalid')}",
            )
        values = {k: getattr(parsed, k) for k in type(parsed).model_fields}
        try:
            return ToolOutcome(ok=True, result=self.fn(world, **values), arguments=values)
        except ToolError as exc:
            return ToolOutcome(ok=False, error_kind="runtime", error=str(exc), arguments=values)
        except Exception as exc:  # a tool bug is still an answerable error, never a crash of the loop
            return ToolOutcome(ok=False, error_kind="runtime", error=f"{type(exc).__name__}: {exc}", arguments=values)


def tool(**meta: Any) -> Callable[[Callable[..., Any]], Tool]:
    """Decorator: turn a function `(world, ...typed params) -> result` into a `Tool`."""

    def wrap(fn: Callable[..., Any]) -> Tool:
        return Tool(fn, **meta)

    return wrap


class Toolset:
    """A registry of tools plus a factory of fresh backend state (one per episode)."""

    def __init__(self, tools: Iterable[Tool], world_factory: Callable[[], Any]) -> None:
        self.tools = {t.name: t for t in tools}
        self.world_factory = world_factory

    def __contains__(self, name: str) -> bool:
        return name in self.tools

    def __getitem__(self, name: str) -> Tool:
        return self.tools[name]

    def names(self) -> list[str]:
        return list(self.tools)

    def schemas(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        chosen = self.tools if names is None else {n: self.tools[n] for n in names if n in self.tools}
        return [t.schema for t in chosen.values()]

    def new_world(self) -> Any:
        return copy.deepcopy(self.world_factory())

    def execute(self, world: Any, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if name not in self.tools:
            return ToolOutcome(ok=False, error_kind="unknown_tool", error=f"unknown tool {name!r}")
        return self.tools[name].run(world, arguments)


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's titles; inline nothing else (the tools use flat scalar/Literal parameters)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    out = strip(schema)
    out.setdefault("properties", {})
    out.setdefault("required", [])
    out["additionalProperties"] = False
    return out


__all__ = ["Tool", "ToolError", "ToolOutcome", "Toolset", "tool"]
