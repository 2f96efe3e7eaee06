"""``primaldual info`` and ``solvers``: the shape of a data file, and the
solvers with their ``--option`` keys.  ``info`` reads the file with
:mod:`.libsvm` and computes everything from its CSR arrays (no SciPy);
``solvers`` reads the catalogue ``solver_catalog.json`` that
:func:`build_catalog` writes from the registry, so neither command imports
Numba."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

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

#: what ``solver="auto"`` does (docs/solvers.md)
AUTO_TEXT = ("supervised: starts with the method the data suggests (sdca, newton, ipm, "
             "l1cd or a multiclass solver), watches the certified gap and hands over, "
             "warm, when progress stalls")

#: the catalogue ``primaldual solvers`` prints, written by :func:`build_catalog`
CATALOG_FILE = Path(__file__).with_name("solver_catalog.json")


def _option_rows(cls):
    """One dict per option of solver class ``cls``: key, default, what it takes."""
    to_jsonable = lazy_attr("primaldual.solvers._options", "to_jsonable")
    common = lazy_attr("primaldual.solvers._options", "CommonOptions").names()
    rows = []
    for f in dataclasses.fields(cls.options_class):
        if f.name in FLAG_OPTIONS and not FLAG_OPTIONS[f.name]:
            continue                                  # warm_start: Python only
        rows.append({"option": f.name, "default": to_jsonable(f.default),
                     "takes": f.metadata["rule"].allowed(),
                     "flag": FLAG_OPTIONS.get(f.name), "doc": f.metadata.get("doc", ""),
                     "common": f.name in common})
    return rows


def build_catalog() -> dict:
    """Every solver of the registry (binary and multiclass) with its summary,
    what it needs of the loss, and its ``--option`` rows: what
    ``primaldual solvers`` prints.  It imports the solvers (and so Numba); the
    command reads the same content from :data:`CATALOG_FILE`, which
    ``python -m primaldual.cli.describe`` rewrites and ``tests/test_cli.py``
    checks against this function."""
    SOLVERS = lazy_attr("primaldual.solvers", "SOLVERS")
    MULTICLASS = lazy_attr("primaldual.solvers._multiclass", "MULTICLASS_SOLVERS")
    rows = []
    for name, cls in sorted({**SOLVERS, **MULTICLASS}.items()):
        if name in MULTICLASS:
            losses = "loss " + " or ".join(sorted(cls.loss_names))
        else:
            losses = ", ".join(_REQUIRES_TEXT.get(r, r) for r in cls.requires) or "all"
        rows.append({"solver": name, "summary": cls.summary, "losses": losses,
                     "l1": bool(getattr(cls, "supports_l1", False)),
                     "dask": bool(getattr(cls, "supports_client", False)),
                     "multiclass": name in MULTICLASS, "options": _option_rows(cls)})
    return {"solvers": rows, "auto": AUTO_TEXT}


def load_catalog() -> dict:
    with open(CATALOG_FILE, encoding="utf-8") as fh:
        return json.load(fh)


def cmd_solvers(req) -> int:
    catalog = load_catalog()
    by_name = {r["solver"]: r for r in catalog["solvers"]}
    if req.name is None:
        rows = [{k: v for k, v in r.items() if k != "options"} for r in catalog["solvers"]]
        if req.json:
            print(json.dumps({"solvers": rows, "auto": catalog["auto"]}))
            return 0
        width = max(len(r["solver"]) for r in rows)
        for r in rows:
            tags = [r["losses"] if r["losses"] != "all" else "all losses"]
            tags += ["l1"] if r["l1"] else []
            tags += ["dask"] if r["dask"] else []
            print(f"{r['solver']:<{width}}  {r['summary']} [{', '.join(tags)}]")
        print(f"{'auto':<{width}}  {catalog['auto']} (the default)")
        print("\nprimaldual solvers NAME lists the --option keys of one solver.")
        return 0
    if req.name == "auto":
        raise ValueError("auto is not a solver of its own: it runs the solvers above under "
                         "supervision; run `primaldual solvers sdca` or `primaldual solvers "
                         "newton`")
    if req.name not in by_name:
        raise ValueError(f"unknown solver {req.name!r}; choose one of "
                         f"{', '.join(sorted(set(by_name) | {'auto'}))}")
    entry = by_name[req.name]
    rows = [{k: v for k, v in r.items() if k != "common"} for r in entry["options"]]
    if req.json:
        print(json.dumps({"solver": req.name, "summary": entry["summary"], "options": rows}))
        return 0
    print(f"{req.name}: {entry['summary']}\n")
    width = max(len(r["option"]) for r in rows)
    for r in rows:
        how = f"set with {r['flag']}" if r["flag"] else f"takes {r['takes']}"
        print(f"  {r['option']:<{width}}  {r['doc']} (default {r['default']!r}; {how})")
    own = [r for r in entry["options"] if not r["flag"] and not r["common"]]
    if own:
        loss = " --loss " + entry["losses"].split()[1] if entry["multiclass"] else ""
        print(f"\nexample: primaldual fit TRAIN{loss} --solver {req.name} --option "
              f"{own[0]['option']}=VALUE")
    return 0


if __name__ == "__main__":       # python -m primaldual.cli.describe: rewrite the catalogue
    CATALOG_FILE.write_text(json.dumps(build_catalog(), indent=1) + "\n", encoding="utf-8")
