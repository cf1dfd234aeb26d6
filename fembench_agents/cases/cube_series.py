"""The reference of a transient heat record on the unit cube without a manufactured solution,
where its data allows one: the series of the cube's Dirichlet eigenfunctions, each mode
integrated in time exactly, with a stated bound on what the truncation leaves out.

The problem it solves: u_t = kappa lap u + c on (t0, t_end), u = 0 on the six faces, u(t0) = g,
with kappa and c constants and g a sum of products g1(x) g2(y) g3(z) (the published two:
`heat_3d_gaussian_ic`, a Gaussian about the centre and no source; `heat_3d_source_only`, a unit
source from zero). With phi_ijk = sin(i pi x) sin(j pi y) sin(k pi z), lambda_ijk = pi^2 (i^2 +
j^2 + k^2) and tau = t_end - t0, each mode decays or fills in exactly:

    u(tau) = sum a_ijk e^{-kappa lambda tau} phi_ijk + (c / kappa) (W - sum W_ijk e^{-kappa lambda tau} phi_ijk)

where a_ijk = b_i(g1) b_j(g2) b_k(g3) per product, b_i(h) = 2 int_0^1 h(s) sin(i pi s) ds
(Gauss-Legendre), W solves -lap W = 1 with W = 0 on the faces and W_ijk = (4/pi)^3 / (i j k
lambda) for odd i, j, k (0 otherwise). The decaying sums converge as e^{-kappa pi^2 N^2 tau};
W's own series only as 1/N, so its x index is summed in closed form (the 1D problem -X'' +
m^2 X = 1, X(0) = X(1) = 0):

    W = sum_{j, k odd} 16 / (pi^2 j k) X_jk(x) sin(j pi y) sin(k pi z),
    X_jk = (1 - cosh(m (x - 1/2)) / cosh(m / 2)) / m^2,  m^2 = pi^2 (j^2 + k^2).

Bounds on the sup norm of what N modes per axis leave out (so on every grid point), with
E(N) = sum_{i > N} e^{-kappa pi^2 i^2 tau} (bounded by its first term over one minus the ratio
of the next):
- a product's decaying part: eps_x M_y M_z + M_x eps_y M_z + M_x M_y eps_z, with |b_i| <= B =
  2 int |h| on each axis, eps = B E(N), M = B E(0);
- W's transient: (4/pi)^3 / (3 pi^2) 3 E(N) E(0)^2 (|W_ijk| <= (4/pi)^3 / (3 pi^2));
- W: (16 / pi^4) (2 + ln N) / N^2 (|X_jk| <= 1/m^2, and sum over max(j, k) > N of 1 / (j k (j^2 +
  k^2)) <= 2 sum_{j > N} (1.5 + ln j) / j^3 <= (2 + ln N) / N^2).
The relative bound on the grid is their sum, times |c| / kappa for W's, over the reference's
root mean square (a relative L2 error on the grid is at most the sup of the error over the RMS).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from fembench_agents.cases.case_spec import CaseSpec
from fembench_agents.cases.cube_data import NAMES, X, Y, Z

SOLVER = "series:cube-dirichlet-eigenfunctions"  # the hidden record's reference_check.solver
FIRST_MODES = 16  # modes per axis of the first truncation; doubled until the bound is within TARGET
MAX_MODES = 4096  # W's (j, k) pairs: 2048^2 odd ones, summed in chunks
TARGET = 1e-5  # relative bound on the grid the truncation aims at (the check asks 1/20 of tau_acc)
QUADRATURE_EXTRA = 64  # Gauss-Legendre points beyond 2N for the 1D coefficients of N modes
# The decaying sums stop where e^{-kappa pi^2 n^2 tau} is below e^{-DECAYED} (their tail bound says
# what is left); W's transient is a 3D tensor of those modes, at most MAX_DECAYING per axis.
DECAYED = 50.0
MAX_DECAYING = 128
CHUNK = 64  # W's j indices summed at once: (64, modes / 2, nx) values


class SeriesUnavailable(ValueError):
    """The record's data is not what the series solves: the message names what differs."""


@dataclass(frozen=True)
class SeriesReference:
    u: np.ndarray  # (nz, ny, nx)
    modes: int  # per axis
    relative_bound: float  # on the relative L2 error on the grid
    coarser: np.ndarray  # the same series with modes // 2, for the record's distances


@dataclass(frozen=True)
class _Data:
    kappa: float
    source: float
    tau: float
    products: list[tuple[float, tuple[sp.Expr, sp.Expr, sp.Expr]]]  # coeff, (g1(x), g2(y), g3(z))


def _data(spec: CaseSpec) -> _Data:
    """The case's data as the series reads it; SeriesUnavailable naming what differs."""
    if spec.family != "heat" or spec.time is None or spec.grid.nz is None:
        raise SeriesUnavailable(f"the series solves transient heat on the unit cube; got {spec.family}")
    k = spec.coefficients.get("k")
    if not isinstance(k, int | float):
        raise SeriesUnavailable(f"its conductivity {k!r} is not a constant")
    nonzero = [p.name for p in spec.boundary if p.kind != "dirichlet" or not sp.sympify(str(p.value)).is_zero]
    if nonzero:
        raise SeriesUnavailable(f"its boundary data is not zero Dirichlet on faces {', '.join(nonzero)}")
    source = sp.sympify(str(spec.forcing), locals=NAMES)
    if not source.is_number:
        raise SeriesUnavailable(f"its source {spec.forcing} is not a constant")
    tau = spec.time.t_end - spec.time.t0
    _decaying_modes(float(k) * math.pi**2 * tau)  # refuses an interval too short for the series
    products = []
    for term in sp.Add.make_args(sp.sympify(str(spec.initial or "0"), locals=NAMES)):
        if term.is_zero:
            continue
        parts = sp.separatevars(term, [X, Y, Z], dict=True)
        if not parts or parts[X].has(Y, Z, NAMES["t"]) or parts[Y].has(X, Z) or parts[Z].has(X, Y):
            raise SeriesUnavailable(f"its initial term {term} is not a product of functions of x, y and z")
        products.append((float(parts["coeff"]), (parts[X], parts[Y], parts[Z])))
    return _Data(float(k), float(source), tau, products)


def why_not(spec: CaseSpec) -> str | None:
    try:
        _data(spec)
    except SeriesUnavailable as exc:
        return str(exc)
    return None


def _sine_coefficients(h: sp.Expr, axis: sp.Symbol, modes: int) -> tuple[np.ndarray, float]:
    """b_1..b_modes of h on [0, 1] and B = 2 int |h| (every |b_i| is at most B)."""
    nodes, weights = np.polynomial.legendre.leggauss(2 * modes + QUADRATURE_EXTRA)
    s, w = (nodes + 1) / 2, weights / 2
    values = np.broadcast_to(np.asarray(sp.lambdify(axis, h, "numpy")(s), dtype=float), s.shape)
    i = np.arange(1, modes + 1)
    return 2 * np.sin(np.pi * np.outer(i, s)) @ (w * values), 2 * float(w @ np.abs(values))


def _decay_tail(n: int, rate: float) -> float:
    """E(n) = sum_{i > n} e^{-rate i^2}, bounded: its first term over 1 - the next ratio."""
    first = math.exp(-rate * (n + 1) ** 2)
    return first / (1 - math.exp(-rate * (2 * n + 3)))


def _steady(xs: np.ndarray, ys: np.ndarray, zs: np.ndarray, modes: int) -> np.ndarray:
    """W (-lap W = 1, zero on the faces) at the grid, (nz, ny, nx), its x index in closed form."""
    odd = np.arange(1, modes + 1, 2, dtype=float)
    sy, sz = np.sin(np.pi * np.outer(odd, ys)), np.sin(np.pi * np.outer(odd, zs))
    out = np.zeros((zs.size, ys.size, xs.size))
    d = np.abs(xs - 0.5)
    for a in range(0, odd.size, CHUNK):
        j = odd[a : a + CHUNK, None]
        m = np.pi * np.sqrt(j**2 + odd[None, :] ** 2)
        # cosh(m d) / cosh(m / 2) without overflow
        ratio = np.exp(m[..., None] * (d - 0.5)) * (1 + np.exp(-2 * m[..., None] * d)) / (1 + np.exp(-m[..., None]))
        x_part = (1 - ratio) / m[..., None] ** 2 * (16 / (np.pi**2 * j[..., None] * odd[None, :, None]))
        out += np.einsum("jkx,jy,kz->zyx", x_part, sy[a : a + CHUNK], sz, optimize=True)
    return out


def _decaying(
    coefficients: list[np.ndarray], grids: tuple[np.ndarray, np.ndarray, np.ndarray], rate: float
) -> np.ndarray:
    """prod over axes of sum_i b_i e^{-rate i^2} sin(i pi s): one separable decaying product."""
    factors = []
    for b, s in zip(coefficients, grids, strict=True):
        i = np.arange(1, b.size + 1)
        factors.append((b * np.exp(-rate * i**2)) @ np.sin(np.pi * np.outer(i, s)))
    return np.einsum("x,y,z->zyx", *factors)


def _decaying_modes(rate: float) -> int:
    """Modes per axis of the decaying sums: where e^{-rate n^2} is below e^{-DECAYED}."""
    n = math.ceil(math.sqrt(DECAYED / rate))
    if n > MAX_DECAYING:
        raise SeriesUnavailable(
            f"its interval is too short for the series: kappa pi^2 tau = {rate:.2g} needs {n} decaying modes "
            f"per axis (at most {MAX_DECAYING})"
        )
    return n


def _series(spec: CaseSpec, data: _Data, modes: int) -> tuple[np.ndarray, float]:
    """u at the grid with `modes` per axis (the decaying sums with as many as they need, at most
    `modes`) and the sup bound of what it leaves out."""
    g = spec.grid
    assert g.nz is not None  # _data: a cube grid
    gx, gy, gz = (np.linspace(g.bbox[2 * a], g.bbox[2 * a + 1], n) for a, n in enumerate((g.nx, g.ny, g.nz)))
    grids = (gx, gy, gz)
    rate = data.kappa * math.pi**2 * data.tau
    n = min(modes, _decaying_modes(rate))
    tail, whole = _decay_tail(n, rate), _decay_tail(0, rate)
    u = np.zeros((g.nz, g.ny, g.nx))
    bound = 0.0
    for coeff, parts in data.products:
        fitted = [_sine_coefficients(h, axis, n) for h, axis in zip(parts, (X, Y, Z), strict=True)]
        u += coeff * _decaying([b for b, _ in fitted], grids, rate)  # type: ignore[arg-type]
        eps = [big * tail for _, big in fitted]
        top = [big * whole for _, big in fitted]
        bound += abs(coeff) * (eps[0] * top[1] * top[2] + top[0] * eps[1] * top[2] + top[0] * top[1] * eps[2])
    if data.source != 0:
        i = np.arange(1, n + 1, dtype=float)
        odd = np.where(i % 2 == 1, 1.0 / i, 0.0)
        lam = math.pi**2 * (i[:, None, None] ** 2 + i[None, :, None] ** 2 + i[None, None, :] ** 2)
        w_modes = (
            (4 / math.pi) ** 3 * np.einsum("i,j,k->ijk", odd, odd, odd) / lam * np.exp(-data.kappa * lam * data.tau)
        )
        s = [np.sin(np.pi * np.outer(i, grid)) for grid in grids]
        transient = np.einsum("ijk,ix,jy,kz->zyx", w_modes, *s, optimize=True)
        u += data.source / data.kappa * (_steady(gx, gy, gz, modes) - transient)
        w_bound = 16 / math.pi**4 * (2 + math.log(modes)) / modes**2
        t_bound = (4 / math.pi) ** 3 / (3 * math.pi**2) * 3 * tail * whole**2
        bound += abs(data.source) / data.kappa * (w_bound + t_bound)
    return u, bound


def heat_series(spec: CaseSpec) -> SeriesReference:
    """The series with the fewest modes per axis (16, 32, ...) whose relative bound is within
    TARGET (or MAX_MODES); without a source the decaying sums' own count. SeriesUnavailable where
    the data is not what it solves."""
    data = _data(spec)
    modes = FIRST_MODES if data.source else _decaying_modes(data.kappa * math.pi**2 * data.tau)
    coarser, _ = _series(spec, data, modes // 2)
    while True:
        u, bound = _series(spec, data, modes)
        rms = float(np.sqrt(np.mean(u**2)))
        relative = bound / rms if rms > 0 else math.inf
        if relative <= TARGET or modes >= MAX_MODES or not data.source:
            return SeriesReference(u=u, modes=modes, relative_bound=relative, coarser=coarser)
        coarser, modes = u, 2 * modes
