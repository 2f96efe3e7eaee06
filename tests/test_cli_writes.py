"""Outputs that respect the destination: a regular file is replaced atomically;
``-``, devices and FIFOs are written through (never replaced by a file); a
full device is an error exit; a missing directory is named, never created;
every message names the destination, not a temporary file."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from primaldual import cli
from primaldual._util.atomic import WriteError, atomic_write

from conftest import REPO


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("writes")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = np.where(X[:, 0] > 0, 1, -1)
    dump_svmlight_file(sp.csr_matrix(X), y, str(root / "d.svm"), zero_based=False)
    assert cli.main(["fit", str(root / "d.svm"), "--model", str(root / "m.npz"),
                     "--quiet"]) == 0
    return root


def run(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_dash_is_standard_output(files, capsys):
    code, out, err = run(capsys, "predict", files / "m.npz", files / "d.svm", "-")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 61 and lines[-1].startswith("Accuracy = ")
    assert not (files / "-").exists()


def test_dev_null_is_fine_and_stays_a_device(files, capsys):
    code, out, err = run(capsys, "predict", files / "m.npz", files / "d.svm", os.devnull)
    assert code == 0, err
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_dev_full_is_an_error_exit_naming_it(files, capsys):
    code, out, err = run(capsys, "predict", files / "m.npz", files / "d.svm", "/dev/full")
    assert code == 1 and "cannot write /dev/full" in err and "No space left" in err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)      # still the device
    code, out, err = run(capsys, "train", files / "d.svm", "/dev/full")
    assert code == 1 and "cannot write /dev/full" in err


def test_fifo_is_written_through(files, tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    code, out, err = run(capsys, "predict", files / "m.npz", files / "d.svm", fifo)
    reader.join(timeout=60)
    assert code == 0, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)          # still a FIFO
    assert len(got[0].splitlines()) == 60
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]   # no temporary left


def test_dev_stdout_in_a_subprocess_is_written_through(files):
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    r = subprocess.run([sys.executable, "-m", "primaldual", "predict", str(files / "m.npz"),
                        str(files / "d.svm"), "/dev/stdout"], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 61


def test_missing_directory_is_named_not_created(files, tmp_path, capsys):
    out_file = tmp_path / "no" / "such" / "dir" / "out.txt"
    code, out, err = run(capsys, "predict", files / "m.npz", files / "d.svm", out_file)
    assert code == 1 and f"the directory {out_file.parent} does not exist" in err
    assert not (tmp_path / "no").exists()
    code, out, err = run(capsys, "fit", files / "d.svm", "--model", out_file, "--quiet")
    assert code == 1 and "does not exist" in err and not (tmp_path / "no").exists()


def test_a_directory_destination_names_the_directory(files, tmp_path, capsys):
    target = tmp_path / "adir"
    target.mkdir()
    code, out, err = run(capsys, "predict", files / "m.npz", files / "d.svm", target)
    assert code == 1 and f"cannot write {target}: it is a directory" in err
    assert ".tmp" not in err


def test_write_errors_name_the_destination(tmp_path, monkeypatch):
    dest = tmp_path / "f.txt"

    def fail(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(WriteError, match=f"cannot write {dest}: No space left") as info:
        with atomic_write(dest, "w") as fh:
            fh.write("x")
    assert info.value.errno == 28 and ".tmp" not in str(info.value)
    assert list(tmp_path.iterdir()) == []                 # the temporary is gone


def test_regular_files_are_still_replaced_atomically(files, tmp_path, capsys):
    out_file = tmp_path / "o.txt"
    out_file.write_text("old\n")
    os.chmod(out_file, 0o640)
    code, out, err = run(capsys, "predict", files / "m.npz", files / "d.svm", out_file)
    assert code == 0 and len(out_file.read_text().splitlines()) == 60
    assert stat.S_IMODE(os.stat(out_file).st_mode) == 0o640
