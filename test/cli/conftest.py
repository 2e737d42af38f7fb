"""Fixtures of the command-line tests: where the programs are, and small inputs with a geometry that is not the
identity (spacing, origin and a flipped axis), written as NRRD files the way 3D Slicer writes them."""

import os
import pathlib

import nrrd
import numpy as np
import pytest
import scipy.ndimage as ndi

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def build_dir():
    path = pathlib.Path(os.environ.get("CHS_BUILD", ROOT / "build"))
    if not (path / "bin").is_dir():
        pytest.fail(f"no build folder at {path} (run scripts/build.sh, or set CHS_BUILD)")
    return path


@pytest.fixture(scope="session")
def modules_dir(build_dir):
    return build_dir / "slicer-modules"


@pytest.fixture(scope="session")
def backend():
    """The backend the modules run on: auto (the GPU where there is one) unless CHS_CLI_BACKEND says otherwise."""
    return os.environ.get("CHS_CLI_BACKEND", "auto")


def write_nrrd(path, array, dimension):
    """Writes a NumPy array (x fastest, as pynrrd's Fortran order) with a geometry of Slicer's kind."""
    if dimension == 3:
        header = {
            "space": "left-posterior-superior",
            "space directions": np.array([[-0.8, 0, 0], [0, 0.7, 0], [0, 0, 1.5]]),
            "space origin": np.array([12.5, -20.0, 7.25]),
            "kinds": ["domain"] * 3,
        }
    else:
        header = {
            "space dimension": 2,
            "space directions": np.array([[0.5, 0], [0, -0.75]]),
            "space origin": np.array([3.0, 40.0]),
            "kinds": ["domain"] * 2,
        }
    nrrd.write(str(path), array, header)
    return str(path)


def smooth_noise(shape, seed, sigma):
    rng = np.random.default_rng(seed)
    a = ndi.gaussian_filter(rng.standard_normal(shape), sigma)
    a = (a - a.min()) / (a.max() - a.min())
    return a


@pytest.fixture(scope="session", params=[2, 3], ids=["2d", "3d"])
def inputs(request, tmp_path_factory):
    """A grey image, a binary image and a marker label map (16-bit labels 1, 2 and 40000), in 2D or 3D."""
    d = request.param
    folder = tmp_path_factory.mktemp(f"inputs{d}d")
    shape = (41, 33) if d == 2 else (27, 22, 17)
    grey = smooth_noise(shape, 7 + d, 2.0)
    grey[tuple(slice(0, s // 3) for s in shape)] += 0.5  # a step edge
    grey = np.rint(255 * grey / grey.max()).astype(np.uint8)
    binary = (smooth_noise(shape, 11 + d, 1.5) > 0.55).astype(np.uint8) * 255
    markers = np.zeros(shape, np.uint16)
    markers[(2,) * d] = 1
    markers[tuple(s - 3 for s in shape)] = 2
    markers[tuple(s // 2 for s in shape)] = 40000
    return {
        "dimension": d,
        "shape": shape,
        "grey": write_nrrd(folder / "grey.nrrd", grey, d),
        "greyArray": grey,
        "binary": write_nrrd(folder / "binary.nrrd", binary, d),
        "binaryArray": binary,
        "markers": write_nrrd(folder / "markers.nrrd", markers, d),
        "header": nrrd.read_header(str(folder / "grey.nrrd")),
    }
