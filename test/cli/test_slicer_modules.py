"""The command-line programs as 3D Slicer sees them, through ctk-cli (a client of Slicer's Execution Model): every
module's --xml is parsed and checked against the Execution Model's schema rules, the argument list is built from it
the way Slicer builds it, the module runs on small 2D and 3D inputs, and its outputs are read back: the label map
(with the input's geometry), the segmentation file through slicerio, the return parameter file and the progress
reports."""

import logging
import re
import subprocess
import xml.etree.ElementTree as ET

import ctk_cli
import nrrd
import numpy as np
import pytest
import scipy.ndimage as ndi
import slicerio

MODULES = [
    "CudaConnectedComponents",
    "CudaWatershedSegmentation",
    "CudaWaterfallSegmentation",
    "CudaAlphaTreeSegmentation",
    "CudaSingleLinkageSegmentation",
    "CudaWaterpixels",
    "CudaSeededSegmentation",
]

# The Execution Model's parameter types (ModuleDescription.xsd), those passed as files, and image subtypes.
VALUE_TYPES = {
    "boolean",
    "integer",
    "float",
    "double",
    "string",
    "integer-vector",
    "float-vector",
    "double-vector",
    "string-vector",
    "integer-enumeration",
    "float-enumeration",
    "double-enumeration",
    "string-enumeration",
    "point",
    "region",
}
FILE_TYPES = {"image", "file", "directory", "geometry", "transform", "pointfile", "table", "measurement"}
IMAGE_SUBTYPES = {"scalar", "label", "tensor", "diffusion-weighted-image", "vector", "model", "any"}
EXECUTABLE_CHILDREN = {
    "category",
    "title",
    "description",
    "version",
    "documentation-url",
    "license",
    "contributor",
    "acknowledgements",
    "parameters",
}
PARAMETER_CHILDREN = {
    "name",
    "flag",
    "longflag",
    "label",
    "description",
    "default",
    "channel",
    "index",
    "constraints",
    "element",
}


def schema_problems(root):
    """The Execution Model's rules that a description breaks, as readable strings (none: valid)."""
    problems = []
    if root.tag != "executable":
        return [f"root element is <{root.tag}>, not <executable>"]
    problems += [f"<{c.tag}> is not allowed in <executable>" for c in root if c.tag not in EXECUTABLE_CHILDREN]
    for tag in ("category", "title", "description"):
        if root.find(tag) is None or not (root.find(tag).text or "").strip():
            problems.append(f"<executable> has no <{tag}>")
    groups = root.findall("parameters")
    if not groups:
        problems.append("no <parameters> group")
    names, flags, indices = set(), set(), []
    for group in groups:
        if group.get("advanced", "false") not in ("true", "false"):
            problems.append("advanced must be true or false")
        for tag in ("label", "description"):
            if group.find(tag) is None:
                problems.append(f"a <parameters> group has no <{tag}>")
        for p in group:
            if p.tag in ("label", "description"):
                continue
            what = f"<{p.tag}> {p.findtext('name')!r}"
            if p.tag not in VALUE_TYPES | FILE_TYPES:
                problems.append(f"{what}: unknown parameter type")
                continue
            problems += [f"{what}: <{c.tag}> not allowed" for c in p if c.tag not in PARAMETER_CHILDREN]
            name = p.findtext("name")
            if not name or not re.fullmatch(r"[_a-zA-Z][_a-zA-Z0-9]*", name):
                problems.append(f"{what}: name must be an identifier")
            if name in names:
                problems.append(f"{what}: name used twice")
            names.add(name)
            for tag in ("label", "description"):
                if not (p.findtext(tag) or "").strip():
                    problems.append(f"{what}: no <{tag}>")
            flag, longflag, index = p.findtext("flag"), p.findtext("longflag"), p.findtext("index")
            channel = p.findtext("channel")
            if channel is not None and channel not in ("input", "output"):
                problems.append(f"{what}: channel {channel!r}")
            if p.tag in FILE_TYPES and channel is None:
                problems.append(f"{what}: a file parameter needs a channel")
            simple_output = channel == "output" and p.tag not in FILE_TYPES
            if simple_output:
                if flag or longflag or index is not None:
                    problems.append(f"{what}: a returned value has no flag or index")
            elif index is not None and (flag or longflag):
                problems.append(f"{what}: both an index and a flag")
            elif index is None and not (flag or longflag):
                problems.append(f"{what}: neither an index nor a flag")
            if flag is not None and not re.fullmatch(r"-?[a-zA-Z]", flag):
                problems.append(f"{what}: flag {flag!r} is not one letter")
            if longflag is not None and not re.fullmatch(r"(--)?[_a-zA-Z][_a-zA-Z0-9-]*", longflag):
                problems.append(f"{what}: longflag {longflag!r}")
            for f in (flag, longflag):
                if f:
                    if f.lstrip("-") in flags:
                        problems.append(f"{what}: flag {f} used twice")
                    flags.add(f.lstrip("-"))
            if index is not None:
                if not index.isdigit():
                    problems.append(f"{what}: index {index!r}")
                else:
                    indices.append(int(index))
            if p.tag == "boolean" and index is not None:
                problems.append(f"{what}: a boolean cannot be positional")
            if p.tag == "image" and p.get("type", "scalar") not in IMAGE_SUBTYPES:
                problems.append(f"{what}: image type {p.get('type')!r}")
            default = p.findtext("default")
            elements = [e.text for e in p.findall("element")]
            if p.tag.endswith("-enumeration"):
                if not elements:
                    problems.append(f"{what}: an enumeration without <element>")
                if default is not None and default not in elements:
                    problems.append(f"{what}: default {default!r} is not an element")
            elif elements:
                problems.append(f"{what}: <element> outside an enumeration")
            if p.tag == "boolean" and default not in (None, "true", "false"):
                problems.append(f"{what}: boolean default {default!r}")
            number = {"integer": int, "float": float, "double": float}.get(p.tag)
            if number and default is not None:
                try:
                    number(default)
                except ValueError:
                    problems.append(f"{what}: default {default!r} is not a {p.tag}")
            c = p.find("constraints")
            if c is not None:
                if number is None:
                    problems.append(f"{what}: constraints on a non-number")
                else:
                    low, high = c.findtext("minimum"), c.findtext("maximum")
                    if c.find("step") is None:
                        problems.append(f"{what}: constraints without <step>")
                    if low is not None and high is not None and float(low) > float(high):
                        problems.append(f"{what}: minimum above maximum")
                    if default is not None and low is not None and float(default) < float(low):
                        problems.append(f"{what}: default below minimum")
                    if default is not None and high is not None and float(default) > float(high):
                        problems.append(f"{what}: default above maximum")
    if sorted(indices) != list(range(len(indices))):
        problems.append(f"indices {sorted(indices)} are not 0..{len(indices) - 1}")
    return problems


def test_schema_rules_catch_broken_descriptions():
    """The checker finds what it looks for."""
    good = ET.fromstring("""<executable><category>c</category><title>t</title><description>d</description>
      <parameters><label>l</label><description>d</description>
        <image><name>a</name><label>A</label><description>x</description><channel>input</channel><index>0</index></image>
        <integer><name>n</name><longflag>--n</longflag><label>N</label><description>x</description><default>3</default>
          <constraints><minimum>0</minimum><maximum>9</maximum><step>1</step></constraints></integer>
      </parameters></executable>""")
    assert schema_problems(good) == []
    for broken, replacement in [
        ("<index>0</index></image>", "<index>1</index></image>"),
        ("<default>3</default>", "<default>30</default>"),
        ("<channel>input</channel>", ""),
        ("<longflag>--n</longflag>", ""),
        ("<name>n</name>", "<name>2n</name>"),
    ]:
        text = ET.tostring(good, encoding="unicode").replace(broken, replacement, 1)
        assert schema_problems(ET.fromstring(text)), text


@pytest.fixture(scope="module", params=MODULES)
def module(request, modules_dir, caplog_module):
    """The module as ctk-cli reads it from the Slicer module folder; ctk-cli's warnings are description errors."""
    path = modules_dir / request.param
    assert ctk_cli.isCLIExecutable(str(path)), f"{path} is not a command-line module"
    m = ctk_cli.CLIModule(str(path))
    return m, caplog_module


@pytest.fixture(scope="module")
def caplog_module():
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    handler = Keep(level=logging.WARNING)
    logging.getLogger("ctk_cli").addHandler(handler)
    yield records
    logging.getLogger("ctk_cli").removeHandler(handler)


def test_module_folder_holds_the_modules(modules_dir):
    """The folder the README tells Slicer users to add holds the modules and nothing else."""
    found = sorted(p.rsplit("/", 1)[-1] for p in ctk_cli.listCLIExecutables(str(modules_dir)))
    assert found == sorted(MODULES)


def test_description(module):
    m, warnings = module
    before = len(warnings)
    m2 = ctk_cli.CLIModule(m.path)  # parsed again with the warning handler attached
    # ctk-cli also warns of returned values without a flag: Slicer passes them through --returnparameterfile, not
    # flags (the schema check below requires that they have none).
    returned = "Parameter regionCount cannot be passed (missing one of flag, longflag, or index)!"
    assert [w.getMessage() for w in warnings[before:] if w.getMessage() != returned] == []
    assert m2.category == "Segmentation.GPU Hierarchies"
    assert m2.title and m2.description and m2.contributor and m2.license and m2.version
    root = ctk_cli.getXMLDescription(m.path).getroot()
    assert schema_problems(root) == []
    parameters = {p.name: p for p in m2.parameters()}
    assert parameters["backend"].elements == ["auto", "cuda", "cpu"]
    assert parameters["device"].typ == "integer"
    # The label maps are marked as such, the return value and the segmentation are there.
    assert parameters["outputVolume"].typ == "image" and parameters["outputVolume"].subtype == "label"
    assert parameters["outputVolume"].channel == "output"
    assert parameters["outputSegmentation"].fileExtensions == [".seg.nrrd"]
    # Every number a user sets has its range, so that Slicer's sliders and spin boxes are bounded.
    for p in m2.parameters():
        if p.typ in ("integer", "float", "double") and p.channel != "output":
            assert p.constraints is not None, p.name
    arguments, options, outputs = m2.classifyParameters()
    assert [p.name for p in outputs] == ["regionCount"]
    assert arguments[-1].name == "outputVolume"
    assert all(p.channel == "input" for p in arguments[:-1])


# What each module is run with (by parameter name), beyond the inputs and the defaults.
SETTINGS = {
    "CudaConnectedComponents": {"fullyConnected": True, "statisticsFile": "stats.csv"},
    "CudaWatershedSegmentation": {"sigma": 1.0, "algorithm": "apruf"},
    "CudaWaterfallSegmentation": {"sigma": 1.0, "level": 1, "levelsDirectory": "levels"},
    "CudaAlphaTreeSegmentation": {
        "alpha": 12.0,
        "omega": 60.0,
        "meanVolume": "mean.nrrd",
        "saliencyVolume": "saliency.nrrd",
    },
    "CudaSingleLinkageSegmentation": {"clusters": 7},
    "CudaWaterpixels": {"step": [6], "fullyConnected": True},
    "CudaSeededSegmentation": {"arcWeight": "maximum", "costVolume": "cost.nrrd"},
}
INPUTS = {"inputVolume": "grey", "weightVolume": "grey", "markerVolume": "markers"}


def slicer_command(m, values, folder):
    """The command line Slicer builds from the description: every flagged parameter with its value (booleans as the
    bare flag when true; unset files left out), --returnparameterfile when there are returned values, then the
    positional parameters by index."""
    arguments, options, outputs = m.classifyParameters()
    command = [m.path]
    for p in options:
        flag = p.longflag or p.flag
        value = values.get(p.name, p.default)
        if p.typ == "boolean":
            if value:
                command.append(flag)
            continue
        if value is None or value == "":
            continue
        if p.isExternalType() and p.channel == "output":
            value = str(folder / value)
        command += [flag, ",".join(map(str, value)) if isinstance(value, list) else str(value)]
    if outputs:
        command += ["--returnparameterfile", str(folder / "return.txt")]
    command += [values[p.name] for p in arguments]
    return command


def progress_of(stdout):
    """The progress reports on stdout, checked for the protocol's form; returns the progress values."""
    assert "<filter-start>" in stdout and "<filter-name>" in stdout
    values = [float(v) for v in re.findall(r"<filter-progress>([^<]*)</filter-progress>", stdout)]
    assert values and values == sorted(values) and 0 <= values[0] and values[-1] == 1.0
    assert stdout.index("<filter-end>") > stdout.rindex("<filter-progress>")
    assert re.search(r"<filter-time>[0-9.e+-]+</filter-time>", stdout)
    return values


def same_geometry(header, reference):
    assert list(header["sizes"]) == list(reference["sizes"])
    np.testing.assert_allclose(header["space directions"], reference["space directions"], rtol=1e-6)
    np.testing.assert_allclose(header["space origin"], reference["space origin"], rtol=1e-6)


def test_run_as_slicer_does(module, inputs, backend, tmp_path):
    m, _ = module
    name = m.name
    values = dict(SETTINGS[name])
    values.update({k: inputs[v] for k, v in INPUTS.items()})
    if name == "CudaConnectedComponents":
        values["inputVolume"] = inputs["binary"]
    values.update(outputVolume=str(tmp_path / "labels.nrrd"), outputSegmentation="labels.seg.nrrd", backend=backend)
    command = slicer_command(m, values, tmp_path)
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{command}\n{run.stdout}\n{run.stderr}"
    progress_of(run.stdout)

    labels, header = nrrd.read(values["outputVolume"])
    same_geometry(header, inputs["header"])
    present = np.unique(labels[labels != 0])
    returned = open(tmp_path / "return.txt").read()
    assert re.fullmatch(r"regionCount = [0-9]+\n", returned)
    assert int(returned.split("=")[1]) == len(present) > 0
    if name == "CudaSeededSegmentation":
        assert list(present) == [1, 2, 40000]
    else:
        assert list(present) == list(range(1, len(present) + 1))  # 1..N

    # The segmentation, read by slicerio: one segment per label, the same voxels, the same geometry.
    seg = slicerio.read_segmentation(str(tmp_path / "labels.seg.nrrd"))
    segments = seg["segments"]
    assert sorted(s["labelValue"] for s in segments) == list(present)
    assert len({s["id"] for s in segments}) == len(segments)
    assert all(s["layer"] == 0 and len(s["color"]) == 3 for s in segments)
    voxels = seg["voxels"]
    assert voxels.shape == labels.shape + (1,) * (3 - labels.ndim)
    np.testing.assert_array_equal(voxels.reshape(labels.shape), labels)
    d = inputs["dimension"]
    np.testing.assert_allclose(seg["ijkToLPS"][:d, :d], header["space directions"].T, rtol=1e-6)
    np.testing.assert_allclose(seg["ijkToLPS"][:d, 3], header["space origin"], rtol=1e-6)
    # The representation's key under the name of Slicer 5.4 and later, and under the earlier one for older releases.
    header_keys = nrrd.read_header(str(tmp_path / "labels.seg.nrrd"))
    assert header_keys["Segmentation_SourceRepresentation"] == "Binary labelmap"
    assert header_keys["Segmentation_MasterRepresentation"] == "Binary labelmap"
    for s in segments[:5]:  # each segment's extent is its label's bounding box
        where = np.argwhere(labels == s["labelValue"])
        box = [v for a, b in zip(where.min(0), where.max(0)) for v in (a, b)]
        assert s["extent"][: 2 * d] == box

    # What each module adds.
    if name == "CudaConnectedComponents":
        structure = np.ones((3,) * d)
        assert len(present) == ndi.label(inputs["binaryArray"] > 0, structure)[1]
        assert len(open(tmp_path / "stats.csv").read().splitlines()) == len(present) + 1
    if name == "CudaSingleLinkageSegmentation":
        assert len(present) == 7
    if name == "CudaWaterfallSegmentation":
        levels = sorted((tmp_path / "levels").glob("level-*.nrrd"), key=lambda p: int(p.stem[6:]))
        counts = [len(np.unique(nrrd.read(str(p))[0])) for p in levels]
        assert len(levels) >= 2 and counts == sorted(counts, reverse=True) and counts[-1] == 1
        np.testing.assert_array_equal(nrrd.read(str(levels[1]))[0], labels)
    if name == "CudaAlphaTreeSegmentation":
        mean, mean_header = nrrd.read(str(tmp_path / "mean.nrrd"))
        same_geometry(mean_header, inputs["header"])
        for label in present[:10]:  # every region holds one value
            assert np.ptp(mean[labels == label]) < 1e-3
        saliency = nrrd.read(str(tmp_path / "saliency.nrrd"))[0]
        assert saliency.shape == tuple(2 * s - 1 for s in inputs["shape"])
    if name == "CudaSeededSegmentation":
        cost = nrrd.read(str(tmp_path / "cost.nrrd"))[0]
        assert cost.shape == labels.shape and (cost >= 0).all()


@pytest.fixture(scope="session")
def gpu(modules_dir, tmp_path_factory):
    """Whether the modules find a CUDA device (a tiny run with --backend cuda)."""
    folder = tmp_path_factory.mktemp("gpu")
    nrrd.write(str(folder / "one.nrrd"), np.ones((2, 2), np.uint8))
    run = subprocess.run(
        [
            str(modules_dir / "CudaConnectedComponents"),
            "--backend",
            "cuda",
            str(folder / "one.nrrd"),
            str(folder / "out.nrrd"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if run.returncode != 0 and "no CUDA device" in run.stderr:
        return False
    assert run.returncode == 0, run.stderr
    return True


def test_gpu_equals_cpu(module, inputs, gpu, tmp_path):
    """Run as Slicer runs it, the module gives the same label map, segmentation and count on the GPU and the CPU."""
    if not gpu:
        pytest.skip("no CUDA device")
    m, _ = module
    results = []
    for backend in ("cuda", "cpu"):
        folder = tmp_path / backend
        folder.mkdir()
        values = dict(SETTINGS[m.name])
        values.update({k: inputs[v] for k, v in INPUTS.items()})
        if m.name == "CudaConnectedComponents":
            values["inputVolume"] = inputs["binary"]
        values.update(outputVolume=str(folder / "labels.nrrd"), outputSegmentation="labels.seg.nrrd", backend=backend)
        run = subprocess.run(slicer_command(m, values, folder), capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        assert ("CPU reference" in run.stdout) == (backend == "cpu")
        seg = slicerio.read_segmentation(str(folder / "labels.seg.nrrd"))
        results.append(
            (nrrd.read(values["outputVolume"])[0], seg["voxels"], seg["segments"], open(folder / "return.txt").read())
        )
    (gpu_labels, gpu_voxels, gpu_segments, gpu_count), (cpu_labels, cpu_voxels, cpu_segments, cpu_count) = results
    np.testing.assert_array_equal(gpu_labels, cpu_labels)
    np.testing.assert_array_equal(gpu_voxels, cpu_voxels)
    assert gpu_segments == cpu_segments and gpu_count == cpu_count


def test_help_description_and_parser_agree(module, tmp_path):
    """The options are declared once (a table per program gives --help, --xml and the parser): every flag of the
    description is listed by --help, and the parser knows every option --help lists."""
    m, _ = module
    usage = subprocess.run([m.path, "--help"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 0
    listed = dict(re.findall(r"^  (--[a-z-]+)( <)?", usage.stdout, re.M))
    flags = {p.longflag if p.longflag.startswith("--") else "--" + p.longflag for p in m.parameters() if p.longflag}
    assert flags and flags <= set(listed), flags - set(listed)
    for flag, takes_value in listed.items():
        if flag in ("--help", "--xml"):
            continue
        command = [m.path, flag] + (["0"] if takes_value else [])
        run = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert "unknown option" not in run.stderr and "needs a value" not in run.stderr, (flag, run.stderr)


def test_bad_input(module, inputs, tmp_path):
    """A readable message and a non-zero exit, nothing written."""
    m, _ = module
    arguments, _, _ = m.classifyParameters()
    out = tmp_path / "out.nrrd"
    positional = [str(tmp_path / "missing.nrrd")] * (len(arguments) - 1) + [str(out)]
    run = subprocess.run([m.path] + positional, capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and m.name in run.stderr and "missing.nrrd" in run.stderr
    assert not out.exists()
    good = [inputs["grey"]] * (len(arguments) - 1) + [str(out)]
    for option, message in (
        (["--backend", "gpu"], "unknown backend 'gpu'"),
        (["--device", "x"], "bad value for --device"),
        (["--no-such-option"], "unknown option --no-such-option"),
    ):
        run = subprocess.run([m.path] + option + good, capture_output=True, text=True, timeout=60)
        assert run.returncode == 2 and message in run.stderr, run.stderr
    run = subprocess.run(
        [m.path, "--segmentation", str(tmp_path / "x.nrrd")] + good, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2 and "must end with .seg.nrrd" in run.stderr
    assert not out.exists()


def test_many_labels_give_the_label_map_only(modules_dir, backend, tmp_path):
    """Above 5,000 labels a module writes the label map, not the segmentation file, and says why."""
    image = np.zeros((161, 161), np.uint8)
    image[::2, ::2] = 255  # 81 x 81 = 6,561 isolated pixels: as many components, 4- or 8-connected
    source = str(tmp_path / "dots.nrrd")
    nrrd.write(source, image)
    out, seg = tmp_path / "labels.nrrd", tmp_path / "labels.seg.nrrd"
    run = subprocess.run(
        [
            str(modules_dir / "CudaConnectedComponents"),
            "--backend",
            backend,
            "--segmentation",
            str(seg),
            "--returnparameterfile",
            str(tmp_path / "return.txt"),
            source,
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert not seg.exists() and not list(tmp_path.glob("*.seg.nrrd*"))
    assert "was not written: 6561 regions, more than the 5000 segments" in run.stdout
    labels, _ = nrrd.read(str(out))
    assert labels.max() == 6561 and len(np.unique(labels)) == 6562
    assert open(tmp_path / "return.txt").read() == "regionCount = 6561\n"

    # Below the limit the segmentation is written.
    image[:, 100:] = 0
    kept = int((image > 0).sum())  # 81 x 50
    assert kept <= 5000
    source = str(tmp_path / "fewer.nrrd")
    nrrd.write(source, image)
    run = subprocess.run(
        [
            str(modules_dir / "CudaConnectedComponents"),
            "--backend",
            backend,
            "--segmentation",
            str(seg),
            source,
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert len(slicerio.read_segmentation(str(seg))["segments"]) == kept


def test_watershed_from_markers_inside_a_mask(modules_dir, inputs, backend, tmp_path):
    """CudaWatershedSegmentation --markers floods the input from the markers: every pixel gets a marker's label, the
    markers keep theirs and each region is connected (the labels against ITK's and scikit-image's floods are tested in
    GTest and in chseg's tests); --mask leaves the pixels outside at 0; --level merges shallow minima."""
    ws = str(modules_dir / "CudaWatershedSegmentation")

    def run(*arguments):
        out = str(tmp_path / f"out{len(list(tmp_path.iterdir()))}.nrrd")
        r = subprocess.run(
            [ws, "--backend", backend] + list(arguments) + [out], capture_output=True, text=True, timeout=300
        )
        assert r.returncode == 0, f"{arguments}\n{r.stdout}\n{r.stderr}"
        return nrrd.read(out)[0]

    markers = nrrd.read(inputs["markers"])[0]
    structure = ndi.generate_binary_structure(markers.ndim, 1)
    flooded = run("--markers", inputs["markers"], inputs["grey"])
    assert sorted(np.unique(flooded)) == [1, 2, 40000]
    assert np.array_equal(flooded[markers != 0], markers[markers != 0])
    for label in (1, 2, 40000):
        assert ndi.label(flooded == label, structure)[1] == 1
    inside = run("--markers", inputs["markers"], "--mask", inputs["binary"], inputs["grey"])
    assert (inside[inputs["binaryArray"] == 0] == 0).all()
    assert set(np.unique(inside)) <= {0, 1, 2, 40000}
    basins = len(np.unique(run(inputs["grey"])))
    merged = np.unique(run("--level", "20", inputs["grey"]))
    assert 0 < len(merged) < basins and list(merged) == list(range(1, len(merged) + 1))


def test_single_linkage_hierarchies_by_attribute(modules_dir, inputs, backend, tmp_path):
    """CudaSingleLinkageSegmentation --hierarchy area | volume | dynamics cuts the watershed hierarchy by that
    attribute (its arrays are compared with Higra's in GTest and chseg's tests): --clusters k gives k regions, a
    threshold above every attribute one region, a lower threshold more; --min-area a leaves no region smaller than a
    pixels."""
    program = str(modules_dir / "CudaSingleLinkageSegmentation")

    def run(*arguments):
        out = str(tmp_path / f"out{len(list(tmp_path.iterdir()))}.nrrd")
        r = subprocess.run(
            [program, "--backend", backend] + list(arguments) + [inputs["grey"], out],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, f"{arguments}\n{r.stdout}\n{r.stderr}"
        return nrrd.read(out)[0]

    pixels = int(np.prod(inputs["shape"]))
    for hierarchy in ("area", "volume", "dynamics"):
        labels = run("--hierarchy", hierarchy, "--clusters", "7")
        assert list(np.unique(labels)) == list(range(1, 8)), hierarchy
        assert len(np.unique(run("--hierarchy", hierarchy, "--distance", str(300 * pixels)))) == 1, hierarchy
    assert len(np.unique(run("--hierarchy", "area", "--distance", "3"))) > len(
        np.unique(run("--hierarchy", "area", "--distance", "40"))
    )
    filtered = run("--min-area", "20")
    assert np.bincount(filtered.ravel())[1:].min() >= 20
    r = subprocess.run(
        [program, "--hierarchy", "perimeter", inputs["grey"], str(tmp_path / "x.nrrd")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0 and "hierarchy" in r.stderr and not (tmp_path / "x.nrrd").exists()
