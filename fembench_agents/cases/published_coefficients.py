"""The coefficients of a published record (`pde.coefficients`, `pde.pde_params`) as
our families name them: kappa -> k, epsilon and beta -> eps and b, a reaction
term as published_terms.py reads it -> D and R, Lame's lambda
and mu -> E and nu (exactly: E = mu (3 lambda + 2 mu) / (lambda + mu), nu = lambda
/ (2 (lambda + mu))); anything else is excluded with what the record gives."""

from __future__ import annotations

from typing import Any

from fembench_agents.cases.model import FLOW_FAMILIES
from fembench_agents.cases.published_domains import Excluded, show, sym
from fembench_agents.cases.published_terms import diffusion, reaction_term


def published_coefficients(family: str, pde: dict[str, Any]) -> dict[str, Any]:
    """Our coefficients (names as in manufactured.EQUATIONS) from a published record's pde."""
    params = pde.get("pde_params") or {}
    if family in ("poisson", "heat"):
        kappa = (pde.get("coefficients") or {}).get("kappa", {"type": "constant", "value": 1.0})
        if kappa.get("type") == "constant":
            return {"k": float(kappa["value"])}
        if kappa.get("type") == "expr":
            return {"k": show(sym(kappa["expr"]))}
        raise Excluded(f"coefficient kind not read: kappa of type {kappa.get('type')!r}")
    if family == "convection_diffusion":
        return {"eps": float(params["epsilon"]), "b": [show(sym(b)) for b in params["beta"]]}
    if family == "reaction_diffusion":
        return {"D": diffusion(params), "R": show(reaction_term(params))}
    if family == "biharmonic":
        return {}
    if family == "helmholtz":
        return {"k": float(params["k"])}
    if family in (*FLOW_FAMILIES, "burgers"):
        if "nu" not in params:
            raise Excluded(f"coefficient kind not read: {family} given by {sorted(params)}")
        return {"nu": float(params["nu"])}
    if family == "wave":
        if "c" not in params:
            raise Excluded(f"coefficient kind not read: wave given by {sorted(params)}")
        return {"c": float(params["c"])}
    if family == "elasticity":
        if "E" not in params and {"lambda", "mu"} <= set(params):  # Lame's parameters, as E and nu exactly
            lam, mu = float(params["lambda"]), float(params["mu"])
            return {"E": mu * (3 * lam + 2 * mu) / (lam + mu), "nu": lam / (2 * (lam + mu))}
        if "E" not in params or "nu" not in params:
            raise Excluded(f"coefficient kind not read: elasticity given by {sorted(params)}")
        return {"E": float(params["E"]), "nu": float(params["nu"])}
    raise Excluded(f"family not in this track yet: {family}")
