"""The C++ VTK example, RenderLabelSurfaces: a label volume to one surface per label (.vtp) and an off-screen
rendering (.png), on a volume drawn here and on the supervoxels of a module."""

import subprocess

import nrrd
import numpy as np
import pytest
from surface_checks import check_picture, check_surfaces, run_headless


@pytest.fixture(scope="module")
def program(build_dir):
    path = build_dir / "bin" / "RenderLabelSurfaces"
    if not path.exists():
        pytest.fail(f"{path} was not built (VTK 9 missing? scripts/setup.sh installs libvtk9-dev)")
    return str(path)


def drawn_volume():
    """A ball (1), a box (2), two separate cubes sharing label 4, a thin plate (7) touching the box, and a cube (9)
    in a corner of the volume."""
    z, y, x = np.mgrid[0:30, 0:34, 0:38]
    labels = np.zeros((38, 34, 30), np.uint32)  # x, y, z (pynrrd's order)
    labels[((x - 10) ** 2 + (y - 10) ** 2 + (z - 10) ** 2 < 49).T] = 1
    labels[20:32, 4:14, 4:20] = 2
    labels[4:9, 22:27, 20:25] = 4
    labels[14:19, 24:30, 20:26] = 4
    labels[20:32, 14:16, 4:20] = 7
    labels[0:4, 0:3, 0:5] = 9
    return labels


@pytest.mark.parametrize("smoothing,interior", [(0, False), (20, False), (20, True)])
def test_drawn_volume(program, tmp_path, smoothing, interior):
    labels = drawn_volume()
    spacing = (0.5, 0.6, 1.2)
    header = {
        "space": "left-posterior-superior",
        "space directions": np.diag(spacing),
        "space origin": np.array([-5.0, 3.0, 10.0]),
        "kinds": ["domain"] * 3,
    }
    nrrd.write(str(tmp_path / "labels.nrrd"), labels, header)
    run = run_headless(
        [
            program,
            "--smoothing",
            str(smoothing),
            "--size",
            "400x300",
            str(tmp_path / "labels.nrrd"),
            str(tmp_path / "s.vtp"),
            str(tmp_path / "s.png"),
        ]
        + ["--interior"] * interior
    )
    assert run.returncode == 0, run.stdout + run.stderr
    if interior:  # the corner cube touches three faces of the volume
        labels[labels == 9] = 0
    assert run.stdout.startswith(f"{len(np.unique(labels)) - 1} labels, ")
    check_surfaces(tmp_path / "s.vtp", labels, spacing if smoothing == 0 else None)
    check_picture(tmp_path / "s.png", (400, 300), 4)


@pytest.mark.parametrize("inputs", [3], indirect=True, ids=["3d"])
def test_supervoxels_of_a_module(program, build_dir, inputs, backend, tmp_path):
    """The chain the README shows: a module's label map, then its surfaces."""
    labels_file = str(tmp_path / "supervoxels.nrrd")
    run = subprocess.run(
        [str(build_dir / "bin" / "CudaWaterpixels"), "--step", "9", "--backend", backend, inputs["grey"], labels_file],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    run = run_headless([program, labels_file, str(tmp_path / "s.vtp"), str(tmp_path / "s.png")])
    assert run.returncode == 0, run.stdout + run.stderr
    labels, header = nrrd.read(labels_file)
    found = check_surfaces(tmp_path / "s.vtp", labels)
    assert len(found) > 1
    check_picture(tmp_path / "s.png", (800, 600), 3)


def test_bad_input(program, tmp_path):
    run = subprocess.run([program, str(tmp_path / "missing.nrrd"), "a.vtp", "a.png"], capture_output=True, text=True)
    assert run.returncode != 0 and "missing.nrrd" in run.stderr
    nrrd.write(str(tmp_path / "flat.nrrd"), np.zeros((5, 5, 5), np.uint32))
    run = subprocess.run([program, str(tmp_path / "flat.nrrd"), "a.vtp", "a.png"], capture_output=True, text=True)
    assert run.returncode == 2 and "no label other than 0" in run.stderr
    # A .vtp that cannot be written: a message and a failure, before any rendering.
    labels = np.zeros((6, 6, 6), np.uint32)
    labels[2:4, 2:4, 2:4] = 3
    nrrd.write(str(tmp_path / "box.nrrd"), labels)
    unwritable = str(tmp_path / "no-such-folder" / "a.vtp")
    run = subprocess.run(
        [program, str(tmp_path / "box.nrrd"), unwritable, str(tmp_path / "a.png")], capture_output=True, text=True
    )
    assert run.returncode == 1 and "cannot write " + unwritable in run.stderr
    assert not (tmp_path / "a.png").exists()
