"""Options of a coding agent, parsed from its agent spec `name[:key=value,...]`:
one parser for every agent that takes options (OpenHands, mini-swe-agent)."""

from __future__ import annotations

from typing import ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError


class AgentOptions(BaseModel):
    """A subclass declares its fields, `AGENT` (how errors name it) and `ALIASES`
    (short spellings accepted in a spec, mapped to field names)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    AGENT: ClassVar[str]
    ALIASES: ClassVar[dict[str, str]] = {}

    @classmethod
    def parse(cls, text: str) -> Self:
        """`key=value` pairs separated by commas; a bare number is `attempts`."""
        values: dict[str, str] = {}
        for item in (p.strip() for p in text.split(",") if p.strip()):
            key, sep, value = item.partition("=")
            if not sep:
                key, value = "attempts", key
            key = cls.ALIASES.get(key.strip(), key.strip())
            if key not in cls.model_fields:
                spelled_short = {field for alias, field in cls.ALIASES.items() if alias != field}
                known = sorted({*cls.model_fields, *cls.ALIASES} - spelled_short)
                raise ValueError(f"{cls.AGENT}: unknown option {key!r}; known: {', '.join(known)}")
            values[key] = value.strip()
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ValueError(f"{cls.AGENT}: option {first['loc'][0]!r}: {first['msg']}") from None

    def spec_suffix(self) -> str:
        """The options that differ from the defaults, as a spec suffix (for the agent name)."""
        default = type(self)()
        inverse = {field: alias for alias, field in self.ALIASES.items()}
        parts = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value != getattr(default, name):
                shown = f"{value:g}" if isinstance(value, float) else str(value)
                parts.append(f"{inverse.get(name, name)}={shown}")
        return ",".join(parts)
