"""Template-guided skeleton for the DOLFINx 0.11 PDE track. It runs and returns
output of the right shape; mesh, forms, boundary data and solver are yours.
The sampling helper evaluates a Function on the evaluation grid."""

from mpi4py import MPI  # first: petsc4py and dolfinx need its MPI library loaded

import numpy as np
import ufl  # noqa: F401
from dolfinx import fem, geometry, mesh
from dolfinx.fem.petsc import LinearProblem  # noqa: F401

_FUNCS = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
          "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "atan": np.arctan, "pi": np.pi, "E": np.e}


def expr(text, **variables):
    """Evaluate a case_spec expression with numpy (x, y, t, u as arrays or floats)."""
    value = eval(str(text), {"__builtins__": {}, **_FUNCS}, variables)
    return np.broadcast_to(np.asarray(value, dtype=float), np.shape(variables.get("x", 0.0))).copy()


def sample(u, case_spec):
    """u on the grid as (ny, nx) (or (2, ny, nx) for a vector u); NaN where no cell holds the point."""
    g = case_spec["grid"]
    x0, x1, y0, y1 = g["bbox"]
    X, Y = np.meshgrid(np.linspace(x0, x1, g["nx"]), np.linspace(y0, y1, g["ny"]))
    points = np.column_stack([X.ravel(), Y.ravel(), np.zeros(X.size)])
    domain = u.function_space.mesh
    tree = geometry.bb_tree(domain, domain.topology.dim)
    colliding = geometry.compute_colliding_cells(domain, geometry.compute_collisions_points(tree, points), points)
    ncomp = u.function_space.dofmap.index_map_bs
    values = np.full((points.shape[0], ncomp), np.nan)
    found = [i for i in range(points.shape[0]) if len(colliding.links(i)) > 0]
    if found:
        cells = [colliding.links(i)[0] for i in found]
        values[found] = u.eval(points[found], np.asarray(cells, dtype=np.int32)).reshape(len(found), ncomp)
    out = values.T.reshape(ncomp, g["ny"], g["nx"])
    return out if ncomp > 1 else out[0]


def solve_case(case_spec):
    # TODO: a mesh of case_spec["domain"] (create_unit_square, or create_mesh from your own cells)
    n = 32
    domain = mesh.create_unit_square(MPI.COMM_WORLD, n, n, mesh.CellType.triangle)
    V = fem.functionspace(domain, ("Lagrange", 1))
    uh = fem.Function(V)
    # TODO: forms for case_spec["equation"], Dirichlet data per piece of case_spec["boundary"]
    #       (fem.locate_dofs_geometrical / fem.dirichletbc), then solve, e.g.
    #       LinearProblem(a, L, bcs=bcs, petsc_options_prefix="case_",
    #                     petsc_options={"ksp_type": "preonly", "pc_type": "lu"}).solve()
    u = sample(uh, case_spec)
    # TODO: NaN at grid points outside the domain (holes, removed corners)
    info = {"mesh_resolution": n, "element_degree": 1, "ksp_type": "preonly", "pc_type": "lu", "rtol": 0.0,
            "dofs": int(V.dofmap.index_map.size_global)}
    return {"u": u, "solver_info": info}


def solve(case_spec):
    return solve_case(case_spec)
