"""Options of the OpenHands agent, parsed from the agent spec
`openhands[:key=value,...]` (e.g. `openhands:attempts=3,iterations=20`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

# Short spellings accepted in a spec, mapped to field names.
ALIASES = {
    "iterations": "max_iterations",
    "cost": "max_cost_usd",
    "seconds": "max_seconds",
    "command_seconds": "command_seconds",
}


class OpenHandsOptions(BaseModel):
    """`max_iterations` caps agent steps per attempt (one step = one model call
    and the tool calls it asks for); `max_cost_usd` and `max_seconds` cap the
    whole episode. `attempts` > 1 makes a feedback loop: the evaluator's
    feedback on a failed final file is sent as a new message in the same
    conversation. `command_seconds` is how long one terminal command may run
    without output before the agent gets control back."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    attempts: int = Field(default=1, ge=1)
    max_iterations: int = Field(default=30, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0)
    max_seconds: float = Field(default=900.0, gt=0)
    command_seconds: int = Field(default=30, ge=1)

    @classmethod
    def parse(cls, text: str) -> OpenHandsOptions:
        """`attempts=3,iterations=10,cost=0.5,seconds=600`; a bare number is `attempts`."""
        values: dict[str, str] = {}
        for item in (p.strip() for p in text.split(",") if p.strip()):
            key, sep, value = item.partition("=")
            if not sep:
                key, value = "attempts", key
            key = ALIASES.get(key.strip(), key.strip())
            if key not in cls.model_fields:
                known = sorted({*cls.model_fields, *ALIASES} - {"max_iterations", "max_cost_usd", "max_seconds"})
                raise ValueError(f"openhands agent: unknown option {key!r}; known: {', '.join(known)}")
            values[key] = value.strip()
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ValueError(f"openhands agent: option {first['loc'][0]!r}: {first['msg']}") from None

    def spec_suffix(self) -> str:
        """The options that differ from the defaults, as a spec suffix (for the agent name)."""
        default = OpenHandsOptions()
        inverse = {v: k for k, v in ALIASES.items()}
        parts = [
            f"{inverse.get(name, name)}={getattr(self, name):g}"
            if isinstance(getattr(self, name), float)
            else f"{inverse.get(name, name)}={getattr(self, name)}"
            for name in type(self).model_fields
            if getattr(self, name) != getattr(default, name)
        ]
        return ",".join(parts)
