"""The PDE solver track: case definitions, their agent-visible specs and
evaluator-only references, calibration solvers per library track, and the
staged gates (executes -> accurate -> fast) as pure functions.

Module map (no cycles; each imports only those above it):
  model        typed records: case file, case_spec, evaluator-only record
  expressions  the expression language of a case_spec, compiled with numpy
  domains      geometry: masks on the grid, boundary pieces, containment
  manufactured sympy derivation of forcing and per-piece boundary data
  store        deterministic JSON/npz writing and reading of records
  tracks       library tracks: environment check, allowed imports, contract text
  calibration  our own calibration solver per (family, track)
  builder      case file -> (case_spec, evaluator record, reference)
  leak         the leak check: no agent-visible expression passes the accuracy gate
  gates        the three gates, pure functions of arrays and times
  timing       machine calibration times (t_base), stored apart from records
  cli          `cases` sub-app (list, show, build, calibrate, validate)
"""
