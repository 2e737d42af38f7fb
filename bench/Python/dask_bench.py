"""Benchmark of chseg.dask on the GPU machine, peers in the same run (issue 33).

1. A CT-like porous volume (uint8, side^3) is written to a Zarr store in chunks^3: a smooth random field (a sum of
   plane waves of random directions and phases, wavelengths of 24 to 64 voxels) plus voxel noise, 0..255. The pores
   are the voxels below 100.
2. On one distributed.LocalCluster (--workers processes, one thread each), the pores are labelled from the store and
   the labels written to a new Zarr store, chunk by chunk:
   - chseg.dask.label (each worker's chunk labelled by chseg, on the GPU when there is one); with --chseg-cluster
     spread, on a cluster of its own of --workers one-thread processes, process i seeing GPU i mod GPUs; with cuda, on
     dask-cuda's LocalCUDACluster (one worker per GPU, --workers / GPUs threads each);
   - dask-image's ndmeasure.label (SciPy on each chunk, then its merge across chunks), always on the LocalCluster.
   Wall time of the whole (merge and write); peak memory of the cluster's processes (distributed's MemorySampler) and
   of the GPU (nvidia-smi, sampled every 0.2 s). The two label stores are checked to be the same partition: every
   chunk's distinct (chseg, dask-image) label pairs are gathered and must form a one-to-one map. For scale, what any
   Zarr-to-Zarr labeller pays on that cluster: reading the input store, and reading and writing the labels store once.
   Where the volume fits (--side <= --fits-side), the one-GPU filter on the same store: the store read into memory,
   one chseg.label call, the labels written to Zarr in the same chunks by the threaded scheduler.
3. The overhead of chunking, on a volume that fits: the first --fits-side^3 voxels of the same field as one NumPy
   array, labelled by chseg.label (uint64, one call) and by chseg.dask.label in chunks^3 on the threaded scheduler,
   both from memory to memory; the labels must be equal.
4. The watershed of a smaller grey volume (--ws-side^3, chunks of --ws-chunk^3) by chseg.dask.watershed on the cluster
   against chseg.watershed on the whole volume: equal labels, wall times (--ws-side 0: steps 3 and 4 skipped).

A run that must fit one device call can be split in two on the same machine: the first with --no-dask-image
--keep-work (chseg only; --chseg-runs 2 times it with CuPy's kernel cache as found, then warm), the second with
--reuse-work --chseg-result FIRST/dask_bench.json (the volume and chseg's labels store of the first reused, its chseg
time taken) and --dask-image-limit S: a dask-image run not finished after S seconds is recorded as such, with the
ratio's lower bound S / chseg's time.

Writes OUT/dask_bench.json and prints a Markdown table. Usage:
python dask_bench.py OUT [--side 2048] [--chunk 512] [--workers 16] [--fits-side 1024] [--ws-side 256]
[--chseg-cluster processes|spread|cuda] [--chseg-runs N] [--no-dask-image] [--dask-image-limit S] [--keep-work]
[--reuse-work] [--chseg-result JSON]"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import threading
import time

import numpy as np


def field_block(xp, start, shape, seed=7, waves=12):
    """The porous field on a box of the volume (global coordinates, so that any chunking gives the same volume)."""
    rng = np.random.default_rng(seed)
    axes = [xp.arange(s, s + n, dtype=xp.float32) for s, n in zip(start, shape)]
    total = xp.zeros(shape, xp.float32)
    for _ in range(waves):
        direction = rng.normal(size=3)
        k = 2 * np.pi / rng.uniform(24, 64) * direction / np.linalg.norm(direction)
        phase = rng.uniform(0, 2 * np.pi)
        arg = (k[0] * axes[0])[:, None, None] + (k[1] * axes[1])[None, :, None] + (k[2] * axes[2])[None, None, :]
        total += xp.cos(arg + phase)
    total *= np.float32(40 / np.sqrt(waves / 2))
    noise_seed = int(np.ravel_multi_index(tuple(s // 64 for s in start), (1 << 12,) * 3)) + seed
    noise = xp.random.default_rng(noise_seed).standard_normal(shape, dtype=xp.float32) * np.float32(8)
    return xp.clip(total + noise + 128, 0, 255).astype(xp.uint8)


def write_volume(path, side, chunk):
    import zarr

    try:
        import cupy as xp
    except ImportError:
        xp = np
    z = zarr.open(path, mode="w", shape=(side,) * 3, chunks=(chunk,) * 3, dtype=np.uint8)
    for k in np.ndindex(*(side // chunk,) * 3):
        start = tuple(i * chunk for i in k)
        block = field_block(xp, start, (chunk,) * 3)
        z[tuple(slice(s, s + chunk) for s in start)] = block.get() if xp is not np else block
    return z


def kept_volume(path, side, chunk):
    """Whether `path` holds a complete volume of this side and chunk (written by write_volume)."""
    import zarr

    try:
        z = zarr.open(path, mode="r")
    except Exception:  # noqa: BLE001  (no store, or not a Zarr store)
        return False
    return z.shape == (side,) * 3 and z.chunks == (chunk,) * 3 and z.nchunks_initialized == z.nchunks


class GpuMemory:
    """Peak used memory of the GPUs (MiB, summed over the GPUs), from nvidia-smi every 0.2 s."""

    def __init__(self):
        self.peak, self.samples, self._stop = 0, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                out = subprocess.run(
                    ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                    capture_output=True,
                    text=True,
                    timeout=5,
                ).stdout
                self.peak = max(self.peak, sum(int(x) for x in out.split()))
                self.samples += 1
            except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
                pass
            self._stop.wait(0.2)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def pairs_of_block(a, b):
    """The distinct (a, b) label pairs of a chunk, as one key a * 2^32 + b each (both labels below 2^32)."""
    a, b = np.asarray(a).ravel().astype(np.uint64), np.asarray(b).ravel().astype(np.uint64)
    assert a.max(initial=0) < 2**32 and b.max(initial=0) < 2**32
    return np.unique((a << np.uint64(32)) | b)


def same_partition(a, b):
    """Whether two label arrays (dask, same chunks) are the same partition: the distinct label pairs of all chunks
    form a one-to-one map."""
    import dask

    blocks = [dask.delayed(pairs_of_block)(x, y) for x, y in zip(a.to_delayed().ravel(), b.to_delayed().ravel())]
    pairs = np.unique(np.concatenate(dask.compute(*blocks)))
    a, b = pairs >> np.uint64(32), pairs & np.uint64(2**32 - 1)
    return bool(np.unique(a).size == pairs.size == np.unique(b).size), int(pairs.size)


def timed_store(name, make_labels, out_path):
    import chseg.dask as cd
    import dask
    from distributed.diagnostics import MemorySampler

    sampler = MemorySampler()
    shutil.rmtree(out_path, ignore_errors=True)
    compute, computed = dask.compute, []

    def timed_compute(*args, **kwargs):  # the chunk passes that the merge computes (chseg: pass 1)
        t = time.perf_counter()
        out = compute(*args, **kwargs)
        computed.append(time.perf_counter() - t)
        return out

    with GpuMemory() as gpu, sampler.sample(name, measure="process", interval=0.5):
        start = time.perf_counter()
        dask.compute = timed_compute
        try:
            labels = make_labels()
        finally:
            dask.compute = compute
        merged = time.perf_counter()
        cd.to_zarr(labels, out_path)
        done = time.perf_counter()
    peak_host = float(max(v for _, v in sampler.samples[name]))
    return {
        "seconds": done - start,
        "merge_seconds": merged - start,
        "merge_chunk_pass_seconds": sum(computed),
        "peak_cluster_bytes": peak_host,
        "peak_gpu_mib": gpu.peak,
        "gpu_samples": gpu.samples,
    }


def fits(args, result, save):
    """Step 3: the overhead of chunking on a volume that fits one GPU (memory to memory; CuPy, then NumPy)."""
    import chseg
    import chseg.dask as cd
    import dask
    import dask.array as da

    modules = []
    try:
        import cupy

        modules.append(("cupy", cupy, cupy.cuda.get_current_stream().synchronize))
    except ImportError:
        pass
    modules.append(("numpy", np, lambda: None))
    volume = np.empty((args.fits_side,) * 3, np.uint8)
    c = args.chunk
    for k in np.ndindex(*(args.fits_side // c,) * 3):
        block = field_block(modules[0][1], tuple(i * c for i in k), (c,) * 3)  # on the GPU where there is one
        volume[tuple(slice(i * c, (i + 1) * c) for i in k)] = block.get() if hasattr(block, "get") else block
    result["fits"] = {}
    for name, xp, sync in modules:
        mask = xp.asarray(volume < 100)
        whole = chseg.label(mask, dtype=np.uint64)  # warm-up
        times = []
        for _ in range(args.reps):
            t = time.perf_counter()
            whole = chseg.label(mask, dtype=np.uint64)
            sync()
            times.append(time.perf_counter() - t)
        whole_s = min(times)
        chunked = xp.empty(mask.shape, np.uint64)  # the chunks are stored into it (no final concatenation)
        times = []
        with dask.config.set(scheduler="threads"):
            for _ in range(args.reps):
                t = time.perf_counter()
                da.store(cd.label(da.from_array(mask, chunks=c, asarray=False)), chunked, lock=False)
                sync()
                times.append(time.perf_counter() - t)
        result["fits"][name] = {
            "side": args.fits_side,
            "chunk": c,
            "whole_seconds": whole_s,
            "chunked_seconds": min(times),
            "overhead": min(times) / whole_s,
            "equal": bool((whole == chunked).all()),
            "components": int(whole.max()),
        }
        print("fits", name, result["fits"][name], flush=True)
        save()
        del mask, whole, chunked
    save()


def spread_cluster(workers, gpus):
    """A local cluster of `workers` processes of one thread, process i seeing only GPU i mod `gpus`."""
    import distributed

    spec = {
        i: {
            "cls": distributed.Nanny,
            "options": {"nthreads": 1, "memory_limit": 0, "env": {"CUDA_VISIBLE_DEVICES": str(i % gpus)}},
        }
        for i in range(workers)
    }
    return distributed.SpecCluster(
        workers=spec, scheduler={"cls": distributed.Scheduler, "options": {"dashboard_address": None}}
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--side", type=int, default=2048)
    parser.add_argument("--chunk", type=int, default=512)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--fits-side", type=int, default=1024)
    parser.add_argument("--ws-side", type=int, default=256)
    parser.add_argument("--ws-chunk", type=int, default=128)
    parser.add_argument("--no-dask-image", action="store_true")
    parser.add_argument("--only-fits", action="store_true", help="only step 3, the overhead of chunking")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--chseg-runs", type=int, default=1, help="chseg's Zarr-to-Zarr run this many times")
    parser.add_argument(
        "--dask-image-limit",
        type=float,
        default=0,
        help="seconds after which an unfinished dask-image run is recorded as such (0: none)",
    )
    parser.add_argument("--keep-work", action="store_true", help="keep the volume and chseg's labels store")
    parser.add_argument("--reuse-work", action="store_true", help="reuse a kept volume of the same side and chunk")
    parser.add_argument(
        "--chseg-result",
        help="an earlier run's dask_bench.json whose chseg time is taken (with "
        "--reuse-work and its kept labels store) instead of running chseg again",
    )
    parser.add_argument(
        "--chseg-cluster",
        choices=("processes", "spread", "cuda"),
        default="processes",
        help="chseg on the same LocalCluster of --workers processes as dask-image (every process on "
        "GPU 0); 'spread': --workers processes of one thread, process i on GPU i mod GPUs "
        "(CUDA_VISIBLE_DEVICES); 'cuda': dask_cuda's LocalCUDACluster, one worker per GPU, "
        "--workers / GPUs threads each (dask-image stays on the LocalCluster)",
    )
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    work = os.environ.get("CHS_BENCH_WORK", os.path.join(args.out, "work"))
    os.makedirs(work, exist_ok=True)

    import chseg
    import chseg.dask as cd
    import dask
    import dask.array as da
    import distributed

    def save():
        with open(os.path.join(args.out, "dask_bench.json"), "w") as f:
            json.dump(result, f, indent=1)

    result = {
        "side": args.side,
        "chunk": args.chunk,
        "workers": args.workers,
        "python": platform.python_version(),
        "dask": dask.__version__,
        "gpus": chseg.device_count(),
    }
    if args.only_fits:
        return fits(args, result, save)
    t = time.perf_counter()
    if not (args.reuse_work and kept_volume(os.path.join(work, "volume.zarr"), args.side, args.chunk)):
        write_volume(os.path.join(work, "volume.zarr"), args.side, args.chunk)
        result["generate_seconds"] = time.perf_counter() - t
        print(f"volume {args.side}^3 written in {result['generate_seconds']:.1f} s", flush=True)
    earlier = None
    if (
        args.chseg_result
        and args.reuse_work
        and os.path.exists(args.chseg_result)
        and os.path.exists(os.path.join(work, "chseg.zarr"))
    ):
        with open(args.chseg_result) as f:
            earlier = json.load(f)
        if (earlier["side"], earlier["chunk"]) != (args.side, args.chunk):
            earlier = None

    local = f"LocalCluster: {args.workers} processes x 1 thread"
    with (
        distributed.LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit=0
        ) as cluster,
        distributed.Client(cluster),
    ):
        pores = da.from_zarr(os.path.join(work, "volume.zarr")) < 100

        def chseg_run():  # chseg.dask.label from the store to chseg.zarr on the cluster --chseg-cluster names
            store = os.path.join(work, "chseg.zarr")
            if args.chseg_cluster == "cuda":
                import dask_cuda

                threads = max(1, args.workers // max(1, chseg.device_count()))
                with (
                    dask_cuda.LocalCUDACluster(
                        threads_per_worker=threads, dashboard_address=None, memory_limit=0
                    ) as gpus,
                    distributed.Client(gpus),
                ):
                    out = timed_store("chseg", lambda: cd.label(pores), store)
                return dict(out, cluster=f"LocalCUDACluster: {chseg.device_count()} workers x {threads} threads")
            if args.chseg_cluster == "spread":
                gpus = max(1, chseg.device_count())
                with spread_cluster(args.workers, gpus) as spread, distributed.Client(spread):
                    out = timed_store("chseg", lambda: cd.label(pores), store)
                return dict(out, cluster=f"{args.workers} processes x 1 thread, process i on GPU i mod {gpus}")
            return dict(timed_store("chseg", lambda: cd.label(pores), store), cluster=local)

        if earlier is not None:
            ours = dict(earlier["chseg"], taken_from=args.chseg_result)
        else:
            runs = []
            for _ in range(max(1, args.chseg_runs)):
                runs.append(chseg_run())
                print("chseg.dask.label run", len(runs), runs[-1], flush=True)
            ours = runs[-1]
            if len(runs) > 1:  # the last run is the result (CuPy's kernel cache warm from the first); all are kept
                ours = dict(ours, runs=runs)
        ours_labels = da.from_zarr(os.path.join(work, "chseg.zarr"))
        ours["components"] = int(ours_labels.max().compute())
        result["chseg"] = ours
        print("chseg.dask.label", ours, flush=True)
        save()
        if not args.no_dask_image:
            from dask_image import ndmeasure

            def dask_image_labels():
                labels, count = ndmeasure.label(pores)
                return labels

            # timed in a thread, abandoned when --dask-image-limit passes (None: no limit)
            box = {}

            def dask_image_run():
                try:
                    box["theirs"] = timed_store("dask-image", dask_image_labels, os.path.join(work, "dask_image.zarr"))
                except BaseException as e:  # noqa: BLE001  (raised again below, in the main thread)
                    box["error"] = e

            thread = threading.Thread(target=dask_image_run, daemon=True)
            thread.start()
            thread.join(args.dask_image_limit or None)
            if "error" in box:
                raise box["error"]
            if "theirs" not in box:
                result["dask_image"] = {
                    "finished": False,
                    "unfinished_after_seconds": args.dask_image_limit,
                    "cluster": local,
                }
                result["ratio_dask_image_over_chseg_at_least"] = args.dask_image_limit / ours["seconds"]
                print(
                    "dask_image.ndmeasure.label",
                    result["dask_image"],
                    "ratio at least",
                    result["ratio_dask_image_over_chseg_at_least"],
                    flush=True,
                )
                save()
                os._exit(0)  # the cluster is still busy with the abandoned run
            theirs = dict(box["theirs"], cluster=local)
            result["dask_image"] = theirs
            result["ratio_dask_image_over_chseg"] = theirs["seconds"] / ours["seconds"]
            save()  # the times, before the partition check
            theirs_labels = da.from_zarr(os.path.join(work, "dask_image.zarr"))
            theirs["components"] = int(theirs_labels.max().compute())
            same, pairs = same_partition(ours_labels, theirs_labels)
            theirs["same_partition_as_chseg"], theirs["label_pairs"] = same, pairs
            result["dask_image"] = theirs
            result["ratio_dask_image_over_chseg"] = theirs["seconds"] / ours["seconds"]
            print("dask_image.ndmeasure.label", theirs, flush=True)
            save()
            shutil.rmtree(os.path.join(work, "dask_image.zarr"), ignore_errors=True)
        # the one-GPU filter on the same store, if the volume fits: the store read into memory, one chseg.label
        # call, the labels written to Zarr in the same chunks (16 threads of this process compress them)
        if args.side <= args.fits_side:
            shutil.rmtree(os.path.join(work, "one.zarr"), ignore_errors=True)
            with dask.config.set(scheduler="threads", num_workers=args.workers):
                t = time.perf_counter()
                volume = da.from_zarr(os.path.join(work, "volume.zarr")).compute()
                read = time.perf_counter()
                labels = chseg.label(volume < 100, dtype=np.uint64)
                labelled = time.perf_counter()
                da.from_array(labels, chunks=args.chunk).to_zarr(os.path.join(work, "one.zarr"))
                done = time.perf_counter()
            result["one_gpu_zarr"] = {
                "seconds": done - t,
                "read_seconds": read - t,
                "label_seconds": labelled - read,
                "write_seconds": done - labelled,
                "components": int(labels.max()),
                "chunked_over_one_gpu": ours["seconds"] / (done - t),
            }
            del volume, labels
            shutil.rmtree(os.path.join(work, "one.zarr"), ignore_errors=True)
            print("one GPU, Zarr to Zarr", result["one_gpu_zarr"], flush=True)
            save()

        # what any Zarr-to-Zarr labeller pays on this cluster: reading the input (thresholded and summed), and
        # reading and writing the chseg labels store once (the labels' own compression)
        t = time.perf_counter()
        int(pores.sum().compute())
        result["read_input_seconds"] = time.perf_counter() - t
        copy = timed_store(
            "copy", lambda: da.from_zarr(os.path.join(work, "chseg.zarr")), os.path.join(work, "copy.zarr")
        )
        result["labels_round_trip_seconds"] = copy["seconds"]
        print("read input", result["read_input_seconds"], "labels round trip", copy["seconds"], flush=True)
        save()
        shutil.rmtree(os.path.join(work, "copy.zarr"), ignore_errors=True)
        if not args.keep_work:
            shutil.rmtree(os.path.join(work, "chseg.zarr"), ignore_errors=True)

        # the watershed, chunked on the cluster, against the whole volume's
        if args.ws_side <= 0:
            return save()
        grey = field_block(np, (0, 0, 0), (args.ws_side,) * 3)
        t = time.perf_counter()
        whole = chseg.watershed(grey, dtype=np.uint64)
        whole_s = time.perf_counter() - t
        t = time.perf_counter()
        chunked = cd.watershed(da.from_array(grey, chunks=args.ws_chunk)).compute()
        chunked_s = time.perf_counter() - t
        result["watershed"] = {
            "side": args.ws_side,
            "chunk": args.ws_chunk,
            "whole_seconds": whole_s,
            "chunked_seconds": chunked_s,
            "basins": int(whole.max()),
            "equal": bool(np.array_equal(whole, chunked)),
        }
        print("watershed", result["watershed"], flush=True)
        save()

    fits(args, result, save)
    if not args.keep_work:
        shutil.rmtree(work, ignore_errors=True)
    save()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
