"""The shared evaluator: the one scoring entry for every caller (runs, `score`,
rescoring, the optimizer, validation). It asks the registry which kind a track
belongs to and hands the attempt to that kind's scorer; the kind brings its
own stages. Scorers are built once per evaluator and shared between threads."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from fembench_agents.kinds import kind_for
from fembench_agents.kinds.contract import AttemptScorer, ScoringOptions
from fembench_agents.scoring.outcomes import OutcomeBase
from fembench_agents.scoring.sandbox import Sandbox


class Evaluator:
    """Scores attempts at every registered kind's problems. Safe to share between threads."""

    def __init__(
        self,
        sandbox: Sandbox,
        scorers: Mapping[str, AttemptScorer] | None = None,
        options: ScoringOptions | None = None,
    ) -> None:
        """`scorers`: by the kinds' `scorer_key`, scorers built with more than the
        sandbox (a PDE scorer with this machine's calibration); the others are
        built on first use."""
        self.sandbox = sandbox
        self.options = options or ScoringOptions()
        self._scorers: dict[str, AttemptScorer] = dict(scorers or {})
        self._lock = threading.Lock()

    def use(self, track: str, scorer: AttemptScorer) -> None:
        """Score `track`'s kind (and every kind sharing its scorer) with `scorer`."""
        with self._lock:
            self._scorers[kind_for(track).scorer_key] = scorer

    def scorer_for(self, track: str) -> AttemptScorer:
        kind = kind_for(track)
        with self._lock:
            scorer = self._scorers.get(kind.scorer_key)
            if scorer is None:
                scorer = self._scorers[kind.scorer_key] = kind.scorer(self.sandbox, self.options)
        return scorer

    def score(self, task: Any, track: str, text: str) -> OutcomeBase:
        """The attempt `text` at `task` on `track`, through that track's stages."""
        return self.scorer_for(track).score(task, track, text)

    def calibration_id(self, track: str) -> str | None:
        """The machine calibration `track`'s verdicts are measured against, if any."""
        return self.scorer_for(track).calibration_id

    def close(self) -> None:
        with self._lock:
            scorers = list(self._scorers.values())
        for scorer in scorers:
            scorer.close()
