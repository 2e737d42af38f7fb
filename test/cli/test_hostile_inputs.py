"""Hostile input to the command-line modules: truncated and corrupted NRRD, NIfTI and PNG files, empty files, images
of size 0 along an axis, NaN and infinity, values below a parameter's minimum. Each must end with a non-zero exit
status (never a signal) and a message that names the module and the problem, and leave nothing on disk: no output
file, no temporary file. Images of size 1 along any axis are valid and must be labelled."""

import os
import subprocess
import zlib

import nrrd
import numpy as np
import pytest
from test_slicer_modules import MODULES

GREY = (np.random.default_rng(1).random((33, 41)) * 255).astype(np.uint8)


def png_bytes(array):
    """A grey 8-bit PNG of `array` (no dependency beyond zlib)."""
    h, w = array.shape

    def chunk(kind, data):
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    raw = b"".join(b"\x00" + bytes(row) for row in array)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", w.to_bytes(4, "big") + h.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0]))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory, modules_dir):
    """The hostile files, and good ones to go with them (markers for the seeded module)."""
    d = tmp_path_factory.mktemp("hostile")
    nrrd.write(str(d / "grey.nrrd"), GREY.T)
    nrrd.write(str(d / "markers.nrrd"), (np.arange(GREY.size).reshape(GREY.shape) % 97 == 0).astype(np.uint16).T)
    nrrd.write(str(d / "raw.nrrd"), GREY.T, {"encoding": "raw"})
    whole = (d / "raw.nrrd").read_bytes()
    (d / "truncated.nrrd").write_bytes(whole[: len(whole) - 700])
    (d / "bad-header.nrrd").write_bytes(
        b"NRRD0004\ntype: banana\ndimension: 2\nsizes: 4 4\nencoding: raw\n\n" + bytes(16)
    )
    (d / "size-zero.nrrd").write_bytes(b"NRRD0004\ntype: uint8\ndimension: 2\nsizes: 0 5\nencoding: raw\n\n")
    (d / "empty.nrrd").write_bytes(b"")
    (d / "garbage.png").write_bytes(b"\x89PNG\r\n\x1a\n" + np.random.default_rng(2).bytes(200))
    good_png = png_bytes(GREY)
    (d / "good.png").write_bytes(good_png)
    (d / "truncated.png").write_bytes(good_png[: len(good_png) // 2])
    run = subprocess.run(
        [str(modules_dir / "CudaConnectedComponents"), str(d / "grey.nrrd"), str(d / "labels.nii.gz")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    nifti = (d / "labels.nii.gz").read_bytes()
    (d / "truncated.nii.gz").write_bytes(nifti[: len(nifti) // 2])
    for name, value in (("nan", np.nan), ("inf", np.inf)):
        a = GREY.astype(np.float32)
        a[5, 5] = value
        nrrd.write(str(d / f"{name}.nrrd"), a.T)
    return d


def command(module, modules_dir, files, first, out, extra=()):
    """The module on `first` (and the good markers for the seeded module), writing `out`."""
    inputs = [str(first)] + ([str(files / "markers.nrrd")] if module == "CudaSeededSegmentation" else [])
    return [str(modules_dir / module)] + list(extra) + inputs + [str(out)]


def assert_clean_failure(run, module, out, words):
    assert run.returncode > 0, f"exit {run.returncode} (a signal when negative): {run.stderr[-500:]}"
    assert module in run.stderr, run.stderr
    for word in words:
        assert word in run.stderr, (word, run.stderr[-500:])
    assert not out.exists(), "an output was left behind"
    assert not [p for p in os.listdir(out.parent) if p.startswith(".partial-")], "a temporary file was left behind"


BAD_FILES = [
    "truncated.nrrd",
    "bad-header.nrrd",
    "size-zero.nrrd",
    "empty.nrrd",
    "garbage.png",
    "truncated.png",
    "truncated.nii.gz",
]


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("bad", BAD_FILES)
def test_bad_file(module, bad, files, modules_dir, tmp_path):
    out = tmp_path / "out.nrrd"
    run = subprocess.run(
        command(module, modules_dir, files, files / bad, out, ["--segmentation", str(tmp_path / "out.seg.nrrd")]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_clean_failure(run, module, out, [bad])
    assert not (tmp_path / "out.seg.nrrd").exists()


@pytest.mark.parametrize("module", MODULES)
def test_bad_markers(module, files, modules_dir, tmp_path):
    if module != "CudaSeededSegmentation":
        pytest.skip("one input")
    out = tmp_path / "out.nrrd"
    for bad in BAD_FILES:
        run = subprocess.run(
            [str(modules_dir / module), str(files / "grey.nrrd"), str(files / bad), str(out)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert_clean_failure(run, module, out, [bad])


@pytest.mark.parametrize("module", MODULES)
def test_nan_and_infinity(module, files, modules_dir, tmp_path):
    """NaN: refused by every algorithm that orders or subtracts values, with the pixel named; connected components
    takes it as non-zero (foreground), as ITK's filter does. Infinity is an ordered value for the watershed, the
    waterfall and the IFT; the image graphs (alpha-tree, single linkage) refuse it (|inf - inf| has no weight), and so
    do waterpixels (the gradient of an infinity is not a number), naming the pixel (index 210)."""
    out = tmp_path / "out.nrrd"
    run = subprocess.run(
        command(module, modules_dir, files, files / "nan.nrrd", out, ["--backend", "cpu"]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if module == "CudaConnectedComponents":
        assert run.returncode == 0 and out.exists(), run.stderr
    else:
        assert_clean_failure(run, module, out, ["NaN"])
    out.unlink(missing_ok=True)
    run = subprocess.run(
        command(module, modules_dir, files, files / "inf.nrrd", out, ["--backend", "cpu"]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if module in ("CudaAlphaTreeSegmentation", "CudaSingleLinkageSegmentation", "CudaWaterpixels"):
        assert_clean_failure(run, module, out, ["infinite", "210"])
    else:
        assert run.returncode == 0 and out.exists(), run.stderr


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize(
    "shape", [(1, 1), (1, 41), (33, 1), (1, 1, 1), (1, 33, 41), (7, 1, 1)], ids=lambda s: "x".join(map(str, s))
)
def test_size_one_axes(module, shape, tmp_path, modules_dir):
    """Images of one pixel along any axis are labelled, with their own size."""
    image = tmp_path / "image.nrrd"
    nrrd.write(str(image), (np.arange(np.prod(shape)).reshape(shape) % 7).astype(np.uint8).T)
    inputs = [str(image)]
    if module == "CudaSeededSegmentation":
        markers = np.zeros(shape, np.uint16)
        markers.flat[0] = 1
        nrrd.write(str(tmp_path / "markers.nrrd"), markers.T)
        inputs.append(str(tmp_path / "markers.nrrd"))
    out = tmp_path / "out.nrrd"
    run = subprocess.run([str(modules_dir / module)] + inputs + [str(out)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-500:]
    labels, header = nrrd.read(str(out))
    assert labels.shape == tuple(reversed(shape)) or labels.squeeze().shape == np.empty(shape).T.squeeze().shape
    assert labels.min() >= (0 if module == "CudaConnectedComponents" else 1)


@pytest.mark.parametrize("module", MODULES)
def test_below_minimum(module, files, modules_dir, tmp_path):
    """Every numeric parameter with a minimum in the module's description refuses a smaller value, naming it."""
    import ctk_cli

    m = ctk_cli.CLIModule(str(modules_dir / module))
    _, options, _ = m.classifyParameters()
    checked = 0
    for p in options:
        if p.typ in ("integer", "float", "double") and p.constraints is not None and p.constraints.minimum is not None:
            flag = p.longflag or p.flag
            flag = flag if flag.startswith("-") else "--" + flag
            value = str(
                int(float(p.constraints.minimum)) - 1 if p.typ == "integer" else float(p.constraints.minimum) - 0.5
            )
            out = tmp_path / "out.nrrd"
            run = subprocess.run(
                command(module, modules_dir, files, files / "grey.nrrd", out, [flag, value]),
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert_clean_failure(run, module, out, [flag, "out of range"])
            checked += 1
    assert checked >= 1  # at least --device


def test_waterpixel_step_zero(files, modules_dir, tmp_path):
    out = tmp_path / "out.nrrd"
    run = subprocess.run(
        command("CudaWaterpixels", modules_dir, files, files / "grey.nrrd", out, ["--step", "0"]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_clean_failure(run, "CudaWaterpixels", out, ["grid step", "it is 0"])


def test_outputs_appear_only_at_the_end(files, modules_dir, tmp_path):
    """A run that fails after writing some outputs leaves none of them: the waterfall's level folder and label map are
    written under temporary names and removed when a later output cannot be written."""
    out = tmp_path / "out.nrrd"
    levels = tmp_path / "levels"
    blocked = tmp_path / "no-such-folder" / "x.seg.nrrd"  # cannot be created: the segmentation fails last
    run = subprocess.run(
        [
            str(modules_dir / "CudaWaterfallSegmentation"),
            "--sigma",
            "1",
            "--levels",
            str(levels),
            "--segmentation",
            str(blocked),
            str(files / "grey.nrrd"),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode > 0, run.stderr
    assert not out.exists()
    assert not levels.exists() or not [p for p in os.listdir(levels) if not p.startswith(".partial-")]
    assert not levels.exists() or not os.listdir(levels)
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".partial-")]
