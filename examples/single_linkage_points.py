"""Single-linkage clustering of a 3D point cloud on the GPU with itk.CudaGraphToSingleLinkageDendrogramFilter.

    python3 single_linkage_points.py [output.png] [--points 30000] [--clusters 3] [--neighbours 8]

Builds the k-nearest-neighbour graph of the points with SciPy, joins its connected components (if any) into a
chain (each one's first point to its nearest point of the previous component), computes the dendrogram on the GPU
(the CPU reference when there is no GPU: same result), cuts it into clusters, and plots the points and the top of the
dendrogram (scipy.cluster.hierarchy.dendrogram on the module's linkage matrix). Single linkage on a k-NN graph
equals single linkage on all pairs whenever the graph's minimum spanning tree is the Euclidean one (for example
when k is large enough); it is the usual approximation for large clouds.
"""

import argparse

import matplotlib

matplotlib.use("Agg")
import itk
import matplotlib.pyplot as plt
import numpy as np
from scipy.cluster.hierarchy import dendrogram
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree


def knn_graph(points, k):
    """Edges (u < v) of the symmetric k-NN graph with Euclidean weights, made connected."""
    tree = cKDTree(points)
    dist, idx = tree.query(points, k=k + 1)
    u = np.repeat(np.arange(len(points)), k)
    v = idx[:, 1:].ravel()
    w = dist[:, 1:].ravel()
    a, b = np.minimum(u, v), np.maximum(u, v)
    keep = np.unique(a * len(points) + b, return_index=True)[1]
    u, v, w = a[keep], b[keep], w[keep]
    # Join the components into a chain: the first point of each component to its nearest point of the one before.
    count, comp = connected_components(coo_matrix((w, (u, v)), shape=(len(points),) * 2), directed=False)
    extra = []
    for c in range(1, count):
        previous = np.flatnonzero(comp == c - 1)
        first = np.flatnonzero(comp == c)[0]
        d, j = cKDTree(points[previous]).query(points[first])
        extra.append((first, previous[j], d))
    if extra:
        e = np.array(extra)
        u = np.concatenate([u, e[:, 0].astype(np.int64)])
        v = np.concatenate([v, e[:, 1].astype(np.int64)])
        w = np.concatenate([w, e[:, 2]])
    return u, v, w


def single_linkage(u, v, w, n):
    """The itk.Dendrogram of the graph, from NumPy arrays."""
    to_ui = itk.PyVectorContainer[itk.UL, itk.UI].vector_container_from_array
    to_d = itk.PyVectorContainer[itk.UL, itk.D].vector_container_from_array
    f = itk.CudaGraphToSingleLinkageDendrogramFilter[itk.D].New()
    edges = (to_ui(u.astype(np.uint32)), to_ui(v.astype(np.uint32)), to_d(w.astype(np.float64)))
    f.SetEdges(*edges)
    f.SetNumberOfVertices(n)
    f.Update()
    return f, f.GetOutput()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", nargs="?", default="single_linkage_points.png")
    parser.add_argument("--points", type=int, default=30000)
    parser.add_argument("--clusters", type=int, default=3)
    parser.add_argument("--neighbours", type=int, default=8)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    centres = np.array([[0, 0, 0], [6, 0, 0], [3, 5, 1]], float)
    counts = [args.points // 3, args.points // 3, args.points - 2 * (args.points // 3)]
    points = np.concatenate([c + rng.normal(scale=0.6, size=(k, 3)) for c, k in zip(centres, counts)])
    u, v, w = knn_graph(points, args.neighbours)
    f, tree = single_linkage(u, v, w, len(points))
    labels = itk.array_from_vector_container(tree.ComputeClusters(args.clusters))
    z = itk.array_from_vector_container(tree.ComputeLinkageMatrix()).reshape(-1, 4)

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    left.scatter(points[:, 0], points[:, 1], c=labels, s=1, cmap="tab10")
    left.set_title(f"{len(points)} points, {args.clusters} single-linkage clusters (x, y)")
    dendrogram(z, ax=right, truncate_mode="lastp", p=30, no_labels=True)
    right.set_title("top of the dendrogram")
    fig.tight_layout()
    fig.savefig(args.output, dpi=80)
    on_gpu = f.GetLastBackend() == itk.CudaSegmentationBackendEnums.Backend_CUDA
    sizes = np.bincount(labels)[1:]
    print(
        f"{len(points)} points, {len(u)} edges, {args.clusters} clusters of sizes {sorted(sizes.tolist())} "
        f"({'CUDA' if on_gpu else 'CPU reference'}) -> {args.output}"
    )


if __name__ == "__main__":
    main()
