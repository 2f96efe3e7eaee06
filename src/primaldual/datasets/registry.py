"""The registry of LIBSVM sets: names, shapes, tasks, provenance.

:data:`REGISTRY` maps a dataset name (``"a9a"``, ``"rcv1.binary"``, ``"letter.scale"``,
``"cadata"``, ...) to a :class:`Dataset` record: its files, where they can be
downloaded, their sha256, the number of features, its task (``"binary"``,
``"multiclass"`` or ``"regression"``) and, for a binary set, which raw label
becomes ``+1`` (the records are in :mod:`.catalog`). Nothing here
reads the disk or the network: :mod:`.fetch` finds and downloads the files,
:mod:`.svmlight` parses them and :mod:`.loading` puts the three together.
"""

from __future__ import annotations

import difflib

from .catalog import DATASETS, LIBSVM_BINARY_URL, TASKS, DataFile, Dataset

__all__ = ["DataFile", "Dataset", "LIBSVM_BINARY_URL", "REGISTRY", "TASKS", "info",
           "resolve", "subset_files"]

_SUBSETS = ("train", "test", "both")

#: Registered datasets, by name.
REGISTRY: dict[str, Dataset] = {ds.name: ds for ds in DATASETS}


def resolve(name):
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        pass
    names = sorted(REGISTRY)
    key = str(name).lower()
    close = [n for n in names if key and n.lower().startswith(key)]
    close += [n for n in difflib.get_close_matches(key, names, n=3) if n not in close]
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    raise ValueError(
        f"unknown dataset {name!r}.{hint} Known datasets: {', '.join(names)}. "
        "(Synthetic shapes are made with make_synthetic().)"
    )


def subset_files(ds, subset):
    if subset not in _SUBSETS:
        raise ValueError(f"subset must be one of {_SUBSETS}, got {subset!r}")
    if subset in ("test", "both") and ds.test is None:
        raise ValueError(f"dataset {ds.name!r} has no test split; use subset='train'")
    if subset == "train":
        return [ds.train]
    if subset == "test":
        return [ds.test]
    return [ds.train, ds.test]


def info(name):
    """Registry facts about a dataset, without reading any file.

    Parameters
    ----------
    name : str
        Registry name.

    Returns
    -------
    dict
        ``name``, ``description``, ``task``, ``n`` (train rows), ``d`` (features),
        ``nnz`` (train nonzeros), ``label_counts`` (binary: ``{-1: count, +1: count}``
        after the label mapping; multiclass: ``{raw label: count}``; regression: the
        counts of the target values when registered, else None), ``raw_labels``
        (binary: ``{raw: -1/+1}``, else None), ``files``, ``urls``, ``sha256``,
        ``shared`` and ``test`` (a dict with ``n``, ``nnz``, ``label_counts``, or
        None). Unknown numbers (remote-only sets) are None.
    """
    ds = resolve(name)

    def counts(df):
        if df.label_counts is None:
            return None
        if ds.task != "binary":
            return {int(raw) if float(raw).is_integer() else raw: c
                    for raw, c in df.label_counts}
        out = {-1: 0, 1: 0}
        for raw, c in df.label_counts:
            out[int(ds.label_map[raw])] += c
        return out

    def part(df):
        return {"n": df.n_samples, "nnz": df.nnz, "label_counts": counts(df),
                "file": df.filename}

    return {
        "name": ds.name,
        "description": ds.description,
        "task": ds.task,
        "n": ds.train.n_samples,
        "d": ds.n_features,
        "nnz": ds.train.nnz,
        "label_counts": counts(ds.train),
        "raw_labels": dict(ds.label_map) if ds.label_map is not None else None,
        "files": [df.filename for df in ds.files],
        "urls": [df.sources for df in ds.files],
        "sha256": [df.sha256 for df in ds.files],
        "shared": ds.shared,
        "test": part(ds.test) if ds.test is not None else None,
    }
