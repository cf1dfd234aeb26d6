"""Our own calibration solvers, one module per library track. Each solver has
the solver contract of the track, `solve(case_spec: dict) -> dict`, reads only
the agent-visible case_spec, and must pass all three gates of its own case."""
