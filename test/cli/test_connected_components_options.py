"""CudaConnectedComponents' options beyond ITK's filter: --periodic and --distance-threshold (with --flat-zones)."""

import subprocess

import nrrd
import numpy as np


def run(modules_dir, backend, folder, image, *options):
    nrrd.write(str(folder / "in.nrrd"), image)
    out = folder / "out.nrrd"
    done = subprocess.run(
        [
            str(modules_dir / "CudaConnectedComponents"),
            "--backend",
            backend,
            *options,
            str(folder / "in.nrrd"),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, (nrrd.read(str(out))[0] if done.returncode == 0 else None)


def test_periodic_joins_across_the_border(modules_dir, backend, tmp_path):
    image = np.zeros((10, 6), np.uint8)
    image[0, 1:4] = 1  # a stripe on one face ...
    image[9, 1:4] = 1  # ... and on the opposite one
    image[5, 5] = 1
    done, labels = run(modules_dir, backend, tmp_path, image)
    assert done.returncode == 0, done.stderr
    assert labels.max() == 3
    done, labels = run(modules_dir, backend, tmp_path, image, "--periodic")
    assert done.returncode == 0, done.stderr
    assert labels.max() == 2 and labels[0, 2] == labels[9, 2]


def test_distance_threshold_joins_close_values(modules_dir, backend, tmp_path):
    image = np.array([[1, 2, 3], [7, 8, 20]], np.uint8)
    done, labels = run(modules_dir, backend, tmp_path, image, "--flat-zones")
    assert done.returncode == 0, done.stderr
    assert labels.max() == 6
    done, labels = run(modules_dir, backend, tmp_path, image, "--flat-zones", "--distance-threshold", "1")
    assert done.returncode == 0, done.stderr
    assert labels.max() == 3
    assert labels[0, 0] == labels[0, 1] == labels[0, 2] and labels[1, 0] == labels[1, 1] != labels[1, 2]
    done, _ = run(modules_dir, backend, tmp_path, image, "--flat-zones", "--distance-threshold", "-1")
    assert done.returncode != 0 and "--distance-threshold -1 is out of range" in done.stderr
