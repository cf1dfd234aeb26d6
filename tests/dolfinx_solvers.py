"""Hand-written DOLFINx 0.11 solver attempts for the PDE case
`poisson_square_smooth` (-div(k grad u) = f on the unit square, Dirichlet data
per boundary piece), as a model would write them: source text, scored through
the real sandbox. `program(...)` varies one thing at a time: the sign of the
forcing, the preconditioner, extra C compiler flags for the form compiler."""

from __future__ import annotations

CASE = "poisson_square_smooth"

_TEMPLATE = """
from mpi4py import MPI
import numpy as np
import ufl
import dolfinx.jit
from dolfinx import fem, geometry, mesh
from dolfinx.fem.petsc import LinearProblem

_NP = {{"sin": np.sin, "cos": np.cos, "exp": np.exp, "sqrt": np.sqrt, "pi": np.pi}}
_UFL = {{"sin": ufl.sin, "cos": ufl.cos, "exp": ufl.exp, "sqrt": ufl.sqrt, "pi": np.pi}}


def on_segment(x, y, a, b):
    (ax, ay), (bx, by) = a, b
    cross = np.abs((bx - ax) * (y - ay) - (by - ay) * (x - ax))
    return (cross < 1e-10) & (np.minimum(ax, bx) - 1e-10 <= x) & (x <= np.maximum(ax, bx) + 1e-10) & (
        np.minimum(ay, by) - 1e-10 <= y) & (y <= np.maximum(ay, by) + 1e-10)


def solve(case_spec):
    n = 64
    domain = mesh.create_unit_square(MPI.COMM_WORLD, n, n)
    V = fem.functionspace(domain, ("Lagrange", 2))
    X = ufl.SpatialCoordinate(domain)
    k = eval(str(case_spec["coefficients"]["k"]), {{"__builtins__": {{}}, **_UFL}}, {{"x": X[0], "y": X[1]}})
    f = eval(case_spec["forcing"], {{"__builtins__": {{}}, **_UFL}}, {{"x": X[0], "y": X[1]}})
    domain.topology.create_connectivity(1, 2)
    dofs = fem.locate_dofs_topological(V, 1, mesh.exterior_facet_indices(domain.topology))
    xy = V.tabulate_dof_coordinates()[dofs]
    g = fem.Function(V)
    for piece in reversed(case_spec["boundary"]):
        on = on_segment(xy[:, 0], xy[:, 1], *piece["segment"])
        value = eval(str(piece["value"]), {{"__builtins__": {{}}, **_NP}}, {{"x": xy[on, 0], "y": xy[on, 1]}})
        g.x.array[dofs[on]] = value
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    a = k * ufl.inner(ufl.grad(u), ufl.grad(v)) * ufl.dx
    L = {sign}f * v * ufl.dx
    problem = LinearProblem(a, L, bcs=[fem.dirichletbc(g, dofs)], petsc_options_prefix="attempt_",
                            petsc_options={{"ksp_type": "cg", "pc_type": "{pc}", "ksp_rtol": 1e-12}},
                            jit_options={jit})
    uh = problem.solve()
    grid = case_spec["grid"]
    xs = np.linspace(grid["bbox"][0], grid["bbox"][1], grid["nx"])
    ys = np.linspace(grid["bbox"][2], grid["bbox"][3], grid["ny"])
    XX, YY = np.meshgrid(xs, ys)
    points = np.column_stack([XX.ravel(), YY.ravel(), np.zeros(XX.size)])
    tree = geometry.bb_tree(domain, 2)
    cells = geometry.compute_colliding_cells(domain, geometry.compute_collisions_points(tree, points), points)
    first = np.array([cells.links(i)[0] for i in range(points.shape[0])], dtype=np.int32)
    values = uh.eval(points, first).reshape(grid["ny"], grid["nx"])
    cache = dolfinx.jit.get_options()["cache_dir"]
    info = {{"mesh_resolution": n, "element_degree": 2, "ksp_type": "cg", "pc_type": "{pc}", "rtol": 1e-12,
            "method": "forms compiled into " + str(cache)}}
    return {{"u": values, "solver_info": info}}
"""


def program(*, sign: str = "", pc: str = "gamg", jit: str = "None") -> str:
    return _TEMPLATE.format(sign=sign, pc=pc, jit=jit)


CORRECT = program()
WRONG_FORCING_SIGN = program(sign="-")
ASKS_FOR_HYPRE = program(pc="hypre")
BAD_COMPILER_FLAG = program(jit='{"cffi_extra_compile_args": ["-fno-such-compiler-flag"]}')
