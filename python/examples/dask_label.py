"""Connected components, an alpha cut and the watershed of a volume in chunks with Dask, on a local cluster of
processes, written to Zarr chunk by chunk; each result equals the whole-volume function's. Run: python dask_label.py
[folder]"""

import sys
import tempfile

import chseg
import chseg.dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster, progress
from scipy import ndimage

if __name__ == "__main__":
    folder = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
    rng = np.random.default_rng(0)
    volume = (ndimage.gaussian_filter(rng.random((96, 128, 128)), 3) * 255).astype(np.uint8)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster):
        array = da.from_array(volume, chunks=(32, 64, 64))
        labels = chseg.dask.label(array > 128, fully_connected=True)  # the merge across the 16 chunks runs here
        future = labels.persist()
        progress(future)  # Dask's progress bar (the dashboard shows the same tasks)
        labels = future.compute()
        print(
            f"\n{labels.max()} components; equal to the whole volume's:",
            np.array_equal(labels, chseg.label(volume > 128, fully_connected=True, dtype=np.uint64)),
        )
        cut = chseg.dask.alpha_cut(array, 0)
        cut.to_zarr(f"{folder}/alpha-cut.zarr", overwrite=True)
        print(f"alpha cut at 0 written to {folder}/alpha-cut.zarr:", int(cut.max().compute()), "regions")
        # the watershed; to_zarr writes under a .partial- name and renames the store once every chunk is written
        basins = chseg.dask.watershed(array, fully_connected=True)
        chseg.dask.to_zarr(basins, f"{folder}/basins.zarr", overwrite=True)
        stored = da.from_zarr(f"{folder}/basins.zarr").compute()
        print(
            f"{stored.max()} basins written to {folder}/basins.zarr; equal to the whole volume's:",
            np.array_equal(stored, chseg.watershed(volume, fully_connected=True, dtype=np.uint64)),
        )
