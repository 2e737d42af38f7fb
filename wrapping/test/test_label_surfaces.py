"""The Python VTK example, examples/label_surfaces.py: the waterfall of a small CT-like volume through the module's
Python wrapping, then one surface per region with VTK, written as .vtp and rendered off-screen (under Xvfb where
there is no display). The surfaces and the picture are checked by test/cli/surface_checks.py."""

import os
import pathlib
import sys

import itk
import numpy as np
import pytest
import scipy.ndimage as ndi

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "cli"))
vtk = pytest.importorskip("vtk", reason="VTK for Python (Debian's python3-vtk9 or PyPI's vtk) is not installed")
from surface_checks import check_picture, check_surfaces, run_headless  # noqa: E402


def ct_like(shape, seed):
    """Grains in a matrix with texture and noise, as the README's supervoxel picture uses."""
    rng = np.random.default_rng(seed)
    grains = ndi.gaussian_filter(rng.standard_normal(shape), 4.0) > 0
    image = np.where(grains, 170.0, 70.0) + 6.0 * rng.standard_normal(shape)
    return ndi.gaussian_filter(image, 0.8).astype(np.float32)


def test_example(tmp_path):
    volume = itk.image_from_array(ct_like((30, 36, 40), 3))
    volume.SetSpacing([0.8, 0.8, 1.2])
    volume.SetOrigin([5.0, -3.0, 12.0])
    itk.imwrite(volume, str(tmp_path / "volume.nrrd"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = run_headless(
        [
            sys.executable,
            str(ROOT / "examples" / "label_surfaces.py"),
            str(tmp_path / "volume.nrrd"),
            str(tmp_path / "s.vtp"),
            str(tmp_path / "s.png"),
            "--regions",
            "12",
            "--labels",
            str(tmp_path / "labels.nrrd"),
        ],
        env=env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    count = int(run.stdout.split(": ")[1].split()[0])
    assert 1 < count <= 12
    labels = itk.array_from_image(itk.imread(str(tmp_path / "labels.nrrd")))
    assert len(np.unique(labels)) == count
    # surface_checks expects x-fastest arrays as NRRD readers give them: the same labels, transposed.
    check_surfaces(tmp_path / "s.vtp", labels.T)
    check_picture(tmp_path / "s.png", (800, 600), 3)
