"""``primaldual info`` and ``solvers``: the shape of a data file, and the
solvers with their ``--option`` keys.  ``info`` reads the file with
:mod:`.libsvm` and computes everything from its CSR arrays (no SciPy); the
solver registry is imported by ``solvers`` alone."""
from __future__ import annotations

import dataclasses
import json

import numpy as np

from .._util.lazy import lazy_attr
from .libsvm import read_files
from .output import format_label
from .parser import FLAG_OPTIONS


def cmd_info(req) -> int:
    (rows,) = read_files([req.data])
    n, d, y = rows.n, rows.n_features, rows.y
    norms = np.sqrt(np.bincount(rows.row_of_entry(), weights=rows.data ** 2, minlength=n))
    values, counts = np.unique(y, return_counts=True)
    out = {"file": str(req.data), "n": int(n), "d": int(d), "nnz": rows.nnz,
           "density": rows.density,
           "labels": {format_label(v): int(c) for v, c in zip(values, counts)},
           "zero_rows": int(np.count_nonzero(norms == 0.0)),
           "min_row_norm": float(norms.min()), "max_row_norm": float(norms.max())}
    if req.json:
        print(json.dumps(out))
        return 0
    print(f"file          {out['file']}")
    print(f"samples n     {n}")
    print(f"features d    {d}")
    print(f"nonzeros      {out['nnz']}")
    print(f"density       {out['density']:.6g}")
    print("labels        " + ", ".join(f"{k} ({v})" for k, v in out["labels"].items()))
    print(f"zero rows     {out['zero_rows']}")
    print(f"row norm      min {out['min_row_norm']:.6g}, max {out['max_row_norm']:.6g}")
    return 0


#: what a solver's ``requires`` flags mean, for ``primaldual solvers``
_REQUIRES_TEXT = {"smooth": "smooth losses", "classification": "classification losses",
                  "generalized_hessian": "losses with a (generalized) Hessian",
                  "box_qp_dual": "hinge, smooth_hinge, absolute, epsilon_insensitive"}


def _option_rows(cls):
    """One dict per option of solver class ``cls``: key, default, what it takes."""
    oc = cls.options_class
    rows = []
    for f in dataclasses.fields(oc):
        rule = f.metadata["rule"]
        if f.name in FLAG_OPTIONS and not FLAG_OPTIONS[f.name]:
            continue                                  # warm_start: Python only
        default = f.default
        to_jsonable = lazy_attr("primaldual.solvers._options", "to_jsonable")
        rows.append({"option": f.name, "default": to_jsonable(default),
                     "takes": rule.allowed(), "flag": FLAG_OPTIONS.get(f.name),
                     "doc": f.metadata.get("doc", "")})
    return rows


#: what ``solver="auto"`` does (docs/solvers.md)
AUTO_TEXT = ("supervised: starts with the method the data suggests (sdca, newton, ipm, "
             "l1cd or a multiclass solver), watches the certified gap and hands over, "
             "warm, when progress stalls")


def cmd_solvers(req) -> int:
    SOLVERS = lazy_attr("primaldual.solvers", "SOLVERS")
    if req.name is None:
        rows = [{"solver": n, "summary": c.summary,
                 "losses": ", ".join(_REQUIRES_TEXT.get(r, r) for r in c.requires) or "all",
                 "l1": bool(c.supports_l1), "dask": bool(getattr(c, "supports_client", False))}
                for n, c in sorted(SOLVERS.items())]
        if req.json:
            print(json.dumps({"solvers": rows, "auto": AUTO_TEXT}))
            return 0
        width = max(len(r["solver"]) for r in rows)
        for r in rows:
            tags = [r["losses"] if r["losses"] != "all" else "all losses"]
            tags += ["l1"] if r["l1"] else []
            tags += ["dask"] if r["dask"] else []
            print(f"{r['solver']:<{width}}  {r['summary']} [{', '.join(tags)}]")
        print(f"{'auto':<{width}}  {AUTO_TEXT} (the default)")
        print("\nprimaldual solvers NAME lists the --option keys of one solver.")
        return 0
    lazy_attr("primaldual.solvers", "check_solver_name")(req.name)
    if req.name == "auto":
        raise ValueError("auto is not a solver of its own: it runs the solvers above under "
                         "supervision; run `primaldual solvers sdca` or `primaldual solvers "
                         "newton`")
    cls = SOLVERS[req.name]
    rows = _option_rows(cls)
    if req.json:
        print(json.dumps({"solver": req.name, "summary": cls.summary, "options": rows}))
        return 0
    print(f"{req.name}: {cls.summary}\n")
    width = max(len(r["option"]) for r in rows)
    for r in rows:
        how = f"set with {r['flag']}" if r["flag"] else f"takes {r['takes']}"
        print(f"  {r['option']:<{width}}  {r['doc']} (default {r['default']!r}; {how})")
    common = lazy_attr("primaldual.solvers._options", "CommonOptions").names()
    own = [r for r in rows if not r["flag"] and r["option"] not in common]
    if own:
        print(f"\nexample: primaldual fit TRAIN --solver {req.name} --option "
              f"{own[0]['option']}=VALUE")
    return 0
