"""The typed fact templates (constraint, parameter, trade-off) every fact passes before storage.

Runs on every extractor's output and every human edit: names are canonicalised, units mapped to
canonical units, numbers parsed, and anything that breaks a template raises FactValidationError
whose message names the field ("value: 'fast' is not a number for block_size (unit tokens)").
The templates follow ORKG templates: each kind has fixed fields with types and allowed values,
and each canonical parameter (ontology/data/parameters.json) fixes its unit and value type.
"""
from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from ontology.units import ParsedValue, UnitError, canonical_unit, check_finite, convert, parse_value
from ontology.vocabulary import canonical_parameter, spec_for

FACT_KINDS = ("constraint", "parameter", "trade_off")
# The longest quote a fact may carry, wherever it comes from (extraction, the API, a knowledge pack):
# enough for the sentence that states a fact, short enough to ship with attribution.
MAX_QUOTE = 300
# A symbolic value papers give for a size ("H" elements, "Cmem/Skv"): one letter, or a ratio of names.
SYMBOL_RE = re.compile(r"[A-Za-z](?:_?[A-Za-z0-9])?|[A-Za-z]\w*\s*[/*]\s*[A-Za-z]\w*")
VERSION_RE = re.compile(r"v?\d+(?:\.\d+)+[a-z0-9.+-]*", re.IGNORECASE)


class FactValidationError(ValueError):
    """A fact that breaks its template; the message names each offending field."""

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        super().__init__("; ".join(f"{field}: {message}" for field, message in errors))


class _FactBase(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    subject: str = Field(min_length=1, max_length=200)
    parameter: str = Field(min_length=1, max_length=120)
    value: str | None = Field(default=None, max_length=200)
    unit: str | None = Field(default=None, max_length=30)
    condition: str | None = Field(default=None, max_length=1000)
    effect: str | None = Field(default=None, max_length=1000)
    page: int | None = Field(default=None, ge=1, le=10000)
    quote: str = Field(min_length=3, max_length=MAX_QUOTE)
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    extractor: str = Field(default="human", min_length=1, max_length=40)

    @model_validator(mode="before")
    @classmethod
    def _scaled_unit_joins_its_value(cls, data: Any) -> Any:
        """A bare number with a unit that converts by a factor ("0.5" in "s") keeps its unit in the
        value text ("0.5 s"): the unit field becomes the canonical one (ms), and the number must keep
        meaning 500 ms rather than 0.5 ms. A value that states its own unit is left as it is."""
        if not isinstance(data, dict) or not isinstance(data.get("unit"), str) or data.get("value") in (None, ""):
            return data
        try:
            _, factor = canonical_unit(data["unit"])
            own_unit = parse_value(str(data["value"]), None).unit
        except (UnitError, ValueError):
            return data  # the field validators name the problem
        if factor == 1.0 or own_unit is not None or not parse_value(str(data["value"]), None).is_number:
            return data
        return {**data, "value": f"{data['value']} {data['unit'].strip()}"}

    @field_validator("value", mode="before")
    @classmethod
    def _value_to_text(cls, value: Any) -> str | None:
        if value is None or value == "":
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError(f"must be a number or a short string, got {type(value).__name__}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("must be a finite number")
        check_finite(str(value))
        return str(value)

    @field_validator("parameter")
    @classmethod
    def _canonical_parameter(cls, name: str) -> str:
        canon = canonical_parameter(name)
        if not re.fullmatch(r"[a-z][a-z0-9_]*", canon):
            raise ValueError(f"{name!r} is not a snake_case parameter name")
        return canon

    @field_validator("unit")
    @classmethod
    def _canonical_unit(cls, unit: str | None) -> str | None:
        try:
            return canonical_unit(unit)[0] if unit else None
        except UnitError as exc:
            raise ValueError(str(exc)) from exc

    @field_validator("condition", "effect")
    @classmethod
    def _empty_to_none(cls, text: str | None) -> str | None:
        return text or None

    def parsed(self) -> ParsedValue:
        """The value as canonical numbers in the parameter's unit (see ontology.units)."""
        spec = spec_for(self.parameter)
        parsed = parse_value(self.value, self.unit)
        target = spec.unit if spec and spec.unit else None
        if parsed.is_number and target and parsed.unit and parsed.unit != target:
            try:
                factor = convert(1.0, parsed.unit, target)
            except UnitError:
                return parsed
            parsed.num, parsed.unit = parsed.num * factor, target
            parsed.low = parsed.low * factor if parsed.low is not None else None
            parsed.high = parsed.high * factor if parsed.high is not None else None
            parsed.items = [item * factor for item in parsed.items]
        return parsed


class _ValuedFact(_FactBase):
    @model_validator(mode="after")
    def _value_fits_template(self) -> _ValuedFact:
        if self.value is None:
            raise ValueError("value: a constraint or parameter needs the value the paper states")
        spec = spec_for(self.parameter)
        if spec is None:
            return self
        if spec.value_type == "number" and not parse_value(self.value, self.unit).is_number and not SYMBOL_RE.fullmatch(
            self.value
        ):
            raise ValueError(f"value: {self.value!r} is not a number for {spec.name} (unit {spec.unit})")
        if spec.value_type == "version" and not VERSION_RE.search(self.value):
            raise ValueError(f"value: {self.value!r} is not a version number (like 12.1 or v0.4.2)")
        return self


class ConstraintFact(_ValuedFact):
    """A requirement or limit under which a system works or a number holds (GPU, CUDA, memory...)."""

    kind: Literal["constraint"]


class ParameterFact(_ValuedFact):
    """A knob or design constant and the value the paper uses or recommends."""

    kind: Literal["parameter"]


class TradeOffFact(_FactBase):
    """Changing a knob improves one metric and worsens another; `effect` says which."""

    kind: Literal["trade_off"]

    @model_validator(mode="after")
    def _needs_effect(self) -> TradeOffFact:
        if not self.effect:
            raise ValueError("effect: a trade-off needs one sentence on what improves and what worsens")
        return self


FactData = Annotated[ConstraintFact | ParameterFact | TradeOffFact, Field(discriminator="kind")]
_ADAPTER: TypeAdapter[FactData] = TypeAdapter(FactData)


def _field_errors(exc: ValidationError) -> list[tuple[str, str]]:
    errors = []
    for error in exc.errors():
        loc = [str(part) for part in error["loc"] if part not in {"constraint", "parameter", "trade_off"}]
        message = str(error["msg"]).removeprefix("Value error, ")
        field, sep, rest = message.partition(": ")
        if not loc and sep and field.isidentifier():
            loc, message = [field], rest
        errors.append((".".join(loc) or "fact", message))
    return errors


def validate_fact(data: dict[str, Any]) -> FactData:
    """Validate one fact dict against its kind's template; raise FactValidationError naming fields."""
    if not isinstance(data, dict):
        raise FactValidationError([("fact", f"must be a JSON object, got {type(data).__name__}")])
    if data.get("kind") not in FACT_KINDS:
        raise FactValidationError([("kind", f"{data.get('kind')!r} is not one of {', '.join(FACT_KINDS)}")])
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        raise FactValidationError(_field_errors(exc)) from None
