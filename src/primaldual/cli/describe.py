"""``primaldual predict``, ``info`` and ``solvers``: predictions of a model file,
the shape of a data file, and the solvers with their ``--option`` keys."""
from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np

from ..datasets import DataFormatError
from ..model_io import read_model, to_estimator
from ..solvers import SOLVERS, check_solver_name
from ..solvers._multiclass import MULTICLASS_SOLVERS
from ..solvers._options import CommonOptions, to_jsonable
from .files import read_libsvm, write_lines
from .output import format_label
from .parser import FLAG_OPTIONS


def cmd_predict(req) -> int:
    model = read_model(req.model)
    if req.proba and not (model.kind == "classifier"
                          and model.loss in ("logistic", "multinomial")):
        what = f"loss={model.loss!r}" if model.kind == "classifier" else "a regressor"
        raise ValueError(f"--proba needs a model fit with --loss logistic (the only loss "
                         f"whose scores are probabilities); {req.model} is {what}")
    base = model.feature_index_base
    try:
        ((X, y),), used = read_libsvm(
            [req.data], n_features=model.n_features,
            zero_based="auto" if base is None else base == 0, with_base=True)
    except DataFormatError as e:
        b = 1 if base is None else base
        raise DataFormatError(f"{e} [the model {req.model} has {model.n_features} "
                              f"features; DATA must use feature indices "
                              f"{b}..{model.n_features - 1 + b}]",
                              path=e.path, lineno=e.lineno) from None
    if base is None:
        print(f"primaldual predict: note: the model file {req.model} does not record "
              f"the index base of its training data; {req.data} was read as "
              f"{'zero' if used == 0 else 'one'}-based (it "
              f"{'uses' if used == 0 else 'does not use'} index 0). Re-save the model "
              f"with 'primaldual fit --model' to record the base", file=sys.stderr)
    pred = model.predict(X)
    fmt = format_label if model.kind == "classifier" else (lambda v: repr(float(v)))
    if req.proba:           # LIBLINEAR's -b 1: a header, then label and probabilities
        proba = to_estimator(model).predict_proba(X)
        lines = ["labels " + " ".join(format_label(c) for c in model.classes)]
        lines += [" ".join([fmt(v)] + [repr(float(p)) for p in row])
                  for v, row in zip(pred, proba)]
    else:
        lines = [fmt(v) for v in pred]
    out = {"n": int(X.shape[0])}
    if model.kind == "classifier":
        out["accuracy"] = float(np.mean(pred == y))
        unknown = np.setdiff1d(np.unique(y), model.classes)
        if unknown.size:
            out["unknown_labels"] = [float(v) for v in unknown]
    else:
        out["rmse"] = float(np.sqrt(np.mean((pred - y) ** 2)))
    if req.output is None:
        sys.stdout.write("".join(line + "\n" for line in lines))
    else:
        write_lines(req.output, lines)
        out["output"] = str(req.output)
        if not req.json:    # as LIBLINEAR's predict reports
            if model.kind == "classifier":
                hits = int(np.sum(pred == y))
                print(f"Accuracy = {100 * out['accuracy']:g}% ({hits}/{out['n']})")
            else:
                print(f"Mean squared error = {out['rmse'] ** 2:g} (regression)")
    if req.json:
        print(json.dumps(out))
    return 0


def cmd_info(req) -> int:
    ((X, y),) = read_libsvm([req.data], dense=False)
    n, d = X.shape
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel())
    values, counts = np.unique(y, return_counts=True)
    out = {"file": str(req.data), "n": int(n), "d": int(d), "nnz": int(X.nnz),
           "density": float(X.nnz) / (n * d) if n * d else 0.0,
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
                  "box_qp_dual": "hinge, smooth_hinge"}


def _option_rows(cls):
    """One dict per option of solver class ``cls``: key, default, what it takes."""
    oc = cls.options_class
    rows = []
    for f in dataclasses.fields(oc):
        rule = f.metadata["rule"]
        if f.name in FLAG_OPTIONS and not FLAG_OPTIONS[f.name]:
            continue                                  # warm_start: Python only
        default = f.default
        rows.append({"option": f.name, "default": to_jsonable(default),
                     "takes": rule.allowed(), "flag": FLAG_OPTIONS.get(f.name),
                     "doc": f.metadata.get("doc", "")})
    return rows


def cmd_solvers(req) -> int:
    if req.name is None:
        rows = [{"solver": n, "summary": c.summary,
                 "losses": ", ".join(_REQUIRES_TEXT.get(r, r) for r in c.requires) or "all",
                 "l1": bool(c.supports_l1), "dask": bool(getattr(c, "supports_client", False))}
                for n, c in sorted(SOLVERS.items())]
        multi = [{"solver": n, "summary": c.summary, "losses": ", ".join(c.loss_names)}
                 for n, c in sorted(MULTICLASS_SOLVERS.items())]
        if req.json:
            print(json.dumps({"solvers": rows, "auto": "sdca, newton or ipm, chosen from "
                              "the data and lam (docs/cli.md)",
                              "multiclass_solvers": multi}))
            return 0
        width = max(len(r["solver"]) for r in rows)
        for r in rows:
            tags = [r["losses"] if r["losses"] != "all" else "all losses"]
            tags += ["l1"] if r["l1"] else []
            tags += ["dask"] if r["dask"] else []
            print(f"{r['solver']:<{width}}  {r['summary']} [{', '.join(tags)}]")
        print(f"{'auto':<{width}}  sdca, newton or ipm, chosen from the data and lam (the default)")
        for r in multi:         # --loss multinomial / crammer_singer (docs/multiclass-models.md)
            print(f"{r['solver']:<{width}}  {r['summary']} [loss {r['losses']}]")
        print("\nprimaldual solvers NAME lists the --option keys of one solver.")
        return 0
    if req.name in MULTICLASS_SOLVERS:
        cls = MULTICLASS_SOLVERS[req.name]
    else:
        check_solver_name(req.name)
        cls = SOLVERS.get(req.name)
    if req.name == "auto":
        raise ValueError("auto is not a solver of its own: it picks sdca, newton or ipm; "
                         "run `primaldual solvers sdca` or `primaldual solvers newton`")
    rows = _option_rows(cls)
    if req.json:
        print(json.dumps({"solver": req.name, "summary": cls.summary, "options": rows}))
        return 0
    print(f"{req.name}: {cls.summary}\n")
    width = max(len(r["option"]) for r in rows)
    for r in rows:
        how = f"set with {r['flag']}" if r["flag"] else f"takes {r['takes']}"
        print(f"  {r['option']:<{width}}  {r['doc']} (default {r['default']!r}; {how})")
    own = [r for r in rows if not r["flag"] and r["option"] not in CommonOptions.names()]
    if own:
        print(f"\nexample: primaldual fit TRAIN --solver {req.name} --option "
              f"{own[0]['option']}=VALUE")
    return 0
