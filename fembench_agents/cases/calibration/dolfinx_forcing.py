"""A time loop's forcing load, int f(t) v dx, as vectors on the rule of the step's form, and the
rules a step's terms are integrated on (the time loops of dolfinx_reaction.py).

UFL gives a form's cell integral one quadrature rule, estimated from its costliest term: a
forcing that is a product of sines asks for degree 20 to 28 (79 to 130 points a triangle), and
assembling it at every step (or every Newton iteration) was most of a solve. Here:
- `ForcingLoad`: the forcing split into terms a(t) g(x, y) (sympy, where it splits so), each
  int g v dx assembled once and combined with a(t) at each time point; a forcing that does not
  split is assembled once per time point (a step's end is the next step's start).
- `exact_rule`: a polynomial term (a reaction R(u) v with R a polynomial in u) is integrated
  exactly by a rule of its own degree plus the geometry's (the Jacobian determinant of a curved
  P2 cell is quadratic), the same numbers as the form's high rule up to rounding, at a fifth of
  its points.
"""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

from typing import Any

import numpy as np
import sympy as sp
import ufl
from dolfinx import fem
from dolfinx.fem.petsc import assemble_vector
from ufl.corealg.traversal import unique_pre_traversal

from fembench_agents.cases.calibration.dolfinx_common import Setup
from fembench_agents.cases.cube_data import NAMES, T
from fembench_agents.cases.expressions import ExpressionError, compile_expr

# The form compiler's own arguments (ffcx.analysis), so the degree is the one it would estimate.
_FFCX_FORM_DATA = {
    "do_apply_function_pullbacks": True,
    "do_apply_integral_scaling": True,
    "do_apply_geometry_lowering": True,
    "preserve_geometry_types": (ufl.classes.Jacobian,),
    "do_apply_restrictions": True,
    "do_append_everywhere_integrals": False,
    "complex_mode": False,
}
# UFL nodes of a polynomial in the coordinates, the constants and finite element functions
_POLYNOMIAL = (
    ufl.classes.Sum,
    ufl.classes.Product,
    ufl.classes.ScalarValue,
    ufl.classes.Zero,
    ufl.classes.Constant,
    ufl.classes.Coefficient,
    ufl.classes.Argument,
    ufl.classes.SpatialCoordinate,
    ufl.classes.Indexed,
    ufl.classes.MultiIndex,
)


def cell_quadrature_degree(form: ufl.Form) -> int:
    """The quadrature degree the form compiler gives a form's cell integral: the one it states,
    else UFL's estimate for its whole integrand (the terms of a sum share one rule)."""
    data = ufl.algorithms.compute_form_data(form, **_FFCX_FORM_DATA)
    degrees = set()
    for integral_data in data.integral_data:
        if integral_data.integral_type != "cell":
            continue
        for integral in integral_data.integrals:
            md = integral.metadata()
            stated = int(md.get("quadrature_degree", -1))
            degrees.add(stated if stated >= 0 else int(np.max(md["estimated_polynomial_degree"])))
    if len(degrees) != 1:
        raise ValueError(f"expected one cell integral rule in the step's form, got degrees {sorted(degrees)}")
    return degrees.pop()


def cell_part(form: ufl.Form) -> ufl.Form:
    """The form's cell integrals."""
    return ufl.Form([i for i in form.integrals() if i.integral_type() == "cell"])


def facet_part(form: ufl.Form) -> ufl.Form:
    """The form's integrals other than its cell integrals (the boundary pieces' terms)."""
    return ufl.Form([i for i in form.integrals() if i.integral_type() != "cell"])


def on_rule(form: ufl.Form, dx: ufl.Measure) -> ufl.Form:
    """The form's integrals on the quadrature rule of `dx`."""
    return ufl.Form([i.reconstruct(metadata=dx.metadata()) for i in form.integrals()])


def _polynomial(expr: Any) -> bool:
    for node in unique_pre_traversal(expr):
        if isinstance(node, ufl.classes.Power):
            exponent = node.ufl_operands[1]
            if not (isinstance(exponent, ufl.classes.ScalarValue) and float(exponent) == int(float(exponent)) >= 0):
                return False
        elif isinstance(node, ufl.classes.Division):
            if not isinstance(node.ufl_operands[1], ufl.classes.ScalarValue | ufl.classes.Constant):
                return False
        elif not isinstance(node, _POLYNOMIAL):
            return False
    return True


def exact_rule(s: Setup, integrand: Any, degree: int) -> ufl.Measure:
    """The cell measure on which `integrand` integrates as on a rule of `degree`, up to rounding:
    a rule of the integrand's own degree plus the Jacobian determinant's (d (p - 1) on simplices
    of geometry degree p) where the integrand is a polynomial of P2 functions, coordinates and
    constants and that is lower; else `degree` itself."""
    rule = degree
    if _polynomial(integrand):
        geometry = s.domain.geometry.cmaps[0].degree
        own = ufl.algorithms.estimate_total_polynomial_degree(integrand)
        rule = min(degree, int(own) + s.domain.topology.dim * (geometry - 1))
    return ufl.dx(domain=s.domain, metadata={"quadrature_degree": rule})


def _distributed(e: sp.Expr) -> sp.Expr:
    """Products distributed over sums and positive integer powers of sums expanded, outside any
    function's argument."""
    if e.is_Add or e.is_Mul or (e.is_Pow and e.exp.is_Integer and e.exp > 0):
        e = e.func(*(_distributed(a) for a in e.args))
        return sp.expand(e, deep=False, power_exp=False, power_base=False, log=False)
    return e


def separated(text: Any) -> list[tuple[str, str]] | None:
    """A forcing as terms a(t) g(x, y, z), each as (a, g) texts of the expression language, the
    terms of one a(t) gathered; None where a term does not split so (exp(-(x - t)^2)) or sympy
    cannot read it. The top-level products are distributed only (no expansion inside a function:
    cancellation stays where the record wrote it)."""
    try:
        f = _distributed(sp.sympify(str(text), locals=NAMES))
    except (sp.SympifyError, TypeError, ValueError):
        return None
    space = set(NAMES.values()) - {T}
    by_time: dict[sp.Expr, sp.Expr] = {}
    for term in sp.Add.make_args(f):
        g, a = term.as_independent(T, as_Add=False)
        if a.free_symbols & space:
            return None
        by_time[a] = by_time.get(a, sp.Integer(0)) + g
    terms = [(str(a), str(g)) for a, g in by_time.items()]
    try:
        for a, g in terms:
            compile_expr(a), compile_expr(g)
    except ExpressionError:  # a name sympy printed that the language does not have
        return None
    return terms


class ForcingLoad:
    """int f(t) v dx on the measure `dx`, as an array at each time point (module docstring)."""

    def __init__(self, s: Setup, v: Any, dx: ufl.Measure, text: Any) -> None:
        terms = separated(text)
        self._at = fem.Constant(s.domain, 0.0)
        self._last: tuple[float, np.ndarray] | None = None
        if terms is None:
            self._forms = [fem.form(s.expr(text, t=self._at) * v * dx)]
            self._factors = None
            return
        self._forms = [fem.form(s.expr(g) * v * dx) for _, g in terms]
        self._factors = [compile_expr(a) for a, _ in terms]
        self._loads = [self._assemble(form) for form in self._forms]

    @staticmethod
    def _assemble(form: fem.Form) -> np.ndarray:
        b = assemble_vector(form)
        values = b.array.copy()
        b.destroy()
        return values

    def __call__(self, t: float) -> np.ndarray:
        if self._factors is not None:
            total = np.zeros_like(self._loads[0])
            for a, load in zip(self._factors, self._loads, strict=True):
                total += float(a(t=t)) * load
            return total
        if self._last is None or self._last[0] != t:
            self._at.value = np.asarray(t)
            self._last = (t, self._assemble(self._forms[0]))
        return self._last[1]
