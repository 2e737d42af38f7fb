"""Single linkage: the dendrogram of an image's pixel graph cut into clusters, and of a point cloud's k-nearest-
neighbour graph handed to SciPy as a linkage matrix. Run: python single_linkage.py"""

import numpy as np
from scipy.cluster import hierarchy
from scipy.spatial import cKDTree

import chseg

image = np.random.default_rng(3).integers(0, 50, (200, 300)).astype(np.uint8)
dendrogram = chseg.single_linkage(image)
print("image: 8 clusters, sizes", np.bincount(dendrogram.clusters(8).ravel())[1:])

points = np.random.default_rng(4).random((5000, 3))
distances, neighbours = cKDTree(points).query(points, k=16)
u = np.repeat(np.arange(len(points)), 15)
v = neighbours[:, 1:].ravel()
graph = chseg.single_linkage_graph(u, v, distances[:, 1:].ravel(), len(points))  # a connected 15-NN graph
z = graph.linkage_matrix()
print("points: SciPy fcluster into 5 clusters:", np.bincount(hierarchy.fcluster(z, 5, "maxclust"))[1:])
