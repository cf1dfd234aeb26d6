"""Options of the mini-swe-agent solver, parsed from the agent spec
`mini-swe-agent[:key=value,...]` (e.g. `mini-swe-agent:attempts=3,steps=20`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

# Short spellings accepted in a spec, mapped to field names.
ALIASES = {"steps": "max_steps", "cost": "max_cost_usd", "seconds": "max_seconds"}


class MiniSweOptions(BaseModel):
    """`max_steps` caps the agent's steps per attempt (one step: one model
    call and the one command it asks for); `max_cost_usd` and `max_seconds`
    cap the whole episode. `attempts` > 1 sends the evaluator's feedback on a
    failed final file as a new message of the same conversation.
    `command_seconds` is how long one command may run before it is killed."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    attempts: int = Field(default=1, ge=1)
    max_steps: int = Field(default=30, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0)
    max_seconds: float = Field(default=900.0, gt=0)
    command_seconds: int = Field(default=30, ge=1)

    @classmethod
    def parse(cls, text: str) -> MiniSweOptions:
        """`attempts=3,steps=10,cost=0.5,seconds=600`; a bare number is `attempts`."""
        values: dict[str, str] = {}
        for item in (p.strip() for p in text.split(",") if p.strip()):
            key, sep, value = item.partition("=")
            if not sep:
                key, value = "attempts", key
            key = ALIASES.get(key.strip(), key.strip())
            if key not in cls.model_fields:
                known = sorted({*cls.model_fields, *ALIASES} - set(ALIASES.values()))
                raise ValueError(f"mini-swe-agent: unknown option {key!r}; known: {', '.join(known)}")
            values[key] = value.strip()
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ValueError(f"mini-swe-agent: option {first['loc'][0]!r}: {first['msg']}") from None

    def spec_suffix(self) -> str:
        """The options that differ from the defaults, as a spec suffix (for the agent name)."""
        default = MiniSweOptions()
        inverse = {v: k for k, v in ALIASES.items()}
        parts = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value != getattr(default, name):
                parts.append(
                    f"{inverse.get(name, name)}={value:g}"
                    if isinstance(value, float)
                    else f"{inverse.get(name, name)}={value}"
                )
        return ",".join(parts)
